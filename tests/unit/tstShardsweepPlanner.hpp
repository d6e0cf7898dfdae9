// shardsweep's planner and the lower bound: PlanState reproduces the kernel's iteration time,
// plans are valid tilings that respect the memory rule, the planner is deterministic and never
// worse than the baselines (and TorchRec) on generated tasks of the papers' protocols, a
// dominant table gets re-sharded, and the bound lies below every plan (also data-parallel,
// row-wise, column-split and UVM plans).
#include <a100_switch_platform.hpp>
#include <algorithm>
#include <backend_equal.hpp>
#include <fmt/format.h>
#include <functional>
#include <gtest/gtest.h>
#include <plan/plan_state.hpp>
#include <plan/shardsweep_search.hpp>
#include <planner_test_support.hpp>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/io/locality_stats.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/workload_yaml.hpp>
#include <shardsweep/kernel/scenario_batch.hpp>
#include <shardsweep/model/memory.hpp>
#include <shardsweep/model/rng.hpp>
#include <shardsweep/plan/planner.hpp>
#include <shardsweep/scenario/scenario_space.hpp>
#include <shardsweep/scenario/table_pool.hpp>
#include <shardsweep/scenario/task_generator.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
//! The batched cost kernel's iteration time in the test's execution space.
double kernelMs( const ScenarioInput& input )
{
    return evaluateScenarios( TEST_BACKEND, { input } ).at( 0 ).iteration_ms;
}

//! The batched cost kernel's whole result (feasibility under the full memory model).
ScenarioResult kernelResult( const ScenarioInput& input )
{
    return evaluateScenarios( TEST_BACKEND, { input } ).at( 0 );
}

//! Every table's shards tile it exactly (data-parallel: one full replica per GPU) on valid GPUs.
void expectValidPlan( const Plan& plan, const Workload& w, int gpus )
{
    ASSERT_EQ( plan.tables.size(), w.tables.size() );
    std::vector<double> covered( w.tables.size(), 0.0 );
    for ( const ShardSpec& s : plan.shards )
    {
        ASSERT_GE( s.table, 0 );
        ASSERT_LT( s.table, static_cast<int>( w.tables.size() ) );
        EXPECT_GE( s.gpu, 0 );
        EXPECT_LT( s.gpu, gpus );
        const TableSpec& t = w.tables[s.table];
        EXPECT_LE( s.row_offset + s.num_rows, t.rows );
        EXPECT_LE( s.col_offset + s.num_cols, t.dim );
        covered[s.table] += static_cast<double>( s.num_rows ) * s.num_cols;
    }
    for ( std::size_t t = 0; t < w.tables.size(); ++t )
    {
        const double area = static_cast<double>( w.tables[t].rows ) * w.tables[t].dim;
        const double copies = plan.tables[t].sharding == ShardingType::data_parallel ? gpus : 1;
        EXPECT_EQ( covered[t], area * copies ) << "table " << t;
    }
}

double tableBytesOn( const Plan& plan, const Workload& w, int gpu )
{
    double bytes = 0.0;
    for ( const ShardSpec& s : plan.shards )
        if ( s.gpu == gpu )
            bytes +=
                shardHbmBytes( w.tables[s.table], static_cast<double>( s.num_rows ), s.num_cols,
                               plan.tables[s.table].kernel, plan.tables[s.table].cache_fraction );
    return bytes;
}

