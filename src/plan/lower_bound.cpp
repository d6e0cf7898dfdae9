// A lower bound on the native-model iteration time of any plan (docs/PLANNERS.md, "Lower
// bound"): the embedding work no sharding can avoid, spread perfectly over the GPUs, plus the
// dense part and the all-to-alls that the model-parallel tables cannot avoid.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/model/dense.hpp>
#include <shardsweep/model/embedding.hpp>
#include <shardsweep/model/step.hpp>
#include <shardsweep/plan/planner.hpp>
#include <unordered_map>

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

//! What one table contributes to the bound: its least model-parallel time (summed over any
//! tiling) and its time data-parallel (every GPU looks it up for its local batch).
struct TableBoundTerms
{
    double model_parallel_ms = 0.0;
    double data_parallel_ms = 0.0;
};

TableBoundTerms tableBoundTerms( const Platform& platform, const TableSpec& t, double batch,
                                 double local, double p )
{
    TableBoundTerms terms;
    terms.model_parallel_ms = modelParallelFloorMs( platform, t, batch );
    const EmbeddingCost replica = embeddingShardCost( platform.gpu, platform.host_to_gpu_GBps, t,
                                                      1.0, t.dim, local, ComputeKernel::hbm, 0.0 );
    terms.data_parallel_ms = p * ( replica.fwd_ms + replica.bwd_ms );
    return terms;
}

//! Every input tableBoundTerms reads: the table, the GPU, the host link, batch and GPU count.
constexpr std::size_t kTermsKeySize = 9 + kReuseBins + 13 + 3;
using TermsKey = std::array<double, kTermsKeySize>;

TermsKey termsKey( const Platform& platform, const TableSpec& t, double batch, double p )
{
    const GpuSpec& g = platform.gpu;
    TermsKey key = { double( t.rows ),
                     double( t.dim ),
                     t.pooling_factor,
                     double( t.dtype ),
                     double( t.distribution ),
                     t.zipf_alpha,
                     double( t.histogram_batch ),
                     double( t.optimizer ),
                     double( t.weighted ),
                     double( g.sm_count ),
                     g.boost_clock_MHz,
                     g.fp32_TFLOPs,
                     g.tf32_TFLOPs,
                     g.fp16_TFLOPs,
                     g.bf16_TFLOPs,
                     g.memory_GiB,
                     g.memory_bandwidth_GBps,
                     g.l2_cache_MiB,
                     double( g.pcie_generation ),
                     g.pcie_bandwidth_GBps,
                     g.tdp_W,
                     g.process_nm,
                     platform.host_to_gpu_GBps,
                     batch,
                     p };
    std::copy( t.reuse_histogram, t.reuse_histogram + kReuseBins, key.end() - kReuseBins );
    return key;
}

//! Hashes the table's scalars, the batch and the GPU count only: within a sweep the GPU and the
//! host link rarely vary and the reuse histogram rarely differs where the scalars agree, so they
//! are left to the equality test (exact, over the whole key). Hashing all 42 words of the key in
//! one dependent multiply chain was most of the bound's time, ~7 % of a sweep's CPU (perf).
struct TermsKeyHash
{
    static constexpr std::size_t kHashed[] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 + 13 + 1, 9 + 13 + 2 };
    std::size_t operator()( const TermsKey& key ) const
    {
        std::uint64_t h = 0x9e3779b97f4a7c15ull;
        for ( const std::size_t k : kHashed )
        {
            std::uint64_t w;
            std::memcpy( &w, &key[k], sizeof( w ) );
            h = ( h ^ w ) * 0xff51afd7ed558ccdull;
            h ^= h >> 32;
        }
        return static_cast<std::size_t>( h );
    }
};

double lowerBoundMs( const Workload& workload, const Platform& platform, std::int64_t global_batch,
                     LowerBoundCache* cache );

} // namespace

struct LowerBoundCache::Impl
{
    //! Beyond this many tables the cache starts over (bounded memory).
    static constexpr std::size_t kMaxEntries = std::size_t( 1 ) << 20;
    std::unordered_map<TermsKey, TableBoundTerms, TermsKeyHash> terms;
};

LowerBoundCache::LowerBoundCache() : _impl( std::make_unique<Impl>() ) {}
LowerBoundCache::~LowerBoundCache() = default;

double iterationLowerBoundMs( const Workload& workload, const Platform& platform,
                              std::int64_t global_batch )
{
    return lowerBoundMs( workload, platform, global_batch, nullptr );
}

double iterationLowerBoundMs( const Workload& workload, const Platform& platform,
                              std::int64_t global_batch, LowerBoundCache& cache )
{
    return lowerBoundMs( workload, platform, global_batch, &cache );
}

namespace
{

double lowerBoundMs( const Workload& workload, const Platform& platform, std::int64_t global_batch,
                     LowerBoundCache* cache )
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
        TableBoundTerms terms;
        if ( cache )
        {
            auto& map = cache->impl().terms;
            const TermsKey key = termsKey( platform, t, batch, p );
            const auto it = map.find( key );
            if ( it != map.end() )
                terms = it->second;
            else
            {
                terms = tableBoundTerms( platform, t, batch, local, p );
                if ( map.size() >= LowerBoundCache::Impl::kMaxEntries )
                    map.clear();
                map.emplace( key, terms );
            }
        }
        else
            terms = tableBoundTerms( platform, t, batch, local, p );
        const double mp = terms.model_parallel_ms, dp = terms.data_parallel_ms;
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

} // namespace

} // namespace shardsweep
