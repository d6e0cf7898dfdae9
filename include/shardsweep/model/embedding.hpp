#pragma once
//! \file embedding.hpp
//! \brief Embedding-lookup cost of one shard (FBGEMM TBE), forward and backward + optimizer,
//! after Lin et al.'s traffic model with distribution-aware distinct rows
//! (Lin et al., HiPC'22 and TPDS'24; docs/model/embedding.md).
//!
//! Forward: every lookup reads one row (32-B sectors); the first touch of a row comes from DRAM
//! (or host memory over the host link for UVM rows), repeats hit L2 while the distinct rows fit
//! in it; indices, offsets and the pooled output stream through DRAM. Time is the larger of the
//! DRAM and L2 times at sustained bandwidths, times Lin's small-dim inefficiency factor.
//! Backward: the pooled-output gradient is read, index gradients are sorted and aggregated per
//! distinct row (in L2), and each distinct row and its optimizer state are read and written.
//!
//! The expensive part — distinct rows and cache hit rate of the whole table — is split out
//! (embeddingTableStats) so the batched kernel computes it once per distinct (table, batch,
//! cache) and every shard reuses it (embeddingShardCostFromStats, O(1)).
#include <shardsweep/domain/dlrm_spec.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/model/access_distribution.hpp>
#include <shardsweep/model/math.hpp>

