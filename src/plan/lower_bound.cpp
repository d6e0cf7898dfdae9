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
#include <shardsweep/domain/gpu_fields.hpp>
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

//! The inputs of tableBoundTerms besides the table: the GPU, the host link, batch and GPU
//! count. A sweep has a handful of them, so the cache numbers them once per bound and keys each
//! table by that number instead of repeating these 16 words in every table's key.
constexpr std::size_t kContextKeySize = kGpuSpecWords + 3;
using ContextKey = std::array<double, kContextKeySize>;

ContextKey contextKey( const Platform& platform, double batch, double p )
{
    const double rest[] = { platform.host_to_gpu_GBps, batch, p };
    return gpuKey<kContextKeySize>( platform.gpu, rest );
}

//! Every field of the table tableBoundTerms reads, and the number of its context.
constexpr std::size_t kTermsKeySize = 9 + kReuseBins + 1;
using TermsKey = std::array<double, kTermsKeySize>;

TermsKey termsKey( const TableSpec& t, std::size_t context )
{
    TermsKey key = { double( context ),     double( t.rows ),
                     double( t.dim ),       t.pooling_factor,
                     double( t.dtype ),     double( t.distribution ),
                     t.zipf_alpha,          double( t.histogram_batch ),
                     double( t.optimizer ), double( t.weighted ) };
    std::copy( t.reuse_histogram, t.reuse_histogram + kReuseBins, key.end() - kReuseBins );
    return key;
}

//! Hashes the context, rows, dim and pooling factor only: tables that agree on those but differ
//! elsewhere are rare, and the equality test compares the whole key. Hashing every word of a
//! key in one dependent multiply chain, for each of a scenario's tables, was most of the bound's
//! time (perf).
struct TermsKeyHash
{
    std::size_t operator()( const TermsKey& key ) const
    {
        std::uint64_t h = 0x9e3779b97f4a7c15ull;
        for ( std::size_t k = 0; k < 4; ++k )
        {
            std::uint64_t w;
            std::memcpy( &w, &key[k], sizeof( w ) );
            h = ( h ^ w ) * 0xff51afd7ed558ccdull;
            h ^= h >> 32;
        }
        return static_cast<std::size_t>( h );
    }
};

//! Bitwise equality: one memcmp instead of a floating-point compare per word (and a key holding
//! a NaN still finds itself).
struct TermsKeyEqual
{
    bool operator()( const TermsKey& a, const TermsKey& b ) const
    {
        return std::memcmp( a.data(), b.data(), sizeof( TermsKey ) ) == 0;
    }
};

//! The tables that may go data-parallel, one entry each: what that costs each GPU, and the
//! pooled and id bytes it takes off the all-to-alls. Kept in the cache so that a sweep's bounds
//! allocate nothing.
struct BoundScratch
{
    std::vector<double> extra, by_pooled, by_ids;
};

//! Sorts `v` by `before`: insertion sort up to 64 values (a scenario's tables: about 1.7x
//! faster than std::sort's partitioning there, which mispredicts a branch per comparison, and the
//! bound sorts three such arrays per scenario), std::sort beyond.
template <class Before>
void sortSmall( std::vector<double>& v, Before before )
{
    if ( v.size() > 64 )
    {
        std::sort( v.begin(), v.end(), before );
        return;
    }
    for ( std::size_t i = 1; i < v.size(); ++i )
    {
        const double x = v[i];
        std::size_t j = i;
        for ( ; j > 0 && before( x, v[j - 1] ); --j )
            v[j] = v[j - 1];
        v[j] = x;
    }
}

double lowerBoundMs( const Workload& workload, const Platform& platform, std::int64_t global_batch,
                     LowerBoundCache* cache );

} // namespace

struct LowerBoundCache::Impl
{
    //! Beyond this many tables the cache starts over (bounded memory).
    static constexpr std::size_t kMaxEntries = std::size_t( 1 ) << 20;
    //! Beyond this many contexts the cache starts over (their search is linear).
    static constexpr std::size_t kMaxContexts = 256;
    std::unordered_map<TermsKey, TableBoundTerms, TermsKeyHash, TermsKeyEqual> terms;
    std::vector<ContextKey> contexts;
    std::size_t last_context = 0;
    BoundScratch scratch;

