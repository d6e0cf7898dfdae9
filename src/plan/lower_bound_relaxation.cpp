// The relaxations behind the lower bound (docs/PLANNERS.md, "Lower bound"): the step timeline of
// the mean lookup work, minimised over which tables go data-parallel, and the memory constraint
// relaxed by a Lagrange multiplier, the price of a byte of HBM.
#include "lower_bound_detail.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/model/step.hpp>
#include <utility>

namespace shardsweep::bound_detail
{
namespace
{

double allToAllMs( const Platform& platform, double bytes, RelaxedScratch& scratch )
{
    auto time = [&]
    {
        return 1e-6 *
               collectiveTimeNs( platform.network, platform.system, Collective::all_to_all, bytes );
    };
    if ( !scratch.remember_all_to_alls )
        return time();
    const auto it = scratch.all_to_all_ms.find( bytes );
    if ( it != scratch.all_to_all_ms.end() )
        return it->second;
    return scratch.all_to_all_ms.emplace( bytes, time() ).first->second;
}

//! Sorts `v` by `before`: insertion sort up to 64 entries (a scenario's tables: about 1.7x
//! faster than std::sort's partitioning there, which mispredicts a branch per comparison, and the
//! bound sorts three such arrays per scenario), std::sort beyond.
template <class T, class Before>
void sortSmall( std::vector<T>& v, Before before )
{
    if ( v.size() > 64 )
    {
        std::sort( v.begin(), v.end(), before );
        return;
    }
    for ( std::size_t i = 1; i < v.size(); ++i )
    {
        const T x = v[i];
        std::size_t j = i;
        for ( ; j > 0 && before( x, v[j - 1] ); --j )
            v[j] = v[j - 1];
        v[j] = x;
    }
}

//! The step timeline's iteration time with `lookup_ms` of lookups on every GPU, the dense part,
//! the balanced all-to-alls of the given volumes and no all-reduce.
double boundTimelineMs( const Platform& platform, const DenseCost& dense, double lookup_ms,
                        double pooled_bytes, double id_bytes, RelaxedScratch& scratch )
{
    const int gpus = platform.numGpus();
    StepDurations d;
    d.input_dist = gpus > 1 && id_bytes > 0 ? allToAllMs( platform, id_bytes, scratch ) : 0.0;
    d.a2a_fwd = gpus > 1 && pooled_bytes > 0 ? allToAllMs( platform, pooled_bytes, scratch ) : 0.0;
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
//! with none of them data-parallel, holding `bytes`; `lookup_ms`: the GPUs' mean lookup work;
//! `pooled`, `ids`: the all-to-all volumes. Sorts the scratch arrays.
RelaxedBound dataParallelBoundMs( const Platform& platform, const DenseCost& dense,
                                  RelaxedScratch& scratch, double lookup_ms, double pooled,
                                  double ids, RelaxedBound bound )
{
    const std::vector<double>& extra = scratch.extra;
    std::vector<int>& order = scratch.order;
    order.resize( extra.size() );
    for ( std::size_t k = 0; k < order.size(); ++k )
        order[k] = static_cast<int>( k );
    sortSmall( order, [&]( int a, int b ) { return extra[a] < extra[b]; } );
    sortSmall( scratch.by_pooled, std::greater<double>() );
    sortSmall( scratch.by_ids, std::greater<double>() );
    // Compute that no plan avoids: the GPUs' mean lookup work and the dense part.
    const double fixed = lookup_ms + dense.top_fwd_ms + dense.top_bwd_ms;
    double extra_sum = 0.0, extra_bytes = 0.0, pooled_left = pooled, ids_left = ids;
    const double base_bytes = bound.bytes;
    for ( std::size_t k = 0; k < order.size(); ++k )
    {
        extra_sum += extra[order[k]];
        extra_bytes += scratch.extra_bytes[order[k]];
        if ( fixed + extra_sum >= bound.ms )
            break; // communication cannot go below zero
        pooled_left = std::max( 0.0, pooled_left - scratch.by_pooled[k] );
        ids_left = std::max( 0.0, ids_left - scratch.by_ids[k] );
        const double ms = boundTimelineMs( platform, dense, lookup_ms + extra_sum, pooled_left,
                                           ids_left, scratch );
        if ( ms < bound.ms )
            bound = { ms, base_bytes + extra_bytes };
    }
    return bound;
}

//! Cells of the all-to-all lines (the all-reduce's get half: its weight is at most 1 − ω = 0.2).
constexpr int kLineGrid = 32;

//! A straight line below a nondecreasing function on [v_min, v_max]: f(v) ≥ alpha + slope · v.
struct SupportLine
{
    double alpha = 0.0, slope = 0.0;
};

//! The line below the nondecreasing `f` on [v_min, v_max] with the slope of f on the upper half
//! of that range, as high as it goes: on a uniform grid v_min = v_0 < … < v_n = v_max, every v
//! in [v_k, v_k+1] has f(v) − slope · v ≥ f(v_k) − slope · v_k+1, so the least of those is a
//! valid alpha (it uses nothing but that f is nondecreasing), within slope · (v_max − v_min) / n
//! of the best one.
template <int kGrid, class F>
SupportLine supportLine( double v_min, double v_max, const F& f )
{
    const double mid = 0.5 * ( v_min + v_max );
    SupportLine line;
    if ( v_max > mid )
        line.slope = std::max( 0.0, ( f( v_max ) - f( mid ) ) / ( v_max - mid ) );
    line.alpha = std::numeric_limits<double>::infinity();
    for ( int k = 0; k < kGrid; ++k )
    {
        const double v = v_min + ( v_max - v_min ) * k / kGrid;
        const double next = v_min + ( v_max - v_min ) * ( k + 1 ) / kGrid;
        line.alpha = std::min( line.alpha, f( v ) - line.slope * next );
    }
    return line;
}

double allReduceMs( const Platform& platform, double bytes )
{
    return 1e-6 *
           collectiveTimeNs( platform.network, platform.system, Collective::all_reduce, bytes );
}

//! The bound over which tables go data-parallel, each table deciding for itself. With the
//! lookups L (all in the forward: the GPUs' mean work), A the all-to-all and R the all-reduce
//! time, any plan takes at least
//!   T_main = max(A(ids), bottom_fwd) + L + A(pooled) + top + max(A(pooled), bottom_bwd),
//!   T_sync = max(A(ids), bottom_fwd) + A(pooled) + top + A(pooled) + R(dense + replicated
//!            gradients)   (the all-reduce starts once the gradients arrived),
//! and max(x, y) ≥ θ x + (1 − θ) y for θ in [0, 1]. Either every table here goes data-parallel
//! (no all-to-all: priced directly), or at least one stays, so the volumes are at least the
//! smallest table's. There, with A and R above straight lines (supportLine), ω T_main +
//! (1 − ω) T_sync is at least a constant plus prices per lookup ms, pooled, id and gradient
//! byte times the amounts: linear in every table's choice, so its least is where each table
//! goes data-parallel exactly when its own extra lookups and gradient cost less than its own
//! volumes, priced. dataParallelBoundMs pairs the smallest extra costs with the largest volumes
//! of any tables instead, and no gradient, which is looser where the tables cheap to replicate
//! are small. `lookup_ms`, `pooled`, `ids`, `base_bytes`: the lookups, volumes and HBM bytes
//! with no table here data-parallel; `dense_gradient_bytes`: the MLPs' gradients.
RelaxedBound perTableDataParallelBoundMs( const Platform& platform, const DenseCost& dense,
                                          double dense_gradient_bytes, double lookup_ms,
                                          double pooled, double ids, double base_bytes,
                                          RelaxedScratch& scratch )
{
    const std::size_t n = scratch.extra.size();
    const double p = platform.numGpus();
    double all_extra = 0.0, all_bytes = base_bytes, all_gradients = dense_gradient_bytes;
    for ( std::size_t t = 0; t < n; ++t )
    {
        all_extra += scratch.extra[t];
        all_bytes += scratch.extra_bytes[t];
        all_gradients += scratch.own_gradient[t];
    }
    const double top = dense.top_fwd_ms + dense.top_bwd_ms;
    const RelaxedBound all_replicated{
        std::max( boundTimelineMs( platform, dense, lookup_ms + all_extra, 0.0, 0.0, scratch ),
                  dense.bottom_fwd_ms + top + allReduceMs( platform, all_gradients ) ),
        all_bytes };
    const auto a2a = [&]( double v ) { return allToAllMs( platform, v, scratch ); };
    const double least_pooled =
        *std::min_element( scratch.own_pooled.begin(), scratch.own_pooled.end() );
    const double least_ids = *std::min_element( scratch.own_ids.begin(), scratch.own_ids.end() );
    // The lines under A on [smallest table's volume, most]; a zero volume has no all-to-all
    // (A = 0 there), which a line through A's latency misses.
    const auto linesUpTo = [&]( double most_pooled, double most_ids )
    {
        return std::make_pair(
            least_pooled > 0.0 ? supportLine<kLineGrid>( least_pooled, most_pooled, a2a )
                               : SupportLine{},
            least_ids > 0.0 ? supportLine<kLineGrid>( least_ids, most_ids, a2a ) : SupportLine{} );
    };
    const SupportLine r_line =
        supportLine<kLineGrid / 2>( dense_gradient_bytes, all_gradients,
                                    [&]( double v ) { return allReduceMs( platform, v ); } );
    struct Weights
    {
        double omega, theta, eta;
    };
    // ω T_main + (1 − ω) T_sync at its least over the tables' choices, with A above the lines
    // p_line (pooled) and i_line (ids): data-parallel or model-parallel, at the floor with one
    // shard's volumes or, when `tiled`, at whichever tiling costs least.
    const auto relaxed =
        [&]( const Weights& x, const SupportLine& p_line, const SupportLine& i_line, bool tiled )
    {
        const double omega = x.omega, theta = x.theta, eta = x.eta;
        // Prices of a pooled, an id and a gradient byte in ω T_main + (1 − ω) T_sync. The
        // weight of A(pooled): once in T_main plus θ of its second maximum, twice in T_sync.
        const double pooled_weight = omega * ( 1.0 + theta ) + 2.0 * ( 1.0 - omega );
        const double wp = pooled_weight * p_line.slope;
        const double wi = eta * i_line.slope, wr = ( 1.0 - omega ) * r_line.slope;
        RelaxedBound value{ eta * i_line.alpha + wi * ids + ( 1.0 - eta ) * dense.bottom_fwd_ms +
                                top + omega * lookup_ms + pooled_weight * p_line.alpha +
                                wp * pooled + omega * ( 1.0 - theta ) * dense.bottom_bwd_ms +
                                ( 1.0 - omega ) * r_line.alpha + wr * dense_gradient_bytes,
                            base_bytes };
        for ( std::size_t t = 0; t < n; ++t )
        {
            const RelaxedTable& own = *scratch.own_table[t];
            double tiling = 0.0; // mp_ms with one shard's volumes, counted above
            if ( tiled && own.tilings )
            {
                // Each tiling priced against mp_ms, and the table's holdings in host memory
                // (one shard's volumes at least).
                tiling = omega * own.host_extra_ms / p;
                for ( const Tiling& y : *own.tilings )
                {
                    tiling = std::min( tiling,
                                       omega * ( y.ms + scratch.price * y.bytes - own.mp_ms ) / p +
                                           wp * ( y.pooled_factor - 1.0 ) * scratch.own_pooled[t] +
                                           wi * ( y.id_factor - 1.0 ) * scratch.own_ids[t] );
                }
            }
            const double replicated = omega * scratch.extra[t] + wr * scratch.own_gradient[t] -
                                      wp * scratch.own_pooled[t] - wi * scratch.own_ids[t];
            value.ms += std::min( tiling, replicated );
            if ( replicated < tiling )
                value.bytes += scratch.extra_bytes[t];
        }
        return value;
    };
    // Every weight with the floor and one shard's volumes (lines up to their sum) first.
    // Pairs, not structured bindings: nvcc (C++17) cannot capture one in the lambdas below.
    const std::pair<SupportLine, SupportLine> lines = linesUpTo( pooled, ids );
    RelaxedBound some_kept{ -std::numeric_limits<double>::infinity(), base_bytes };
    Weights best{ 1.0, 1.0, 1.0 };
    // θ = 1 and η = 1 are best without a bottom MLP (then max(A, 0) = A): the other weights
    // only where it has a forward or backward.
    const double thetas[] = { 1.0, 0.0 }, etas[] = { 1.0, 0.0 };
    const int num_thetas = dense.bottom_bwd_ms > 0.0 ? 2 : 1;
    const int num_etas = dense.bottom_fwd_ms > 0.0 ? 2 : 1;
    const auto forEachWeights = [&]( const auto& visit )
    {
        for ( const double omega : { 1.0, 0.99, 0.95, 0.8 } )
            for ( int a = 0; a < num_thetas; ++a )
                for ( int b = 0; b < num_etas; ++b )
                    visit( Weights{ omega, thetas[a], etas[b] } );
    };
    forEachWeights(
        [&]( const Weights& x )
        {
            const RelaxedBound value = relaxed( x, lines.first, lines.second, false );
            if ( value.ms > some_kept.ms )
            {
                some_kept = value;
                best = x;
            }
        } );
    // Then the tilings, with lines that reach the most any choice sends (factors are cut to
    // kTilingVolumeCap). Those lines are looser, so the value without tilings stays where it is
    // larger, and the tilings are priced at the best weights above only: at every weight they
    // moved NeuroShard's mean gap by 0.015 points (bench planners).
    double most_pooled = pooled, most_ids = ids;
    bool tilings_matter = false;
    for ( std::size_t t = 0; t < n; ++t )
    {
        const std::vector<Tiling>* tilings = scratch.own_table[t]->tilings;
        if ( !tilings )
            continue;
        tilings_matter = true;
        double pooled_factor = 1.0, id_factor = 1.0;
        for ( const Tiling& y : *tilings )
        {
            pooled_factor = std::max( pooled_factor, y.pooled_factor );
            id_factor = std::max( id_factor, y.id_factor );
        }
        most_pooled += ( pooled_factor - 1.0 ) * scratch.own_pooled[t];
        most_ids += ( id_factor - 1.0 ) * scratch.own_ids[t];
    }
    if ( tilings_matter )
    {
        const std::pair<SupportLine, SupportLine> wide = linesUpTo( most_pooled, most_ids );
        auto tiled = [&]( const Weights& x )
        {
            const RelaxedBound value = relaxed( x, wide.first, wide.second, true );
            if ( value.ms > some_kept.ms )
                some_kept = value;
        };
        // Under a price of memory the best weights without tilings can be far from those with
        // them (a tiling's bytes are priced); memoryBoundMs runs a few of these.
        if ( scratch.price > 0.0 )
            forEachWeights( tiled );
        else
            tiled( best );
    }
    return all_replicated.ms < some_kept.ms ? all_replicated : some_kept;
}

//! The cheapest point of `hull` at `price` (ms per byte): its time + price × bytes, and bytes.
Holding cheapest( const std::vector<Holding>& hull, double price )
{
    Holding best{ 0.0, std::numeric_limits<double>::infinity() };
    for ( const Holding& h : hull )
    {
        const double value = h.ms + price * h.bytes;
        if ( value < best.ms )
            best = { h.bytes, value };
    }
    return best;
}

//! The prices at which the cheapest point of `hull` changes.
void addBreakpoints( const std::vector<Holding>& hull, std::vector<double>& prices )
{
    for ( std::size_t i = 1; i < hull.size(); ++i )
        prices.push_back( ( hull[i].ms - hull[i - 1].ms ) / ( hull[i - 1].bytes - hull[i].bytes ) );
}

} // namespace

RelaxedBound relaxedBoundMs( const Platform& platform, const DenseCost& dense,
                             double dense_gradient_bytes, const std::vector<RelaxedTable>& tables,
                             double lookup_offset_ms, RelaxedScratch& scratch )
{
    // A data-parallel table has no all-to-all but every GPU looks it up for its samples; which
    // tables pay that is a choice, so the bound is the minimum over how many k tables are
    // data-parallel: the k smallest extra costs against the k largest volumes removed.
    const int gpus = platform.numGpus();
    const double p = gpus;
    scratch.extra.clear();
    scratch.extra_bytes.clear();
    scratch.by_pooled.clear();
    scratch.by_ids.clear();
    scratch.own_gradient.clear();
    scratch.own_table.clear();
    double embedding = 0.0, bytes = 0.0, pooled = 0.0, ids = 0.0;
    for ( const RelaxedTable& t : tables )
    {
        if ( gpus == 1 || t.dp_ms <= t.mp_ms )
        {
            // Data-parallel costs nothing extra: no volume.
            const bool dp = t.dp_ms < t.mp_ms || ( t.dp_ms == t.mp_ms && t.dp_bytes < t.mp_bytes );
            embedding += dp ? t.dp_ms : t.mp_ms;
            bytes += dp ? t.dp_bytes : t.mp_bytes;
            continue;
        }
        embedding += t.mp_ms;
        bytes += t.mp_bytes;
        pooled += t.pooled_bytes;
        ids += t.id_bytes;
        scratch.extra.push_back( ( t.dp_ms - t.mp_ms ) / p );
        scratch.extra_bytes.push_back( t.dp_bytes - t.mp_bytes );
        scratch.by_pooled.push_back( t.pooled_bytes );
        scratch.by_ids.push_back( t.id_bytes );
        scratch.own_gradient.push_back( t.gradient_bytes );
        scratch.own_table.push_back( &t );
    }
    // Each table's own volumes, in the order of extra (by_pooled and by_ids get sorted).
    scratch.own_pooled.assign( scratch.by_pooled.begin(), scratch.by_pooled.end() );
    scratch.own_ids.assign( scratch.by_ids.begin(), scratch.by_ids.end() );
    const double lookup = embedding / p + lookup_offset_ms;
    const RelaxedBound bound{ boundTimelineMs( platform, dense, lookup, pooled, ids, scratch ),
                              bytes };
    if ( gpus == 1 || scratch.extra.empty() )
        return bound;
    const RelaxedBound per_table = perTableDataParallelBoundMs(
        platform, dense, dense_gradient_bytes, lookup, pooled, ids, bytes, scratch );
    const RelaxedBound paired =
        dataParallelBoundMs( platform, dense, scratch, lookup, pooled, ids, bound );
    return per_table.ms > paired.ms ? per_table : paired;
}

double memoryBoundMs( const Platform& platform, const DenseCost& dense, double dense_gradient_bytes,
                      const std::vector<const TableHoldings*>& holdings,
                      const std::vector<RelaxedTable>& volumes, double capacity_bytes,
                      RelaxedScratch& scratch )
{
    // For any price ≥ 0 of a byte of HBM and any plan that fits (its tables' bytes ≤ capacity):
    // its time ≥ the bound with every table's time raised by price × its bytes and the lookups
    // lowered by price × capacity / P (the timeline is linear in the lookups). Minimised over
    // each table's holdings independently, that is a bound for every plan that fits.
    std::vector<double>& prices = scratch.prices;
    prices.clear();
    for ( const TableHoldings* h : holdings )
    {
        addBreakpoints( h->model_parallel, prices );
        addBreakpoints( h->data_parallel, prices );
    }
    const double p = platform.numGpus();
    std::vector<RelaxedTable>& tables = scratch.priced;
    tables = volumes;
    auto lagrangian = [&]( double price )
    {
        scratch.price = price;
        for ( std::size_t t = 0; t < tables.size(); ++t )
        {
            const Holding mp = cheapest( holdings[t]->model_parallel, price );
            const Holding dp = cheapest( holdings[t]->data_parallel, price );
            tables[t].mp_ms = mp.ms;
            tables[t].mp_bytes = mp.bytes;
            tables[t].dp_ms = dp.ms;
            tables[t].dp_bytes = dp.bytes;
            // The tilings are all in HBM: they stand only where one is cheapest, next to the
            // cheapest holding in host memory.
            const double in_host = cheapest( holdings[t]->model_parallel_host, price ).ms;
            tables[t].tilings = mp.ms < in_host ? volumes[t].tilings : nullptr;
            tables[t].host_extra_ms = in_host - mp.ms;
        }
        return relaxedBoundMs( platform, dense, dense_gradient_bytes, tables,
                               -price * capacity_bytes / p, scratch );
    };
    // L is concave in the price (a minimum of functions linear in it), piecewise linear with
    // kinks where a table's cheapest holding changes, and the bytes of the holdings it chose
    // less the capacity are a supergradient: bisect the breakpoints on its sign (a median
    // selection per step, no sort). Every price gives a bound; the largest found is returned.
    scratch.all_to_all_ms.clear();
    scratch.remember_all_to_alls = true;
    const RelaxedBound at_zero = lagrangian( 0.0 );
    double best = at_zero.ms;
    std::size_t begin = 0, end = at_zero.bytes > capacity_bytes ? prices.size() : 0;
    while ( begin < end )
    {
        const std::size_t mid = begin + ( end - begin ) / 2;
        std::nth_element( prices.begin() + begin, prices.begin() + mid, prices.begin() + end );
        const RelaxedBound at = lagrangian( prices[mid] );
        best = std::max( best, at.ms );
        if ( at.bytes > capacity_bytes )
            begin = mid + 1; // the largest lies at a higher price
        else
            end = mid;
    }
    scratch.remember_all_to_alls = false;
    scratch.price = 0.0;
    return best;
}

} // namespace shardsweep::bound_detail
