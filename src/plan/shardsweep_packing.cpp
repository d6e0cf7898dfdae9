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
constexpr double kCacheShares[] = { 1.0,  0.7,  0.5,  0.35, 0.25, 0.18, 0.12,
                                    0.08, 0.05, 0.03, 0.02, 0.01, 0.0 };
constexpr int kNumShares = sizeof( kCacheShares ) / sizeof( kCacheShares[0] );

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

//! Gives every table of `tables` (in host memory) the largest HBM cache its GPU has room for,
//! the most costly table first.
void growCaches( PlanState& st, const Workload& w, std::vector<int> tables )
{
    auto cost = [&]( int t )
    {
        const PlanShard& s = st.shard( shardOf( st, t ) );
        return s.fwd_ms + s.bwd_ms;
    };
    std::stable_sort( tables.begin(), tables.end(),
                      [&]( int a, int b ) { return cost( a ) > cost( b ); } );
    for ( int t : tables )
    {
        // Shard indices move as tables are re-added: look the table up each time.
        const PlanShard old = st.shard( shardOf( st, t ) );
        const TableSpec& spec = w.tables[t];
        const double weights =
            static_cast<double>( spec.rows ) * spec.dim * dataTypeBytes( spec.dtype );
        const double cached = st.tablePlan( t ).cache_fraction;
        const double share = std::min( 1.0, cached + kPackingShare * st.room( old.gpu ) / weights );
        if ( share <= cached * 1.01 )
            continue;
        st.removeTable( t );
        st.setTablePlan( t, holdingPlan( std::min( share, 1.0 - 1e-9 ) ) );
        st.addShard( st.price( t, old.gpu, 0, spec.rows, 0, spec.dim ) );
        st.refresh();
    }
}

} // namespace

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
    growCaches( st, w, in_host );
    return {};
}

} // namespace planner_detail
} // namespace shardsweep