//! Plans no planner makes, to stress the bound and PlanState: every table data-parallel,
//! row-wise over all GPUs, split into 4-column blocks round robin, or table-wise with a 10 %
//! UVM cache.
std::vector<Plan> unusualPlans( const Workload& w, int gpus )
{
    std::vector<Plan> plans( 4 );
    for ( Plan& p : plans )
        p.tables.resize( w.tables.size() );
    int next = 0;
    for ( std::size_t i = 0; i < w.tables.size(); ++i )
    {
        const int t = static_cast<int>( i );
        const TableSpec& spec = w.tables[i];
        plans[0].tables[i].sharding = ShardingType::data_parallel;
        plans[1].tables[i].sharding = ShardingType::row_wise;
        plans[2].tables[i].sharding = ShardingType::column_wise;
        plans[3].tables[i].kernel = ComputeKernel::uvm_caching;
        plans[3].tables[i].cache_fraction = 0.1;
        const std::int64_t block = ( spec.rows + gpus - 1 ) / gpus;
        for ( int g = 0; g < gpus; ++g )
        {
            plans[0].shards.push_back( { t, g, 0, spec.rows, 0, spec.dim } );
            const std::int64_t begin = std::min<std::int64_t>( g * block, spec.rows );
            const std::int64_t end = std::min<std::int64_t>( begin + block, spec.rows );
            if ( end > begin )
                plans[1].shards.push_back( { t, g, begin, end - begin, 0, spec.dim } );
        }
        for ( int c = 0; c < spec.dim; c += 4 )
            plans[2].shards.push_back(
                { t, next++ % gpus, 0, spec.rows, c, std::min( 4, spec.dim - c ) } );
        plans[3].shards.push_back( { t, t % gpus, 0, spec.rows, 0, spec.dim } );
    }
    return plans;
}
} // namespace

// PlanState's incremental composition equals the kernel's iteration time for the planners'
// plans and for unusual ones (data-parallel, row-wise, column blocks, UVM cache).
TEST( TEST_CATEGORY, plan_state_matches_kernel )
{
    for ( const Task& task : protocolTasks( 1 ) )
    {
        const Workload& w = task.workload;
        const Platform& p = task.platform;
        std::vector<Plan> plans = unusualPlans( w, p.numGpus() );
        for ( PlannerKind k :
              { PlannerKind::round_robin, PlannerKind::size_lookup_greedy, PlannerKind::torchrec } )
        {
            PlanResult r = makePlan( k, w, p, 0, deterministic() );
            if ( r.feasible )
                plans.push_back( r.plan );
        }
        for ( const Plan& plan : plans )
        {
            PlanState state( w, p, 0, 1e30 );
            state.load( plan );
            const double kernel = kernelMs( { &w, &p, &plan, 0, CostModel::native } );
            EXPECT_NEAR( state.objective(), kernel, 1e-9 * kernel );
        }
    }
}

