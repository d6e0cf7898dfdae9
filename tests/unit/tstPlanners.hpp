// Planners: the sharding.md baselines on hand-checked tasks, shardsweep's planner against them,
// and the lower bound.
#include <gtest/gtest.h>
#include <shardsweep/io/errors.hpp>
#include <shardsweep/plan/planner.hpp>
#include <shardsweep/scenario/rng.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
Platform twoGpus( double memory_GiB )
{
    Platform p;
    p.gpu.sm_count = 108;
    p.gpu.boost_clock_MHz = 1410;
    p.gpu.fp32_TFLOPs = 19.5;
    p.gpu.tf32_TFLOPs = 156;
    p.gpu.memory_GiB = memory_GiB;
    p.gpu.memory_bandwidth_GBps = 1555;
    p.gpu.l2_cache_MiB = 40;
    p.gpus_per_node = 2;
    p.host_to_gpu_GBps = 25;
    p.network.num_dims = 1;
    p.network.dims[0] = { Topology::Switch, 2, 150.0, 500.0 };
    return p;
}

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
    const Platform p = twoGpus( 16 );
    const PlannerOptions o;
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
}

// Memory: each 0.6 GiB table fits on a 1 GiB GPU alone, but the 0.5 GiB third table fits next to
// neither: infeasible (the papers' code would silently over-commit the last GPU).
TEST( TEST_CATEGORY, baselines_infeasible_instead_of_overcommit )
{
    const std::int64_t rows_06 = static_cast<std::int64_t>( 0.6 * 1073741824.0 / ( 128 * 4 ) );
    const std::int64_t rows_05 = static_cast<std::int64_t>( 0.5 * 1073741824.0 / ( 8 * 4 ) );
    const Workload w = workloadOf(
        { table( rows_06, 128, 1 ), table( rows_06, 128, 1 ), table( rows_05, 8, 1 ) } );
    const Platform p = twoGpus( 1.0 );
    const PlanResult r = makePlan( PlannerKind::dim_greedy, w, p, 0, PlannerOptions{} );
    EXPECT_FALSE( r.feasible );
    EXPECT_NE( r.reason.find( "table 2 't2'" ), std::string::npos ) << r.reason;
    EXPECT_NE( r.reason.find( "fits on no GPU" ), std::string::npos ) << r.reason;
    // round_robin puts t0 and t2 on GPU 0: 1.1 GiB > 1 GiB.
    const PlanResult rr = makePlan( PlannerKind::round_robin, w, p, 0, PlannerOptions{} );
    EXPECT_FALSE( rr.feasible );
    EXPECT_NE( rr.reason.find( "GPU 0" ), std::string::npos ) << rr.reason;
}

// shardsweep's planner on random tasks: feasible, never worse than any greedy baseline or
// TorchRec's plan, deterministic, and every plan is at least the lower bound.
TEST( TEST_CATEGORY, shardsweep_planner_beats_baselines )
{
    for ( int task = 0; task < 6; ++task )
    {
        CounterRng rng( 11, task, 0 );
        std::vector<TableSpec> tables;
        const int n = 8 + task * 3;
        for ( int t = 0; t < n; ++t )
        {
            TableSpec s = table( rng.uniformInt( 1000, 2'000'000 ),
                                 8 * static_cast<int>( rng.uniformInt( 1, 16 ) ),
                                 static_cast<double>( rng.uniformInt( 1, 60 ) ) );
            s.distribution = AccessDistribution::zipf;
            s.zipf_alpha = rng.uniform( 0.6, 1.2 );
            tables.push_back( s );
        }
        Workload w = workloadOf( tables );
        w.global_batch = 4096;
        Platform p = twoGpus( 16 );
        p.gpus_per_node = 4;
        p.network.dims[0].npus_count = 4;
        PlannerOptions o;
        o.max_iterations = 200;
        o.time_budget_s = 10.0;
        const PlanResult mine = makePlan( PlannerKind::shardsweep, w, p, 0, o );
        ASSERT_TRUE( mine.feasible ) << mine.reason;
        const double bound = iterationLowerBoundMs( w, p, 0 );
        EXPECT_LE( bound, mine.predicted_ms );
        for ( PlannerKind k : { PlannerKind::round_robin, PlannerKind::dim_greedy,
                                PlannerKind::size_greedy, PlannerKind::lookup_greedy,
                                PlannerKind::size_lookup_greedy, PlannerKind::torchrec } )
        {
            const PlanResult other = makePlan( k, w, p, 0, o );
            if ( !other.feasible )
                continue;
            EXPECT_LE( mine.predicted_ms, other.predicted_ms )
                << plannerName( k ) << " task " << task;
            EXPECT_LE( bound, other.predicted_ms ) << plannerName( k );
        }
        const PlanResult again = makePlan( PlannerKind::shardsweep, w, p, 0, o );
        EXPECT_EQ( again.predicted_ms, mine.predicted_ms );
        EXPECT_EQ( placement( again ), placement( mine ) );
    }
}

} // namespace Test
