// The greedy/random baselines of daochenzha/neuroshard (docs/PLANNERS.md) on hand-checked tasks:
// exact placements (ordering by (cost, size, index) descending, least cost sum, ties to the smaller
// size sum, then the lower GPU), the memory rule (weights + optimizer state within memory less the
// reserve) and the infeasible case. shardsweep's own planner is tested in tstShardsweepPlanner.hpp.
#include <a100_switch_platform.hpp>
#include <gtest/gtest.h>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/model/rng.hpp>
#include <shardsweep/plan/planner.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{

TableSpec table( std::int64_t rows, int dim, double pf )
{
    TableSpec t;
    t.rows = rows;
    t.dim = dim;
    t.pooling_factor = pf;
    return t;
}

Workload workloadOf( std::vector<TableSpec> tables )
{
    Workload w;
    w.name = "test";
    w.tables = std::move( tables );
    for ( std::size_t t = 0; t < w.tables.size(); ++t )
        w.table_names.push_back( "t" + std::to_string( t ) );
    w.global_batch = 1024;
    return w;
}

std::vector<int> placement( const PlanResult& r )
{
    std::vector<int> gpu( r.plan.tables.size(), -1 );
    for ( const ShardSpec& s : r.plan.shards )
        gpu[s.table] = s.gpu;
    return gpu;
}
} // namespace

// Tables (rows, dim, pf): t0 (1000, 16, 10), t1 (1000, 32, 1), t2 (1000, 8, 40), t3 (1000, 32, 2).
// dim_greedy: costs 16, 32, 8, 32; order by (cost, size, index) descending: t3, t1, t0, t2.
//   t3 → GPU 0 (tie: lower index); t1 → GPU 1 (0 < 32); t0 → GPU 0 (32 = 32, sizes equal, lower
//   index); t2 → GPU 1 (32 < 48).  size_greedy orders by size ∝ dim: the same placement.
// lookup_greedy: costs dim·pf = 160, 32, 320, 64; order t2, t0, t3, t1: t2 → 0; t0 → 1;
//   t3 → 1 (160 < 320); t1 → 1 (224 < 320). size_lookup_greedy multiplies by log10(1000) = 3:
//   the same order and placement.
TEST( TEST_CATEGORY, baselines_hand_checked )
{
    const Workload w = workloadOf( { table( 1000, 16, 10 ), table( 1000, 32, 1 ),
                                     table( 1000, 8, 40 ), table( 1000, 32, 2 ) } );
    const Platform p = a100Switch( 2, 16 );
    const PlannerOptions o{};
    EXPECT_EQ( placement( makePlan( PlannerKind::dim_greedy, w, p, 0, o ) ),
               ( std::vector<int>{ 0, 1, 1, 0 } ) );
    EXPECT_EQ( placement( makePlan( PlannerKind::size_greedy, w, p, 0, o ) ),
               ( std::vector<int>{ 0, 1, 1, 0 } ) );
    EXPECT_EQ( placement( makePlan( PlannerKind::lookup_greedy, w, p, 0, o ) ),
               ( std::vector<int>{ 1, 1, 0, 1 } ) );
    EXPECT_EQ( placement( makePlan( PlannerKind::size_lookup_greedy, w, p, 0, o ) ),
               ( std::vector<int>{ 1, 1, 0, 1 } ) );
    EXPECT_EQ( placement( makePlan( PlannerKind::round_robin, w, p, 0, o ) ),
               ( std::vector<int>{ 0, 1, 0, 1 } ) );
    const PlanResult r1 = makePlan( PlannerKind::random, w, p, 0, o );
    const PlanResult r2 = makePlan( PlannerKind::random, w, p, 0, o );
    EXPECT_EQ( placement( r1 ), placement( r2 ) ); // same seed, same plan
    for ( const ShardSpec& s : r1.plan.shards )
    {
        EXPECT_GE( s.gpu, 0 );
        EXPECT_LT( s.gpu, 2 );
        EXPECT_EQ( s.num_rows, 1000 );
    }
    const PlanResult dim = makePlan( PlannerKind::dim_greedy, w, p, 0, o );
    EXPECT_TRUE( dim.feasible );
    EXPECT_EQ( dim.predicted_ms,
               evaluateScenario( { &w, &p, &dim.plan, 1024, CostModel::native } ).iteration_ms );
    EXPECT_EQ( std::string( plannerName( PlannerKind::size_lookup_greedy ) ),
               "size_lookup_greedy" );
    EXPECT_EQ( parsePlannerName( "torchrec" ), PlannerKind::torchrec );
    EXPECT_THROW( parsePlannerName( "greedy" ), UsageError );
    // none is no planner a user can ask for, and plans no workload kind.
    EXPECT_THROW( parsePlannerName( "none" ), UsageError );
    EXPECT_FALSE( plannerPlans( PlannerKind::none, WorkloadKind::dlrm ) );
    EXPECT_FALSE( plannerPlans( PlannerKind::none, WorkloadKind::transformer ) );
    EXPECT_FALSE( makePlan( PlannerKind::none, w, p, 0, o ).feasible );
}

