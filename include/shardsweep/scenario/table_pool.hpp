#pragma once
//! \file table_pool.hpp
//! \brief A pool of embedding tables from which random sharding tasks draw (NeuroShard, DreamShard,
//! AutoShard; docs/SWEEPS.md).
//!
//! The learned-sharding papers draw their tasks from the 856 tables of Meta's 2021
//! dlrm_datasets batch. Those per-table statistics are not public (facebookresearch/dlrm_datasets
//! holds only traces), so a pool is either read from a CSV (io/table_pool_csv.hpp) or synthesised
//! here so that its aggregate reuse histograms match the published locality statistics
//! (docs/model/table_pool.md). Everything random is a pure function of (seed, table index) through
//! model/rng.hpp.

#include <cstdint>
#include <shardsweep/domain/dlrm_spec.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! A list of tables with names. Pool tables carry rows, pooling factor and access statistics;
//! their dim is a default that task generators usually overwrite (NeuroShard draws it per task).
struct TablePool
{
    std::string name;
    std::vector<std::string> names;
    std::vector<TableSpec> tables;

    std::size_t size() const { return tables.size(); }
};

//! Aggregate locality of a dlrm_datasets batch (one block of a locality_stats.txt file):
//! what a synthetic pool is fitted to. Histograms use the 17 reuse bins of domain/dlrm_spec.hpp.
struct LocalityTarget
{
    std::string source;                  //!< e.g. "fbgemm_t856_bs65536.pt"
    std::int64_t num_tables = 856;       //!< T of the batch (from the file name)
    std::int64_t batch_size = 65536;     //!< B of the batch
    double total_indices = 0.0;          //!< "Avg # of indices"
    double total_unique = 0.0;           //!< "Avg # of unique cols"
    double unique_hist[kReuseBins] = {}; //!< fraction of unique rows per reuse bin
    double access_hist[kReuseBins] = {}; //!< fraction of accesses per reuse bin

    double meanPooling() const { return total_indices / double( num_tables * batch_size ); }
    double indicesPerUnique() const { return total_indices / total_unique; }
};

//! How a synthetic pool is generated (docs/model/table_pool.md explains each knob).
struct SyntheticPoolOptions
{
    int num_tables = 856;
    std::uint64_t seed = 2021;
    int default_dim = 16;
    DataType dtype = DataType::fp32;
    //! Spread (log-normal sigma) of per-table pooling factors around the target mean.
    double pooling_sigma = 1.2;
    //! Std-dev of the per-table hotness tilt of the reuse histogram (per bin, natural log units).
    double tilt_sigma = 0.25;
    //! Fraction of a table's rows touched by one batch is log-uniform in [min, 1].
    double min_touched_fraction = 0.02;
    //! Correlation between a table's log pooling factor and its hotness tilt (heavier tables
    //! reuse rows more).
    double tilt_pooling_correlation = 0.5;
    //! Largest hash size drawn (it never drops below the rows one batch touches).
    std::int64_t max_rows = 4000000;
    //! Fixed-point iterations of the histogram calibration.
    int calibration_iterations = 200;
};

//! Mean reuse count of a row whose count falls in bin j: the mean of the integers in
//! (2^(j-1), 2^j] weighted by k^-2 (a power law within the bin; bin 16, open, is taken as
//! (2^15, 2^16]). docs/model/table_pool.md derives the exponent from the 2021 file.
double reuseBinMeanCount( int bin );

//! The unique-row histogram implied by the access histogram (u_j ∝ a_j / c_j), normalised:
//! the target the synthetic pool is fitted to (the file's unique histogram is rounded to 3
//! decimals, which zeroes bins 10–16 that hold a quarter of all accesses).
void impliedUniqueHistogram( const LocalityTarget& target, double out[kReuseBins] );

//! Aggregates of a pool, computed the way locality_stats.txt aggregates a batch.
struct PoolAggregate
{
    double total_indices = 0.0;
    double total_unique = 0.0;
    double unique_hist[kReuseBins] = {};
    double access_hist[kReuseBins] = {};
};

//! Unique rows a table touches in one batch of `batch_size` samples: lookups / mean reuse count
//! of its histogram.
double uniqueRowsPerBatch( const TableSpec& table, std::int64_t batch_size );

//! Aggregate locality of a pool at `batch_size` (tables with a reuse histogram only).
PoolAggregate aggregateLocality( const TablePool& pool, std::int64_t batch_size );

//! A synthetic pool fitted to `target` (deterministic for a given options.seed).
TablePool syntheticTablePool( const LocalityTarget& target, const SyntheticPoolOptions& options );

} // namespace shardsweep
