// shardsweep's planner: cost-guided greedy placement, then a local search (moves, swaps,
// column/row/table-row re-sharding) priced incrementally on the native model (docs/PLANNERS.md).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <shardsweep/kernel/learned_cost_model.hpp>
#include <shardsweep/model/memory.hpp>
#include <shardsweep/plan/plan_state.hpp>
#include <shardsweep/plan/planner_detail.hpp>
#include <shardsweep/plan/torchrec_planner.hpp>
#include <shardsweep/scenario/rng.hpp>

namespace shardsweep
{
using namespace planner_detail;

namespace
{
constexpr double kInf = std::numeric_limits<double>::infinity();
//! Largest tables × GPUs for which TorchRec's plan seeds the search: beyond a few thousand
//! (table, GPU) pairs its enumeration takes longer than the whole planning budget.
constexpr long kTorchrecSeedLimit = 4096;
//! Relative change below which two objectives count as equal (summation-order noise).
constexpr double kTie = 1e-12;
//! Smallest HBM cache worth a uvm_caching kernel; below it the table is plain UVM.
constexpr double kMinCacheFraction = 1e-3;

GpuDelta deltaOf( int gpu, const PlanShard& add, const PlanShard* remove )
{
    GpuDelta d;
    d.gpu = gpu;
    d.fwd = add.fwd_ms - ( remove ? remove->fwd_ms : 0.0 );
    d.bwd = add.bwd_ms - ( remove ? remove->bwd_ms : 0.0 );
    d.memory = add.memory_bytes - ( remove ? remove->memory_bytes : 0.0 );
    d.pooled = add.pooled_bytes - ( remove ? remove->pooled_bytes : 0.0 );
    d.ids = add.id_bytes - ( remove ? remove->id_bytes : 0.0 );
    return d;
}

GpuDelta removal( const PlanShard& s )
{
    PlanShard none;
    GpuDelta d = deltaOf( s.gpu, none, &s );
    return d;
}

//! Shards the search may move: table-wise and column blocks in HBM. UVM tables stay where the
//! greedy put them (their host memory is accounted per node there).
bool movable( const PlanState& st, const PlanShard& s )
{
    const TablePlan& tp = st.tablePlan( s.table );
    return ( tp.sharding == ShardingType::table_wise ||
             tp.sharding == ShardingType::column_wise ) &&
           ( tp.kernel == ComputeKernel::hbm || tp.kernel == ComputeKernel::dense );
}

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

//! Row blocks of table t over `count` consecutive GPUs from `first`, priced; false if the table
//! has fewer rows than GPUs or (check_capacity) a GPU's memory would overflow.
bool reshardRows( PlanState& st, const Workload& w, int t, ShardingType type, int first, int count,
                  bool check_capacity = true )
{
    const TableSpec& spec = w.tables[t];
    if ( spec.rows < count )
        return false;
    st.removeTable( t );
    TablePlan tp = st.tablePlan( t );
    tp.sharding = type;
    st.setTablePlan( t, tp );
    const std::int64_t block = ( spec.rows + count - 1 ) / count;
    for ( int k = 0; k < count; ++k )
    {
        const std::int64_t begin = std::min<std::int64_t>( k * block, spec.rows );
        const std::int64_t end = std::min<std::int64_t>( begin + block, spec.rows );
        if ( end > begin )
            st.addShard( st.price( t, first + k, begin, end - begin, 0, spec.dim ) );
    }
    st.refresh();
    for ( int g = 0; check_capacity && g < st.numGpus(); ++g )
        if ( !st.fits( g ) )
            return false;
    return true;
}

std::string tableLabel( const Workload& w, int t )
{
    return t < static_cast<int>( w.table_names.size() )
               ? fmt::format( "{} '{}'", t, w.table_names[t] )
               : std::to_string( t );
}

//! 1. Longest processing time first on the predicted per-table cost: each table goes where the
//! iteration time grows least (ties: the GPU with the least embedding work, then the lower
//! index). A table that fits on no GPU whole is split row-wise over all GPUs when its blocks
//! fit, else kept in host memory with the largest HBM cache that fits (uvm_caching).
std::string greedyPlacement( PlanState& st, const Workload& w, const Platform& platform )
{
    const int gpus = st.numGpus();
    const int n = static_cast<int>( w.tables.size() );
    std::vector<PlanShard> whole( n );
    for ( int t = 0; t < n; ++t )
        whole[t] = st.price( t, 0, 0, w.tables[t].rows, 0, w.tables[t].dim );
    std::vector<int> order( n );
    std::iota( order.begin(), order.end(), 0 );
    std::stable_sort(
        order.begin(), order.end(),
        [&]( int a, int b )
        { return whole[a].fwd_ms + whole[a].bwd_ms > whole[b].fwd_ms + whole[b].bwd_ms; } );
    double total = 0.0;
    for ( const PlanShard& s : whole )
        total += s.fwd_ms + s.bwd_ms;
    const double fair_share = total / gpus;
    const int per_node = platform.gpus_per_node;
    std::vector<double> host_used( platform.num_nodes, 0.0 ); // UVM tables' host bytes per node
    for ( int t : order )
    {
        // A table that alone costs more than a GPU's fair share can never be balanced whole:
        // its rows go over the least-loaded node (table-row-wise) when a node's share of it is
        // fair, else over all GPUs (row-wise). The search may re-shard it again.
        const double cost = whole[t].fwd_ms + whole[t].bwd_ms;
        if ( gpus > 1 && cost > fair_share )
        {
            PlanState trial = st;
            bool done = false;
            if ( platform.num_nodes > 1 && per_node > 1 && cost / per_node <= fair_share )
            {
                int node = 0;
                double node_load = kInf;
                for ( int k = 0; k < platform.num_nodes; ++k )
                {
                    double load = 0.0;
                    for ( int g = k * per_node; g < ( k + 1 ) * per_node; ++g )
                        load += st.fwd( g ) + st.bwd( g );
                    if ( load < node_load )
                        node = k, node_load = load;
                }
                done = reshardRows( trial, w, t, ShardingType::table_row_wise, node * per_node,
                                    per_node );
            }
            else
                done = reshardRows( trial, w, t, ShardingType::row_wise, 0, gpus );
            if ( done )
            {
                st = std::move( trial );
                continue;
            }
        }
        int best = -1;
        double best_obj = kInf, best_load = kInf;
        for ( int g = 0; g < gpus; ++g )
        {
            const double obj = st.objectiveWith( deltaOf( g, whole[t], nullptr ), GpuDelta{} );
            const double load = st.fwd( g ) + st.bwd( g );
            if ( obj == kInf )
                continue;
            if ( best < 0 || obj < best_obj * ( 1.0 - kTie ) ||
                 ( obj <= best_obj * ( 1.0 + kTie ) && load < best_load ) )
                best = g, best_obj = obj, best_load = load;
        }
        if ( best >= 0 )
        {
            PlanShard s = whole[t];
            s.gpu = best;
            st.addShard( s );
            st.refresh();
            continue;
        }
        PlanState trial = st;
        if ( reshardRows( trial, w, t, ShardingType::row_wise, 0, gpus ) )
        {
            st = std::move( trial );
            continue;
        }
        // Memory pressure: keep the table in host memory (UVM) on a GPU of a node with host
        // room, with the largest HBM cache that fits there (uvm_caching), or none (uvm).
        const TableSpec& spec = w.tables[t];
        const double weights =
            static_cast<double>( spec.rows ) * spec.dim * dataTypeBytes( spec.dtype );
        const double host_bytes = tableStateBytes( spec );
        const double host_cap = platform.host_memory_GiB > 0.0
                                    ? platform.host_memory_GiB * kBytesPerGiB
                                    : std::numeric_limits<double>::infinity();
        int roomiest = -1;
        for ( int g = 0; g < gpus; ++g )
            if ( host_used[g / per_node] + host_bytes <= host_cap &&
                 ( roomiest < 0 || st.memory( g ) < st.memory( roomiest ) ) )
                roomiest = g;
        if ( roomiest < 0 )
            return fmt::format( "table {} ({:.3f} GiB) fits on no GPU, not even split row-wise, "
                                "as a UVM cache or in host memory",
                                tableLabel( w, t ), host_bytes / kBytesPerGiB );
        // The cache gets what is left of the GPU's memory once the table's activations and
        // all-to-all buffers (those of a plain UVM shard) are counted.
        TablePlan tp;
        tp.kernel = ComputeKernel::uvm;
        st.setTablePlan( t, tp );
        const PlanShard bare = st.price( t, roomiest, 0, spec.rows, 0, spec.dim );
        const double room = st.room( roomiest ) - bare.memory_bytes - 2.0 * bare.pooled_bytes;
        const double fraction = std::min( 1.0, room / weights );
        tp.kernel = fraction >= kMinCacheFraction ? ComputeKernel::uvm_caching : ComputeKernel::uvm;
        tp.cache_fraction = fraction >= kMinCacheFraction ? fraction : 0.0;
        int gpu = roomiest;
        if ( tp.kernel == ComputeKernel::uvm ) // no HBM needed: the least-loaded GPU with room
            for ( int g = 0; g < gpus; ++g )
                if ( host_used[g / per_node] + host_bytes <= host_cap &&
                     st.fwd( g ) + st.bwd( g ) < st.fwd( gpu ) + st.bwd( gpu ) )
                    gpu = g;
        host_used[gpu / per_node] += host_bytes;
        st.setTablePlan( t, tp );
        st.addShard( st.price( t, gpu, 0, spec.rows, 0, spec.dim ) );
        st.refresh();
    }
    return {};
}

//! Budget of one search: iterations (deterministic) and wall time (a safety net).
struct Budget
{
    int iterations_left;
    double deadline_s;
    const std::function<double()>* elapsed;
    bool spent() const { return iterations_left <= 0 || ( *elapsed )() >= deadline_s; }
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
                    if ( g == a )
                        continue;
                    const GpuDelta in = deltaOf( g, sh, nullptr );
                    const double obj = st.objectiveWith( out, in );
                    if ( obj < kInf && best.better( obj, st.spreadWith( out, in ) ) )
                        best = { obj, st.spreadWith( out, in ) }, move = s, target = g,
                        partner = -1;
                    for ( int o : on_gpu[g] )
                    {
                        const PlanShard& other = st.shard( o );
                        const GpuDelta da = deltaOf( a, other, &sh );
                        const GpuDelta db = deltaOf( g, sh, &other );
                        const double swapped = st.objectiveWith( da, db );
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
                if ( g == a )
                    continue;
                const double obj = st.objectiveWith( out, deltaOf( g, sh, nullptr ) );
                if ( obj < best )
                    best = obj, move = s, target = g, partner = -1;
            }
            for ( int o = 0; o < shards; ++o )
            {
                const PlanShard& other = st.shard( o );
                if ( other.gpu == a || !movable( st, other ) ||
                     other.memory_bytes >= sh.memory_bytes )
                    continue;
                const double obj =
                    st.objectiveWith( deltaOf( a, other, &sh ), deltaOf( other.gpu, sh, &other ) );
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

//! Re-sharding options for shard s: its two column halves (the second on the GPU where it costs
//! least), and for a whole table its rows over all GPUs or over its node.
std::vector<PlanState> reshardings( const PlanState& st, const Workload& w,
                                    const Platform& platform, int s )
{
    std::vector<PlanState> out;
    const PlanShard sh = st.shard( s );
    const int t = sh.table;
    const int gpus = st.numGpus();
    if ( sh.num_cols >= 8 && sh.num_cols % 8 == 0 ) // halves of a multiple of 4 columns
    {
        PlanState trial = st;
        TablePlan tp = trial.tablePlan( t );
        tp.sharding = ShardingType::column_wise;
        trial.setTablePlan( t, tp );
        trial.removeShard( s );
        const int half = sh.num_cols / 2;
        trial.addShard( trial.price( t, sh.gpu, sh.row_offset, sh.num_rows, sh.col_offset, half ) );
        trial.refresh();
        PlanShard second =
            trial.price( t, sh.gpu, sh.row_offset, sh.num_rows, sh.col_offset + half, half );
        int where = -1;
        double where_obj = kInf;
        for ( int g = 0; g < gpus; ++g )
        {
            const double obj = trial.objectiveWith( deltaOf( g, second, nullptr ), {} );
            if ( obj < where_obj )
                where = g, where_obj = obj;
        }
        if ( where >= 0 )
        {
            second.gpu = where;
            trial.addShard( second );
            trial.refresh();
            out.push_back( std::move( trial ) );
        }
    }
    if ( st.tablePlan( t ).sharding != ShardingType::table_wise )
        return out;
    const int per_node = platform.gpus_per_node;
    PlanState rows = st;
    if ( reshardRows( rows, w, t, ShardingType::row_wise, 0, gpus, false ) )
        out.push_back( std::move( rows ) );
    if ( platform.num_nodes > 1 && per_node > 1 )
    {
        PlanState node = st;
        if ( reshardRows( node, w, t, ShardingType::table_row_wise, sh.gpu / per_node * per_node,
                          per_node, false ) )
            out.push_back( std::move( node ) );
    }
    return out;
}

//! 3. Local search: moves and swaps until none helps; then re-shard the most expensive shards of
//! the critical GPUs (column halves, row-wise, table-row-wise), each option followed by its own
//! round of moves (re-sharding usually pays only after rebalancing), and keep the best if it
//! beats the current plan; repeat.
void localSearch( PlanState& st, const Workload& w, const Platform& platform, Budget& budget )
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
            std::vector<int> on_a;
            for ( int s = 0; s < st.numShards(); ++s )
                if ( st.shard( s ).gpu == a && movable( st, st.shard( s ) ) )
                    on_a.push_back( s );
            std::stable_sort( on_a.begin(), on_a.end(),
                              [&]( int x, int y )
                              {
                                  return st.shard( x ).fwd_ms + st.shard( x ).bwd_ms >
                                         st.shard( y ).fwd_ms + st.shard( y ).bwd_ms;
                              } );
            for ( int k = 0; k < std::min<int>( kHotShardsPerGpu, on_a.size() ); ++k )
                if ( std::find( hot.begin(), hot.end(), on_a[k] ) == hot.end() )
                    hot.push_back( on_a[k] );
        }
        double best_obj = current * ( 1.0 - kTie );
        std::unique_ptr<PlanState> best_state;
        auto tryReshardings = [&]( int s )
        {
            for ( PlanState& trial : reshardings( st, w, platform, s ) )
            {
                if ( budget.spent() )
                    return;
                Budget lookahead{ std::min( kLookaheadIterations, budget.iterations_left ),
                                  budget.deadline_s, &elapsed };
                const int granted = lookahead.iterations_left;
                const bool fits = repairMemory( trial, lookahead );
                if ( fits )
                    improveByMoves( trial, lookahead );
                budget.iterations_left -= granted - lookahead.iterations_left;
                if ( !fits )
                    continue;
                trial.refresh();
                const double obj = trial.objective();
                if ( obj < best_obj )
                {
                    best_obj = obj;
                    best_state = std::make_unique<PlanState>( std::move( trial ) );
                }
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
                if ( !movable( st, sh ) ||
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
        }
        if ( !best_state )
            return;
        st = std::move( *best_state );
    }
}

//! 4. Iterated local search: while budget is left, kick the best plan (relocate a tenth of its
//! movable shards, at least two, to GPUs with room, drawn from the seed's Philox stream), search
//! again from there and keep the result if it is better. The seed decides the kicks, so a task
//! and seed give one plan.
void iteratedSearch( PlanState& best, const Workload& w, const Platform& platform, Budget& budget,
                     std::uint64_t seed )
{
    const int gpus = best.numGpus();
    if ( gpus < 2 )
        return;
    constexpr int kMaxRestarts = 16;
    for ( int restart = 0; restart < kMaxRestarts && !budget.spent(); ++restart )
    {
        PlanState trial = best;
        std::vector<int> movable_shards;
        for ( int s = 0; s < trial.numShards(); ++s )
            if ( movable( trial, trial.shard( s ) ) )
                movable_shards.push_back( s );
        if ( movable_shards.size() < 2 )
            return;
        CounterRng rng( seed, static_cast<std::uint64_t>( restart ), 1 );
        const int kicks = std::max<int>( 2, static_cast<int>( movable_shards.size() ) / 10 );
        for ( int k = 0; k < kicks; ++k )
        {
            const int s = movable_shards[rng.uniformInt( 0, movable_shards.size() - 1 )];
            const int g = static_cast<int>( rng.uniformInt( 0, gpus - 1 ) );
            const PlanShard& sh = trial.shard( s );
            if ( g != sh.gpu &&
                 trial.objectiveWith( removal( sh ), deltaOf( g, sh, nullptr ) ) < kInf )
            {
                trial.moveShard( s, g );
                trial.refresh();
            }
        }
        localSearch( trial, w, platform, budget );
        trial.refresh();
        best.refresh();
        if ( trial.objective() < best.objective() * ( 1.0 - kTie ) )
            best = std::move( trial );
    }
}

//! True if every GPU's memory fits under the full model (PlanState::fits).
bool allFit( const PlanState& st )
{
    for ( int g = 0; g < st.numGpus(); ++g )
        if ( !st.fits( g ) )
            return false;
    return true;
}

} // namespace

PlanResult planShardsweep( const Workload& workload, const Platform& platform,
                           std::int64_t global_batch, const PlannerOptions& options )
{
    const auto start = std::chrono::steady_clock::now();
    const std::function<double()> elapsed = [start]
    { return std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count(); };
    const int gpus = platform.numGpus();
    const int num_tables = static_cast<int>( workload.tables.size() );
    PlanResult result;

    // Memory is priced with the model that decides feasibility (predictStep's memory(g):
    // tables, activations, buffers, dense replica, reserve) against the GPU's whole memory.
    // The search prices shards with the model the plan is judged by: native, or learned.
    PlanState state( workload, platform, global_batch, gpuMemoryBytes( platform ),
                     options.model == CostModel::learned ? hostLearnedShardCost( options.learned )
                                                         : LearnedShardCost{},
                     hostGemmPricer( options.learned_gemm ) );
    const std::string greedy_reason = greedyPlacement( state, workload, platform );

    // 2. The search starts from the fastest plan that fits among the greedy placement, every
    //    baseline and TorchRec's plan, so it is never worse than any of them that fits. Seeds
    //    are priced by PlanState (predictStep's composition on the host, serial: no kernel
    //    launch per seed).
    struct Seed
    {
        Plan plan;
        double objective;
    };
    std::vector<Seed> fitting;
    if ( greedy_reason.empty() && allFit( state ) )
        fitting.push_back( { state.toPlan(), state.objective() } );
    const Plan greedy_plan = greedy_reason.empty() ? state.toPlan() : Plan{};
    std::vector<PlanResult> seeds;
    for ( PlannerKind kind : { PlannerKind::round_robin, PlannerKind::random } )
        seeds.push_back( planUnchecked( kind, workload, platform, options.seed ) );
    for ( PlannerKind kind : { PlannerKind::dim_greedy, PlannerKind::size_greedy,
                               PlannerKind::lookup_greedy, PlannerKind::size_lookup_greedy } )
        seeds.push_back( planGreedyBaseline( kind, workload, platform ) );
    if ( static_cast<long>( num_tables ) * gpus <= kTorchrecSeedLimit )
    {
        PlannerOptions torchrec_options = options;
        torchrec_options.model = CostModel::torchrec;
        seeds.push_back( planTorchrec( workload, platform, global_batch, torchrec_options ) );
    }
    for ( PlanResult& seed : seeds )
    {
        // An infeasible baseline plan over-commits tables already (or is incomplete).
        if ( !seed.feasible )
            continue;
        state.load( seed.plan );
        if ( allFit( state ) )
            fitting.push_back( { std::move( seed.plan ), state.objective() } );
    }
    std::stable_sort( fitting.begin(), fitting.end(),
                      []( const Seed& a, const Seed& b ) { return a.objective < b.objective; } );

    Budget budget{ options.max_iterations, options.time_budget_s, &elapsed };
    if ( !fitting.empty() )
        state.load( fitting.front().plan );
    else if ( greedy_reason.empty() )
    {
        // Nothing known fits: try to move the greedy placement's overflow away.
        state.load( greedy_plan );
        repairMemory( state, budget );
    }
    else
    {
        result.reason = greedy_reason;
        return result;
    }
    localSearch( state, workload, platform, budget );
    iteratedSearch( state, workload, platform, budget, options.seed );

    // 3. The kernel's own step decides: the searched plan if it fits (the search's sums run in
    //    another order than the kernel's), else the fastest seed that fits. A searched plan
    //    that the kernel prices above the best seed gives way to the seed.
    auto check = [&]( const Plan& plan )
    {
        return stepOnHost( { &workload, &platform, &plan, global_batch, options.model,
                             options.learned, options.learned_gemm } );
    };
    result.plan = state.toPlan();
    StepSummary summary = check( result.plan );
    const StepSummary searched = summary;
    for ( std::size_t k = 0; k < fitting.size(); ++k )
    {
        if ( summary.feasible && ( k > 0 || options.model == CostModel::torchrec ) )
            break;
        const StepSummary seed = check( fitting[k].plan );
        if ( seed.feasible && ( !summary.feasible || seed.iteration_ms < summary.iteration_ms ) )
        {
            result.plan = fitting[k].plan;
            summary = seed;
        }
    }
    if ( !summary.feasible )
    {
        const double need = platform.gpu.memory_GiB + searched.overflow_GiB;
        result.reason = fmt::format(
            "no plan fits in memory: the best one found needs {:.3f} GiB on GPU {}, "
            "{:.3f} GiB more than its {:.3f} GiB (tables, activations, all-to-all buffers, dense "
            "replica and reserve)",
            need, searched.overflow_gpu, searched.overflow_GiB, platform.gpu.memory_GiB );
        return result;
    }
    result.feasible = true;
    result.predicted_ms = summary.iteration_ms;
    return result;
}

} // namespace shardsweep
