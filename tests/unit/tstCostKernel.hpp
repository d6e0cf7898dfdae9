// The step composition (model/step.hpp) and the batched kernel (kernel/scenario_batch.hpp,
// kernel/batch_launch.hpp).
#include "test_gpus.hpp"
#include "transformer_test_support.hpp"

#include <algorithm>
#include <backend_equal.hpp>
#include <gtest/gtest.h>
#include <shardsweep/kernel/batch_launch.hpp>
#include <shardsweep/model/rng.hpp>
#include <shardsweep/model/step.hpp>
#include <shardsweep/plan/torchrec_planner.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
Platform testPlatform( int gpus_per_node, int nodes )
{
    Platform p;
    p.gpu = a100Gpu( 40, 1555 );
    p.gpus_per_node = gpus_per_node;
    p.num_nodes = nodes;
    p.hbm_reserve_GiB = 1.5;
    p.host_memory_GiB = 1024;
    p.host_to_gpu_GBps = 25;
    p.network.num_dims = nodes > 1 ? 2 : 1;
    p.network.dims[0] = { Topology::Switch, gpus_per_node, 150.0, 500.0 };
    if ( nodes > 1 )
        p.network.dims[1] = { Topology::Switch, nodes, 25.0, 2000.0 };
    return p;
}

TableSpec table( std::int64_t rows, int dim, double pf )
{
    TableSpec t;
    t.rows = rows;
    t.dim = dim;
    t.pooling_factor = pf;
    t.distribution = AccessDistribution::zipf;
    t.zipf_alpha = 1.05;
    t.optimizer = Optimizer::rowwise_adagrad;
    return t;
}

DenseModel smallDense()
{
    DenseModel d;
    d.num_dense_features = 13;
    d.bottom_mlp_layers = 2;
    d.bottom_mlp[0] = 64;
    d.bottom_mlp[1] = 16;
    d.top_mlp_layers = 2;
    d.top_mlp[0] = 64;
    d.top_mlp[1] = 1;
    return d;
}
} // namespace