    //! The number of `key` among the contexts seen (the last one is checked first).
    std::size_t context( const ContextKey& key )
    {
        const auto same = [&]( const ContextKey& c )
        { return std::memcmp( c.data(), key.data(), sizeof( ContextKey ) ) == 0; };
        if ( last_context < contexts.size() && same( contexts[last_context] ) )
            return last_context;
        const auto it = std::find_if( contexts.begin(), contexts.end(), same );
        if ( it != contexts.end() )
            return last_context = std::size_t( it - contexts.begin() );
        if ( contexts.size() >= kMaxContexts )
        {
            contexts.clear(); // the numbers are reused: forget the terms keyed by them
            terms.clear();
        }
        contexts.push_back( key );
        return last_context = contexts.size() - 1;
    }
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

//! tableBoundTerms of table t, from the cache when it holds them (`context`: the number of the
//! bound's context there), computed otherwise.
TableBoundTerms boundTerms( LowerBoundCache* cache, std::size_t context, const Platform& platform,
                            const TableSpec& t, double batch, double local, double p )
{
    if ( !cache )
        return tableBoundTerms( platform, t, batch, local, p );
    TableBoundTerms terms;
    auto& map = cache->impl().terms;
    const TermsKey key = termsKey( t, context );
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
    return terms;
}

//! The step timeline's iteration time with `lookup_ms` of lookups on every GPU, the dense part,
//! the balanced all-to-alls of the given volumes and no all-reduce.
double boundTimelineMs( const Platform& platform, const DenseCost& dense, double lookup_ms,
                        double pooled_bytes, double id_bytes )
{
    const int gpus = platform.numGpus();
    StepDurations d;
    d.input_dist = gpus > 1 && id_bytes > 0 ? allToAllMs( platform, id_bytes ) : 0.0;
    d.a2a_fwd = gpus > 1 && pooled_bytes > 0 ? allToAllMs( platform, pooled_bytes ) : 0.0;
    d.a2a_bwd = d.a2a_fwd;
    d.bottom_fwd = dense.bottom_fwd_ms;
    d.bottom_bwd = dense.bottom_bwd_ms;
    d.top_fwd = dense.top_fwd_ms;
    d.top_bwd = dense.top_bwd_ms;
    d.embedding_fwd = lookup_ms;
    return stepTimeline( d ).iteration;
}

//! The bound lowered by letting the k cheapest of the tables in `scratch` go data-parallel, for
//! every k: the k smallest extra costs against the k largest volumes removed. `bound`: the bound
//! with none of them data-parallel; `lookup_ms`: the GPUs' mean lookup work; `pooled`, `ids`:
//! the all-to-all volumes. Sorts the scratch arrays.
double dataParallelBoundMs( const Platform& platform, const DenseCost& dense, BoundScratch& scratch,
                            double lookup_ms, double pooled, double ids, double bound )
{
    std::vector<double>& extra = scratch.extra;
    std::vector<double>& by_pooled = scratch.by_pooled;
    std::vector<double>& by_ids = scratch.by_ids;
    // Compute that no plan avoids: the GPUs' mean lookup work and the dense part.
    const double fixed = lookup_ms + dense.top_fwd_ms + dense.top_bwd_ms;
    sortSmall( extra, std::less<double>() );
    sortSmall( by_pooled, std::greater<double>() );
    sortSmall( by_ids, std::greater<double>() );
    double extra_sum = 0.0, pooled_left = pooled, ids_left = ids;
    for ( std::size_t k = 0; k < extra.size(); ++k )
    {
        extra_sum += extra[k];
        if ( fixed + extra_sum >= bound )
            break; // communication cannot go below zero
        pooled_left = std::max( 0.0, pooled_left - by_pooled[k] );
        ids_left = std::max( 0.0, ids_left - by_ids[k] );
        bound = std::min( bound, boundTimelineMs( platform, dense, lookup_ms + extra_sum,
                                                  pooled_left, ids_left ) );
    }
    return bound;
}

double lowerBoundMs( const Workload& workload, const Platform& platform, std::int64_t global_batch,
                     LowerBoundCache* cache )
{
    // The step's timeline (stepTimeline, model/step.hpp) is monotone in every duration, and
    // max_g fwd + max_g bwd ≥ the mean over the GPUs of fwd + bwd: so the timeline of the mean
    // lookup work, the balanced all-to-alls and no all-reduce bounds every plan. The busiest
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
    BoundScratch local_scratch;
    BoundScratch& scratch = cache ? cache->impl().scratch : local_scratch;
    scratch.extra.clear();
    scratch.by_pooled.clear();
    scratch.by_ids.clear();
    const std::size_t context =
        cache ? cache->impl().context( contextKey( platform, batch, p ) ) : 0;
    for ( const TableSpec& t : workload.tables )
    {
        const TableBoundTerms terms = boundTerms( cache, context, platform, t, batch, local, p );
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
        scratch.extra.push_back( ( dp - mp ) / p );
        scratch.by_pooled.push_back( t_pooled );
        scratch.by_ids.push_back( t_ids );
    }
    const double bound = boundTimelineMs( platform, dense, embedding / p, pooled, ids );
    if ( gpus == 1 || scratch.extra.empty() )
        return bound;
    return dataParallelBoundMs( platform, dense, scratch, embedding / p, pooled, ids, bound );
}

} // namespace

} // namespace shardsweep
