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

namespace bound_detail
{

// embeddingShardCostFromStats charges a shard of w columns and row share s (its lookups, distinct
// rows and repeats are s of the table's: ids are hashed) factor(w) · max(DRAM bytes / DRAM
// bandwidth, L2 bytes / L2 bandwidth) + host bytes / host bandwidth, the host bytes being
// host_share of its distinct rows' first reads and of its row updates (UVM, host_share 1, also
// reads its rows' later L2 misses there: moving those to DRAM only lowers the floor). Its L2 hits
// are exact: every repeat while its distinct rows fit kL2RowShare of the L2, else repeats · L2 rows
// / distinct rows. Every shard streams its ids, offsets and pooled output (batch · sector-rounded
// row bytes: a row block writes partial sums for every sample). Without host share, UVM moves a
// first touch from DRAM to the host link, which is no faster: the DRAM term uses the faster of the
// two, so the floor bounds every kernel.
//
// The shards of a table tile it: Σ w_i · s_i = dim. So their total is at least dim times the
// least cost per unit of area, min over (w, s) of floor(w, s) / (w · s). For w in one class (same
// sector-rounded row bytes and narrow-row factor) the cost per area is nonincreasing in w (only
// the optimizer state grows with w), so the class's widest block stands for the class. In s,
// every byte count is affine on each side of the share where the block's distinct rows stop
// fitting the L2, so floor is there a sum of maxima of affine functions: piecewise affine, and
// floor(s) / s is monotone on each piece. Its least is at an end of a piece: the range's ends,
// the fitting share, or where the two sides of a maximum cross. Splitting a table helps only
// through L2 (a block whose distinct rows fit hits every repeat), and every block pays its own
// output stream and narrow-row factor for it.
namespace
{
struct ShardFloor
{
    const GpuSpec& gpu;
    const TableSpec& table;
    const EmbeddingTableStats& stats;
    double batch, host_share, dram, host, l2bw, l2_bytes;

    //! The terms of a shard of `cols` columns holding row share s, ms: forward and backward, each
    //! the DRAM and the L2 side of its maximum (before the narrow-row factor) and its host part.
    struct Terms
    {
        double factor, fwd_dram, fwd_l2, fwd_host, bwd_dram, bwd_l2, bwd_host;
        double ms() const
        {
            return factor * ( std::max( fwd_dram, fwd_l2 ) + std::max( bwd_dram, bwd_l2 ) ) +
                   fwd_host + bwd_host;
        }
    };

    //! The share below which the block's distinct rows fit kL2RowShare of the L2.
    double fittingShare( int cols ) const
    {
        const double row_bytes = sectorBytes( cols * dataTypeBytes( table.dtype ) );
        return stats.unique_rows > 0.0 ? l2_bytes / ( stats.unique_rows * row_bytes )
                                       : std::numeric_limits<double>::infinity();
    }