// Two table-wise tables on two GPUs: the all-to-all volumes by hand, and the timeline
// recomposed here from the component models.
TEST( TEST_CATEGORY, step_two_tables_table_wise )
{
    const Platform platform = testPlatform( 2, 1 );
    const DenseModel dense = smallDense();
    const TableSpec specs[2] = { table( 1000, 16, 2.0 ), table( 500, 8, 1.0 ) };
    const ShardingType sharding[2] = { ShardingType::table_wise, ShardingType::table_wise };
    const ComputeKernel kernels[2] = { ComputeKernel::hbm, ComputeKernel::hbm };
    const double cache[2] = { 0.0, 0.0 };
    const int shard_table[2] = { 0, 1 }, shard_gpu[2] = { 0, 1 }, shard_cols[2] = { 16, 8 };
    const double shard_rows[2] = { 1000, 500 };
    double phase[2 * kNumPhases], memory[2], scratch[8], fwd[2], bwd[2];
    const DenseCost dc = denseCost( platform.gpu, dense, 2, 24.0, 32.0 );
    const EmbeddingTableStats stats[2] = { embeddingTableStats( specs[0], 64, 0.0 ),
                                           embeddingTableStats( specs[1], 64, 0.0 ) };
    const int stats_index[2] = { 0, 1 };
    const StepSummary s = predictStep(
        platform, dense, dc, 64,
        StepTables{ specs, sharding, kernels, cache, stats_index, stats, 2 },
        StepShards{ shard_table, shard_gpu, shard_rows, shard_cols, 2 },
        StepGpuArrays{ phase, memory, scratch, scratch + 2, scratch + 4, scratch + 6 }, fwd, bwd );

    // Local batch 32. Ids: table 0 has 32·2·8 = 512 B per GPU, table 1 32·1·8 = 256 B.
    EXPECT_EQ( scratch[0], 256.0 ); // GPU 0 sends table 1's ids to GPU 1
    EXPECT_EQ( scratch[1], 512.0 );
    EXPECT_EQ( scratch[2], 512.0 ); // GPU 0 receives table 0's ids from GPU 1
    EXPECT_EQ( scratch[3], 256.0 );
    // Pooled values: table 0 32·16·4 = 2048 B, table 1 32·8·4 = 1024 B.
    EXPECT_EQ( scratch[4], 2048.0 );
    EXPECT_EQ( scratch[5], 1024.0 );
    EXPECT_EQ( scratch[6], 1024.0 );
    EXPECT_EQ( scratch[7], 2048.0 );

    const EmbeddingCost e0 =
        embeddingShardCost( platform.gpu, 25, specs[0], 1.0, 16, 64, ComputeKernel::hbm, 0.0 );
    const EmbeddingCost e1 =
        embeddingShardCost( platform.gpu, 25, specs[1], 1.0, 8, 64, ComputeKernel::hbm, 0.0 );
    EXPECT_EQ( fwd[0], e0.fwd_ms );
    EXPECT_EQ( bwd[1], e1.bwd_ms );
    const double ids_send[2] = { 256, 512 }, ids_recv[2] = { 512, 256 };
    const double emb_send[2] = { 2048, 1024 }, emb_recv[2] = { 1024, 2048 };
    const double t_ids =
        allToAllvTimeNs( platform.network, platform.system, ids_send, ids_recv, 2 ) * 1e-6;
    const double t_fwd =
        allToAllvTimeNs( platform.network, platform.system, emb_send, emb_recv, 2 ) * 1e-6;
    const double t_bwd =
        allToAllvTimeNs( platform.network, platform.system, emb_recv, emb_send, 2 ) * 1e-6;
    const double grads = dc.parameters * 4.0;
    const double t_ar =
        collectiveTimeNs( platform.network, platform.system, Collective::all_reduce, grads ) * 1e-6;
    const double start = std::max( t_ids, dc.bottom_fwd_ms );
    const double top_end =
        start + std::max( e0.fwd_ms, e1.fwd_ms ) + t_fwd + dc.top_fwd_ms + dc.top_bwd_ms;
    const double update = std::max( top_end + t_bwd, top_end + dc.bottom_bwd_ms );
    const double expected =
        std::max( update + std::max( e0.bwd_ms, e1.bwd_ms ), top_end + t_bwd + t_ar );
    EXPECT_DOUBLE_EQ( s.iteration_ms, expected );
    double sum = 0.0;
    for ( double p : s.phase_ms )
    {
        EXPECT_GE( p, 0.0 );
        sum += p;
    }
    EXPECT_NEAR( sum, s.iteration_ms, 1e-12 * s.iteration_ms );

    // Memory of GPU 1: table 1 (500·8·4 B + 500·4 B Adagrad state), its output and gradient
    // for all 64 samples, the dense replica, activations, buffers and the reserve.
    const double gib = 1073741824.0;
    const double expect_mem1 = ( 500.0 * 8 * 4 + 500.0 * 4 ) / gib + 2.0 * 64 * 8 * 4 / gib +
                               ( dc.parameters * 8.0 + dc.activation_bytes ) / gib +
                               ( 256.0 + 2.0 * ( 1024.0 + 2048.0 ) ) / gib + 1.5;
    EXPECT_DOUBLE_EQ( memory[1], expect_mem1 );
    EXPECT_TRUE( s.feasible );
}

// A table too large for the GPU makes the plan infeasible on that GPU, by the overflow.
TEST( TEST_CATEGORY, step_reports_overflow )
{
    Workload w;
    w.tables = { table( 400'000'000, 32, 1.0 ), table( 1000, 32, 1.0 ) };
    w.table_names = { "huge", "small" };
    w.dense = smallDense();
    w.global_batch = 1024;
    Plan plan;
    plan.tables.resize( 2 );
    plan.shards = { { 0, 1, 0, 400'000'000, 0, 32 }, { 1, 0, 0, 1000, 0, 32 } };
    const Platform platform = testPlatform( 2, 1 );
    const ScenarioResult r = evaluateScenario( { &w, &platform, &plan, 0, CostModel::native } );
    EXPECT_FALSE( r.feasible );
    EXPECT_EQ( r.overflow_gpu, 1 );
    // 400e6 rows · (32·4 + 4) B = 52.8e9 B = 49.17 GiB of weights + state alone.
    EXPECT_NEAR( r.overflow_GiB, r.gpu_memory_GiB[1] - 40.0, 1e-12 );
    EXPECT_GT( r.gpu_memory_GiB[1], 400e6 * 132 / 1073741824.0 );
}

