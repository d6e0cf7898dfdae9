// shardsweep's planner on tasks where a plain local search gets stuck (docs/PLANNERS.md). Where
// memory binds, tables kept in host memory trade their HBM caches between the GPUs of a node to
// balance the lookups, and a search without the capacity seeds the search under it; elsewhere,
// the iterated search's replication kicks find data-parallel tables that pay only after the
// GPUs are rebalanced around them. Also: the search budget's evaluation count.
#include <a100_switch_platform.hpp>
#include <algorithm>
#include <cstdint>
#include <functional>
#include <gtest/gtest.h>
#include <limits>
#include <plan/plan_state.hpp>
#include <plan/shardsweep_search.hpp>
#include <planner_test_support.hpp>
#include <shardsweep/plan/planner.hpp>
#include <string>
#include <utility>
#include <vector>

namespace Test
{
using namespace shardsweep;

//! A workload (batch 65536) of fp32 tables of dim 64, table t with rows[t] rows and pooling[t]
//! lookups per sample, named t0, t1, ...
Workload dim64Tables( const std::string& name, const std::vector<std::int64_t>& rows,
                      const std::vector<double>& pooling,
                      AccessDistribution distribution = TableSpec{}.distribution )
{
    Workload w;
    w.name = name;
    w.global_batch = 65536;
    for ( std::size_t t = 0; t < rows.size(); ++t )
    {
        TableSpec s;
        s.rows = rows[t];
        s.dim = 64;
        s.pooling_factor = pooling[t];
        s.distribution = distribution;
        w.tables.push_back( s );
        w.table_names.push_back( "t" + std::to_string( t ) );
    }
    return w;
}

// Three uniformly accessed tables of 4M x 64 fp32 (1 GiB of rows each) in host memory on 2 GPUs
// of a node: the two heavy ones (40 lookups per sample) on GPU 0 with 40 % of their rows cached,
// the light one (1 lookup) on GPU 1 with 80 %, and the capacity just what GPU 0 uses. GPU 0 does
// most of the lookups, but no move fits (a heavy table's cache does not fit on GPU 1) and no
// swap (the light table's cache is larger than a heavy one's). Moving a heavy table to GPU 1,
// where it takes the light table's cache, and growing the other heavy table's cache into the
// room it leaves cuts the slowest GPU's lookups: the local search must find it.
TEST( TEST_CATEGORY, host_memory_tables_trade_caches_between_gpus )
{
    const Workload w = dim64Tables( "host_tables", { 4'000'000, 4'000'000, 4'000'000 },
                                    { 40.0, 40.0, 1.0 }, AccessDistribution::uniform );
    const Platform p = a100Switch( 2, 40.0 );
    Plan start;
    for ( int t = 0; t < 3; ++t )
    {
        start.tables.push_back(
            { ShardingType::table_wise, ComputeKernel::uvm_caching, t < 2 ? 0.4 : 0.8 } );
        start.shards.push_back( { t, t < 2 ? 0 : 1, 0, 4'000'000, 0, 64 } );
    }
    PlanState measure( w, p, 0, 1e30 );
    measure.load( start );
    ASSERT_GT( measure.memory( 0 ), measure.memory( 1 ) );
    PlanState state( w, p, 0, measure.memory( 0 ) * ( 1.0 + 1e-9 ) );
    state.load( start );
    state.refresh();
    ASSERT_TRUE( planner_detail::allFit( state ) );
    const double before = state.objective();
    const double slowest_before = state.fwd( 0 ) + state.bwd( 0 );

    const std::function<double()> clock = [] { return 0.0; };
    planner_detail::Budget budget{ 100000, 1e30, &clock };
    planner_detail::localSearch( state, w, p, budget, false );
    state.refresh();
    const Plan searched = state.toPlan();
    EXPECT_TRUE( planner_detail::allFit( state ) );
    int on_gpu0 = 0;
    for ( const ShardSpec& s : searched.shards )
        on_gpu0 += s.table < 2 && s.gpu == 0;
    EXPECT_EQ( on_gpu0, 1 ) << "the heavy tables share a GPU";
    double slowest = 0.0;
    for ( int g = 0; g < 2; ++g )
        slowest = std::max( slowest, state.fwd( g ) + state.bwd( g ) );
    EXPECT_LT( slowest, 0.75 * slowest_before );
    EXPECT_LT( state.objective(), 0.85 * before );
}

// The search's evaluation budget counts every candidate it prices. Two 4M x 64 fp32 tables (1 GiB
// each) on GPU 0 overflow it; a 100k x 64 table sits on GPU 1. One round of the memory repair
// prices, for each big table, its move to GPU 1 and its swap with the small one: 4 evaluations,
// 1 iteration. Either move or swap leaves both GPUs within the capacity, so the repair ends there.
TEST( TEST_CATEGORY, memory_repair_counts_its_evaluations )
{
    const Workload w =
        dim64Tables( "overflow", { 4'000'000, 4'000'000, 100'000 }, { 4.0, 4.0, 4.0 } );
    const Platform p = a100Switch( 2, 40.0 );
    auto placed = [&]( int gpu_of_t1 )
    {
        Plan plan;
        for ( int t = 0; t < 3; ++t )
        {
            plan.tables.push_back( { ShardingType::table_wise, ComputeKernel::hbm, 1.0 } );
            plan.shards.push_back(
                { t, t == 0 ? 0 : ( t == 1 ? gpu_of_t1 : 1 ), 0, w.tables[t].rows, 0, 64 } );
        }
        return plan;
    };
    PlanState measure( w, p, 0, 1e30 );
    measure.load( placed( 1 ) ); // one big table per GPU: what fits
    const double capacity = std::max( measure.memory( 0 ), measure.memory( 1 ) ) * ( 1.0 + 1e-9 );
    PlanState state( w, p, 0, capacity );
    state.load( placed( 0 ) );
    state.refresh();
    ASSERT_FALSE( planner_detail::allFit( state ) );

    const std::function<double()> clock = [] { return 0.0; };
    planner_detail::Budget budget{ 100, 1e30, &clock, 1000 };
    EXPECT_TRUE( planner_detail::repairMemory( state, budget ) );
    EXPECT_TRUE( planner_detail::allFit( state ) );
    EXPECT_EQ( budget.iterations_left, 99 );
    EXPECT_EQ( budget.evaluations_left, 996 );
    // A sub-search's work is charged to its parent, overshoot included.
    planner_detail::Budget parent{ 100, 1e30, &clock, 50 };
    const planner_detail::Budget granted{ 10, 1e30, &clock, 3 };
    planner_detail::Budget part = granted;
    part.iterations_left -= 1;
    part.evaluations_left -= 4;
    parent.charge( granted, part );
    EXPECT_EQ( parent.iterations_left, 99 );
    EXPECT_EQ( parent.evaluations_left, 46 );
    EXPECT_TRUE( part.spent() );
    EXPECT_FALSE( parent.stopped_on_clock ); // the part ran out of evaluations, not of time
    // A sub-search stopped by its (earlier) deadline leaves the parent's result machine-dependent.
    const planner_detail::Budget early{ 10, -1.0, &clock, 3 };
    part = early;
    EXPECT_TRUE( part.spent() );
    EXPECT_TRUE( part.stopped_on_clock );
    parent.charge( early, part );
    EXPECT_TRUE( parent.stopped_on_clock );
}

// NeuroShard task 25: its 58 tables fit in HBM, but with their outputs and all-to-all buffers
// the four 4-GiB GPUs are nearly full. Searched under the capacity, the plan stayed 28.5 % above
// the bound (0.5 s of search; a 20 times longer search did no better): every move into a full
// GPU overflows. The search without the capacity balances the lookups, and its plan fits.
TEST( TEST_CATEGORY, unconstrained_search_seeds_a_memory_bound_task )
{
    const Task task = protocolTasks( 1, 25 ).front();
    const Workload& w = task.workload;
    ASSERT_EQ( w.tables.size(), 58u ) << "the protocol's task 25 changed";
    const double bound = iterationLowerBoundMs( w, task.platform, 0 );
    PlannerOptions options = deterministic();
    options.max_iterations = 1000; // a quarter for the unconstrained search
    const PlanResult mine = makePlan( PlannerKind::shardsweep, w, task.platform, 0, options );
    ASSERT_TRUE( mine.feasible ) << mine.reason;
    EXPECT_LE( bound, mine.predicted_ms );
    EXPECT_LT( mine.predicted_ms, 1.15 * bound );
}

//! Plans NeuroShard's task `id` (`tables` tables) with an iteration budget: the plan and the
//! task's lower bound (which the plan may not beat).
std::pair<PlanResult, double> planWithBound( int id, std::size_t tables, int max_iterations )
{
    const Task task = protocolTasks( 1, id ).front();
    const Workload& w = task.workload;
    EXPECT_EQ( w.tables.size(), tables ) << "the protocol's task " << id << " changed";
    PlannerOptions options = deterministic();
    options.max_iterations = max_iterations;
    PlanResult mine = makePlan( PlannerKind::shardsweep, w, task.platform, 0, options );
    EXPECT_TRUE( mine.feasible ) << mine.reason;
    const double bound = iterationLowerBoundMs( w, task.platform, 0 );
    EXPECT_LE( bound, mine.predicted_ms );
    return { std::move( mine ), bound };
}

//! The plan's iteration time over the task's lower bound (planWithBound).
double planOverBound( int id, std::size_t tables, int max_iterations )
{
    const auto planned = planWithBound( id, tables, max_iterations );
    return planned.first.predicted_ms / planned.second;
}

// NeuroShard's task 77 (23 tables on 8 GPUs): making its 53k x 64 table with 67 lookups per
// sample data-parallel makes the plan 9 % slower at first, and, after a search rebalances the
// GPUs around it, 5 % faster. Neither the local search's data-parallel step (which keeps a
// replication only if it helps alone) nor random kicks find it: without the replication kicks
// the plan stays 13.4 % above the bound.
TEST( TEST_CATEGORY, replication_kicks_pay_after_rebalancing )
{
    EXPECT_LT( planOverBound( 77, 23, 3000 ), 1.10 );
}

// NeuroShard's task 70 (19 tables on 4 GPUs): the search ends with every table in row blocks or
// replicated, so no shard can move, and several tables look up more in blocks than whole. One
// of them made whole cannot be balanced (the search splits it again); all of them made whole at
// once can. Without the structural kicks that make tables whole the plan stays 10.2 % above the
// bound.
TEST( TEST_CATEGORY, split_tables_made_whole_again )
{
    EXPECT_LT( planOverBound( 70, 19, 3000 ), 1.09 );
}

// NeuroShard's task 91 (30 tables on 4 GPUs): its 4M x 128 table with 109 lookups per sample
// looks up 2.34 ms in row blocks over the 4 GPUs and 1.76 ms in twice as many (two per GPU).
// Without finer row blocks the plan stays 12.6 % above the bound.
TEST( TEST_CATEGORY, finer_row_blocks )
{
    EXPECT_LT( planOverBound( 91, 30, 3000 ), 1.09 );
}

//! The tables of `plan` for which `where( table plan, its number of shards )` holds.
template <class Where>
int tablesWhere( const Plan& plan, const Where& where )
{
    int count = 0;
    for ( std::size_t t = 0; t < plan.tables.size(); ++t )
    {
        const auto blocks =
            std::count_if( plan.shards.begin(), plan.shards.end(),
                           [&]( const ShardSpec& s ) { return s.table == int( t ); } );
        count += where( plan.tables[t], static_cast<int>( blocks ) );
    }
    return count;
}

// NeuroShard's task 1 (51 tables on 4 GPUs of one node): its 238k x 128 table with 62 lookups
// per sample looks up 1.351 ms whole, 1.073 ms in column halves, 0.976 ms in 2 row blocks and
// 1.110 ms in 4 (one per GPU); its 613k x 64 table with 25 lookups looks up 0.337 ms whole,
// 0.267 ms in 3 row blocks and 0.285 ms in 4. Without row blocks on fewer GPUs than the node
// has, which then move within the node, the plan stays 5.1 % above the bound.
TEST( TEST_CATEGORY, row_blocks_on_fewer_gpus_than_the_node )
{
    const auto [mine, bound] = planWithBound( 1, 51, 3000 );
    const auto partial = []( const TablePlan& tp, int blocks )
    { return tp.sharding == ShardingType::table_row_wise && blocks > 1 && blocks < 4; };
    EXPECT_GE( tablesWhere( mine.plan, partial ), 1 );
    EXPECT_LT( mine.predicted_ms, 1.045 * bound );
}

// NeuroShard's task 45 (15 tables on 4 GPUs of one node): its 675k x 128 table with 17 lookups
// per sample looks up 0.473 ms whole, 0.485 ms in column halves, 0.416 ms in 4 row blocks and
// 0.404 ms in column halves of 2 row blocks each (a grid: rows of 256 B, twice as many of them in
// L2). Without the grid the plan stays 6.0 % above the bound.
TEST( TEST_CATEGORY, column_halves_in_row_blocks )
{
    const auto [mine, bound] = planWithBound( 45, 15, 3000 );
    const auto grid = []( const TablePlan& tp, int blocks )
    { return tp.sharding == ShardingType::grid_shard && blocks == 4; };
    EXPECT_GE( tablesWhere( mine.plan, grid ), 1 );
    EXPECT_LT( mine.predicted_ms, 1.05 * bound );
}

// NeuroShard's task 25 (58 tables on 4 GPUs of one node): its 4M x 128 table with 138 lookups
// per sample looks up 3.637 ms whole, 3.270 ms in 3 row blocks and 2.72 ms in 6. Once the search
// has put it in 3 blocks over part of the node, only twice as many blocks over the node (round
// its GPUs) get it out; without them the plan stays 12.7 % above the bound.
TEST( TEST_CATEGORY, finer_row_blocks_within_a_node )
{
    const auto [mine, bound] = planWithBound( 25, 58, 3000 );
    const auto fine = []( const TablePlan& tp, int blocks )
    { return tp.sharding == ShardingType::table_row_wise && blocks >= 6; };
    EXPECT_GE( tablesWhere( mine.plan, fine ), 1 );
    EXPECT_LT( mine.predicted_ms, 1.09 * bound );
}

// NeuroShard's task 58 (29 tables on 4 GPUs of one node): its 976k x 64 table with 50 lookups
// per sample looks up 0.515 ms whole and 0.479 ms in two halves, and least per row in a block of
// about 0.74 of its rows (its distinct rows just overflow the L2, which still serves as many
// repeats): that block and one of the rest look up about 0.46 ms. Without row blocks of that
// share the plan stays 5.3 % above the bound.
TEST( TEST_CATEGORY, row_blocks_of_the_least_cost_share )
{
    const auto [mine, bound] = planWithBound( 58, 29, 3000 );
    int unequal = 0;
    for ( std::size_t t = 0; t < mine.plan.tables.size(); ++t )
    {
        std::int64_t least = std::numeric_limits<std::int64_t>::max(), most = 0;
        for ( const ShardSpec& s : mine.plan.shards )
            if ( s.table == int( t ) )
                least = std::min( least, s.num_rows ), most = std::max( most, s.num_rows );
        unequal += most > 0 && most > 1.1 * least;
    }
    EXPECT_GE( unequal, 2 );
    EXPECT_LT( mine.predicted_ms, 1.045 * bound );
}

namespace
{
//! Table 0 `heavy` and `light` copies of `other`.
Workload coarseTask( const TableSpec& heavy, const TableSpec& other, int light )
{
    Workload w;
    w.name = "coarse";
    w.global_batch = 65536;
    w.tables.push_back( heavy );
    w.tables.insert( w.tables.end(), light, other );
    for ( std::size_t t = 0; t < w.tables.size(); ++t )
        w.table_names.push_back( "t" + std::to_string( t ) );
    return w;
}

//! `w` on 8 A100s of one node, placed by the greedy (step 1). The state refers to `w`.
PlanState greedyOf( const Workload& w )
{
    static const Platform p = a100Switch( 8, 40.0 );
    PlanState st( w, p, 0, 1e30 );
    EXPECT_EQ( planner_detail::greedyPlacement( st, w, p ), "" );
    return st;
}

//! A GPU's fair share of the forward lookups of `st`'s tables, each priced whole.
double fairForward( const PlanState& st, const Workload& w )
{
    double sum = 0.0;
    for ( std::size_t t = 0; t < w.tables.size(); ++t )
        sum += st.price( static_cast<int>( t ), 0, 0, w.tables[t].rows, 0, w.tables[t].dim ).fwd_ms;
    return sum / st.numGpus();
}

TableSpec lookupTable( std::int64_t rows, int dim, AccessDistribution distribution )
{
    TableSpec s;
    s.rows = rows;
    s.dim = dim;
    s.pooling_factor = 20.0;
    s.distribution = distribution;
    s.zipf_alpha = distribution == AccessDistribution::zipf ? 1.1 : 0.0;
    return s;
}
} // namespace

// The greedy (step 1) placed tables whole unless one cost more than a GPU's fair share. With few
// tables per GPU that is too coarse for the forward pass, whose maximum over the GPUs adds to the
// backward one's. On 8 GPUs with 24 4M x 8 uniform tables, a 1M x 128 Zipf table (20 lookups per
// sample) looks up 0.325 ms forward, more than the forward of a GPU's fair share of the task
// (0.203 ms), yet costs 0.565 ms forward and backward, less than a fair share (0.617 ms). In two
// row blocks it looks up 0.186 ms forward (each block's distinct rows fit the L2 better) and
// 0.426 ms in all, against 0.468 ms in column halves, so no whole placement of it comes near. A
// uniform 4M x 128 table (with 56 light ones) costs more in two: 1.422 ms in row blocks, 1.553 ms
// in column halves, 1.378 ms whole; it is split all the same, the cheaper way. On the large task
// (856 tables on 128 GPUs) this took the plan from 6.45 % to 4.36 % above its bound
// (docs/PERFORMANCE.md).
TEST( TEST_CATEGORY, greedy_splits_a_table_too_coarse_for_the_forward_pass )
{
    const Workload skewed =
        coarseTask( lookupTable( 1'000'000, 128, AccessDistribution::zipf ),
                    lookupTable( 4'000'000, 8, AccessDistribution::uniform ), 24 );
    const PlanState st = greedyOf( skewed );
    const PlanShard whole = st.price( 0, 0, 0, 1'000'000, 0, 128 );
    double slowest_fwd = 0.0;
    for ( int g = 0; g < 8; ++g )
        slowest_fwd = std::max( slowest_fwd, st.fwd( g ) );
    ASSERT_GT( whole.fwd_ms, 0.5 * fairForward( st, skewed ) ) << "coarse for the forward pass";
    EXPECT_EQ( st.tablePlan( 0 ).sharding, ShardingType::table_row_wise );
    std::vector<const PlanShard*> blocks;
    for ( int s = 0; s < st.numShards(); ++s )
        if ( st.shard( s ).table == 0 )
            blocks.push_back( &st.shard( s ) );
    ASSERT_EQ( blocks.size(), 2u );
    EXPECT_NE( blocks[0]->gpu, blocks[1]->gpu );
    EXPECT_EQ( blocks[0]->num_rows + blocks[1]->num_rows, 1'000'000 );
    EXPECT_EQ( std::min( blocks[0]->num_rows, blocks[1]->num_rows ), 500'000 );
    const PlanShard half = st.price( 0, 0, 0, 1'000'000, 0, 64 );
    EXPECT_LT( blocks[0]->fwd_ms + blocks[0]->bwd_ms + blocks[1]->fwd_ms + blocks[1]->bwd_ms,
               2.0 * ( half.fwd_ms + half.bwd_ms ) );
    EXPECT_LT( slowest_fwd, whole.fwd_ms ) << "no plan with the table whole gets here";

    const Workload flat =
        coarseTask( lookupTable( 4'000'000, 128, AccessDistribution::uniform ),
                    lookupTable( 4'000'000, 8, AccessDistribution::uniform ), 56 );
    const PlanState uniform = greedyOf( flat );
    const auto lookups = [&]( std::int64_t rows, int cols )
    {
        const PlanShard block = uniform.price( 0, 0, 0, rows, 0, cols );
        return block.fwd_ms + block.bwd_ms;
    };
    ASSERT_GT( uniform.price( 0, 0, 0, 4'000'000, 0, 128 ).fwd_ms,
               0.5 * fairForward( uniform, flat ) );
    ASSERT_GT( 2 * lookups( 2'000'000, 128 ), lookups( 4'000'000, 128 ) ) << "blocks cost more";
    ASSERT_LT( 2 * lookups( 2'000'000, 128 ), 2 * lookups( 4'000'000, 64 ) );
    EXPECT_EQ( uniform.tablePlan( 0 ).sharding, ShardingType::table_row_wise );
}

} // namespace Test