// On tasks of the three protocols: valid plans within the memory rule, never worse than any
// baseline or TorchRec's plan, strictly better than the best baseline on average, identical
// when planned twice, and every plan (also unusual ones) at or above the lower bound.
TEST( TEST_CATEGORY, shardsweep_planner_on_protocol_tasks )
{
    double sum_gain = 0.0;
    int compared = 0;
    const std::vector<Task> tasks = protocolTasks( 2 );
    for ( std::size_t i = 0; i < tasks.size(); ++i )
    {
        const Workload& w = tasks[i].workload;
        const Platform& p = tasks[i].platform;
        const int gpus = p.numGpus();
        const PlanResult mine = makePlan( PlannerKind::shardsweep, w, p, 0, deterministic() );
        ASSERT_TRUE( mine.feasible ) << mine.reason;
        expectValidPlan( mine.plan, w, gpus );
        const double cap = ( p.gpu.memory_GiB - p.hbm_reserve_GiB ) * kBytesPerGiB;
        for ( int g = 0; g < gpus; ++g )
            EXPECT_LE( tableBytesOn( mine.plan, w, g ), cap * ( 1.0 + 1e-9 ) ) << "GPU " << g;
        const ScenarioResult priced = kernelResult( { &w, &p, &mine.plan, 0, CostModel::native } );
        EXPECT_TRUE( priced.feasible )
            << "GPU " << priced.overflow_gpu << " over by " << priced.overflow_GiB << " GiB";
        EXPECT_TRUE( sameAsHost( priced.iteration_ms, mine.predicted_ms ) );

        const double bound = iterationLowerBoundMs( w, p, 0 );
        EXPECT_GT( bound, 0.0 );
        EXPECT_LE( bound, mine.predicted_ms );
        double best_baseline = 1e300;
        for ( int k = 0; k < kNumPlanners; ++k )
        {
            const PlannerKind kind = static_cast<PlannerKind>( k );
            if ( kind == PlannerKind::shardsweep )
                continue;
            const PlanResult other = makePlan( kind, w, p, 0, deterministic() );
            if ( !other.feasible ||
                 !kernelResult( { &w, &p, &other.plan, 0, CostModel::native } ).feasible )
                continue; // only plans that fit under the full memory model compete
            EXPECT_LE( mine.predicted_ms, other.predicted_ms ) << plannerName( kind );
            EXPECT_LE( bound, other.predicted_ms ) << plannerName( kind );
            if ( kind != PlannerKind::torchrec )
                best_baseline = std::min( best_baseline, other.predicted_ms );
        }
        if ( best_baseline < 1e300 )
        {
            sum_gain += ( best_baseline - mine.predicted_ms ) / best_baseline;
            ++compared;
        }
        for ( const Plan& plan : unusualPlans( w, gpus ) )
        {
            // The bound holds for plans that fit (it relaxes the memory constraint).
            const ScenarioResult r = kernelResult( { &w, &p, &plan, 0, CostModel::native } );
            if ( r.feasible )
            {
                EXPECT_LE( bound, r.iteration_ms );
            }
        }

        if ( i % 2 != 0 )
            continue; // determinism: the first task of each protocol
        const PlanResult again = makePlan( PlannerKind::shardsweep, w, p, 0, deterministic() );
        EXPECT_EQ( again.predicted_ms, mine.predicted_ms );
        ASSERT_EQ( again.plan.shards.size(), mine.plan.shards.size() );
        for ( std::size_t s = 0; s < mine.plan.shards.size(); ++s )
        {
            EXPECT_EQ( again.plan.shards[s].gpu, mine.plan.shards[s].gpu );
            EXPECT_EQ( again.plan.shards[s].num_rows, mine.plan.shards[s].num_rows );
            EXPECT_EQ( again.plan.shards[s].num_cols, mine.plan.shards[s].num_cols );
        }
    }
    ASSERT_GT( compared, 0 );
    EXPECT_GT( sum_gain / compared, 0.01 ); // at least 1 % better than the best baseline
}