namespace
{
//! Random DLRM scenarios of every sharding type and kernel on 1–3 nodes of 4 GPUs.
struct RandomDlrmScenarios
{
    std::vector<Workload> workloads;
    std::vector<Plan> plans;
    std::vector<Platform> platforms;

    explicit RandomDlrmScenarios( int num_scenarios )
        : workloads( num_scenarios ), plans( num_scenarios ), platforms( num_scenarios )
    {
        for ( int i = 0; i < num_scenarios; ++i )
        {
            CounterRng rng( 7, i, 0 );
            const int nodes = 1 + i % 3;
            platforms[i] = testPlatform( 4, nodes );
            const int gpus = 4 * nodes;
            Workload& w = workloads[i];
            w.dense = smallDense();
            w.global_batch = 256 * gpus;
            const int num_tables = 3 + i % 7;
            for ( int t = 0; t < num_tables; ++t )
            {
                TableSpec spec = table( 1000 + rng.uniformInt( 0, 1'000'000 - 1 ),
                                        4 * ( 1 + rng.uniformInt( 0, 16 - 1 ) ),
                                        1.0 + rng.uniformInt( 0, 40 - 1 ) );
                spec.zipf_alpha = 0.5 + rng.uniform();
                w.tables.push_back( spec );
                w.table_names.push_back( "t" + std::to_string( t ) );
                TablePlan tp;
                tp.sharding = static_cast<ShardingType>( rng.uniformInt( 0, 5 - 1 ) );
                tp.kernel = static_cast<ComputeKernel>( rng.uniformInt( 0, 3 - 1 ) );
                tp.cache_fraction = tp.kernel == ComputeKernel::uvm_caching ? 0.2 : 0.0;
                plans[i].tables.push_back( tp );
                const int owner = static_cast<int>( rng.uniformInt( 0, gpus - 1 ) );
                switch ( tp.sharding )
                {
                case ShardingType::table_wise:
                    plans[i].shards.push_back( { t, owner, 0, spec.rows, 0, spec.dim } );
                    break;
                case ShardingType::column_wise:
                    plans[i].shards.push_back( { t, owner, 0, spec.rows, 0, spec.dim / 2 } );
                    plans[i].shards.push_back( { t, ( owner + 1 ) % gpus, 0, spec.rows,
                                                 spec.dim / 2, spec.dim - spec.dim / 2 } );
                    break;
                case ShardingType::row_wise:
                case ShardingType::data_parallel:
                    for ( int g = 0; g < gpus; ++g )
                    {
                        const bool dp = tp.sharding == ShardingType::data_parallel;
                        const std::int64_t block = dp ? spec.rows : ( spec.rows + gpus - 1 ) / gpus;
                        const std::int64_t begin =
                            dp ? 0 : std::min<std::int64_t>( g * block, spec.rows );
                        const std::int64_t end =
                            dp ? spec.rows : std::min<std::int64_t>( begin + block, spec.rows );
                        plans[i].shards.push_back( { t, g, begin, end - begin, 0, spec.dim } );
                    }
                    break;
                default: // table_row_wise over the owner's node
                {
                    const int node = owner / 4;
                    const std::int64_t block = ( spec.rows + 3 ) / 4;
                    for ( int l = 0; l < 4; ++l )
                    {
                        const std::int64_t begin = std::min<std::int64_t>( l * block, spec.rows );
                        const std::int64_t end = std::min<std::int64_t>( begin + block, spec.rows );
                        plans[i].shards.push_back(
                            { t, node * 4 + l, begin, end - begin, 0, spec.dim } );
                    }
                }
                }
            }
        }
    }

    //! Scenario i with the cost model `model`.
    ScenarioInput input( int i, CostModel model = CostModel::native ) const
    {
        return { &workloads[i], &platforms[i], &plans[i], 0, model };
    }
};
} // namespace

