// The per-table part of the lower bound's memory relaxation (docs/PLANNERS.md, "Lower bound"):
// the ways of holding one table (rows in HBM, tiled, in host memory with or without an HBM cache,
// data-parallel), each priced at its least lookups and bytes, reduced to their lower convex hull.
// lower_bound_relaxation.cpp prices them against the memory constraint.
#include "lower_bound_detail.hpp"

#include <algorithm>
#include <cmath>
#include <shardsweep/model/embedding.hpp>
#include <shardsweep/model/memory.hpp>
#include <utility>

namespace shardsweep::bound_detail
{

std::vector<Holding> lowerHull( std::vector<Holding> points )
{
    std::sort( points.begin(), points.end(),
               []( const Holding& a, const Holding& b )
               { return a.bytes < b.bytes || ( a.bytes == b.bytes && a.ms < b.ms ); } );
    // Andrew's monotone chain, lower half, by increasing bytes; then only the falling part (a
    // point with more bytes and no less time than another is never the cheapest).
    std::vector<Holding> hull;
    for ( const Holding& q : points )
    {
        if ( !hull.empty() && hull.back().bytes == q.bytes )
            continue; // same bytes, slower
        while ( hull.size() >= 2 )
        {
            const Holding& a = hull[hull.size() - 2];
            const Holding& b = hull.back();
            const double cross =
                ( b.bytes - a.bytes ) * ( q.ms - a.ms ) - ( b.ms - a.ms ) * ( q.bytes - a.bytes );
            if ( cross > 0.0 )
                break;
            hull.pop_back();
        }
        hull.push_back( q );
    }
    const auto fastest =
        std::min_element( hull.begin(), hull.end(),
                          []( const Holding& a, const Holding& b ) { return a.ms < b.ms; } );
    hull.erase( fastest + 1, hull.end() );
    std::reverse( hull.begin(), hull.end() );
    return hull;
}

AccessCurve accessCurve( const TableSpec& t, double batch, double gpus )
{
    // An HBM cache of a share f of the rows in (f_prev, f]: no less than f_prev of the weights
    // in HBM and no faster than at f (a larger cache misses fewer distinct rows). The shares
    // 2^(−j/2) and 1 − 2^(−j/2), j = 1 … 10, and 1, refine towards both ends, where a step
    // would otherwise price a large cache at the speed of the whole table in HBM; steps of
    // 1/20 in between, where a plan's cache of 0.5 was priced at 0.354's bytes. Data-parallel
    // tables rarely win where memory is short (every GPU holds its own cache): their caches
    // take every other geometric share and the last (a coarser staircase is looser, never
    // invalid), which keeps their statistics at the local batch few.
    constexpr int kCacheSteps = 10;
    constexpr int kUniformSteps = 20;
    std::vector<double> geometric = { 1.0 };
    for ( int j = 1; j <= kCacheSteps; ++j )
    {
        geometric.push_back( std::exp2( -0.5 * j ) );
        geometric.push_back( 1.0 - std::exp2( -0.5 * j ) );
    }
    std::sort( geometric.begin(), geometric.end() );
    std::vector<std::pair<double, bool>> marked; // (share, data-parallel)
    for ( std::size_t k = 0; k < geometric.size(); ++k )
        marked.emplace_back( geometric[k], k % 2 == 1 || k + 1 == geometric.size() );
    for ( int j = 1; j < kUniformSteps; ++j )
        marked.emplace_back( double( j ) / kUniformSteps, false );
    std::sort( marked.begin(), marked.end() );
    AccessCurve c;
    for ( const auto& [share, data_parallel] : marked )
    {
        c.shares.push_back( share );
        c.data_parallel.push_back( data_parallel );
    }
    // A histogram's Zipf exponent fitted once per batch size (embeddingTableStats would refit it
    // at every share); the statistics are the same.
    auto asZipf = [&]( double samples )
    {
        TableSpec z = t;
        if ( t.distribution == AccessDistribution::histogram )
        {
            z.zipf_alpha = access_detail::histogramZipfAlpha( t, samples );
            z.distribution = AccessDistribution::zipf;
        }
        return z;
    };
    const TableSpec global = asZipf( batch ), local = asZipf( batch / gpus );
    const double rows = static_cast<double>( t.rows );
    c.global = embeddingTableStats( global, batch, 0.0 );
    c.local = embeddingTableStats( local, batch / gpus, 0.0 );
    for ( std::size_t k = 0; k < c.shares.size(); ++k )
    {
        const double f = c.shares[k];
        c.global_missed_rows.push_back(
            lruStats( global, c.global.lookups, f * rows ).missed_rows );
        if ( c.data_parallel[k] )
            c.local_cached.push_back( lruStats( local, c.local.lookups, f * rows ) );
    }
    return c;
}

TableHoldings tableHoldings( const Platform& platform, const TableSpec& t, double batch,
                             double gpus, const AccessCurve& curve )
{
    const double weights = static_cast<double>( t.rows ) * t.dim * dataTypeBytes( t.dtype );
    const double state = shardStateBytes( t, static_cast<double>( t.rows ), t.dim );
    const double dp_out = dataParallelOutputBytes( t, batch );
    const std::vector<Tiling> tilings = modelParallelTilings( platform, t, curve.global, batch );
    // The least lookups of any tiling in HBM, which bound every kernel (lower_bound_floor.cpp):
    // a UVM floor below them is looser.
    const double hbm_floor = tilings.front().ms;
    auto mpFloor = [&]( double host_share )
    {
        return std::max( hbm_floor,
                         modelParallelFloorMs( platform, t, curve.global, batch, host_share ) );
    };
    auto dpMs = [&]( const EmbeddingTableStats& s, ComputeKernel kernel )
    { return dataParallelMs( platform, t, s, batch, gpus, kernel ); };
    // In host memory: the cache's bytes and the least lookups at the share of rows it misses
    // (a staircase: each share's floor from the previous, smaller, share's bytes).
    std::vector<Holding> cached = { { 0.0, mpFloor( 1.0 ) } };
    std::vector<Holding> dp = { { gpus * state + dp_out, dpMs( curve.local, ComputeKernel::hbm ) },
                                { dp_out, dpMs( curve.local, ComputeKernel::uvm ) } };
    double previous = 0.0, dp_previous = 0.0;
    for ( std::size_t k = 0, d = 0; k < curve.shares.size(); ++k )
    {
        const double f = curve.shares[k];
        const double unique = curve.global.unique_rows;
        const double host_share =
            unique > 0.0 ? std::min( 1.0, curve.global_missed_rows[k] / unique ) : 0.0;
        cached.push_back( { previous * weights, mpFloor( host_share ) } );
        previous = f;
        if ( !curve.data_parallel[k] )
            continue;
        // embeddingTableStats( local, batch / gpus, f ).
        EmbeddingTableStats s = curve.local;
        s.cache_hit_rate = curve.local_cached[d].hit_rate;
        s.cache_missed_rows = curve.local_cached[d].missed_rows;
        ++d;
        dp.push_back(
            { gpus * dp_previous * weights + dp_out, dpMs( s, ComputeKernel::uvm_caching ) } );
        dp_previous = f;
    }
    // Every tiling keeps the outputs and buffers of its blocks (y.bytes less the rows), in HBM
    // or with its rows in host memory. Any tiling lies above the lower hull of the tilings'
    // (outputs, lookups), m(o), and with a cache its lookups are at least the floor f there:
    // at least max(f, m(o)), which is convex in o, so its vertices bound: the tilings' above f
    // and the point where m crosses f.
    std::vector<Holding> mp, outputs;
    for ( const Tiling& y : tilings )
    {
        mp.push_back( { y.bytes, y.ms } );
        outputs.push_back( { y.bytes - state, y.ms } );
    }
    outputs = lowerHull( std::move( outputs ) ); // by decreasing outputs, increasing lookups
    std::vector<Holding> in_host;
    for ( const Holding& h : cached )
    {
        double crossing = outputs.back().bytes; // m is below f everywhere
        for ( std::size_t i = 0; i < outputs.size(); ++i )
        {
            if ( outputs[i].ms <= h.ms )
                continue;
            in_host.push_back( { h.bytes + outputs[i].bytes, outputs[i].ms } );
            if ( i > 0 && outputs[i - 1].ms <= h.ms )
            {
                const Holding& a = outputs[i - 1];
                const Holding& b = outputs[i];
                crossing = a.bytes + ( b.bytes - a.bytes ) * ( h.ms - a.ms ) / ( b.ms - a.ms );
            }
        }
        if ( outputs.front().ms <= h.ms )
            in_host.push_back( { h.bytes + crossing, h.ms } );
    }
    mp.insert( mp.end(), in_host.begin(), in_host.end() );
    return { lowerHull( std::move( mp ) ), lowerHull( std::move( dp ) ),
             lowerHull( std::move( in_host ) ) };
}

} // namespace shardsweep::bound_detail