//! A random plan: per table a random sharding (table-wise, row-wise, table-row-wise on a random
//! node, column blocks of random widths on random GPUs, data-parallel) and kernel (HBM, UVM,
//! UVM cache of a random share).
Plan randomPlan( const Workload& w, const Platform& p, CounterRng& rng )
{
    const int gpus = p.numGpus();
    Plan plan;
    plan.tables.resize( w.tables.size() );
    for ( std::size_t i = 0; i < w.tables.size(); ++i )
    {
        const int t = static_cast<int>( i );
        const TableSpec& spec = w.tables[i];
        TablePlan& tp = plan.tables[i];
        const int kernel = static_cast<int>( rng.uniformInt( 0, 2 ) );
        tp.kernel = kernel == 0 ? ComputeKernel::hbm
                                : ( kernel == 1 ? ComputeKernel::uvm : ComputeKernel::uvm_caching );
        tp.cache_fraction =
            tp.kernel == ComputeKernel::uvm_caching ? rng.uniform( 0.01, 0.5 ) : 0.0;
        auto rows = [&]( int first, int count )
        {
            const std::int64_t block = ( spec.rows + count - 1 ) / count;
            for ( int k = 0; k < count; ++k )
            {
                const std::int64_t begin = std::min<std::int64_t>( k * block, spec.rows );
                const std::int64_t end = std::min<std::int64_t>( begin + block, spec.rows );
                if ( end > begin )
                    plan.shards.push_back( { t, first + k, begin, end - begin, 0, spec.dim } );
            }
        };
        switch ( rng.uniformInt( 0, 4 ) )
        {
        case 0:
            tp.sharding = ShardingType::table_wise;
            plan.shards.push_back( { t, static_cast<int>( rng.uniformInt( 0, gpus - 1 ) ), 0,
                                     spec.rows, 0, spec.dim } );
            break;
        case 1:
            tp.sharding = ShardingType::row_wise;
            rows( 0, gpus );
            break;
        case 2:
            tp.sharding = ShardingType::table_row_wise;
            rows( static_cast<int>( rng.uniformInt( 0, p.num_nodes - 1 ) ) * p.gpus_per_node,
                  p.gpus_per_node );
            break;
        case 3:
            tp.sharding = ShardingType::column_wise;
            for ( int c = 0; c < spec.dim; )
            {
                const int width =
                    std::min( spec.dim - c, 4 * static_cast<int>( rng.uniformInt( 1, 8 ) ) );
                plan.shards.push_back( { t, static_cast<int>( rng.uniformInt( 0, gpus - 1 ) ), 0,
                                         spec.rows, c, width } );
                c += width;
            }
            break;
        default:
            tp.sharding = ShardingType::data_parallel;
            tp.kernel = ComputeKernel::hbm;
            tp.cache_fraction = 0.0;
            for ( int g = 0; g < gpus; ++g )
                plan.shards.push_back( { t, g, 0, spec.rows, 0, spec.dim } );
        }
    }
    return plan;
}

// Random mixed plans on protocol tasks, on one node and on 2 and 4 nodes (multi-dimension
// all-to-alls): every plan is at or above the lower bound, and PlanState prices it as the kernel.
TEST( TEST_CATEGORY, bound_below_random_plans )
{
    const std::string source = SHARDSWEEP_SOURCE_DIR;
    const Platform cluster =
        readPlatformFile( source + "/inputs/platforms/dgx-a100-4node-ib.yaml" ).platform;
    std::vector<Task> tasks = protocolTasks( 1 );
    CounterRng rng( 2026, 0, 0 );
    int fitting = 0;
    for ( Task& task : tasks )
        for ( int shape = 0; shape < 3; ++shape )
        {
            const int gpus = shape == 0 ? task.platform.numGpus() : ( shape == 1 ? 8 : 16 );
            const Platform p = shape == 0 ? task.platform : resizePlatform( cluster, gpus, 4 );
            if ( shape > 0 )
            {
                ASSERT_EQ( p.num_nodes, gpus / 4 );
            }
            const Workload& w = task.workload;
            const double bound = iterationLowerBoundMs( w, p, 0 );
            for ( int k = 0; k < 2; ++k )
            {
                const Plan plan = randomPlan( w, p, rng );
                const ScenarioResult r = kernelResult( { &w, &p, &plan, 0, CostModel::native } );
                const double ms = r.iteration_ms;
                if ( r.feasible ) // the bound holds for plans that fit
                {
                    EXPECT_LE( bound, ms ) << "nodes " << p.num_nodes;
                    ++fitting;
                }
                PlanState state( w, p, 0, 1e30 );
                state.load( plan );
                EXPECT_NEAR( state.objective(), ms, 1e-9 * ms ) << "nodes " << p.num_nodes;
            }
        }
    EXPECT_GT( fitting, 6 ); // most random plans fit: the check is not vacuous
}

