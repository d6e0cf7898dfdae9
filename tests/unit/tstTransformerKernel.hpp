// Transformer scenarios in the batched cost kernel (kernel/scenario_batch.hpp): the same launch
// path as DLRM scenarios, operator cases deduplicated per batch, results bit for bit those of the
// model functions called directly (so Serial and OpenMP agree bit for bit).
#include "test_gpus.hpp"

#include <algorithm>
#include <array>
#include <backend_equal.hpp>
#include <cmath>
#include <gtest/gtest.h>
#include <shardsweep/kernel/scenario_batch.hpp>
#include <shardsweep/model/transformer.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <stdexcept>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
Platform a100Cluster( int nodes )
{
    Platform p;
    p.gpu = a100Gpu( 80, 2039 );
    p.gpus_per_node = 8;
    p.num_nodes = nodes;
    p.hbm_reserve_GiB = 2;
    p.network.num_dims = nodes > 1 ? 2 : 1;
    p.network.dims[0] = { Topology::Switch, 8, 300.0, 500.0 };
    if ( nodes > 1 )
        p.network.dims[1] = { Topology::Switch, nodes, 25.0, 1000.0 };
    return p;
}

Workload gpt( int layers, int hidden, int heads, std::int64_t batch )
{
    Workload w;
    w.name = "gpt";
    w.kind = WorkloadKind::transformer;
    w.transformer.arch = TransformerArch::gpt;
    w.transformer.layers = layers;
    w.transformer.hidden = hidden;
    w.transformer.heads = heads;
    w.transformer.seq_len = 2048;
    w.transformer.vocab = 50257;
    w.global_batch = batch;
    return w;
}

Workload tinyDlrm()
{
    Workload w;
    w.name = "dlrm";
    w.global_batch = 4096;
    w.dense.bottom_mlp_layers = 1;
    w.dense.bottom_mlp[0] = 16;
    w.dense.top_mlp_layers = 1;
    w.dense.top_mlp[0] = 1;
    TableSpec t;
    t.rows = 100000;
    t.dim = 16;
    w.tables.push_back( t );
    w.table_names.push_back( "t0" );
    return w;
}
} // namespace