namespace shardsweep
{

//! Sustained share of the datasheet DRAM bandwidth: Lin et al.'s measured A100 1391 GB/s of
//! 1555 and V100 817 of 900 (Lin et al.'s measured peaks, owensgroup/ml_perf_model
//! analysis/utils.py) are both ≈ 0.9.
constexpr double kEmbeddingDramEfficiency = 0.9;
//! L2 bandwidth relative to DRAM (measured A100 1.63×, V100 3.5×; the conservative end).
constexpr double kL2ToDramBandwidth = 2.0;
//! Share of L2 that holds embedding rows (Lin et al.: 0.9).
constexpr double kL2RowShare = 0.9;
constexpr double kIndexBytesPerLookup = 8.0;  //!< int64 indices
constexpr double kOffsetBytesPerSample = 8.0; //!< int64 offsets

struct EmbeddingCost
{
    double unique_rows = 0.0;    //!< distinct rows the shard touches in one batch
    double cache_hit_rate = 0.0; //!< of the HBM cache (uvm_caching), else 0
    double fwd_ms = 0.0;
    double bwd_ms = 0.0;
};

//! Whole-table access statistics for `batch` samples (pooling_factor lookups each).
struct EmbeddingTableStats
{
    double lookups = 0.0;
    double unique_rows = 0.0;
    double cache_hit_rate = 0.0; //!< LRU cache of cache_fraction of the rows (0 if none)
    //! Distinct rows of the batch not in that cache (fetched from the host; = unique_rows if
    //! there is no cache).
    double cache_missed_rows = 0.0;
};

KOKKOS_INLINE_FUNCTION EmbeddingTableStats embeddingTableStats( const TableSpec& t, double batch,
                                                                double cache_fraction )
{
    EmbeddingTableStats s;
    s.lookups = batch * t.pooling_factor;
    // A histogram is fitted once (to its Zipf exponent) for both statistics.
    TableSpec z = t;
    if ( t.distribution == AccessDistribution::histogram )
    {
        z.zipf_alpha = access_detail::histogramZipfAlpha( t, batch );
        z.distribution = AccessDistribution::zipf;
    }
    s.unique_rows = expectedUniqueRows( z, s.lookups );
    s.cache_missed_rows = s.unique_rows;
    if ( cache_fraction > 0.0 )
    {
        const LruStats l = lruStats( z, s.lookups, cache_fraction * static_cast<double>( t.rows ) );
        s.cache_hit_rate = l.hit_rate;
        s.cache_missed_rows = l.missed_rows;
    }
    return s;
}

//! Bytes of one row of `cols` elements read in 32-B sectors.
KOKKOS_INLINE_FUNCTION double sectorBytes( double bytes )
{
    return math::ceil( bytes / 32.0 ) * 32.0;
}

//! Lin et al.'s inefficiency of narrow rows: 1 (> 64 columns), 1.1 (> 32), 1.55 otherwise.
KOKKOS_INLINE_FUNCTION double narrowRowFactor( int cols )
{
    return cols > 64 ? 1.0 : ( cols > 32 ? 1.1 : 1.55 );
}

//! Optimizer-state bytes per row touched (read once and written once per update).
KOKKOS_INLINE_FUNCTION double optimizerBytesPerRow( Optimizer o, int cols )
{
    return o == Optimizer::sgd ? 0.0 : ( o == Optimizer::rowwise_adagrad ? 4.0 : 8.0 * cols );
}

//! One shard's memory traffic, bytes, before the kernel decides where missed rows come from:
//! what embeddingShardCostFromStats prices, and what the planners' lower bound
//! (plan/lower_bound.cpp) bounds from below on its own bandwidths.
struct EmbeddingShardBytes
{
    double unique_rows = 0.0;
    double fwd_first_touch = 0.0; //!< rows read from HBM (or the host): lookups that miss the L2
    //! The first read of each distinct row (part of fwd_first_touch): what an HBM cache that
    //! misses a row brings over the host link, once per batch.
    double fwd_distinct = 0.0;
    double fwd_l2 = 0.0;      //!< repeats served by the L2
    double fwd_stream = 0.0;  //!< indices, offsets, pooled output
    double bwd_updates = 0.0; //!< read-modify-write of each distinct row and its state
    double bwd_stream = 0.0;  //!< output gradient read, index sort
    double bwd_l2 = 0.0;      //!< per-row gradient aggregation
};

//! The traffic of a shard holding `row_share` of the table's rows (row-wise shards receive that
//! share of the ids, which are hashed) and `cols` columns, for `batch` samples.
KOKKOS_INLINE_FUNCTION EmbeddingShardBytes embeddingShardBytes( const GpuSpec& gpu,
                                                                const TableSpec& t,
                                                                const EmbeddingTableStats& s,
                                                                double row_share, int cols,
                                                                double batch )
{
    EmbeddingShardBytes b;
    const double elem = dataTypeBytes( t.dtype );
    const double row_bytes = sectorBytes( cols * elem );
    const double lookups = s.lookups * row_share; // hashed ids: the shard's share of lookups
    const double unique = s.unique_rows * row_share;
    b.unique_rows = unique;

    // L2 reuse: repeats hit while the distinct rows fit; beyond that a repeat finds its row
    // cached with probability capacity / distinct rows.
    const double l2_rows = kL2RowShare * gpu.l2_cache_MiB * 1048576.0 / row_bytes;
    const double repeats = lookups - unique;
    const double repeat_hits = unique <= l2_rows ? repeats : repeats * l2_rows / unique;
    b.fwd_first_touch = ( lookups - repeat_hits ) * row_bytes;
    b.fwd_distinct = unique * row_bytes;
    b.fwd_l2 = repeat_hits * row_bytes;
    b.fwd_stream = lookups * kIndexBytesPerLookup + batch * kOffsetBytesPerSample +
                   batch * row_bytes; // indices, offsets, pooled output

    // Backward: output gradient read, index sort (read + write twice), per-row gradient
    // aggregation in L2, then read-modify-write of each distinct row and its optimizer state.
    b.bwd_updates = 2.0 * unique * ( row_bytes + optimizerBytesPerRow( t.optimizer, cols ) );
    b.bwd_stream = batch * row_bytes + 4.0 * lookups * kIndexBytesPerLookup;
    b.bwd_l2 = lookups * row_bytes;
    return b;
}

//! One shard's cost from its table's statistics (see embeddingShardCost).
KOKKOS_INLINE_FUNCTION EmbeddingCost embeddingShardCostFromStats(
    const GpuSpec& gpu, double host_to_gpu_GBps, const TableSpec& t, const EmbeddingTableStats& s,
    double row_share, int cols, double batch, ComputeKernel kernel )
{
    EmbeddingCost c;
    if ( cols <= 0 || row_share <= 0.0 || batch <= 0.0 )
        return c;
    const EmbeddingShardBytes b = embeddingShardBytes( gpu, t, s, row_share, cols, batch );
    c.unique_rows = b.unique_rows;

    // Where missed rows come from: HBM, or the host for UVM rows not in the HBM cache.
    double host_share = 0.0;
    if ( kernel == ComputeKernel::uvm )
        host_share = 1.0;
    else if ( kernel == ComputeKernel::uvm_caching )
    {
        // The cache is filled per batch with the batch's distinct rows: the host supplies the
        // distinct rows that miss it (not U·(1 − hit rate): hot rows raise the per-lookup hit
        // rate but are few among the distinct rows).
        host_share =
            s.unique_rows > 0.0 ? math::fmin( 1.0, s.cache_missed_rows / s.unique_rows ) : 0.0;
        c.cache_hit_rate = s.cache_hit_rate;
    }
    const double dram_Bpms = gpu.memory_bandwidth_GBps * 1e6 * kEmbeddingDramEfficiency;
    const double l2_Bpms = dram_Bpms * kL2ToDramBandwidth;
    const double host_Bpms = host_to_gpu_GBps * 1e6;
    const double factor = narrowRowFactor( cols );
    auto memoryTime = [&]( double dram_bytes, double host_bytes, double l2 )
    {
        const double device = math::fmax( dram_bytes / dram_Bpms, l2 / l2_Bpms );
        const double host = host_bytes > 0.0 ? host_bytes / host_Bpms : 0.0;
        return factor * device + host; // the kernel stalls on host reads
    };
    // UVM reads every row that misses the L2 over the host link (rows are not migrated). An HBM
    // cache is filled with the batch's distinct rows that miss it, each brought over the link
    // once: the L2 misses after that read the cache in HBM.
    const double fwd_host =
        kernel == ComputeKernel::uvm ? b.fwd_first_touch : host_share * b.fwd_distinct;
    c.fwd_ms = memoryTime( b.fwd_first_touch - fwd_host + b.fwd_stream, fwd_host, b.fwd_l2 );
    c.bwd_ms = memoryTime( b.bwd_updates * ( 1.0 - host_share ) + b.bwd_stream,
                           b.bwd_updates * host_share, b.bwd_l2 );
    return c;
}

//! One shard holding `row_share` of the table's rows (row-wise shards receive that share of the
//! ids, which are hashed) and `cols` columns, looked up for `batch` samples.
KOKKOS_INLINE_FUNCTION EmbeddingCost embeddingShardCost(
    const GpuSpec& gpu, double host_to_gpu_GBps, const TableSpec& t, double row_share, int cols,
    double batch, ComputeKernel kernel, double cache_fraction )
{
    const EmbeddingTableStats s = embeddingTableStats(
        t, batch, kernel == ComputeKernel::uvm_caching ? cache_fraction : 0.0 );
    return embeddingShardCostFromStats( gpu, host_to_gpu_GBps, t, s, row_share, cols, batch,
                                        kernel );
}

} // namespace shardsweep
