#include <Kokkos_Core.hpp>
#include <cmath>
#include <gtest/gtest.h>
#include <shardsweep/model/transformer.hpp>

namespace Test
{
using namespace shardsweep;

namespace
{
//! GPT-3-like decoder (SC'21 notation) with f = 4h.
TransformerSpec gpt( int h, int a, int L, int s, int V )
{
    TransformerSpec m;
    m.arch = TransformerArch::gpt;
    m.hidden = h;
    m.heads = a;
    m.layers = L;
    m.seq_len = s;
    m.vocab = V;
    m.dtype = DataType::bf16;
    return m;
}
} // namespace

// SC'21 eq. 2: P = 12Lh²(1 + 13/(12h) + (V + s)/(12Lh)) for the whole model at t = 1, p = 1
// (tied embedding, positions, final LayerNorm's 2h excluded from eq. 2, so add it).
TEST( TEST_CATEGORY, transformer_parameter_count_matches_sc21 )
{
    const TransformerSpec m = gpt( 1024, 16, 24, 1024, 51200 );
    StageRole only;
    only.first = only.last = true;
    const double P = transformerStageParams( m, 1, m.layers, only );
    const double h = 1024, L = 24, V = 51200, s = 1024;
    const double sc21 =
        12.0 * L * h * h * ( 1.0 + 13.0 / ( 12.0 * h ) + ( V + s ) / ( 12.0 * L * h ) );
    EXPECT_DOUBLE_EQ( P, sc21 + 2.0 * h );
}

// Korthikanti Table 2 (16-bit, f = 4h): per layer sbh(10 + 24/t + 5as/(ht)) for TP,
// sbh(34/t + 5as/(ht)) with SP, sbh(10 + 24/t) with selective recompute, 34sbh/t with both.
TEST( TEST_CATEGORY, transformer_activation_memory_matches_korthikanti_table2 )
{
    const TransformerSpec m = gpt( 6144, 64, 48, 2048, 51200 );
    const double s = 2048, b = 4, h = 6144, a = 64, t = 8, sbh = s * b * h;
    EXPECT_DOUBLE_EQ( layerActivationBytes( m, 8, 4, false, false, Recompute::none ),
                      sbh * ( 10.0 + 24.0 / t + 5.0 * a * s / ( h * t ) ) );
    EXPECT_DOUBLE_EQ( layerActivationBytes( m, 8, 4, true, false, Recompute::none ),
                      sbh * ( 34.0 / t + 5.0 * a * s / ( h * t ) ) );
    EXPECT_DOUBLE_EQ( layerActivationBytes( m, 8, 4, false, false, Recompute::selective ),
                      sbh * ( 10.0 + 24.0 / t ) );
    EXPECT_DOUBLE_EQ( layerActivationBytes( m, 8, 4, true, false, Recompute::selective ),
                      34.0 * sbh / t );
    EXPECT_DOUBLE_EQ( layerActivationBytes( m, 8, 4, false, false, Recompute::full ), 2.0 * sbh );
}

// Uniform stages: 1F1B and GPipe both take (m + p − 1)(F + B); the bubble is (p − 1)(F + B).
TEST( TEST_CATEGORY, transformer_pipeline_uniform_bubble )
{
    TransformerSpec m = gpt( 1024, 16, 8, 512, 51200 );
    Platform platform; // no network: communication free
    platform.gpu.memory_GiB = 80.0;
    platform.gpu.memory_bandwidth_GBps = 2000.0;
    TransformerOperatorCost ops;
    ops.layer_fwd_ms = 1.0;
    ops.layer_bwd_ms = 2.0;
    ParallelConfig cfg;
    cfg.pp = 4;
    cfg.micro_batch = 1;
    cfg.global_batch = 8;
    const TransformerStepSummary r = predictTransformerStep( platform, m, cfg, ops );
    // 2 layers per stage: F = 2, B = 4 ms; m = 8: (8 + 3)·6 = 66 ms plus the optimizer.
    const double opt = r.phase_ms[int( TransformerPhase::optimizer )];
    EXPECT_NEAR( r.iteration_ms - opt, 66.0, 1e-9 );
    EXPECT_NEAR( r.phase_ms[int( TransformerPhase::bubble )], 18.0, 1e-9 );
    EXPECT_NEAR( r.phase_ms[int( TransformerPhase::compute )], 48.0, 1e-9 );
    cfg.schedule = PipelineSchedule::gpipe;
    const TransformerStepSummary g = predictTransformerStep( platform, m, cfg, ops );
    EXPECT_NEAR( g.iteration_ms - opt, 66.0, 1e-9 );
}

} // namespace Test