// Memory: each 0.6 GiB table fits on a 1 GiB GPU alone, but the 0.5 GiB third table fits next to
// neither: infeasible (the papers' code would silently over-commit the last GPU).
TEST( TEST_CATEGORY, baselines_infeasible_instead_of_overcommit )
{
    const std::int64_t rows_06 = static_cast<std::int64_t>( 0.6 * 1073741824.0 / ( 128 * 4 ) );
    const std::int64_t rows_05 = static_cast<std::int64_t>( 0.5 * 1073741824.0 / ( 8 * 4 ) );
    const Workload w = workloadOf(
        { table( rows_06, 128, 1 ), table( rows_06, 128, 1 ), table( rows_05, 8, 1 ) } );
    const Platform p = a100Switch( 2, 1.0 );
    const PlanResult r = makePlan( PlannerKind::dim_greedy, w, p, 0, PlannerOptions{} );
    EXPECT_FALSE( r.feasible );
    EXPECT_NE( r.reason.find( "table 2 't2'" ), std::string::npos ) << r.reason;
    EXPECT_NE( r.reason.find( "fits on no GPU" ), std::string::npos ) << r.reason;
    // round_robin puts t0 and t2 on GPU 0: 1.1 GiB > 1 GiB.
    const PlanResult rr = makePlan( PlannerKind::round_robin, w, p, 0, PlannerOptions{} );
    EXPECT_FALSE( rr.feasible );
    EXPECT_NE( rr.reason.find( "GPU 0" ), std::string::npos ) << rr.reason;
}

// Tie-breaks. dim_greedy, 2 GPUs, tables (rows, dim): t0 (2000, 16), t1 (1000, 16), t2 (1000, 8),
// t3 (500, 8). Order t0, t1, t2, t3 (cost, then size). t0 → 0; t1 → 1 (0 < 16); t2: cost sums
// 16 = 16, size sums 32000 > 16000 elements → GPU 1; t3: 16 < 24 → GPU 0.
// Equal (cost, size) go by descending index: t0..t2 (1000, 16) and t3 (1000, 32). Order t3, t2,
// t1, t0: t3 → 0; t2 → 1; t1 → 1 (16 < 32); t0: sums 32 = 32, sizes 32000 = 32000 → GPU 0.
// (Ascending index order would give t0 → 1, t1 → 1, t2 → 0.)
TEST( TEST_CATEGORY, baselines_tie_breaks )
{
    const Platform p = a100Switch( 2, 16 );
    const PlannerOptions o{};
    const Workload sizes = workloadOf(
        { table( 2000, 16, 1 ), table( 1000, 16, 1 ), table( 1000, 8, 1 ), table( 500, 8, 1 ) } );
    EXPECT_EQ( placement( makePlan( PlannerKind::dim_greedy, sizes, p, 0, o ) ),
               ( std::vector<int>{ 0, 1, 1, 0 } ) );
    const Workload index = workloadOf( { table( 1000, 16, 1 ), table( 1000, 16, 1 ),
                                         table( 1000, 16, 1 ), table( 1000, 32, 1 ) } );
    EXPECT_EQ( placement( makePlan( PlannerKind::dim_greedy, index, p, 0, o ) ),
               ( std::vector<int>{ 0, 1, 1, 0 } ) );
}