// One table does 90 % of the lookups: table-wise it bounds the iteration on its GPU whatever
// the placement; shardsweep splits it (row-, table-row- or column-wise) and beats every
// baseline by far.
TEST( TEST_CATEGORY, dominant_table_is_resharded )
{
    Workload w;
    w.name = "dominant";
    w.global_batch = 65536;
    for ( int t = 0; t < 12; ++t )
    {
        TableSpec s;
        s.rows = t == 0 ? 4'000'000 : 200'000;
        s.dim = 64;
        s.pooling_factor = t == 0 ? 200.0 : 2.0;
        w.tables.push_back( s );
        w.table_names.push_back( "t" + std::to_string( t ) );
    }
    const Platform p = a100Switch( 4, 40.0 );
    const PlanResult mine = makePlan( PlannerKind::shardsweep, w, p, 0, deterministic() );
    ASSERT_TRUE( mine.feasible ) << mine.reason;
    EXPECT_NE( mine.plan.tables[0].sharding, ShardingType::table_wise );
    const PlanResult best = makePlan( PlannerKind::size_lookup_greedy, w, p, 0, deterministic() );
    EXPECT_LT( mine.predicted_ms, 0.8 * best.predicted_ms );
    EXPECT_LE( iterationLowerBoundMs( w, p, 0 ), mine.predicted_ms );
    // Unpriced (sweeps price plans in their own kernel call): the same plan, the search's own
    // estimate of it.
    PlannerOptions unpriced = deterministic();
    unpriced.price_plan = false;
    const PlanResult raw = makePlan( PlannerKind::shardsweep, w, p, 0, unpriced );
    ASSERT_TRUE( raw.feasible );
    EXPECT_NEAR( raw.predicted_ms, mine.predicted_ms, 1e-9 * mine.predicted_ms );
    EXPECT_EQ( raw.plan.shards.size(), mine.plan.shards.size() );
}

// A tiny table (1000 rows × 128 columns, one lookup per sample) and four large ones (2M rows ×
// 16, 20 lookups) on 4 GPUs of a switch. The tiny table on one GPU makes that GPU send 128 + 16
// pooled columns for every sample, against 16 on the others, forward and backward, while looking
// it up costs next to nothing. Data-parallel, every GPU looks it up for its own 16 384 samples
// and sends nothing for it, and its 512 KiB of gradient joins the all-reduce; a large table
// data-parallel would add 128 MiB to the all-reduce. No move helps (the tiny table sends as much
// from any GPU), so the local search, started from the model-parallel plan, must end in its
// data-parallel option: the tiny table replicated, as fast as that plan built by hand.
TEST( TEST_CATEGORY, cheap_tables_go_data_parallel )
{
    Workload w;
    w.name = "tiny_and_large";
    w.global_batch = 65536;
    for ( int t = 0; t < 5; ++t )
    {
        const bool tiny = t == 0;
        TableSpec s;
        s.rows = tiny ? 1000 : 2'000'000;
        s.dim = tiny ? 128 : 16;
        s.pooling_factor = tiny ? 1.0 : 20.0;
        w.tables.push_back( s );
        w.table_names.push_back( "t" + std::to_string( t ) );
    }
    const Platform p = a100Switch( 4, 40.0 );
    // By hand: a large table on each GPU, the tiny one on every GPU (mixed) or on GPU 0.
    Plan mixed, one_each;
    for ( int t = 0; t < 5; ++t )
    {
        const bool tiny = t == 0;
        one_each.tables.push_back( TablePlan{} );
        one_each.shards.push_back(
            { t, std::max( 0, t - 1 ), 0, w.tables[t].rows, 0, w.tables[t].dim } );
        mixed.tables.push_back( { tiny ? ShardingType::data_parallel : ShardingType::table_wise,
                                  ComputeKernel::hbm, 0.0 } );
        for ( int g = 0; g < 4; ++g )
            if ( tiny || g == t - 1 )
                mixed.shards.push_back( { t, g, 0, w.tables[t].rows, 0, w.tables[t].dim } );
    }
    const double mixed_ms = kernelMs( { &w, &p, &mixed, 0, CostModel::native } );
    ASSERT_LT( mixed_ms, 0.9 * kernelMs( { &w, &p, &one_each, 0, CostModel::native } ) );
    PlanState state( w, p, 0, 1e30 );
    state.load( one_each );
    const std::function<double()> clock = [] { return 0.0; };
    planner_detail::Budget budget{ 100000, 1e30, &clock };
    planner_detail::localSearch( state, w, p, budget, true );
    const Plan searched = state.toPlan();
    for ( int t = 0; t < 5; ++t )
        EXPECT_EQ( searched.tables[t].sharding == ShardingType::data_parallel, t == 0 ) << t;
    state.refresh();
    EXPECT_LE( state.objective(), mixed_ms * ( 1.0 + 1e-9 ) );
    EXPECT_NEAR( kernelMs( { &w, &p, &searched, 0, CostModel::native } ), state.objective(),
                 1e-9 * state.objective() );
}