// The batched kernel in TEST_EXECSPACE gives bit-for-bit the host loop's results, for random
// scenarios of every sharding type and kernel.
TEST( TEST_CATEGORY, batched_kernel_matches_host )
{
    const int num_scenarios = 40;
    const RandomDlrmScenarios random( num_scenarios );
    const std::vector<Platform>& platforms = random.platforms;
    std::vector<ScenarioInput> inputs;
    for ( int i = 0; i < num_scenarios; ++i )
        inputs.push_back( random.input( i ) );
    const auto batched = evaluateScenarios( TEST_BACKEND, inputs );
    ASSERT_EQ( batched.size(), inputs.size() );
    for ( int i = 0; i < num_scenarios; ++i )
    {
        const ScenarioResult host = evaluateScenario( inputs[i] );
        EXPECT_TRUE( sameAsHost( batched[i].iteration_ms, host.iteration_ms ) ) << "scenario " << i;
        EXPECT_GT( host.iteration_ms, 0.0 );
        EXPECT_EQ( batched[i].feasible, host.feasible );
        EXPECT_TRUE( sameAsHost( batched[i].gpu_memory_GiB, host.gpu_memory_GiB ) );
        EXPECT_TRUE( sameAsHost( batched[i].gpu_phase_ms, host.gpu_phase_ms ) );
        EXPECT_TRUE( sameAsHost( batched[i].shard_fwd_ms, host.shard_fwd_ms ) );
        EXPECT_EQ( batched[i].num_gpus, platforms[i].numGpus() );
    }
}

// Teams of threads per group of DLRM scenarios (the GPU's shape: shards priced side by side, then
// added up in shard order) give the one-thread walk's results, bit for bit on the host, in a batch
// that mixes native, TorchRec and transformer scenarios (the last two launched apart).
TEST( TEST_CATEGORY, team_shape_matches_thread_shape )
{
    const int num_scenarios = 30;
    const RandomDlrmScenarios random( num_scenarios );
    const Workload gpt = smallGptWorkload();
    const Platform gpt_platform = testPlatform( 4, 2 );
    Plan gpt_plan;
    gpt_plan.parallel.tp = 2;
    gpt_plan.parallel.pp = 2;
    gpt_plan.parallel.dp = 2;
    gpt_plan.parallel.micro_batch = 2;
    gpt_plan.parallel.global_batch = 64;
    std::vector<ScenarioInput> inputs;
    for ( int i = 0; i < num_scenarios; ++i )
    {
        inputs.push_back( random.input( i, i % 5 == 4 ? CostModel::torchrec : CostModel::native ) );
        if ( i % 7 == 3 )
            inputs.push_back( { &gpt, &gpt_platform, &gpt_plan, 0, CostModel::native } );
    }
    auto evaluate = [&]( KernelShape shape )
    {
        HostScenarioBatch host = packScenarios( inputs );
        evaluatePacked( TEST_EXECSPACE(), host, false, shape );
        return unpackResults( host );
    };
    const std::vector<ScenarioResult> walk = evaluate( { 0, 1 } );
    // Teams × scenarios per team: one scenario per team, a team per several, more threads than
    // a scenario has shards, groups that do not divide the scenarios.
    std::vector<KernelShape> shapes = { { 1, 1 }, { 1, 4 }, { 2, 1 }, { 2, 3 } };
    if ( kTestOnDevice )
        shapes = { { 32, 32 }, { 32, 1 }, { 64, 7 }, { 7, 3 } };
    shapes.erase( std::remove_if( shapes.begin(), shapes.end(),
                                  []( const KernelShape& s )
                                  { return s.step_team_size > TEST_EXECSPACE().concurrency(); } ),
                  shapes.end() );
    ASSERT_GE( shapes.size(), 2u );
    for ( const KernelShape& shape : shapes )
    {
        const std::vector<ScenarioResult> team = evaluate( shape );
        ASSERT_EQ( team.size(), walk.size() );
        for ( std::size_t i = 0; i < walk.size(); ++i )
        {
            SCOPED_TRACE( "teams of " + std::to_string( shape.step_team_size ) + " threads, " +
                          std::to_string( shape.step_scenarios_per_team ) +
                          " scenarios each; scenario " + std::to_string( i ) );
            EXPECT_GT( walk[i].iteration_ms, 0.0 );
            EXPECT_TRUE( sameAsHost( team[i].iteration_ms, walk[i].iteration_ms ) );
            EXPECT_TRUE( sameAsHost( team[i].exposed_comm_ms, walk[i].exposed_comm_ms ) );
            EXPECT_EQ( team[i].feasible, walk[i].feasible );
            EXPECT_EQ( team[i].overflow_gpu, walk[i].overflow_gpu );
            EXPECT_TRUE( sameAsHost( team[i].gpu_memory_GiB, walk[i].gpu_memory_GiB ) );
            EXPECT_TRUE( sameAsHost( team[i].gpu_phase_ms, walk[i].gpu_phase_ms ) );
            EXPECT_TRUE( sameAsHost( team[i].shard_fwd_ms, walk[i].shard_fwd_ms ) );
            EXPECT_TRUE( sameAsHost( team[i].shard_bwd_ms, walk[i].shard_bwd_ms ) );
            EXPECT_TRUE( sameAsHost( team[i].stage_ms, walk[i].stage_ms ) );
        }
    }
}