// Every valid (tp, pp) layout of 32 GPUs x micro-batches x recompute x one or two model chunks per
// stage (with overlap and the distributed optimizer on some) for a 2.7B-like model, and for an
// fp8 Llama-like variant (SwiGLU, grouped-query attention, uneven first and last stages) on
// FP8-capable GPUs, mixed with DLRM scenarios in one batch: each transformer result equals
// predictTransformerStep on transformerOperatorCost called directly, bit for bit, stage arrays
// included.
void kernelMatchesModelFunctions( bool modern )
{
    Platform platform = a100Cluster( 4 );
    Workload model = gpt( 32, 2560, 32, 512 );
    if ( modern )
    {
        platform.gpu.fp8_TFLOPs = 2.0 * platform.gpu.bf16_TFLOPs;
        model.transformer.dtype = DataType::fp8;
        model.transformer.ffn_type = FfnType::swiglu;
        model.transformer.kv_heads = 8;
        model.transformer.ffn_hidden = 6912;
    }
    const Workload dlrm = tinyDlrm();
    Plan dlrm_plan;
    dlrm_plan.tables.push_back( TablePlan{} );
    dlrm_plan.shards.push_back( { 0, 0, 0, 100000, 0, 16 } );
    std::vector<Plan> plans;
    for ( const auto& [tp, pp] : gpuLayouts( 32 ) )
        for ( int mb : { 1, 2, 4 } )
            for ( Recompute rc : { Recompute::none, Recompute::selective, Recompute::full } )
                for ( int v : { 1, 2 } )
                {
                    Plan p;
                    p.parallel.tp = tp;
                    p.parallel.pp = pp;
                    p.parallel.dp = 32 / ( tp * pp );
                    p.parallel.micro_batch = mb;
                    p.parallel.recompute = rc;
                    p.parallel.sequence_parallel = tp > 1 && mb == 2;
                    p.parallel.zero = mb == 4 ? 1 : 0;
                    p.parallel.virtual_stages = modern ? 1 : v;
                    p.parallel.overlap = mb != 4;
                    p.parallel.distributed_optimizer = mb == 2;
                    if ( modern && v == 2 && pp > 2 ) // uneven: one layer less at both ends
                    {
                        p.parallel.first_stage_layers = 32 / pp - 1;
                        p.parallel.last_stage_layers = 32 / pp - 1;
                    }
                    if ( parallelConfigError(
                             model.transformer,
                             [&]
                             {
                                 ParallelConfig c = p.parallel;
                                 c.global_batch = model.global_batch;
                                 return c;
                             }(),
                             32 )
                             .empty() )
                        plans.push_back( p );
                }
    ASSERT_GT( plans.size(), 50u );
    std::vector<ScenarioInput> inputs;
    for ( std::size_t k = 0; k < plans.size(); ++k )
    {
        inputs.push_back( { &model, &platform, &plans[k], 0, CostModel::native } );
        if ( k % 10 == 0 )
            inputs.push_back( { &dlrm, &platform, &dlrm_plan, 0, CostModel::native } );
    }
    // Operator cases are deduplicated: (tp, micro_batch, sp) combinations only.
    const HostScenarioBatch packed = packScenarios( inputs );
    std::vector<std::array<int, 3>> distinct;
    for ( const Plan& p : plans )
    {
        const std::array<int, 3> key = { p.parallel.tp, p.parallel.micro_batch,
                                         p.parallel.sequence_parallel ? 1 : 0 };
        if ( std::find( distinct.begin(), distinct.end(), key ) == distinct.end() )
            distinct.push_back( key );
    }
    EXPECT_EQ( packed.transformer_case.extent( 0 ), distinct.size() );
    EXPECT_EQ( packed.dense_case.extent( 0 ), 1u );

    const auto batched = evaluateScenarios( TEST_BACKEND, inputs );
    ASSERT_EQ( batched.size(), inputs.size() );
    for ( std::size_t i = 0; i < inputs.size(); ++i )
    {
        const ScenarioResult host = evaluateScenario( inputs[i] );
        EXPECT_TRUE( sameAsHost( batched[i].iteration_ms, host.iteration_ms ) ) << "scenario " << i;
        EXPECT_GT( batched[i].iteration_ms, 0.0 );
        if ( !inputs[i].workload->isTransformer() )
        {
            EXPECT_EQ( batched[i].kind, WorkloadKind::dlrm );
            EXPECT_TRUE( sameAsHost( batched[i].gpu_phase_ms, host.gpu_phase_ms ) );
            continue;
        }
        ParallelConfig c = inputs[i].plan->parallel;
        c.global_batch = model.global_batch;
        std::vector<double> stage_ms( c.pp ), stage_mem( c.pp );
        const TransformerStepSummary ref =
            predictTransformerStep( platform, model.transformer, c,
                                    transformerOperatorCost( transformerOperatorCase(
                                        platform.gpu, model.transformer, c ) ),
                                    stage_ms.data(), stage_mem.data() );
        const ScenarioResult& r = batched[i];
        EXPECT_EQ( r.kind, WorkloadKind::transformer );
        EXPECT_TRUE( sameAsHost( r.iteration_ms, ref.iteration_ms ) ) << parallelConfigSummary( c );
        EXPECT_EQ( r.feasible, ref.feasible );
        EXPECT_TRUE( sameAsHost( r.transformer.peak_memory_GiB, ref.peak_memory_GiB ) );
        EXPECT_TRUE( sameAsHost( r.transformer.model_flops, ref.model_flops ) );
        for ( int k = 0; k < kNumTransformerPhases; ++k )
            EXPECT_TRUE( sameAsHost( r.transformer.phase_ms[k], ref.phase_ms[k] ) ) << k;
        EXPECT_TRUE( sameAsHost( r.exposed_comm_ms, ref.phase_ms[1] + ref.phase_ms[2] +
                                                        ref.phase_ms[3] + ref.phase_ms[6] ) );
        EXPECT_TRUE( sameAsHost( r.stage_ms, stage_ms ) );
        EXPECT_TRUE( sameAsHost( r.stage_memory_GiB, stage_mem ) );
        EXPECT_EQ( r.parallel.tp, c.tp );
        EXPECT_EQ( r.parallel.global_batch, c.global_batch );
        EXPECT_TRUE( r.gpu_phase_ms.empty() );
    }
}

TEST( TEST_CATEGORY, transformer_kernel_matches_model_functions )
{
    kernelMatchesModelFunctions( false );
}

TEST( TEST_CATEGORY, transformer_kernel_matches_model_functions_modern_knobs )
{
    kernelMatchesModelFunctions( true );
}