// MLPerf DLRM on 2 A100s at batch 262144 (a quickstart task). On GPUs of 62 GiB the plan the
// search finds without a memory limit overflows (its activations and all-to-all buffers; the
// planner returned such plans before it priced memory with the full model), no baseline or
// TorchRec plan fits, and the planner's plan must fit. On the A100's own 80 GB every one fits,
// and the planner's plan must be no slower than the fastest.
TEST( TEST_CATEGORY, shardsweep_planner_respects_full_memory_model )
{
    const std::string source = SHARDSWEEP_SOURCE_DIR;
    const Workload w = readWorkloadFile( source + "/inputs/workloads/mlperf-dlrm-criteo-1tb.yaml" );
    const Platform full = resizePlatform(
        readPlatformFile( source + "/inputs/platforms/dgx-a100.yaml" ).platform, 2 );
    const std::int64_t batch = 262144;
    Platform unlimited = full;
    unlimited.gpu.memory_GiB = 1e6;
    const PlanResult free =
        makePlan( PlannerKind::shardsweep, w, unlimited, batch, deterministic() );
    ASSERT_TRUE( free.feasible ) << free.reason;
    Platform tight = full;
    tight.gpu.memory_GiB = 62.0;
    ASSERT_FALSE( kernelResult( { &w, &tight, &free.plan, batch, CostModel::native } ).feasible )
        << "the task no longer tests the memory model";

    for ( const Platform* p : { static_cast<const Platform*>( &tight ), &full } )
    {
        SCOPED_TRACE( fmt::format( "{} GiB per GPU", p->gpu.memory_GiB ) );
        const PlanResult mine = makePlan( PlannerKind::shardsweep, w, *p, batch, deterministic() );
        ASSERT_TRUE( mine.feasible ) << mine.reason;
        const ScenarioResult priced =
            kernelResult( { &w, p, &mine.plan, batch, CostModel::native } );
        EXPECT_TRUE( priced.feasible )
            << "GPU " << priced.overflow_gpu << " over by " << priced.overflow_GiB << " GiB";
        EXPECT_TRUE( sameAsHost( priced.iteration_ms, mine.predicted_ms ) );
        double best_fitting = 1e300;
        for ( int k = 0; k < kNumPlanners; ++k )
        {
            const PlannerKind kind = static_cast<PlannerKind>( k );
            if ( kind == PlannerKind::shardsweep )
                continue;
            const PlanResult other = makePlan( kind, w, *p, batch, deterministic() );
            if ( !other.feasible )
                continue;
            const ScenarioResult r =
                kernelResult( { &w, p, &other.plan, batch, CostModel::native } );
            if ( r.feasible )
                best_fitting = std::min( best_fitting, r.iteration_ms );
        }
        if ( p == &tight )
            EXPECT_EQ( best_fitting, 1e300 ) << "a baseline fits: the tight case is not tight";
        else
            EXPECT_LE( mine.predicted_ms, best_fitting );
    }
}

