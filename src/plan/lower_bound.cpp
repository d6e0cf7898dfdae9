// A lower bound on the native-model iteration time of any plan (docs/PLANNERS.md, "Lower
// bound"): the embedding work no sharding can avoid, spread perfectly over the GPUs, plus the
// dense part and the all-to-alls that the model-parallel tables cannot avoid.
#include "lower_bound_detail.hpp"

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
#include <shardsweep/model/memory.hpp>
#include <shardsweep/model/step.hpp>
#include <shardsweep/plan/planner.hpp>
#include <unordered_map>

namespace shardsweep
{

namespace
{

using namespace bound_detail;

//! What a bound reuses across calls: the tables' relaxed terms and the relaxation's scratch.
//! Kept in the cache so that a sweep's bounds allocate nothing.
struct BoundScratch
{
    std::vector<RelaxedTable> tables;
    RelaxedScratch relaxed;
};

//! What one table contributes to the bound: its least model-parallel time (summed over any
//! tiling) and its time data-parallel (every GPU looks it up for its local batch).
struct TableBoundTerms
{
    double model_parallel_ms = 0.0;
    double data_parallel_ms = 0.0;
    std::vector<Tiling> tilings; //!< model-parallel; the first is the fastest (model_parallel_ms)
};

TableBoundTerms tableBoundTerms( const Platform& platform, const TableSpec& t, double batch,
                                 double p )
{
    TableBoundTerms terms;
    terms.tilings =
        modelParallelTilings( platform, t, embeddingTableStats( t, batch, 0.0 ), batch );
    terms.model_parallel_ms = terms.tilings.front().ms;
    terms.data_parallel_ms = dataParallelMs( platform, t, embeddingTableStats( t, batch / p, 0.0 ),
                                             batch, p, ComputeKernel::hbm );
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

double lowerBoundMs( const Workload& workload, const Platform& platform, std::int64_t global_batch,
                     LowerBoundCache* cache );

} // namespace

struct LowerBoundCache::Impl
{
    explicit Impl( std::size_t max_tables ) : max_entries( max_tables ) {}
    //! Beyond this many tables the cache starts over (bounded memory).
    std::size_t max_entries;
    //! Beyond this many contexts the cache starts over (their search is linear).
    static constexpr std::size_t kMaxContexts = 256;
    std::unordered_map<TermsKey, TableBoundTerms, TermsKeyHash, TermsKeyEqual> terms;
    //! Computed only for bounds whose memory binds; the curves keyed by accessKey.
    std::unordered_map<TermsKey, TableHoldings, TermsKeyHash, TermsKeyEqual> holdings;
    std::unordered_map<TermsKey, AccessCurve, TermsKeyHash, TermsKeyEqual> curves;
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
            holdings.clear();
            curves.clear();
        }
        contexts.push_back( key );
        return last_context = contexts.size() - 1;
    }
};

LowerBoundCache::LowerBoundCache( std::size_t max_tables )
    : _impl( std::make_unique<Impl>( max_tables ) )
{
}
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

//! Empties `map` if `more` entries might not fit under the cache's limit: done before a bound
//! looks its tables up, since the bound keeps pointers to the entries it finds (an
//! unordered_map's elements stay where they are until erased).
template <class Map>
void makeRoom( Map& map, std::size_t more, std::size_t max_entries )
{
    if ( map.size() + more > max_entries )
        map.clear();
}

//! tableBoundTerms of table t, from the cache when it holds them (`context`: the number of the
//! bound's context there; makeRoom was called), computed into `uncached` otherwise (reserved
//! for every table: the terms must not move).
const TableBoundTerms& boundTerms( LowerBoundCache* cache, std::size_t context,
                                   const Platform& platform, const TableSpec& t, double batch,
                                   double p, std::vector<TableBoundTerms>& uncached )
{
    if ( !cache )
        return uncached.emplace_back( tableBoundTerms( platform, t, batch, p ) );
    auto& map = cache->impl().terms;
    const TermsKey key = termsKey( t, context );
    const auto it = map.find( key );
    if ( it != map.end() )
        return it->second;
    return map.emplace( key, tableBoundTerms( platform, t, batch, p ) ).first->second;
}

//! The key of termsKey without the fields accessCurve does not read (width, element type,
//! optimizer).
TermsKey accessKey( const TableSpec& t, std::size_t context )
{
    TermsKey key = termsKey( t, context );
    key[2] = key[4] = key[8] = 0.0;
    return key;
}

