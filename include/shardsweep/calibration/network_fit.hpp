#pragma once
//! \file network_fit.hpp
//! \brief Fitting a platform's network to nccl-tests measurements (`shardsweep calibrate
//! network`): the bandwidth and latency of every dimension the logs span, and the all-reduce
//! algorithm per dimension where the data tells them apart.
//!
//! Each log ran on `ranks` GPUs over `hosts` hosts. Within the base platform that is dimension 0
//! with ranks/hosts NPUs and, when hosts > 1, dimension 1 with `hosts` NPUs (logNetwork). The log's
//! sizes map to ASTRA-sim's comm_size as docs/model/collectives.md defines it (all-gather: the
//! shard, size/ranks; the others: size); sendrecv is one message on the slowest dimension plus
//! the endpoint delay at both ends. Every call also costs the platform's call terms
//! (callOverheadNs: a fixed time and a pass over its bytes), fitted where the logs span two or
//! more tests or rank counts. The fit minimises the mean squared log error of the predicted
//! times over every row in [min_bytes, max_bytes] by Nelder–Mead on the logarithms of the
//! bandwidths and latencies, once per combination of all-reduce algorithms (ring, direct,
//! doubleBinaryTree per fitted dimension, when an all-reduce log is given). The base's algorithms
//! stay unless another combination is clearly better (score below 3/4 of the base's; scored
//! leave-one-log-out with three or more logs). Deterministic and single-threaded.

#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/io/nccl_tests_log.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! The network the ranks of one log ran on, and which base dimension each of its dims is.
struct LogNetwork
{
    Network network;
    SystemConfig system;
    int base_dim[kMaxNetworkDims] = {};
};

//! Throws InputError (the log's file and rank line) when the base platform cannot hold the log's
//! ranks: more ranks per host than dimension 0 has, uneven ranks per host, or several hosts and
//! no second dimension.
LogNetwork logNetwork( const Platform& base, const NcclTestsLog& log );

//! The model's time of one nccl-tests row, µs.
double ncclTestPredictedUs( const LogNetwork& net, NcclTest test, int ranks, double size_bytes );

struct NetworkFitLogError
{
    std::string path;
    NcclTest test = NcclTest::all_reduce;
    int ranks = 0, hosts = 0;
    std::size_t rows = 0; //!< rows in the size range
    double mape = 0.0;    //!< calibrated, %
    double uncalibrated_mape = 0.0;
};

struct NetworkFitResult
{
    Platform platform;            //!< the base with the fitted network and system
    std::vector<int> fitted_dims; //!< base dimensions the logs determined
    bool fits_call_terms = false; //!< the call terms were fitted too (logs of 2+ tests or counts)
    std::vector<NetworkFitLogError> logs;
    double objective = 0.0; //!< mean squared log error at the optimum
};

//! Fits `base` to `logs` (rows with min_bytes ≤ size ≤ max_bytes). Throws InputError when no row
//! is in the range. `fit_call_terms` false keeps the base's call terms (`bench calibrate
//! --table nccl` measures what fitting them gains).
NetworkFitResult fitNetwork( const Platform& base, const std::vector<NcclTestsLog>& logs,
                             double min_bytes, double max_bytes, bool fit_call_terms = true );

//! MAPE (%) of `platform`'s model on the rows of `log` in the size range.
double ncclTestsMape( const Platform& platform, const NcclTestsLog& log, double min_bytes,
                      double max_bytes, std::size_t* rows = nullptr );

//! `log` scored on the `fitted` platform and on its `base` (the rows of a fit's table; `calibrate
//! network --check` scores logs it did not fit the same way).
NetworkFitLogError scoreNcclTestsLog( const Platform& fitted, const Platform& base,
                                      const NcclTestsLog& log, double min_bytes, double max_bytes );

} // namespace shardsweep
