#include "transformer_test_support.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <backend_equal.hpp>
#include <cmath>
#include <gtest/gtest.h>
#include <shardsweep/model/transformer.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <shardsweep/model/transformer/throughput.hpp>
#include <shardsweep/model/transformer/validated_range.hpp>
#include <string>
#include <vector>

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

namespace
{
//! A small event simulation of one pipeline: stage i runs its forwards F(i, j) and backwards
//! B(i, j) in the schedule's order (1F1B: p − i − 1 warm-up forwards, then one forward and one
//! backward alternately, then the remaining backwards; GPipe: all forwards, then all backwards);
//! F(i, j) waits for F(i − 1, j), B(i, j) for B(i + 1, j) (the last stage for its own F).
double simulatePipeline( const std::vector<double>& F, const std::vector<double>& B, int m,
                         bool gpipe )
{
    const int p = int( F.size() );
    std::vector<std::vector<std::pair<bool, int>>> order( p ); // (is backward, micro-batch)
    for ( int i = 0; i < p; ++i )
    {
        if ( gpipe )
        {
            for ( int j = 0; j < m; ++j )
                order[i].push_back( { false, j } );
            for ( int j = 0; j < m; ++j )
                order[i].push_back( { true, j } );
            continue;
        }
        const int warm = std::min( p - i - 1, m );
        int f = 0, b = 0;
        for ( ; f < warm; ++f )
            order[i].push_back( { false, f } );
        while ( b < m )
        {
            if ( f < m )
                order[i].push_back( { false, f++ } );
            order[i].push_back( { true, b++ } );
        }
    }
    std::vector<std::vector<double>> endF( p, std::vector<double>( m, -1.0 ) ),
        endB( p, std::vector<double>( m, -1.0 ) );
    std::vector<std::size_t> next( p, 0 );
    std::vector<double> free_at( p, 0.0 );
    bool progress = true;
    while ( progress )
    {
        progress = false;
        for ( int i = 0; i < p; ++i )
        {
            while ( next[i] < order[i].size() )
            {
                const auto [backward, j] = order[i][next[i]];
                double ready;
                if ( !backward )
                    ready = i == 0 ? 0.0 : endF[i - 1][j];
                else
                    ready = i == p - 1 ? endF[i][j] : endB[i + 1][j];
                if ( ready < 0.0 )
                    break;
                const double start = std::max( ready, free_at[i] );
                free_at[i] = start + ( backward ? B[i] : F[i] );
                ( backward ? endB : endF )[i][j] = free_at[i];
                ++next[i];
                progress = true;
            }
        }
    }
    return endB[0][m - 1];
}
} // namespace

// Grouped-query attention (Ainslie et al. 2023): g key/value heads of d = h/a columns each, so K
// and V are h x g·d matrices instead of h x h. A Llama-3-8B-sized attention (h 4096, a 32, g 8,
// d 128, f 14336, s 8192, b 1): counted here matrix by matrix, in the model as (1 + 2g/a)·h.
TEST( TEST_CATEGORY, transformer_grouped_query_attention )
{
    TransformerSpec m = gpt( 4096, 32, 32, 8192, 128256 );
    m.ffn_hidden = 14336;
    TransformerSpec mha = m;
    m.kv_heads = 8;
    const double h = 4096, f = 14336, gd = 8 * 128, s = 8192, T = 8192;
    // Per layer at t = 1: Q and O h², K and V h·gd, the QKV bias h + 2gd, the projection bias h;
    // FC1 and FC2 2hf with biases f + h; two LayerNorms 4h.
    const double params =
        2 * h * h + 2 * h * gd + ( h + 2 * gd ) + h + 2 * h * f + ( f + h ) + 4 * h;
    EXPECT_DOUBLE_EQ( transformerLayerParams( m, 1 ), params );
    EXPECT_DOUBLE_EQ( transformerLayerParams( mha, 1 ) - transformerLayerParams( m, 1 ),
                      2 * h * ( h - gd ) + 2 * ( h - gd ) );
    // Activations: K and V keep g·d columns per token instead of h (e = 2, no recompute).
    EXPECT_DOUBLE_EQ( layerActivationBytes( mha, 1, 1, false, true, Recompute::none ) -
                          layerActivationBytes( m, 1, 1, false, true, Recompute::none ),
                      2.0 * 2.0 * T * ( h - gd ) );
    // Forward FLOPs: 2T·h·(h + 2gd) for QKV, 2T·h² for O, 4T·h·f for the MLP, 4·b·s²·h attention.
    TransformerOperatorCase oc;
    oc.gpu = slowMemoryGpu();
    oc.model = m;
    EXPECT_DOUBLE_EQ( transformerOperatorCostWith( pureConstants(), oc ).layer_flops,
                      2 * T * h * ( h + 2 * gd ) + 2 * T * h * h + 4 * T * h * f + 4 * s * s * h );
    // kv_heads = heads is multi-head attention, bit for bit.
    TransformerSpec explicit_mha = mha;
    explicit_mha.kv_heads = 32;
    oc.model = mha;
    const TransformerOperatorCost a = transformerOperatorCostWith( pureConstants(), oc );
    oc.model = explicit_mha;
    const TransformerOperatorCost b = transformerOperatorCostWith( pureConstants(), oc );
    EXPECT_EQ( a.layer_fwd_ms, b.layer_fwd_ms );
    EXPECT_EQ( a.layer_bwd_ms, b.layer_bwd_ms );
    EXPECT_EQ( transformerLayerParams( mha, 4 ), transformerLayerParams( explicit_mha, 4 ) );
    // The QKV GEMM is narrower: the layer is faster.
    oc.model = m;
    EXPECT_LT( transformerOperatorCostWith( pureConstants(), oc ).layer_fwd_ms, a.layer_fwd_ms );
    // Megatron-LM: tp divides the key/value heads; g divides a.
    EXPECT_EQ( tensorParallelError( m, 8 ), "" );
    EXPECT_EQ( tensorParallelError( m, 16 ), "tp 16 does not divide the 8 kv_heads" );
    m.kv_heads = 12;
    EXPECT_EQ( transformerSpecProblem( m ).key, "kv_heads" );
    EXPECT_EQ( resolvedModel( mha ).kv_heads, 32 );
}