    //! The model's own traffic (embeddingShardBytes) on the floor's bandwidths.
    Terms terms( int cols, double s ) const
    {
        const EmbeddingShardBytes b = embeddingShardBytes( gpu, table, stats, s, cols, batch );
        Terms t;
        t.factor = narrowRowFactor( cols );
        // Without host share the floor also covers UVM, whose row reads and updates go over the
        // host link: every DRAM term uses the faster of the two.
        const double dram_first = host_share > 0.0 ? dram : std::max( dram, t.factor * host );
        const double h = host_share;
        // The host brings h of the distinct rows (uvm_caching's rule): with h = 1 that bounds
        // UVM too, which also reads the rows' later L2 misses over the host link.
        t.fwd_dram = ( b.fwd_first_touch - h * b.fwd_distinct + b.fwd_stream ) / dram_first;
        t.fwd_l2 = b.fwd_l2 / l2bw;
        t.fwd_host = h * b.fwd_distinct / host;
        t.bwd_dram = ( ( 1.0 - h ) * b.bwd_updates + b.bwd_stream ) / dram_first;
        t.bwd_l2 = b.bwd_l2 / l2bw;
        t.bwd_host = h * b.bwd_updates / host;
        return t;
    }
};

//! Where the affine functions p and q, known at lo and hi, cross inside (lo, hi); else lo.
double crossing( double lo, double hi, double p_lo, double p_hi, double q_lo, double q_hi )
{
    const double d_lo = p_lo - q_lo, d_hi = p_hi - q_hi;
    if ( d_lo * d_hi >= 0.0 )
        return lo;
    return lo + ( hi - lo ) * d_lo / ( d_lo - d_hi );
}

//! Calls at( s, ms ) for the shares where floor(s) / s of blocks `cols` wide, row share in
//! [s_min, 1], can be least, with the block's time ms there: the ends of its affine pieces.
//! A term c / s added to it (a volume per block) keeps (floor(s) + c) / s piecewise monotone
//! with the same pieces, so these shares serve for that too; so does c · min(cap, 1 / s), c ≥ 0,
//! a volume cut to a cap: with floor(s) / s = a / s + b there, the cost falls before s = 1 / cap
//! only if a > 0, and then (a + c) / s falls after it too, so s = 1 / cap is no least.
template <class At>
void forEachCandidateShare( const ShardFloor& shard, int cols, double s_min, const At& at )
{
    const double fit = shard.fittingShare( cols );
    const auto visit = [&]( double s ) { at( s, shard.terms( cols, s ).ms() ); };
    // The pieces: [s_min, fit] and [fit, 1] where fit lies inside, each closed at its ends.
    const double pieces[2][2] = { { s_min, std::min( 1.0, fit ) },
                                  { std::max( s_min, fit ), 1.0 } };
    for ( const auto& piece : pieces )
    {
        const double lo = piece[0], hi = piece[1];
        if ( !( lo <= hi ) )
            continue;
        // The hits are continuous at fit (u · rb = L2 there), so both pieces are affine up to it.
        const ShardFloor::Terms a = shard.terms( cols, lo ), b = shard.terms( cols, hi );
        visit( lo );
        visit( hi );
        visit( crossing( lo, hi, a.fwd_dram, b.fwd_dram, a.fwd_l2, b.fwd_l2 ) );
        visit( crossing( lo, hi, a.bwd_dram, b.bwd_dram, a.bwd_l2, b.bwd_l2 ) );
    }
}

//! Calls block( w ) for the widest block width of every class (same sector-rounded row bytes
//! and narrow-row factor): within a class the cost per area and the ids per area only fall
//! with w, so the class's widest block stands for it.
template <class Block>
void forEachWidthClass( const TableSpec& t, const Block& block )
{
    const double elem = dataTypeBytes( t.dtype );
    for ( int w = 1; w <= t.dim; ++w )
        if ( w == t.dim || sectorBytes( ( w + 1 ) * elem ) != sectorBytes( w * elem ) ||
             narrowRowFactor( w + 1 ) != narrowRowFactor( w ) )
            block( w );
}

ShardFloor shardFloor( const Platform& platform, const TableSpec& t, const EmbeddingTableStats& s,
                       double batch, double host_share )
{
    const double dram_Bpms = platform.gpu.memory_bandwidth_GBps * 1e6 * kEmbeddingDramEfficiency;
    return ShardFloor{ platform.gpu,
                       t,
                       s,
                       batch,
                       std::clamp( host_share, 0.0, 1.0 ),
                       dram_Bpms,
                       platform.host_to_gpu_GBps * 1e6,
                       dram_Bpms * kL2ToDramBandwidth,
                       kL2RowShare * platform.gpu.l2_cache_MiB * 1048576.0 };
}

bool validTable( const TableSpec& t, double batch )
{
    return batch > 0.0 && t.rows > 0 && t.dim > 0;
}

//! Whether some mix λ a + (1 − λ) b, λ in [0, 1], is at most x in all three coordinates: then
//! x is never the only cheapest at prices ≥ 0 (the mix is no dearer, and a linear cost is
//! least at one of its ends).
bool mixBeats( const Tiling& a, const Tiling& b, const Tiling& x )
{
    double lo = 0.0, hi = 1.0;
    const double ax[3] = { a.ms, a.id_factor, a.pooled_factor };
    const double bx[3] = { b.ms, b.id_factor, b.pooled_factor };
    const double xx[3] = { x.ms, x.id_factor, x.pooled_factor };
    for ( int i = 0; i < 3; ++i )
    {
        // λ (a − b) ≤ x − b.
        const double d = ax[i] - bx[i], r = xx[i] - bx[i];
        if ( d > 0.0 )
            hi = std::min( hi, r / d );
        else if ( d < 0.0 )
            lo = std::max( lo, r / d );
        else if ( r < 0.0 )
            return false;
    }
    return lo <= hi;
}

//! Drops the tilings that a mix of two others beats in all three coordinates (the cheapest at
//! any prices stays), and merges neighbours by time into their least in each coordinate (a
//! point below both: still a bound) until at most kMaxTilings are left. `all` is sorted by
//! time.
std::vector<Tiling> keepUndominated( std::vector<Tiling> all )
{
    for ( std::size_t x = 0; x < all.size(); )
    {
        bool beaten = false;
        for ( std::size_t a = 0; a < all.size() && !beaten; ++a )
            for ( std::size_t b = a; b < all.size() && !beaten; ++b )
                beaten = a != x && b != x && mixBeats( all[a], all[b], all[x] );
        if ( beaten )
            all.erase( all.begin() + static_cast<std::ptrdiff_t>( x ) );
        else
            ++x;
    }
    std::vector<Tiling>& kept = all;
    while ( kept.size() > kMaxTilings )
    {
        // Merge the pair closest in time: it loses the least of the slower one's lookups.
        std::size_t merge = 0;
        for ( std::size_t k = 1; k + 1 < kept.size(); ++k )
            if ( kept[k + 1].ms / kept[k].ms < kept[merge + 1].ms / kept[merge].ms )
                merge = k;
        Tiling& a = kept[merge];
        const Tiling& b = kept[merge + 1];
        a.id_factor = std::min( a.id_factor, b.id_factor );
        a.pooled_factor = std::min( a.pooled_factor, b.pooled_factor );
        kept.erase( kept.begin() + static_cast<std::ptrdiff_t>( merge ) + 1 );
    }
    kept.shrink_to_fit(); // the bound's cache keeps it
    return kept;
}
} // namespace

double modelParallelFloorMs( const Platform& platform, const TableSpec& t,
                             const EmbeddingTableStats& s, double batch, double host_share )
{
    if ( !validTable( t, batch ) )
        return 0.0;
    const ShardFloor shard = shardFloor( platform, t, s, batch, host_share );
    const double s_min = 1.0 / static_cast<double>( t.rows );
    double least = std::numeric_limits<double>::infinity();
    forEachWidthClass( t,
                       [&]( int w )
                       {
                           forEachCandidateShare( shard, w, s_min,
                                                  [&]( double share, double ms ) {
                                                      least = std::min( least, ms / ( w * share ) );
                                                  } );
                       } );
    return t.dim * least;
}

std::vector<Tiling> modelParallelTilings( const Platform& platform, const TableSpec& t,
                                          const EmbeddingTableStats& s, double batch )
{
    if ( !validTable( t, batch ) )
    {
        Tiling whole;
        whole.bytes = modelParallelTilingBytes( t, batch, platform.numGpus(), whole );
        return { whole };
    }
    const ShardFloor shard = shardFloor( platform, t, s, batch, 0.0 );
    const double s_min = 1.0 / static_cast<double>( t.rows );
    const double cap = kTilingVolumeCap;
    std::vector<Tiling> all;
    forEachWidthClass( t,
                       [&]( int w )
                       {
                           forEachCandidateShare( shard, w, s_min,
                                                  [&]( double share, double ms )
                                                  {
                                                      all.push_back(
                                                          { t.dim * ms / ( w * share ),
                                                            std::min( cap, double( t.dim ) / w ),
                                                            std::min( cap, 1.0 / share ) } );
                                                  } );
                       } );
    std::sort( all.begin(), all.end(),
               []( const Tiling& a, const Tiling& b ) { return a.ms < b.ms; } );
    std::vector<Tiling> kept = keepUndominated( all );
    for ( Tiling& y : kept )
        y.bytes = modelParallelTilingBytes( t, batch, platform.numGpus(), y );
    return kept;
}

double modelParallelTilingBytes( const TableSpec& t, double batch, double gpus, const Tiling& y )
{
    const double elem = dataTypeBytes( t.dtype );
    const double local = batch / gpus;
    // As stepShards counts them, per row block: its output and gradient for every sample,
    // 2 · global · cols · elem (its columns sum to dim), and buffers 2 · (sent + received)
    // pooled bytes, (P − 1) · local · cols · elem each; per column block the ids of its rows
    // received, (P − 1) · local · pooling · row share · 8 B.
    const double pooled = 2.0 * batch * t.dim * elem + ( gpus - 1.0 ) * 4.0 * local * t.dim * elem;
    const double ids = ( gpus - 1.0 ) * local * t.pooling_factor * kIndexBytes;
    return shardStateBytes( t, static_cast<double>( t.rows ), t.dim ) + y.pooled_factor * pooled +
           y.id_factor * ids;
}

double dataParallelOutputBytes( const TableSpec& t, double batch )
{
    return 2.0 * batch * t.dim * dataTypeBytes( t.dtype );
}

double dataParallelMs( const Platform& platform, const TableSpec& t, const EmbeddingTableStats& s,
                       double batch, double gpus, ComputeKernel kernel )
{
    const EmbeddingCost replica = embeddingShardCostFromStats(
        platform.gpu, platform.host_to_gpu_GBps, t, s, 1.0, t.dim, batch / gpus, kernel );
    return gpus * ( replica.fwd_ms + replica.bwd_ms );
}

} // namespace bound_detail

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
