// A lower bound on the native-model iteration time of any plan (docs/PLANNERS.md, "Lower
// bound"): the embedding work no sharding can avoid, spread perfectly over the GPUs, plus the
// dense part and the all-to-alls that the model-parallel tables cannot avoid.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/model/dense.hpp>
#include <shardsweep/model/embedding.hpp>
#include <shardsweep/model/step.hpp>
#include <shardsweep/plan/planner.hpp>

namespace shardsweep
{
namespace
{

//! Least fwd + bwd time (ms, summed over shards) of table t model-parallel at `batch`, over
//! every tiling into n shards (row shares × column blocks, any kernel), n ≥ 1.
//!
//! embeddingShardCostFromStats charges each shard factor · max(DRAM bytes / DRAM bandwidth, L2
//! bytes / L2 bandwidth) (+ host bytes / host bandwidth). Summed over a tiling: the shards' row
//! bytes Σ s_i·rb_i are at least rb (whole table, sector-rounded); each shard streams its own
//! offsets (batch · 8 B) and pooled output (≥ one 32-B sector per sample, and together at least
//! the whole row); ids at least once; L2 serves at most the repeats (R = lookups − distinct) and
//! per shard at most R · L2 / (distinct · rb_i) rows, i.e. R · L2 / distinct bytes — the one way
//! splitting helps — and in total at least min(R · rb, R · L2 / distinct). Narrow column blocks
//! only raise the narrow-row factor. UVM moves a first touch from DRAM to the host link, which is
//! no faster (the DRAM term uses the faster of the two). Backward: each distinct row and its
//! optimizer state read and written once, output gradient, index sort, per-lookup aggregation in
//! L2.
double modelParallelFloorMs( const Platform& platform, const TableSpec& t, double batch )
{
    if ( batch <= 0.0 || t.rows <= 0 || t.dim <= 0 )
        return 0.0;
    const EmbeddingTableStats s = embeddingTableStats( t, batch, 0.0 );
    const double elem = dataTypeBytes( t.dtype );
    const double rb = sectorBytes( t.dim * elem );
    const double factor = narrowRowFactor( t.dim );
    const double lookups = s.lookups, unique = s.unique_rows;
    const double repeats = std::max( 0.0, lookups - unique );
    const double dram =
        std::max( platform.gpu.memory_bandwidth_GBps * 1e6 * kEmbeddingDramEfficiency,
                  factor * platform.host_to_gpu_GBps * 1e6 );
    const double l2bw =
        platform.gpu.memory_bandwidth_GBps * 1e6 * kEmbeddingDramEfficiency * kL2ToDramBandwidth;
    const double l2_bytes = kL2RowShare * platform.gpu.l2_cache_MiB * 1048576.0;
    const double hit_cap = unique > 0.0 ? repeats * l2_bytes / unique : 0.0; // per shard
    const double all_hits = repeats * rb;
    const double state = optimizerBytesPerRow( t.optimizer, t.dim );
    auto total = [&]( double n )
    {
        const double output = std::max( batch * rb, n * batch * 32.0 );
        const double k = lookups * rb + lookups * kIndexBytesPerLookup +
                         n * batch * kOffsetBytesPerSample + output;
        // L2 hit bytes: at most every repeat and n per-shard caps; at least what one shard
        // holding everything would hit (min(·, cap) is concave, so splitting never hits less).
        const double h_max = std::min( all_hits, n * hit_cap );
        const double h_min = std::min( all_hits, hit_cap );
        // The bound takes the hit volume that balances the DRAM and L2 terms, clamped to what
        // any tiling into n shards can hit.
        const double h = std::clamp( k * l2bw / ( dram + l2bw ), h_min, h_max );
        const double fwd = std::max( ( k - h ) / dram, h / l2bw );
        const double bwd = std::max(
            ( 2.0 * unique * ( rb + state ) + output + 4.0 * lookups * kIndexBytesPerLookup ) /
                dram,
            lookups * rb / l2bw );
        return factor * ( fwd + bwd );
    };
    // Beyond n_full shards every repeat can hit; more shards only add streams.
    const double n_full = hit_cap > 0.0 ? std::ceil( all_hits / hit_cap ) : 1.0;
    const double n_max = std::min( std::max( 1.0, n_full ), 1e5 );
    double best = total( 1.0 );
    for ( double n = 2.0; n <= n_max; n += 1.0 )
        best = std::min( best, total( n ) );
    return best;
}

double allToAllMs( const Platform& platform, double bytes )
{
    return 1e-6 *
           collectiveTimeNs( platform.network, platform.system, Collective::all_to_all, bytes );
}

} // namespace

double iterationLowerBoundMs( const Workload& workload, const Platform& platform,
                              std::int64_t global_batch )
{
    // predictStep: iteration ≥ max(input dist, bottom fwd) + max_g fwd + a2a fwd + top fwd + bwd
    // + max(a2a bwd, bottom bwd) + max_g bwd, with max_g ≥ the mean over the GPUs. The busiest
    // GPU of an all-to-all receives at least (P−1)/P of the total volume, so each all-to-all
    // takes at least the balanced one of comm_size = the total: Σ pooled bytes (local batch ×
    // dim of every model-parallel table) and Σ id bytes. A data-parallel table has no
    // all-to-all but every GPU looks it up for its samples; which tables pay that is a choice,
    // so the bound is the minimum over how many k tables are data-parallel: the k smallest
    // extra costs against the k largest volumes removed.
    const int gpus = platform.numGpus();
    const double p = gpus;
    const double batch =
        static_cast<double>( global_batch > 0 ? global_batch : workload.global_batch );
    const double local = batch / p;
    double sum_dims = 0.0;
    for ( const TableSpec& t : workload.tables )
        sum_dims += t.dim;
    const DenseCost dense = denseCost(
        platform.gpu, workload.dense, static_cast<int>( workload.tables.size() ), sum_dims, local );
    double embedding = 0.0, pooled = 0.0, ids = 0.0;
    struct Option
    {
        double extra_ms, pooled, ids;
    };
    std::vector<Option> optional;
    for ( const TableSpec& t : workload.tables )
    {
        const double mp = modelParallelFloorMs( platform, t, batch );
        const EmbeddingCost replica =
            embeddingShardCost( platform.gpu, platform.host_to_gpu_GBps, t, 1.0, t.dim, local,
                                ComputeKernel::hbm, 0.0 );
        const double dp = p * ( replica.fwd_ms + replica.bwd_ms );
        const double t_pooled = local * t.dim * dataTypeBytes( t.dtype );
        const double t_ids = local * t.pooling_factor * kIndexBytes;
        if ( gpus == 1 || dp <= mp )
        {
            embedding += std::min( mp, dp ); // data-parallel costs nothing extra: no volume
            continue;
        }
        embedding += mp;
        pooled += t_pooled;
        ids += t_ids;
        optional.push_back( { ( dp - mp ) / p, t_pooled, t_ids } );
    }
    const double fixed = embedding / p + dense.top_fwd_ms + dense.top_bwd_ms;
    auto withComm = [&]( double pooled_bytes, double id_bytes )
    {
        const double index_ms = gpus > 1 && id_bytes > 0 ? allToAllMs( platform, id_bytes ) : 0.0;
        const double a2a_ms =
            gpus > 1 && pooled_bytes > 0 ? allToAllMs( platform, pooled_bytes ) : 0.0;
        return std::max( index_ms, dense.bottom_fwd_ms ) + a2a_ms +
               std::max( a2a_ms, dense.bottom_bwd_ms );
    };
    double bound = fixed + withComm( pooled, ids );
    if ( gpus == 1 || optional.empty() )
        return bound;
    std::vector<double> extra, by_pooled, by_ids;
    for ( const Option& o : optional )
    {
        extra.push_back( o.extra_ms );
        by_pooled.push_back( o.pooled );
        by_ids.push_back( o.ids );
    }
    std::sort( extra.begin(), extra.end() );
    std::sort( by_pooled.begin(), by_pooled.end(), std::greater<double>() );
    std::sort( by_ids.begin(), by_ids.end(), std::greater<double>() );
    double extra_sum = 0.0, pooled_left = pooled, ids_left = ids;
    for ( std::size_t k = 0; k < extra.size(); ++k )
    {
        extra_sum += extra[k];
        if ( fixed + extra_sum >= bound )
            break; // communication cannot go below zero
        pooled_left = std::max( 0.0, pooled_left - by_pooled[k] );
        ids_left = std::max( 0.0, ids_left - by_ids[k] );
        bound = std::min( bound, fixed + extra_sum + withComm( pooled_left, ids_left ) );
    }
    return bound;
}

} // namespace shardsweep