//! tableHoldings of table t, from the cache when it holds them (makeRoom was called), and its
//! access curve from the cache when a table with the same access pattern put it there.
const TableHoldings& holdingsOf( LowerBoundCache* cache, std::size_t context,
                                 const Platform& platform, const TableSpec& t, double batch,
                                 double p, std::vector<TableHoldings>& uncached )
{
    if ( !cache )
        return uncached.emplace_back(
            tableHoldings( platform, t, batch, p, accessCurve( t, batch, p ) ) );
    auto& impl = cache->impl();
    const TermsKey key = termsKey( t, context );
    const auto it = impl.holdings.find( key );
    if ( it != impl.holdings.end() )
        return it->second;
    const TermsKey access = accessKey( t, context );
    auto curve = impl.curves.find( access );
    if ( curve == impl.curves.end() )
    {
        if ( impl.curves.size() >= impl.max_entries )
            impl.curves.clear();
        curve = impl.curves.emplace( access, accessCurve( t, batch, p ) ).first;
    }
    return impl.holdings.emplace( key, tableHoldings( platform, t, batch, p, curve->second ) )
        .first->second;
}

double lowerBoundMs( const Workload& workload, const Platform& platform, std::int64_t global_batch,
                     LowerBoundCache* cache )
{
    // The step's timeline (stepTimeline, model/step.hpp) is monotone in every duration, and
    // max_g fwd + max_g bwd ≥ the mean over the GPUs of fwd + bwd: so the timeline of the mean
    // lookup work, the balanced all-to-alls and no all-reduce bounds every plan. The busiest
    // GPU of an all-to-all receives at least (P−1)/P of the total volume, so each all-to-all
    // takes at least the balanced one of comm_size = the total: Σ pooled bytes (local batch ×
    // dim of every model-parallel table) and Σ id bytes. Which tables go data-parallel is
    // minimised over in relaxedBoundMs.
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
    BoundScratch local_scratch;
    BoundScratch& scratch = cache ? cache->impl().scratch : local_scratch;
    std::vector<RelaxedTable>& tables = scratch.tables;
    tables.clear();
    const std::size_t context =
        cache ? cache->impl().context( contextKey( platform, batch, p ) ) : 0;
    if ( cache )
        makeRoom( cache->impl().terms, workload.tables.size(), cache->impl().max_entries );
    std::vector<TableBoundTerms> uncached_terms;
    if ( !cache )
        uncached_terms.reserve( workload.tables.size() );
    for ( const TableSpec& t : workload.tables )
    {
        const TableBoundTerms& terms =
            boundTerms( cache, context, platform, t, batch, p, uncached_terms );
        const double state = shardStateBytes( t, static_cast<double>( t.rows ), t.dim );
        RelaxedTable r;
        r.mp_ms = terms.model_parallel_ms;
        r.dp_ms = terms.data_parallel_ms;
        r.mp_bytes = terms.tilings.front().bytes; // the floor's tiling
        r.dp_bytes = p * state + dataParallelOutputBytes( t, batch );
        r.pooled_bytes = local * t.dim * dataTypeBytes( t.dtype );
        r.id_bytes = local * t.pooling_factor * kIndexBytes;
        r.gradient_bytes = static_cast<double>( t.rows ) * t.dim * dataTypeBytes( t.dtype );
        r.tilings = terms.tilings.size() > 1 ? &terms.tilings : nullptr;
        tables.push_back( r );
    }
    const double dense_gradient_bytes =
        dense.parameters * dataTypeBytes( workload.dense.dtype ); // as predictStep all-reduces
    const RelaxedBound in_hbm =
        relaxedBoundMs( platform, dense, dense_gradient_bytes, tables, 0.0, scratch.relaxed );
    // HBM that all GPUs together leave to the tables: predictStep counts the dense replica, its
    // activations and the reserve on every GPU besides them.
    const double capacity =
        p * ( ( platform.gpu.memory_GiB - platform.hbm_reserve_GiB ) * kBytesPerGiB -
              denseReplicaBytes( workload.dense, dense.parameters ) - dense.activation_bytes );
    // Tables in HBM fit: pricing memory (every holding is slower in less memory) cannot raise
    // the bound.
    if ( in_hbm.bytes <= capacity )
        return in_hbm.ms;
    std::vector<TableHoldings> uncached;
    uncached.reserve( workload.tables.size() );
    if ( cache )
        makeRoom( cache->impl().holdings, workload.tables.size(), cache->impl().max_entries );
    std::vector<const TableHoldings*> holdings;
    for ( const TableSpec& t : workload.tables )
        holdings.push_back( &holdingsOf( cache, context, platform, t, batch, p, uncached ) );
    return std::max( in_hbm.ms, memoryBoundMs( platform, dense, dense_gradient_bytes, holdings,
                                               tables, capacity, scratch.relaxed ) );
}

} // namespace

} // namespace shardsweep