// Every placement overflows: the tables fit (the old table-only rule accepted them), but the
// pooled outputs of 4M samples (2 x 4M x 64 x 4 B = 2 GiB of activations per shard) do not fit
// a 1 GiB GPU. The planner answers "no plan" and names the GPU and the overflow that the
// kernel reports for the best plan it found.
TEST( TEST_CATEGORY, shardsweep_planner_no_feasible_plan )
{
    Workload w;
    w.name = "activations";
    w.global_batch = 4 * 1024 * 1024;
    for ( int t = 0; t < 4; ++t )
    {
        TableSpec s;
        s.rows = 10000;
        s.dim = 64;
        w.tables.push_back( s );
        w.table_names.push_back( "t" + std::to_string( t ) );
    }
    Platform p;
    p.gpu.memory_GiB = 1;
    p.gpu.memory_bandwidth_GBps = 900;
    p.gpu.l2_cache_MiB = 6;
    p.gpu.sm_count = 80;
    p.gpus_per_node = 2;
    p.host_to_gpu_GBps = 16;
    p.network.num_dims = 1;
    p.network.dims[0] = { Topology::Switch, 2, 100.0, 500.0 };
    const PlanResult sized = makePlan( PlannerKind::size_greedy, w, p, 0, deterministic() );
    ASSERT_TRUE( sized.feasible ) << "the tables alone must fit: " << sized.reason;
    const PlanResult r = makePlan( PlannerKind::shardsweep, w, p, 0, deterministic() );
    EXPECT_FALSE( r.feasible );
    ASSERT_EQ( r.plan.tables.size(), w.tables.size() );
    const ScenarioResult k = kernelResult( { &w, &p, &r.plan, 0, CostModel::native } );
    ASSERT_FALSE( k.feasible );
    EXPECT_GT( k.overflow_GiB, 1.0 ); // at least one shard's 2 GiB of activations, minus 1 GiB
    const std::string expected =
        fmt::format( "needs {:.3f} GiB on GPU {}, {:.3f} GiB more than its 1.000 GiB",
                     1.0 + k.overflow_GiB, k.overflow_gpu, k.overflow_GiB );
    EXPECT_EQ( r.reason.rfind( "no plan fits in memory: ", 0 ), 0u ) << r.reason;
    EXPECT_NE( r.reason.find( expected ), std::string::npos ) << r.reason << "\n" << expected;
}

// A table larger than all GPUs together and than the node's host memory fits nowhere, not even
// row-wise, as a UVM cache or in host memory: infeasible, naming the table. With enough host
// memory it becomes a plain UVM table.
TEST( TEST_CATEGORY, shardsweep_planner_infeasible )
{
    Workload w;
    w.name = "huge";
    w.global_batch = 1024;
    TableSpec small;
    small.rows = 1000;
    small.dim = 16;
    TableSpec huge;
    huge.rows = 1'000'000'000;
    huge.dim = 64; // 238 GiB
    w.tables = { small, huge };
    w.table_names = { "small", "huge" };
    Platform p;
    p.gpu.memory_GiB = 16;
    p.gpu.memory_bandwidth_GBps = 900;
    p.gpu.l2_cache_MiB = 6;
    p.gpu.sm_count = 80;
    p.gpus_per_node = 2;
    p.host_to_gpu_GBps = 16;
    p.network.num_dims = 1;
    p.network.dims[0] = { Topology::Switch, 2, 100.0, 500.0 };
    p.hbm_reserve_GiB = 16; // nothing left for tables, not even a cache
    p.host_memory_GiB = 200;
    const PlanResult r = makePlan( PlannerKind::shardsweep, w, p, 0, deterministic() );
    EXPECT_FALSE( r.feasible );
    EXPECT_NE( r.reason.find( "table 1 'huge' (238.419 GiB) fits on no GPU" ), std::string::npos )
        << r.reason;
    p.host_memory_GiB = 0; // unlimited
    p.hbm_reserve_GiB = 15.9;
    const PlanResult uvm = makePlan( PlannerKind::shardsweep, w, p, 0, deterministic() );
    ASSERT_TRUE( uvm.feasible ) << uvm.reason;
    EXPECT_EQ( uvm.plan.tables[1].kernel, ComputeKernel::uvm );
}

} // namespace Test