// Two platforms that differ only in a bf16 GEMM calibration are two operator cases (the cache key
// hashes the calibration in), each priced as the model functions price it on its GPU.
TEST( TEST_CATEGORY, transformer_kernel_keeps_gemm_calibrations_apart )
{
    const Platform plain = a100Cluster( 1 );
    Platform calibrated = plain;
    GemmTileCalibration& m = calibrated.gpu.gemm_calibration[int( DataType::bf16 )];
    m.valid = true;
    m.tile_weight[3] = 1.0;
    m.offset = std::log( 1.25 );
    Workload model = gpt( 8, 2048, 16, 64 );
    model.transformer.dtype = DataType::bf16;
    Plan plan;
    plan.parallel.tp = 2;
    plan.parallel.dp = 4;
    plan.parallel.micro_batch = 2;
    const std::vector<ScenarioInput> inputs = {
        { &model, &plain, &plan, 0, CostModel::native },
        { &model, &calibrated, &plan, 0, CostModel::native },
        { &model, &plain, &plan, 0, CostModel::native } };
    EXPECT_EQ( packScenarios( inputs ).transformer_case.extent( 0 ), 2u );
    const auto batched = evaluateScenarios( TEST_BACKEND, inputs );
    ParallelConfig c = plan.parallel;
    c.global_batch = model.global_batch;
    for ( std::size_t i = 0; i < inputs.size(); ++i )
    {
        const Platform& p = *inputs[i].platform;
        const TransformerStepSummary ref = predictTransformerStep(
            p, model.transformer, c,
            transformerOperatorCost( transformerOperatorCase( p.gpu, model.transformer, c ) ) );
        EXPECT_TRUE( sameAsHost( batched[i].iteration_ms, ref.iteration_ms ) ) << i;
    }
    EXPECT_NE( batched[0].iteration_ms, batched[1].iteration_ms );
    EXPECT_EQ( batched[0].iteration_ms, batched[2].iteration_ms );
}

// A configuration that cannot run the model on the platform is refused before any launch.
TEST( TEST_CATEGORY, transformer_kernel_rejects_invalid_configurations )
{
    const Platform platform = a100Cluster( 1 );
    const Workload model = gpt( 32, 2560, 32, 512 );
    Plan plan;
    plan.parallel.tp = 8;
    plan.parallel.pp = 1;
    plan.parallel.dp = 2; // 16 GPUs on an 8-GPU platform
    const ScenarioInput in{ &model, &platform, &plan, 0, CostModel::native };
    EXPECT_THROW( evaluateScenarios( TEST_BACKEND, { in } ), std::invalid_argument );
    plan.parallel.dp = 1;
    plan.parallel.micro_batch = 3; // 3 does not divide 512
    EXPECT_THROW( evaluateScenarios( TEST_BACKEND, { in } ), std::invalid_argument );
    plan.parallel.micro_batch = 4;
    EXPECT_NO_THROW( evaluateScenarios( TEST_BACKEND, { in } ) );
    const ScenarioInput torchrec{ &model, &platform, &plan, 0, CostModel::torchrec };
    EXPECT_THROW( evaluateScenarios( TEST_BACKEND, { torchrec } ), std::invalid_argument );
    // fp8 needs FP8 tensor cores, for a transformer and for a DLRM's dense part (A100: none).
    Workload fp8 = model;
    fp8.transformer.dtype = DataType::fp8;
    const ScenarioInput fp8_in{ &fp8, &platform, &plan, 0, CostModel::native };
    EXPECT_THROW( evaluateScenarios( TEST_BACKEND, { fp8_in } ), std::invalid_argument );
    Workload dlrm = tinyDlrm();
    dlrm.dense.dtype = DataType::fp8;
    Plan dlrm_plan;
    dlrm_plan.tables.push_back( TablePlan{} );
    dlrm_plan.shards.push_back( { 0, 0, 0, 100000, 0, 16 } );
    const ScenarioInput dlrm_in{ &dlrm, &platform, &dlrm_plan, 0, CostModel::native };
    EXPECT_THROW( evaluateScenarios( TEST_BACKEND, { dlrm_in } ), std::invalid_argument );
    Platform h100 = platform;
    h100.gpu.fp8_TFLOPs = 1978.9;
    const ScenarioInput dlrm_h100{ &dlrm, &h100, &dlrm_plan, 0, CostModel::native };
    EXPECT_NO_THROW( evaluateScenarios( TEST_BACKEND, { dlrm_h100 } ) );
}

} // namespace Test
