#pragma once
//! \file gemm_fit.hpp
//! \brief Fitting the GEMM model's global constants to measured latencies, and its error stats.
//!
//! The fit minimises the mean |log(predicted / measured)| (scale-free, so microsecond and second
//! GEMMs weigh alike) over a set of measurements by Nelder–Mead on the logarithms of the
//! constants (all are positive), restarted from its best point until it stops improving.
//! Everything is deterministic and single-threaded.

#include <cstddef>
#include <shardsweep/io/neusight_data.hpp>
#include <shardsweep/model/gemm.hpp>
#include <vector>

namespace shardsweep
{

//! Where every fit starts (bench gemm, and the fit behind shippedGemmConstants()): round physical
//! guesses (30 µs launch, 90 % of peak, 32-element epilogue, i_half 8, one 128x128 tile per SM, 80
//! % of the bandwidth, 10 µs split-K reduction, linear calls 1.6x the bmm overhead, 45 GFLOP/J at
//! 16 nm, clock settling after 1 ms). Nelder–Mead finds a local optimum, so the start matters.
constexpr GemmConstants kGemmFitStart = { 0.03, 0.9,  32.0, 8.0,  16384.0,
                                          0.8,  0.01, 1.6,  45.0, 1.0 };

//! Number of constants in GemmConstants that the fit varies.
constexpr int kGemmNumConstants = 10;
void gemmConstantsToArray( const GemmConstants& c, double* x );
GemmConstants gemmConstantsFromArray( const double* x );

//! Model prediction for a measured row (a linear row is the same GEMM with GemmOp::linear).
double gemmPredictRow( const GemmConstants& c, const GpuSpec& gpu, const GemmMeasurement& m );

//! Mean |log(pred/measured)| over `rows` (indices into data.rows).
double gemmFitObjective( const GemmConstants& c, const GemmDataset& data,
                         const std::vector<std::size_t>& rows );

struct GemmFitResult
{
    GemmConstants constants;
    double objective = 0.0; //!< mean |log error| at the optimum
    int evaluations = 0;
};

//! Nelder–Mead from `start` on `rows`; at most `max_evaluations` objective evaluations.
GemmFitResult fitGemmConstants( const GemmConstants& start, const GemmDataset& data,
                                const std::vector<std::size_t>& rows, int max_evaluations );

struct GemmErrorStats
{
    std::size_t rows = 0;
    double mape = 0.0;       //!< mean |pred - measured| / measured, in %
    double median_ape = 0.0; //!< median of the same, in %
    double mean_log = 0.0;   //!< mean |log(pred/measured)|
};

//! Error statistics of predictions `pred` against the measured latencies of `rows`.
GemmErrorStats gemmErrorStats( const std::vector<double>& pred, const GemmDataset& data,
                               const std::vector<std::size_t>& rows );

} // namespace shardsweep
