// shardsweep's planner, step 3: the local search (moves, swaps, re-sharding) priced
// incrementally on PlanState, and the memory repair (docs/PLANNERS.md).
#include "shardsweep_search.hpp"

#include "plan_state.hpp"
#include "planner_detail.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <shardsweep/model/rng.hpp>

namespace shardsweep
{
namespace planner_detail
{

namespace
{
constexpr double kInf = std::numeric_limits<double>::infinity();

//! Best candidate of one search round: lower objective, ties broken by lower spread.
struct Candidate
{
    double objective = kInf, spread = kInf;
    bool better( double obj, double spr ) const
    {
        if ( obj < objective * ( 1.0 - kTie ) )
            return true;
        return obj <= objective * ( 1.0 + kTie ) && spr < spread * ( 1.0 - 1e-9 );
    }
};

//! The GPUs that bound the iteration: most forward work, most backward work, most pooled values
//! and most ids to send (duplicates removed).
std::vector<int> criticalGpus( const PlanState& st )
{
    std::vector<int> out;
    for ( int g : { st.hottestFwd(), st.hottestBwd(), st.mostPooled(), st.mostIds() } )
        if ( std::find( out.begin(), out.end(), g ) == out.end() )
            out.push_back( g );
    return out;
}

//! GPUs a shard may move to or swap with: all of them on up to 16 GPUs; beyond, the least
//! loaded ones in each term of the iteration (forward, backward, both, pooled values, ids),
//! where a move off a critical GPU can help.
std::vector<int> targetGpus( const PlanState& st )
{
    const int gpus = st.numGpus();
    std::vector<int> all( gpus );
    std::iota( all.begin(), all.end(), 0 );
    if ( gpus <= 16 )
        return all;
    std::vector<int> out;
    auto addLowest = [&]( int count, const std::function<double( int )>& key )
    {
        std::vector<int> order = all;
        std::stable_sort( order.begin(), order.end(),
                          [&]( int x, int y ) { return key( x ) < key( y ); } );
        for ( int k = 0; k < count; ++k )
            if ( std::find( out.begin(), out.end(), order[k] ) == out.end() )
                out.push_back( order[k] );
    };
    addLowest( 8, [&]( int g ) { return st.fwd( g ); } );
    addLowest( 8, [&]( int g ) { return st.bwd( g ); } );
    addLowest( 8, [&]( int g ) { return st.fwd( g ) + st.bwd( g ); } );
    addLowest( 4, [&]( int g ) { return st.pooled( g ); } );
    addLowest( 4, [&]( int g ) { return st.ids( g ); } );
    std::sort( out.begin(), out.end() );
    return out;
}

//! A candidate move or swap's objective. Every candidate priced is one evaluation of the budget.
double priceCandidate( const PlanState& st, Budget& budget, const GpuDelta& x, const GpuDelta& y )
{
    --budget.evaluations_left;
    return st.objectiveWith( x, y );
}

//! 3a. Moves and swaps. Each round tries, for every movable shard of a critical GPU, a move to
//! every other GPU and a swap with every movable shard elsewhere, and applies the best candidate
//! (lower iteration time; ties: lower Σ fwd² + bwd², which spreads load when several GPUs share
//! the maximum). Stops when no candidate helps.
void improveByMoves( PlanState& st, Budget& budget )
{
    const int gpus = st.numGpus();
    // Moves that only lower the spread (the iteration time is set elsewhere) are capped: on
    // large tasks they could otherwise spend the whole budget.
    const int max_ties = std::max( 16, gpus );
    int ties = 0;
    while ( !budget.spent() )
    {
        --budget.iterations_left;
        st.refresh();
        const double current = st.objective();
        Candidate best{ current, st.spread() };
        int move = -1, target = -1, partner = -1;
        std::vector<std::vector<int>> on_gpu( gpus );
        for ( int s = 0; s < st.numShards(); ++s )
            if ( movable( st, st.shard( s ) ) )
                on_gpu[st.shard( s ).gpu].push_back( s );
        const std::vector<int> targets = targetGpus( st );
        for ( int a : criticalGpus( st ) )
            for ( int s : on_gpu[a] )
            {
                const PlanShard& sh = st.shard( s );
                const GpuDelta out = removal( sh );
                for ( int g : targets )
                {
                    if ( g == a || !mayGoTo( st, sh, g ) )
                        continue;
                    const GpuDelta in = deltaOf( g, sh, nullptr );
                    const double obj = priceCandidate( st, budget, out, in );
                    if ( obj < kInf && best.better( obj, st.spreadWith( out, in ) ) )
                        best = { obj, st.spreadWith( out, in ) }, move = s, target = g,
                        partner = -1;
                    for ( int o : on_gpu[g] )
                    {
                        const PlanShard& other = st.shard( o );
                        if ( !mayGoTo( st, other, a ) )
                            continue;
                        const GpuDelta da = deltaOf( a, other, &sh );
                        const GpuDelta db = deltaOf( g, sh, &other );
                        const double swapped = priceCandidate( st, budget, da, db );
                        if ( swapped < kInf && best.better( swapped, st.spreadWith( da, db ) ) )
                            best = { swapped, st.spreadWith( da, db ) }, move = s, target = g,
                            partner = o;
                    }
                }
            }
        if ( move < 0 )
            return;
        ties = best.objective < current * ( 1.0 - kTie ) ? 0 : ties + 1;
        if ( ties > max_ties )
            return;
        const int from = st.shard( move ).gpu;
        st.moveShard( move, target );
        if ( partner >= 0 )
            st.moveShard( partner, from );
    }
}

} // namespace

PlanState replicated( const PlanState& st, const Workload& w, int t )
{
    PlanState trial = st;
    resetSharding( trial, t, ShardingType::data_parallel );
    for ( int g = 0; g < trial.numGpus(); ++g )
        trial.addShard( trial.price( t, g, 0, w.tables[t].rows, 0, w.tables[t].dim ) );
    trial.refresh();
    return trial;
}

//! Makes a state whose memory overflows on some GPUs fit again: repeatedly moves (or swaps for a
//! smaller shard) the shard of the fullest GPU whose relocation raises the iteration time least,
//! onto a GPU with room. False if some GPU cannot be brought under its capacity.
bool repairMemory( PlanState& st, Budget& budget )
{
    const int gpus = st.numGpus();
    while ( true )
    {
        int a = -1;
        for ( int g = 0; g < gpus; ++g )
            if ( !st.fits( g ) && ( a < 0 || st.memory( g ) > st.memory( a ) ) )
                a = g;
        if ( a < 0 )
            return true;
        if ( budget.spent() )
            return false;
        --budget.iterations_left;
        st.refresh();
        double best = kInf;
        int move = -1, target = -1, partner = -1;
        const int shards = st.numShards();
        for ( int s = 0; s < shards; ++s )
        {
            const PlanShard& sh = st.shard( s );
            if ( sh.gpu != a || !movable( st, sh ) || sh.memory_bytes <= 0.0 )
                continue;
            const GpuDelta out = removal( sh );
            for ( int g = 0; g < gpus; ++g )
            {
                if ( g == a || !mayGoTo( st, sh, g ) )
                    continue;
                const double obj = priceCandidate( st, budget, out, deltaOf( g, sh, nullptr ) );
                if ( obj < best )
                    best = obj, move = s, target = g, partner = -1;
            }
            for ( int o = 0; o < shards; ++o )
            {
                const PlanShard& other = st.shard( o );
                if ( other.gpu == a || !movable( st, other ) ||
                     other.memory_bytes >= sh.memory_bytes || !mayGoTo( st, sh, other.gpu ) ||
                     !mayGoTo( st, other, a ) )
                    continue;
                const double obj = priceCandidate( st, budget, deltaOf( a, other, &sh ),
                                                   deltaOf( other.gpu, sh, &other ) );
                if ( obj < best )
                    best = obj, move = s, target = other.gpu, partner = o;
            }
        }
        if ( move < 0 )
            return false;
        st.moveShard( move, target );
        if ( partner >= 0 )
            st.moveShard( partner, a );
    }
}

//! 3. Local search: moves and swaps until none helps; then re-shard the most expensive shards of
//! the critical GPUs (column halves, row-wise, table-row-wise; a table in host memory to another
//! GPU of its node, trading caches: hostTableMoves), each option followed by its own
//! round of moves (re-sharding usually pays only after rebalancing), and keep the best if it
//! beats the current plan; repeat.
void localSearch( PlanState& st, const Workload& w, const Platform& platform, Budget& budget,
                  bool try_replicas, int keep_whole )
{
    if ( st.numGpus() < 2 )
        return;
    const std::function<double()>& elapsed = *budget.elapsed;
    constexpr int kHotShardsPerGpu = 2;
    constexpr int kSavingCandidates = 8;
    // Rounds of moves after each re-sharding option: enough to rebalance a few GPUs; fewer on
    // many GPUs, where one round already costs O(shards) candidates per critical GPU.
    const int kLookaheadIterations = std::clamp( 2000 / st.numGpus(), 8, 200 );
    while ( !budget.spent() )
    {
        improveByMoves( st, budget );
        st.refresh();
        const double current = st.objective();
        std::vector<int> hot;
        for ( int a : criticalGpus( st ) )
        {
            // The costliest shards of each kind: in HBM (re-sharded) and in host memory (moved
            // within the node, the caches shared anew: hostTableMoves).
            std::vector<int> on_a[2];
            for ( int s = 0; s < st.numShards(); ++s )
            {
                const PlanShard& sh = st.shard( s );
                if ( sh.gpu != a || !movable( st, sh ) )
                    continue;
                if ( reshardable( st, sh ) )
                    on_a[0].push_back( s );
                else if ( inHostMemory( st.tablePlan( sh.table ).kernel ) )
                    on_a[1].push_back( s );
            }
            for ( std::vector<int>& kind : on_a )
            {
                std::stable_sort( kind.begin(), kind.end(),
                                  [&]( int x, int y )
                                  {
                                      return st.shard( x ).fwd_ms + st.shard( x ).bwd_ms >
                                             st.shard( y ).fwd_ms + st.shard( y ).bwd_ms;
                                  } );
                for ( int k = 0; k < std::min<int>( kHotShardsPerGpu, kind.size() ); ++k )
                    if ( std::find( hot.begin(), hot.end(), kind[k] ) == hot.end() )
                        hot.push_back( kind[k] );
            }
        }
        double best_obj = current * ( 1.0 - kTie );
        std::unique_ptr<PlanState> best_state;
        // One option, rebalanced by its own round of moves; kept if it beats the best so far.
        auto tryOption = [&]( PlanState& trial )
        {
            const Budget granted{ std::min( kLookaheadIterations, budget.iterations_left ),
                                  budget.deadline_s, &elapsed, budget.evaluations_left };
            Budget lookahead = granted;
            const bool fits = repairMemory( trial, lookahead );
            if ( fits )
                improveByMoves( trial, lookahead );
            budget.charge( granted, lookahead );
            if ( !fits )
                return;
            trial.refresh();
            const double obj = trial.objective();
            if ( obj < best_obj )
            {
                best_obj = obj;
                best_state = std::make_unique<PlanState>( std::move( trial ) );
            }
        };
        auto tryReshardings = [&]( int s )
        {
            if ( st.shard( s ).table == keep_whole )
                return;
            for ( PlanState& trial : reshardable( st, st.shard( s ) )
                                         ? reshardings( st, w, platform, s )
                                         : hostTableMoves( st, w, s ) )
            {
                if ( budget.spent() )
                    return;
                tryOption( trial );
            }
        };
        for ( int s : hot )
            tryReshardings( s );
        if ( !best_state )
        {
            // Balanced but not optimal: the whole tables whose rows spread over all GPUs do the
            // least work in total (L2 reuse of smaller blocks), most saving first.
            std::vector<std::pair<double, int>> saving;
            const int gpus = st.numGpus();
            for ( int s = 0; s < st.numShards(); ++s )
            {
                const PlanShard& sh = st.shard( s );
                const TableSpec& spec = w.tables[sh.table];
                if ( !reshardable( st, sh ) ||
                     st.tablePlan( sh.table ).sharding != ShardingType::table_wise ||
                     spec.rows < gpus )
                    continue;
                const PlanShard block = st.price( sh.table, 0, 0, spec.rows / gpus, 0, spec.dim );
                const double saved = sh.fwd_ms + sh.bwd_ms - gpus * ( block.fwd_ms + block.bwd_ms );
                if ( saved > 1e-3 * ( sh.fwd_ms + sh.bwd_ms ) )
                    saving.push_back( { -saved, s } );
            }
            std::sort( saving.begin(), saving.end() );
            for ( int k = 0; k < std::min<int>( kSavingCandidates, saving.size() ); ++k )
                tryReshardings( saving[k].second );
            // Tables already in row blocks: twice as many blocks (each looked up alone, with more
            // of its rows in L2), most saving first; over all GPUs two on each, over a node round
            // the node's GPUs. Not without a capacity (the unconstrained seed): every block keeps
            // partial sums for the whole batch, and row-wise blocks do not move, so the memory
            // repair could not undo it.
            std::vector<std::pair<double, int>> finer;
            const std::vector<TableLoad> loads = tableLoads( st, w.tables.size() );
            for ( int t = 0;
                  t < static_cast<int>( w.tables.size() ) && std::isfinite( st.capacity() ); ++t )
            {
                const TablePlan& tp = st.tablePlan( t );
                const TableSpec& spec = w.tables[t];
                const int blocks = loads[t].shards;
                const bool over_all = tp.sharding == ShardingType::row_wise && blocks % gpus == 0;
                if ( ( !over_all && tp.sharding != ShardingType::table_row_wise ) ||
                     tp.kernel != ComputeKernel::hbm || spec.rows < 2 * blocks )
                    continue;
                const PlanShard half = st.price( t, 0, 0, spec.rows / ( 2 * blocks ), 0, spec.dim );
                const double saved = loads[t].ms - 2 * blocks * ( half.fwd_ms + half.bwd_ms );
                if ( saved > 1e-3 * loads[t].ms )
                    finer.push_back( { -saved, t } );
            }
            std::sort( finer.begin(), finer.end() );
            for ( int k = 0; k < std::min<int>( kSavingCandidates, finer.size() ); ++k )
            {
                if ( budget.spent() )
                    break;
                const int t = finer[k].second;
                // The same GPUs, round which twice the blocks go: all of them, or the node's.
                const ShardingType type = st.tablePlan( t ).sharding;
                int first = 0, count = gpus;
                if ( type == ShardingType::table_row_wise )
                {
                    const int per_node = st.gpusPerNode();
                    for ( int s = 0; s < st.numShards(); ++s )
                        if ( st.shard( s ).table == t )
                            first = st.shard( s ).gpu / per_node * per_node;
                    count = std::min( per_node, gpus - first );
                }
                std::vector<int> on( count );
                std::iota( on.begin(), on.end(), first );
                PlanState trial = st;
                if ( reshardBlocksOn( trial, w, t, type, 1, 2 * loads[t].shards, on ) )
                    tryOption( trial );
            }
        }
        if ( !best_state && try_replicas )
        {
            // Still nothing: tables that are cheap to look up on every GPU go data-parallel,
            // which takes their volumes out of both all-to-alls. Each is priced as it is (its
            // lookups load every GPU alike); the ones that help, most first, get their moves.
            std::vector<std::pair<double, int>> gains;
            for ( int t = 0; t < static_cast<int>( w.tables.size() ) && !budget.spent(); ++t )
            {
                const TablePlan& tp = st.tablePlan( t );
                if ( tp.sharding == ShardingType::data_parallel || tp.kernel != ComputeKernel::hbm )
                    continue;
                const PlanState trial = replicated( st, w, t );
                const double obj = trial.objective();
                if ( allFit( trial ) && obj < current * ( 1.0 - kTie ) )
                    gains.push_back( { obj, t } );
            }
            std::sort( gains.begin(), gains.end() );
            for ( int k = 0; k < std::min<int>( kSavingCandidates, gains.size() ); ++k )
            {
                if ( budget.spent() )
                    break;
                PlanState trial = replicated( st, w, gains[k].second );
                tryOption( trial );
            }
        }
        if ( !best_state )
            return;
        st = std::move( *best_state );
    }
}

std::vector<TableLoad> tableLoads( const PlanState& st, std::size_t tables )
{
    std::vector<TableLoad> loads( tables );
    for ( int s = 0; s < st.numShards(); ++s )
    {
        TableLoad& load = loads[st.shard( s ).table];
        load.ms += st.shard( s ).fwd_ms + st.shard( s ).bwd_ms;
        ++load.shards;
    }
    return loads;
}

//! True if every GPU's memory fits under the full model (PlanState::fits).
bool allFit( const PlanState& st )
{
    for ( int g = 0; g < st.numGpus(); ++g )
        if ( !st.fits( g ) )
            return false;
    return true;
}

} // namespace planner_detail
} // namespace shardsweep