// Tiny model (h = 8, a = 2, s = 4, b = 2, V = 100 → padded to 128, f = 32, bf16): FLOPs and the
// bytes of the memory-bound operators at 1 GB/s with pure constants (n bytes = n·1e-6 ms).
TEST( TEST_CATEGORY, transformer_tiny_model_flops_and_bytes )
{
    TransformerOperatorCase oc;
    oc.gpu = slowMemoryGpu();
    oc.model = gpt( 8, 2, 2, 4, 100 );
    oc.tp = 1;
    oc.micro_batch = 2;
    oc.fused = false;
    const TransformerOperatorCost r = transformerOperatorCostWith( pureConstants(), oc );
    // T = 8 tokens: 8Th² + 4Thf + 4bs²h = 4096 + 8192 + 1024; head 2ThV = 2·8·8·100.
    EXPECT_DOUBLE_EQ( r.layer_flops, 13312.0 );
    EXPECT_DOUBLE_EQ( r.head_flops, 12800.0 );
    // Embedding forward: gather (read + write T·h·e) 2·64·2, + positions (two reads, one write)
    // 3·64·2, dropout (read, write, 1-byte mask) 64·5: 256 + 384 + 320 = 960 bytes.
    EXPECT_NEAR( r.embedding_fwd_ms, 960e-6, 1e-15 );
    // Backward: dropout 320, scatter-add into two fp32 gradients 2·64·(2 + 8) = 1280.
    EXPECT_NEAR( r.embedding_bwd_ms, 1600e-6, 1e-15 );
    // Cross-entropy on T·V/t = 1024 logits: convert (2 + 4 B), max and exp-sum (2 · 4 B), the
    // b·s target pick and sums (16 B per token): 6144 + 8192 + 128; backward 1024·(4 + 2).
    EXPECT_NEAR( r.loss_fwd_ms, 14464e-6, 1e-15 );
    EXPECT_NEAR( r.loss_bwd_ms, 6144e-6, 1e-15 );
    // Inference drops exactly the dropout kernels: attention dropout X(2e+1) with X = b·a·s² = 64
    // elements (320 B) plus two residual dropouts' extra 1-byte masks (2·64 B).
    EXPECT_NEAR( r.layer_dropout_ms, ( 320.0 + 128.0 ) * 1e-6, 1e-15 );
}

