// shardsweep's planner, step 1b: a memory-first placement for tasks whose tables barely fit in
// HBM (docs/PLANNERS.md). The cost-ordered greedy (shardsweep_greedy.cpp) fills GPUs unevenly
// there, and the tables that come last no longer fit whole: they go row-wise (every row block
// keeps a pooled output for the whole batch, so memory grows) and then to host memory, which
// can make a plan ten times slower than one that packs.
#include "plan_state.hpp"
#include "planner_detail.hpp"
#include "shardsweep_search.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <limits>
#include <shardsweep/model/memory.hpp>

namespace shardsweep
{
namespace planner_detail
{
namespace
{

constexpr double kInf = std::numeric_limits<double>::infinity();
//! Share of the GPUs' room the tables may fill: the rest absorbs the packing's slack.
constexpr double kPackingShare = 0.95;
//! HBM cache shares a table in host memory may get (1: the table in HBM; 0: plain UVM).
constexpr double kCacheShares[] = { 1.0,  0.95, 0.9,  0.85, 0.8,  0.75, 0.7,  0.65, 0.6,
                                    0.55, 0.5,  0.45, 0.4,  0.35, 0.3,  0.25, 0.2,  0.15,
                                    0.12, 0.08, 0.05, 0.03, 0.02, 0.01, 0.0 };
constexpr int kNumShares = sizeof( kCacheShares ) / sizeof( kCacheShares[0] );
//! The largest cache share a table in host memory gets: a share of 1 would be the HBM kernel.
constexpr double kFullCache = 1.0 - 1e-9;

TablePlan holdingPlan( double share )
{
    TablePlan tp;
    if ( share < 1.0 )
    {
        tp.kernel = share > 0.0 ? ComputeKernel::uvm_caching : ComputeKernel::uvm;
        tp.cache_fraction = share;
    }
    return tp;
}

//! One way to hold a table whole on one GPU: its shard (memory and lookup time) and the bytes
//! it needs across the GPUs (its own and the receive buffers it adds on every GPU).
struct Holding
{
    PlanShard shard;
    double need = 0.0;
};

//! Every table at every cache share of kCacheShares, priced.
std::vector<std::vector<Holding>> priceHoldings( PlanState& st, const Workload& w )
{
    const int n = static_cast<int>( w.tables.size() );
    std::vector<std::vector<Holding>> holdings( n, std::vector<Holding>( kNumShares ) );
    for ( int t = 0; t < n; ++t )
    {
        for ( int k = 0; k < kNumShares; ++k )
        {
            st.setTablePlan( t, holdingPlan( kCacheShares[k] ) );
            Holding& h = holdings[t][k];
            h.shard = st.price( t, 0, 0, w.tables[t].rows, 0, w.tables[t].dim );
            h.need = h.shard.memory_bytes + 2.0 * st.numGpus() * h.shard.pooled_bytes;
        }
        st.setTablePlan( t, TablePlan{} );
    }
    return holdings;
}

//! Index into kCacheShares per table: in HBM while the tables fit in kPackingShare of `room`;
//! else, like the lower bound's memory relaxation, the steps that lose least lookup time per
//! byte saved, one at a time, until they do.
std::vector<int> chooseShares( const std::vector<std::vector<Holding>>& holdings, double room )
{
    const int n = static_cast<int>( holdings.size() );
    std::vector<int> share( n, 0 );
    double total = 0.0;
    for ( int t = 0; t < n; ++t )
        total += holdings[t][0].need;
    auto cost = []( const Holding& h ) { return h.shard.fwd_ms + h.shard.bwd_ms; };
    while ( total > kPackingShare * room )
    {
        int best_t = -1, best_k = -1;
        double best_rate = kInf;
        for ( int t = 0; t < n; ++t )
        {
            const Holding& now = holdings[t][share[t]];
            for ( int k = share[t] + 1; k < kNumShares; ++k )
            {
                const double saved = now.need - holdings[t][k].need;
                if ( saved <= 0.0 )
                    continue;
                const double rate = ( cost( holdings[t][k] ) - cost( now ) ) / saved;
                if ( rate < best_rate )
                    best_rate = rate, best_t = t, best_k = k;
            }
        }
        if ( best_t < 0 )
            break; // everything is in host memory already
        total -= holdings[best_t][share[best_t]].need - holdings[best_t][best_k].need;
        share[best_t] = best_k;
    }
    return share;
}

//! The GPU where `shard` raises the iteration time least among those with `reserve` bytes to
//! spare after it, or −1.
int bestFittingGpu( const PlanState& st, const PlanShard& shard, double reserve )
{
    int best = -1;
    double best_obj = kInf;
    for ( int g = 0; g < st.numGpus(); ++g )
    {
        if ( st.room( g ) - reserve < shard.memory_bytes )
            continue;
        const double obj = st.objectiveWith( deltaOf( g, shard, nullptr ), GpuDelta{} );
        if ( obj < best_obj * ( 1.0 - kTie ) )
            best = g, best_obj = obj;
    }
    return best;
}

//! The index of table t's shard (the packing holds every table whole, on one GPU).
int shardOf( const PlanState& st, int t )
{
    int index = 0;
    while ( st.shard( index ).table != t )
        ++index;
    return index;
}

} // namespace

void shareCaches( PlanState& st, const Workload& w, const std::vector<int>& tables )
{
    std::vector<std::vector<int>> on_gpu( st.numGpus() );
    for ( int t : tables )
        on_gpu[st.shard( shardOf( st, t ) ).gpu].push_back( t );
    for ( int g = 0; g < st.numGpus(); ++g )
    {
        const std::vector<int>& here = on_gpu[g];
        if ( here.empty() )
            continue;
        // Plain UVM first: what is left of g's memory is the room the caches share.
        for ( int t : here )
        {
            st.removeTable( t );
            st.setTablePlan( t, holdingPlan( 0.0 ) );
            st.addShard( st.price( t, g, 0, w.tables[t].rows, 0, w.tables[t].dim ) );
        }
        st.refresh();
        // Each table's lookups and memory at every cache share, from plain UVM (last) up.
        const int n = static_cast<int>( here.size() );
        std::vector<std::vector<PlanShard>> at( n, std::vector<PlanShard>( kNumShares ) );
        for ( int i = 0; i < n; ++i )
        {
            const int t = here[i];
            for ( int k = 0; k < kNumShares; ++k )
            {
                st.setTablePlan( t, holdingPlan( std::min( kCacheShares[k], kFullCache ) ) );
                at[i][k] = st.price( t, g, 0, w.tables[t].rows, 0, w.tables[t].dim );
            }
            st.setTablePlan( t, holdingPlan( 0.0 ) );
        }
        auto cost = []( const PlanShard& s ) { return s.fwd_ms + s.bwd_ms; };
        // Greedy on the lookup time saved per byte: the step (to any larger share) that saves
        // most per byte among those that fit, until none fits.
        std::vector<int> share( n, kNumShares - 1 );
        double room = st.room( g ) * ( 1.0 - 1e-6 );
        while ( true )
        {
            int best_i = -1, best_k = -1;
            double best_rate = 0.0;
            for ( int i = 0; i < n; ++i )
            {
                const PlanShard& now = at[i][share[i]];
                for ( int k = share[i] - 1; k >= 0; --k )
                {
                    const double bytes = at[i][k].memory_bytes - now.memory_bytes;
                    const double saved = cost( now ) - cost( at[i][k] );
                    if ( bytes <= 0.0 || bytes > room || saved <= 0.0 )
                        continue;
                    if ( saved / bytes > best_rate )
                        best_rate = saved / bytes, best_i = i, best_k = k;
                }
            }
            if ( best_i < 0 )
                break;
            room -= at[best_i][best_k].memory_bytes - at[best_i][share[best_i]].memory_bytes;
            share[best_i] = best_k;
        }
        for ( int i = 0; i < n; ++i )
        {
            if ( share[i] == kNumShares - 1 )
                continue;
            const int t = here[i];
            st.removeTable( t );
            st.setTablePlan( t, holdingPlan( std::min( kCacheShares[share[i]], kFullCache ) ) );
            st.addShard( st.price( t, g, 0, w.tables[t].rows, 0, w.tables[t].dim ) );
        }
        st.refresh();
    }
}

std::string packedPlacement( PlanState& st, const Workload& w, const Platform& platform )
{
    const int gpus = st.numGpus();
    const int n = static_cast<int>( w.tables.size() );
    const std::vector<std::vector<Holding>> holdings = priceHoldings( st, w );
    double room = 0.0;
    for ( int g = 0; g < gpus; ++g )
        room += st.room( g );
    std::vector<int> share = chooseShares( holdings, room );
    std::vector<int> order( n );
    for ( int t = 0; t < n; ++t )
        order[t] = t;
    std::stable_sort( order.begin(), order.end(),
                      [&]( int a, int b )
                      { return holdings[a][share[a]].need > holdings[b][share[b]].need; } );
    // Every table's receive buffers land on every GPU whichever GPU holds it: reserve those of
    // the tables not placed yet, so that no GPU fills up before they arrive.
    double reserve = 0.0;
    for ( int t = 0; t < n; ++t )
        reserve += 2.0 * holdings[t][0].shard.pooled_bytes;
    const double host_cap =
        platform.host_memory_GiB > 0.0 ? platform.host_memory_GiB * kBytesPerGiB : kInf;
    std::vector<double> host_used( platform.num_nodes, 0.0 );
    for ( int t : order )
    {
        // The chosen holding, or plain UVM when no GPU has room for it.
        int gpu = bestFittingGpu( st, holdings[t][share[t]].shard, reserve );
        if ( gpu < 0 )
        {
            share[t] = kNumShares - 1;
            gpu = bestFittingGpu( st, holdings[t][share[t]].shard, reserve );
        }
        const bool in_host = kCacheShares[share[t]] < 1.0;
        const double host_bytes = in_host ? tableStateBytes( w.tables[t] ) : 0.0;
        if ( gpu < 0 || host_used[gpu / platform.gpus_per_node] + host_bytes > host_cap )
            return fmt::format( "table {} fits on no GPU, not even in host memory", t );
        host_used[gpu / platform.gpus_per_node] += host_bytes;
        st.setTablePlan( t, holdingPlan( kCacheShares[share[t]] ) );
        PlanShard shard = holdings[t][share[t]].shard;
        shard.gpu = gpu;
        st.addShard( shard );
        st.refresh();
        reserve -= 2.0 * holdings[t][0].shard.pooled_bytes;
    }
    std::vector<int> in_host;
    for ( int s = 0; s < st.numShards(); ++s )
        if ( kCacheShares[share[st.shard( s ).table]] < 1.0 )
            in_host.push_back( st.shard( s ).table );
    shareCaches( st, w, in_host );
    return {};
}

std::vector<PlanState> hostTableMoves( const PlanState& st, const Workload& w, int s )
{
    std::vector<PlanState> out;
    const PlanShard moved = st.shard( s );
    for ( int g = 0; g < st.numGpus(); ++g )
    {
        if ( g == moved.gpu || !mayGoTo( st, moved, g ) )
            continue;
        // The table and the host-memory tables on g give up their caches, the table moves to g,
        // and the host-memory tables of both GPUs share the room there anew.
        PlanState trial = st;
        std::vector<int> on_target, on_source;
        for ( int k = 0; k < st.numShards(); ++k )
        {
            const PlanShard& other = st.shard( k );
            if ( other.table != moved.table && inHostMemory( st.tablePlan( other.table ).kernel ) )
            {
                if ( other.gpu == g )
                    on_target.push_back( other.table );
                else if ( other.gpu == moved.gpu )
                    on_source.push_back( other.table );
            }
        }
        on_target.push_back( moved.table );
        for ( int t : on_target )
        {
            trial.removeTable( t );
            trial.setTablePlan( t, holdingPlan( 0.0 ) );
            trial.addShard( trial.price( t, g, 0, w.tables[t].rows, 0, w.tables[t].dim ) );
        }
        trial.refresh();
        if ( !trial.fits( g ) )
            continue;
        on_target.insert( on_target.end(), on_source.begin(), on_source.end() );
        shareCaches( trial, w, on_target );
        out.push_back( std::move( trial ) );
    }
    return out;
}

} // namespace planner_detail
} // namespace shardsweep
