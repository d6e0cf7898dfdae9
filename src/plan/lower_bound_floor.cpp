// The lower bound's per-table floor (docs/PLANNERS.md, "Lower bound"): the least lookups of any
// tiling of a model-parallel table into blocks, the tilings the bound weighs with their volumes
// and bytes, and a data-parallel table's lookups.
#include "lower_bound_detail.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <shardsweep/model/embedding.hpp>
#include <shardsweep/model/memory.hpp>
#include <shardsweep/model/step.hpp>
#include <vector>

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
        //! (1 − f) a + f b, term by term (a and b of one width: one narrow-row factor).
        static Terms mix( const Terms& a, const Terms& b, double f )
        {
            const auto m = [f]( double x, double y ) { return x + f * ( y - x ); };
            return { a.factor,
                     m( a.fwd_dram, b.fwd_dram ),
                     m( a.fwd_l2, b.fwd_l2 ),
                     m( a.fwd_host, b.fwd_host ),
                     m( a.bwd_dram, b.bwd_dram ),
                     m( a.bwd_l2, b.bwd_l2 ),
                     m( a.bwd_host, b.bwd_host ) };
        }
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

//! Least lookups (ms) of any tiling, counted by the columns: the blocks over one column cut it
//! into row shares that sum to 1, and a block w columns wide with share s costs each of its
//! columns floor(w, s) / w ≥ h(s), the least of that over the widths. floor is nondecreasing in
//! s (so is every byte count: lookups, distinct rows, and L2 hits, which stop growing once the
//! rows no longer fit), so a block with a share in ((k − 1) / N, k / N] costs a column at least
//! h((k − 1) / N) and covers at most k / N of it: the least cost of cells k_i with Σ k_i ≥ N
//! (an unbounded knapsack) bounds every column, and dim times it every tiling. Where the least
//! cost per area lies at a share like 0.8, the other 0.2 of the rows pay a block's output
//! stream of their own. tstLowerBoundTilings.block_cost_never_falls_as_its_row_share_grows checks
//! the monotonicity on the model's shard cost.
double columnCoverMs( const ShardFloor& shard, const TableSpec& t, double s_min )
{
    constexpr int kCells = 256;
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::array<double, kCells + 1> cell{}, least{};
    cell.fill( kInf );
    forEachWidthClass(
        t,
        [&]( int w )
        {
            // Every term is affine in s on [s_min, fit] and on [fit, 1]
            // (forEachCandidateShare): the pieces' ends give every cell's.
            const double fit = std::clamp( shard.fittingShare( w ), s_min, 1.0 );
            const double ends[3] = { s_min, fit, 1.0 };
            const ShardFloor::Terms at[3] = { shard.terms( w, s_min ), shard.terms( w, fit ),
                                              shard.terms( w, 1.0 ) };
            for ( int k = 1; k <= kCells; ++k )
            {
                const double s = std::max( s_min, ( k - 1.0 ) / kCells );
                const int i = s <= fit ? 0 : 1;
                const double f =
                    ends[i + 1] > ends[i] ? ( s - ends[i] ) / ( ends[i + 1] - ends[i] ) : 0.0;
                cell[k] =
                    std::min( cell[k], ShardFloor::Terms::mix( at[i], at[i + 1], f ).ms() / w );
            }
        } );
    // Nondecreasing for certain (a suffix minimum only lowers it), so a cover can shrink its
    // blocks until they sum to n cells exactly, and then its smallest block is at most n / 2:
    // the last block of the recurrence need be no larger.
    for ( int k = kCells - 1; k >= 1; --k )
        cell[k] = std::min( cell[k], cell[k + 1] );
    for ( int n = 1; n <= kCells; ++n )
    {
        least[n] = cell[n];
        for ( int k = 1; 2 * k <= n; ++k )
            least[n] = std::min( least[n], least[n - k] + cell[k] );
    }
    return t.dim * least[kCells];
}

//! Least lookups (ms) of any tiling, counted by the rows: the blocks over one row have widths
//! that sum to dim, and a block w wide with share s costs each unit of its share floor(w, s) / s
//! ≥ q(w), the least of that over the shares (forEachCandidateShare). So every tiling costs at
//! least the least Σ q(w_i) over the ways of writing dim as a sum of widths.
double rowCoverMs( const ShardFloor& shard, const TableSpec& t, double s_min )
{
    constexpr double kInf = std::numeric_limits<double>::infinity();
    std::vector<double> per_share( t.dim + 1, kInf ), least( t.dim + 1, kInf );
    for ( int w = 1; w <= t.dim; ++w )
        forEachCandidateShare( shard, w, s_min,
                               [&]( double share, double ms )
                               { per_share[w] = std::min( per_share[w], ms / share ); } );
    least[0] = 0.0;
    for ( int d = 1; d <= t.dim; ++d )
        for ( int w = 1; w <= d; ++w )
            least[d] = std::min( least[d], least[d - w] + per_share[w] );
    return least[t.dim];
}

//! The tilings with lookups at least `cover`, which every tiling has: the polyhedron of points
//! above a mix of `all` with ms ≥ cover has as vertices the points of `all` there, those below
//! it raised to it, and where a segment between one below and one above crosses it. A linear
//! cost with nonnegative prices is least at one of them.
std::vector<Tiling> raisedTo( const std::vector<Tiling>& all, double cover )
{
    std::vector<Tiling> out;
    for ( const Tiling& a : all )
    {
        if ( a.ms >= cover )
        {
            out.push_back( a );
            continue;
        }
        out.push_back( { cover, a.id_factor, a.pooled_factor } );
        for ( const Tiling& b : all )
            if ( b.ms > cover )
            {
                const double l = ( cover - a.ms ) / ( b.ms - a.ms ); // share of b in the mix
                out.push_back( { cover, a.id_factor + l * ( b.id_factor - a.id_factor ),
                                 a.pooled_factor + l * ( b.pooled_factor - a.pooled_factor ) } );
            }
    }
    return out;
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

double leastCostRowShare( const Platform& platform, const TableSpec& t,
                          const EmbeddingTableStats& stats, double batch, int cols )
{
    if ( !validTable( t, batch ) || cols <= 0 )
        return 1.0;
    const ShardFloor shard = shardFloor( platform, t, stats, batch, 0.0 );
    double least = std::numeric_limits<double>::infinity(), best = 1.0;
    forEachCandidateShare( shard, cols, 1.0 / static_cast<double>( t.rows ),
                           [&]( double share, double ms )
                           {
                               const double per_area = ms / share;
                               if ( per_area < least || ( per_area == least && share < best ) )
                                   least = per_area, best = share;
                           } );
    return best;
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
    const auto byTime = []( const Tiling& a, const Tiling& b ) { return a.ms < b.ms; };
    std::sort( all.begin(), all.end(), byTime );
    // Mixes of single block shapes can reach the least cost per area everywhere; a tiling
    // cannot where its shares or widths do not divide the table evenly. Raised after the first
    // pruning, so that their crossings are few and the second keeps them without merging.
    std::vector<Tiling> kept =
        raisedTo( keepUndominated( all ),
                  std::max( columnCoverMs( shard, t, s_min ), rowCoverMs( shard, t, s_min ) ) );
    std::sort( kept.begin(), kept.end(), byTime );
    kept = keepUndominated( kept );
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

} // namespace shardsweep