// The kernel's TorchRec path reproduces TorchRec's objective (max over ranks of the summed shard
// perf) and its per-shard split exactly, for plans with every sharding type.
TEST( TEST_CATEGORY, torchrec_model_in_kernel_matches_estimator )
{
    Workload w;
    w.dense = smallDense();
    w.global_batch = 8192;
    Plan plan;
    const Platform platform = testPlatform( 4, 2 );
    const ShardingType types[] = { ShardingType::table_wise, ShardingType::column_wise,
                                   ShardingType::row_wise, ShardingType::table_row_wise,
                                   ShardingType::data_parallel };
    for ( int t = 0; t < 5; ++t )
    {
        w.tables.push_back( table( 100000 * ( t + 1 ), 64, 4.0 + t ) );
        w.table_names.push_back( "t" );
        TablePlan tp;
        tp.sharding = types[t];
        plan.tables.push_back( tp );
        switch ( types[t] )
        {
        case ShardingType::table_wise:
            plan.shards.push_back( { t, 3, 0, w.tables[t].rows, 0, 64 } );
            break;
        case ShardingType::column_wise:
            plan.shards.push_back( { t, 1, 0, w.tables[t].rows, 0, 32 } );
            plan.shards.push_back( { t, 5, 0, w.tables[t].rows, 32, 32 } );
            break;
        case ShardingType::table_row_wise:
            for ( int l = 0; l < 4; ++l )
                plan.shards.push_back(
                    { t, 4 + l, l * w.tables[t].rows / 4, w.tables[t].rows / 4, 0, 64 } );
            break;
        default: // row-wise and data-parallel over all 8 GPUs
            for ( int g = 0; g < 8; ++g )
            {
                const bool dp = types[t] == ShardingType::data_parallel;
                const std::int64_t rows = dp ? w.tables[t].rows : w.tables[t].rows / 8;
                plan.shards.push_back( { t, g, dp ? 0 : g * rows, rows, 0, 64 } );
            }
        }
    }
    std::vector<double> fwd( plan.shards.size() ), bwd( plan.shards.size() ), rank( 8 );
    const double objective =
        torchrecPlanCost( w, platform, plan, 8192, fwd.data(), bwd.data(), rank.data() );
    const auto r = evaluateScenarios( TEST_BACKEND,
                                      { { &w, &platform, &plan, 8192, CostModel::torchrec } } )[0];
    EXPECT_EQ( r.iteration_ms, objective );
    EXPECT_EQ( r.shard_fwd_ms, fwd );
    EXPECT_EQ( r.shard_bwd_ms, bwd );
    EXPECT_GT( objective, 0.0 );
}

// An unbalanced plan (every table on one GPU) is slower than a balanced one.
TEST( TEST_CATEGORY, imbalance_costs_time )
{
    Workload w;
    w.dense = smallDense();
    w.global_batch = 4096;
    Plan balanced, skewed;
    for ( int t = 0; t < 8; ++t )
    {
        w.tables.push_back( table( 1'000'000, 64, 20.0 ) );
        w.table_names.push_back( "t" );
        balanced.tables.push_back( {} );
        skewed.tables.push_back( {} );
        balanced.shards.push_back( { t, t % 4, 0, 1'000'000, 0, 64 } );
        skewed.shards.push_back( { t, 0, 0, 1'000'000, 0, 64 } );
    }
    const Platform platform = testPlatform( 4, 1 );
    const auto a = evaluateScenario( { &w, &platform, &balanced, 0, CostModel::native } );
    const auto b = evaluateScenario( { &w, &platform, &skewed, 0, CostModel::native } );
    EXPECT_LT( a.iteration_ms, b.iteration_ms );
    EXPECT_LT( a.phase_ms[static_cast<int>( Phase::embedding_comm_fwd )],
               b.phase_ms[static_cast<int>( Phase::embedding_comm_fwd )] );
}

} // namespace Test