// The per-table costs differ: t0 (rows 10, dim 16, pf 10), t1 (1e6, 16, 5), t2 (1000, 8, 10).
// lookup_greedy (dim·pf = 160, 80, 80; t1 before t2 by size): t0 → 0, t1 → 1, t2 → 1 (80 < 160).
// size_lookup_greedy (·log10 rows = 160, 480, 240): t1 → 0, t2 → 1, t0 → 1 (240 < 480).
// size_greedy (GiB ∝ 160, 16e6, 8000 elements): t1 → 0, t2 → 1, t0 → 1.
TEST( TEST_CATEGORY, baselines_cost_definitions )
{
    const Workload w =
        workloadOf( { table( 10, 16, 10 ), table( 1'000'000, 16, 5 ), table( 1000, 8, 10 ) } );
    const Platform p = a100Switch( 2, 16 );
    const PlannerOptions o{};
    EXPECT_EQ( placement( makePlan( PlannerKind::lookup_greedy, w, p, 0, o ) ),
               ( std::vector<int>{ 0, 1, 1 } ) );
    EXPECT_EQ( placement( makePlan( PlannerKind::size_lookup_greedy, w, p, 0, o ) ),
               ( std::vector<int>{ 1, 0, 1 } ) );
    EXPECT_EQ( placement( makePlan( PlannerKind::size_greedy, w, p, 0, o ) ),
               ( std::vector<int>{ 1, 0, 1 } ) );
}

// Memory steers the greedy: 1 GiB GPUs, t0 0.9 GiB (dim 8), t1 0.05 GiB (dim 128), t2 0.2 GiB
// (dim 16). Order t1, t2, t0: t1 → 0, t2 → 1, t0 prefers GPU 1 (cost 16 < 128) but 0.2 + 0.9 >
// 1 GiB, so GPU 0 (0.95 GiB). With a 0.1 GiB reserve GPU 0 has room for 0.9 GiB only: t0 fits
// nowhere → infeasible, naming t0 and its size.
TEST( TEST_CATEGORY, baselines_memory_rule )
{
    const double gib = 1073741824.0;
    const Workload w =
        workloadOf( { table( static_cast<std::int64_t>( 0.9 * gib / 32 ), 8, 1 ),
                      table( static_cast<std::int64_t>( 0.05 * gib / 512 ), 128, 1 ),
                      table( static_cast<std::int64_t>( 0.2 * gib / 64 ), 16, 1 ) } );
    Platform p = a100Switch( 2, 1.0 );
    const PlanResult r = makePlan( PlannerKind::dim_greedy, w, p, 0, PlannerOptions{} );
    ASSERT_TRUE( r.feasible ) << r.reason;
    EXPECT_EQ( placement( r ), ( std::vector<int>{ 0, 0, 1 } ) );
    p.hbm_reserve_GiB = 0.1;
    const PlanResult tight = makePlan( PlannerKind::dim_greedy, w, p, 0, PlannerOptions{} );
    EXPECT_FALSE( tight.feasible );
    EXPECT_NE( tight.reason.find( "table 0 't0' (0.900 GiB) fits on no GPU" ), std::string::npos )
        << tight.reason;
    // Optimizer state counts: Adam's 8 B per element triple t1's 0.05 GiB → 0.15 GiB; t0 then
    // no longer fits next to it on GPU 0 (0.9 + 0.15 > 1) and GPU 1 holds t2: infeasible.
    Workload adam = w;
    adam.tables[1].optimizer = Optimizer::adam;
    EXPECT_FALSE(
        makePlan( PlannerKind::dim_greedy, adam, a100Switch( 2, 1.0 ), 0, PlannerOptions{} )
            .feasible );
}

// random: a Philox-seeded uniform GPU per table (stream 0 of the seed), no memory check while
// placing; another seed gives another placement.
TEST( TEST_CATEGORY, random_baseline_is_seeded )
{
    std::vector<TableSpec> tables( 32, table( 1000, 16, 1 ) );
    const Workload w = workloadOf( tables );
    Platform p = a100Switch( 2, 16 );
    PlannerOptions o;
    o.seed = 7;
    const std::vector<int> a = placement( makePlan( PlannerKind::random, w, p, 0, o ) );
    CounterRng rng( 7, 0, 0 );
    std::vector<int> expected;
    for ( int t = 0; t < 32; ++t )
        expected.push_back( static_cast<int>( rng.uniformInt( 0, 1 ) ) );
    EXPECT_EQ( a, expected );
    o.seed = 8;
    EXPECT_NE( placement( makePlan( PlannerKind::random, w, p, 0, o ) ), a );
    int on_zero = 0;
    for ( int g : a )
        on_zero += g == 0;
    EXPECT_GT( on_zero, 4 );
    EXPECT_LT( on_zero, 28 );
}

} // namespace Test