// TP: 2 all-reduces of e·b·s·h per layer forward, 2 backward (+2 with full recompute),
// embedding 1, LM head 1, cross-entropy 3 of 4·b·s bytes, all on the TP group's network.
// DP: one all-reduce of the stage's fp32 gradients; ZeRO-1: reduce-scatter + all-gather of bf16.
TEST( TEST_CATEGORY, transformer_tp_and_dp_volumes )
{
    const Platform platform = switchPlatform( 8 );
    const TransformerConstants c = pureConstants();
    TransformerSpec m = gpt( 1024, 16, 4, 512, 51200 );
    ParallelConfig cfg;
    cfg.tp = 4;
    cfg.dp = 2;
    cfg.micro_batch = 2;
    cfg.global_batch = 8; // m = 2 micro-batches
    TransformerOperatorCost ops;
    ops.layer_fwd_ms = 1.0;
    ops.layer_bwd_ms = 2.0;
    auto ar4 = [&]( double bytes )
    {
        Network n = platform.network;
        n.dims[0].npus_count = 4;
        return collectiveTimeNs( n, platform.system, Collective::all_reduce, bytes ) * 1e-6;
    };
    const double act = 2.0 * 2 * 512 * 1024;
    const double tp_per_micro =
        4 * 4 * ar4( act ) + ar4( act ) + 3 * ar4( 4.0 * 2 * 512 ) + ar4( act );
    TransformerStepSummary r = predictTransformerStepWith( c, platform, m, cfg, ops );
    EXPECT_NEAR( r.phase_ms[int( TransformerPhase::tp_comm )], 2.0 * tp_per_micro, 1e-9 );
    cfg.recompute = Recompute::full;
    r = predictTransformerStepWith( c, platform, m, cfg, ops );
    EXPECT_NEAR( r.phase_ms[int( TransformerPhase::tp_comm )],
                 2.0 * ( tp_per_micro + 4 * 2 * ar4( act ) ), 1e-9 );
    cfg.recompute = Recompute::none;

    // DP group: 2 ranks at stride 4 on the same Switch.
    StageRole only;
    only.first = only.last = true;
    const double params = transformerStageParams( m, 4, 4, only );
    Network dpn = platform.network;
    dpn.dims[0].npus_count = 2;
    const double ar =
        collectiveTimeNs( dpn, platform.system, Collective::all_reduce, 4.0 * params );
    const transformer_detail::StageTimes st =
        transformerStageTimes( c, platform, m, cfg, ops, 0, 2.0 );
    EXPECT_NEAR( st.dp, ar * 1e-6, 1e-12 );
    cfg.zero = 1;
    const transformer_detail::StageTimes z1 =
        transformerStageTimes( c, platform, m, cfg, ops, 0, 2.0 );
    const double rs =
        collectiveTimeNs( dpn, platform.system, Collective::reduce_scatter, 4.0 * params );
    const double ag =
        collectiveTimeNs( dpn, platform.system, Collective::all_gather, 2.0 * params / 2 );
    EXPECT_NEAR( z1.dp, ( rs + ag ) * 1e-6, 1e-12 );
    EXPECT_LT( z1.opt, st.opt ); // Adam over half the parameters
}

// PP: per micro-batch one activation message forward and one gradient backward of e·b·s·h
// between ranks tp·dp apart.
TEST( TEST_CATEGORY, transformer_pp_volume )
{
    const Platform platform = switchPlatform( 8 );
    TransformerSpec m = gpt( 1024, 16, 8, 512, 51200 );
    ParallelConfig cfg;
    cfg.pp = 4;
    cfg.dp = 2;
    cfg.micro_batch = 1;
    cfg.global_batch = 8; // m = 4
    TransformerOperatorCost ops;
    ops.layer_fwd_ms = 1.0;
    ops.layer_bwd_ms = 2.0;
    const TransformerStepSummary r =
        predictTransformerStepWith( pureConstants(), platform, m, cfg, ops );
    // One message: ⌊2 hops · 1000 ns + 2·512·1024 B / (100 GiB/s)⌋ + 2 endpoint delays of 10 ns.
    const double bytes = 2.0 * 512 * 1024;
    const double msg =
        ( std::floor( 2000.0 + bytes / ( 100.0 * 1073741824.0 / 1e9 ) ) + 20.0 ) * 1e-6;
    EXPECT_NEAR( r.phase_ms[int( TransformerPhase::pp_comm )], 4.0 * 2.0 * msg, 1e-12 );
}

// The closed-form schedules against the event simulation: exact for uniform stages (both
// schedules); with a slower last stage (LM head) 1F1B's (m−1)·max(F+B) + Σ(F+B) stays within 2 %.
TEST( TEST_CATEGORY, transformer_schedule_matches_event_simulation )
{
    for ( int p : { 1, 2, 4, 8 } )
        for ( int m : { 1, 3, 8, 16 } )
            for ( bool gpipe : { false, true } )
            {
                const std::vector<double> F( p, 1.5 ), B( p, 3.25 );
                const double sim = simulatePipeline( F, B, m, gpipe );
                EXPECT_NEAR( sim, ( m + p - 1 ) * 4.75, 1e-9 ) << p << " " << m << " " << gpipe;
                // The model with these stage times (L = p layers, one per stage, no network).
                TransformerSpec model = gpt( 1024, 16, p, 512, 51200 );
                Platform platform;
                platform.gpu = slowMemoryGpu();
                TransformerOperatorCost ops;
                ops.layer_fwd_ms = 1.5;
                ops.layer_bwd_ms = 3.25;
                ParallelConfig cfg;
                cfg.pp = p;
                cfg.global_batch = m;
                cfg.schedule = gpipe ? PipelineSchedule::gpipe : PipelineSchedule::one_f_one_b;
                const TransformerStepSummary r =
                    predictTransformerStepWith( pureConstants(), platform, model, cfg, ops );
                const double pipeline = r.iteration_ms -
                                        r.phase_ms[int( TransformerPhase::dp_comm )] -
                                        r.phase_ms[int( TransformerPhase::optimizer )];
                EXPECT_NEAR( pipeline, sim, 1e-9 );
            }
    for ( int m : { 4, 8, 32 } )
    {
        const std::vector<double> F = { 1.2, 1.0, 1.0, 1.6 }, B = { 2.3, 2.0, 2.0, 3.1 };
        const double sim = simulatePipeline( F, B, m, false );
        double sum = 0.0, worst = 0.0;
        for ( int i = 0; i < 4; ++i )
        {
            sum += F[i] + B[i];
            worst = std::max( worst, F[i] + B[i] );
        }
        EXPECT_NEAR( ( m - 1 ) * worst + sum, sim, 0.02 * sim ) << m;
    }
}

// Korthikanti Fig. 1 as Calculon transcribes it (reference §4 check): activation memory of the
// first stage, TP only and TP + SP + selective, 22B (t = 8, p = 1, b = 4), 175B (t = 8, p = 8,
// v = 3 interleaving: factor 1 + (p−1)/(p·v)), in GiB.
TEST( TEST_CATEGORY, transformer_activation_memory_matches_korthikanti_fig1 )
{
    struct Case
    {
        int h, a, L, p, b;
        double v, tp_only, sp_sel;
    };
    for ( const Case& k : { Case{ 6144, 64, 48, 1, 4, 1.0, 59.25, 9.56 },
                            Case{ 12288, 96, 96, 8, 1, 3.0, 66.84, 12.35 } } )
    {
        const TransformerSpec m = gpt( k.h, k.a, k.L, 2048, 51200 );
        const double stage0 = double( k.L ) * ( 1.0 + ( k.p - 1.0 ) / ( k.p * k.v ) );
        const double tp_only = stage0 *
                               layerActivationBytes( m, 8, k.b, false, false, Recompute::none ) /
                               1073741824.0;
        const double sp_sel = stage0 *
                              layerActivationBytes( m, 8, k.b, true, false, Recompute::selective ) /
                              1073741824.0;
        EXPECT_NEAR( tp_only, k.tp_only, 0.01 ) << k.h;
        EXPECT_NEAR( sp_sel, k.sp_sel, 0.01 ) << k.h;
    }
}

// Serial and the test's execution space give the same operator costs and step (sameAsHost: bit
// for bit on host backends, within 1e-12 relative on CUDA).
// The body is a free function: nvcc refuses a device lambda inside gtest's TestBody, a
// private member function.
void transformer_device_matches_host_bitwise_body()
{
    TransformerOperatorCase oc;
    oc.gpu = slowMemoryGpu();
    oc.gpu.memory_bandwidth_GBps = 2039.0;
    oc.gpu.sm_count = 108;
    oc.model = gpt( 2048, 16, 24, 1024, 50257 );
    oc.tp = 2;
    oc.micro_batch = 4;
    const Platform platform = switchPlatform( 8 );
    ParallelConfig cfg;
    cfg.tp = 2;
    cfg.pp = 2;
    cfg.dp = 2;
    cfg.micro_batch = 4;
    cfg.global_batch = 64;
    const TransformerOperatorCost host_ops = transformerOperatorCost( oc );
    const TransformerStepSummary host = predictTransformerStep( platform, oc.model, cfg, host_ops );
    Kokkos::View<double*, TEST_MEMSPACE> out( "out", 2 );
    Kokkos::parallel_for(
        "transformer", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, 1 ), KOKKOS_LAMBDA( int ) {
            const TransformerOperatorCost ops = transformerOperatorCost( oc );
            const TransformerStepSummary s = predictTransformerStep( platform, oc.model, cfg, ops );
            out( 0 ) = ops.layer_fwd_ms;
            out( 1 ) = s.iteration_ms;
        } );
    auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), out );
    EXPECT_TRUE( sameAsHost( h( 0 ), host_ops.layer_fwd_ms ) );
    EXPECT_TRUE( sameAsHost( h( 1 ), host.iteration_ms ) );
}

TEST( TEST_CATEGORY, transformer_device_matches_host )
{
    transformer_device_matches_host_bitwise_body();
}

} // namespace Test
