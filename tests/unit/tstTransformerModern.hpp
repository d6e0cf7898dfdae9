// Today's Megatron-LM training features in the transformer model (issue 23): interleaved 1F1B,
// uneven stages, the distributed optimizer, communication overlap, FP8 and SwiGLU. Every
// expectation is derived by hand or by an event simulation of the schedule, independently of the
// closed forms in model/transformer/step.hpp and memory.hpp.
#include "transformer_test_support.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <shardsweep/model/transformer.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
TransformerSpec decoder( int h, int a, int L, int s )
{
    TransformerSpec m;
    m.hidden = h;
    m.heads = a;
    m.layers = L;
    m.seq_len = s;
    m.vocab = 51200;
    m.dtype = DataType::bf16;
    return m;
}

//! 1 GB/s memory (n bytes = n·1e-6 ms), FP8 at twice the BF16 peak.
GpuSpec hopperLikeGpu()
{
    GpuSpec g;
    g.sm_count = 132;
    g.boost_clock_MHz = 1980.0;
    g.fp32_TFLOPs = 67.0;
    g.tf32_TFLOPs = 494.7;
    g.fp16_TFLOPs = 989.4;
    g.bf16_TFLOPs = 989.4;
    g.fp8_TFLOPs = 1978.8;
    g.memory_bandwidth_GBps = 1.0;
    g.memory_GiB = 80.0;
    return g;
}

//! Event simulation of Megatron-LM's interleaved 1F1B schedule (schedules.py,
//! forward_backward_pipelining_with_interleaving) on p ranks with v chunks and m micro-batches:
//! rank r runs min(2(p − r − 1) + (v − 1)p, m·v) warm-up forwards, then one forward and one
//! backward alternately, then the remaining backwards. Its k-th forward is chunk (k / p) mod v of
//! micro-batch (k / (p·v))·p + k mod p; its k-th backward the same with the chunks reversed. A
//! forward of chunk c waits for chunk c on rank r − 1 (rank 0: chunk c − 1 on rank p − 1); a
//! backward for chunk c on rank r + 1 (rank p − 1: chunk c + 1 on rank 0, the last chunk its own
//! forward). Each chunk forward takes f, each backward b. Returns the end of the last backward.
double simulateInterleaved( int p, int v, int m, double f, double b )
{
    const int n = m * v;
    auto chunkOf = [&]( int k, bool backward )
    {
        const int c = ( k / p ) % v;
        return backward ? v - 1 - c : c;
    };
    auto microOf = [&]( int k ) { return ( k / ( p * v ) ) * p + k % p; };
    std::vector<std::vector<std::pair<bool, int>>> order( p ); // (backward, k)
    for ( int r = 0; r < p; ++r )
    {
        const int warm = std::min( 2 * ( p - r - 1 ) + ( v - 1 ) * p, n );
        int fk = 0, bk = 0;
        for ( ; fk < warm; ++fk )
            order[r].push_back( { false, fk } );
        while ( bk < n )
        {
            if ( fk < n )
                order[r].push_back( { false, fk++ } );
            order[r].push_back( { true, bk++ } );
        }
    }
    // end[r][backward][chunk][micro-batch]
    std::vector<double> end( std::size_t( p ) * 2 * v * m, -1.0 );
    auto at = [&]( int r, bool backward, int c, int j ) -> double&
    { return end[( ( std::size_t( r ) * 2 + backward ) * v + c ) * m + j]; };
    std::vector<std::size_t> next( p, 0 );
    std::vector<double> free_at( p, 0.0 );
    for ( bool progress = true; progress; )
    {
        progress = false;
        for ( int r = 0; r < p; ++r )
            while ( next[r] < order[r].size() )
            {
                const auto [backward, k] = order[r][next[r]];
                const int c = chunkOf( k, backward ), j = microOf( k );
                double ready = 0.0;
                if ( !backward )
                    ready = r > 0 ? at( r - 1, false, c, j )
                                  : ( c > 0 ? at( p - 1, false, c - 1, j ) : 0.0 );
                else if ( r < p - 1 )
                    ready = at( r + 1, true, c, j );
                else
                    ready = c == v - 1 ? at( r, false, c, j ) : at( 0, true, c + 1, j );
                if ( ready < 0.0 )
                    break;
                free_at[r] = std::max( ready, free_at[r] ) + ( backward ? b : f );
                at( r, backward, c, j ) = free_at[r];
                ++next[r];
                progress = true;
            }
    }
    return at( 0, true, 0, m - 1 );
}

//! The pipeline part of a step (without DP and optimizer) on a platform without a network.
double pipelineMs( const TransformerSpec& model, const ParallelConfig& cfg,
                   const TransformerOperatorCost& ops )
{
    Platform platform;
    platform.gpu = hopperLikeGpu();
    const TransformerStepSummary r =
        predictTransformerStepWith( pureConstants(), platform, model, cfg, ops );
    return r.iteration_ms - r.phase_ms[int( TransformerPhase::dp_comm )] -
           r.phase_ms[int( TransformerPhase::optimizer )];
}
} // namespace

// Interleaved 1F1B: uniform stages take m(F + B) + (p − 1)(F + B)/v, a bubble of (p − 1)/(v·m) of
// the ideal, equal to the event simulation of Megatron's schedule; v = 1 is plain 1F1B.
TEST( TEST_CATEGORY, transformer_interleaved_bubble_matches_event_simulation )
{
    for ( int p : { 2, 4, 8 } )
        for ( int v : { 2, 3, 4 } )
            for ( int mult : { 1, 2, 4 } )
            {
                const int m = mult * p;
                const double f = 0.75, b = 1.5; // per chunk of one layer
                const double sim = simulateInterleaved( p, v, m, f, b );
                const double F = v * f, B = v * b;
                EXPECT_NEAR( sim, m * ( F + B ) + ( p - 1.0 ) * ( F + B ) / v, 1e-9 )
                    << p << " " << v << " " << m;
                TransformerSpec model = decoder( 1024, 16, p * v, 512 );
                TransformerOperatorCost ops;
                ops.layer_fwd_ms = f;
                ops.layer_bwd_ms = b;
                ParallelConfig cfg;
                cfg.pp = p;
                cfg.virtual_stages = v;
                cfg.global_batch = m;
                EXPECT_EQ( parallelConfigError( model, cfg, p ), "" );
                EXPECT_NEAR( pipelineMs( model, cfg, ops ), sim, 1e-9 )
                    << p << " " << v << " " << m;
                Platform none;
                none.gpu = hopperLikeGpu();
                const TransformerStepSummary r =
                    predictTransformerStepWith( pureConstants(), none, model, cfg, ops );
                EXPECT_NEAR( r.phase_ms[int( TransformerPhase::bubble )],
                             ( p - 1.0 ) / ( v * m ) * m * ( F + B ), 1e-9 );
            }
}

// Interleaving: each micro-batch crosses every rank once per chunk (v messages each way), and the
// first stage holds 1 + (p − 1)/(p·v) times 1F1B's p micro-batches of activations (Korthikanti et
// al. 2022, §4.2.3): 2(p − 1) + (v − 1)p + 1 chunk forwards of 1/v of the stage's layers.
TEST( TEST_CATEGORY, transformer_interleaved_messages_and_memory )
{
    ParallelConfig cfg;
    cfg.pp = 8;
    cfg.virtual_stages = 3;
    EXPECT_DOUBLE_EQ( inFlightMicroBatches( cfg, 0, 64.0 ), ( 14.0 + 16.0 + 1.0 ) / 3.0 );
    EXPECT_DOUBLE_EQ( inFlightMicroBatches( cfg, 0, 64.0 ), 8.0 * ( 1.0 + 7.0 / 24.0 ) );
    EXPECT_DOUBLE_EQ( inFlightMicroBatches( cfg, 7, 64.0 ), 17.0 / 3.0 );
    EXPECT_DOUBLE_EQ( inFlightMicroBatches( cfg, 0, 2.0 ), 2.0 ); // capped at m·v chunks

    const Platform platform = switchPlatform( 8, hopperLikeGpu() );
    TransformerSpec m = decoder( 1024, 16, 24, 512 );
    TransformerOperatorCost ops;
    ops.layer_fwd_ms = 1.0;
    ops.layer_bwd_ms = 2.0;
    ParallelConfig pipe;
    pipe.pp = 4;
    pipe.dp = 2;
    pipe.global_batch = 8; // m = 4
    const double one = predictTransformerStepWith( pureConstants(), platform, m, pipe, ops )
                           .phase_ms[int( TransformerPhase::pp_comm )];
    pipe.virtual_stages = 3;
    const double three = predictTransformerStepWith( pureConstants(), platform, m, pipe, ops )
                             .phase_ms[int( TransformerPhase::pp_comm )];
    // One message: ⌊2 hops · 1000 ns + 2·512·1024 B / (100 GiB/s)⌋ + 2 endpoint delays of 10 ns.
    const double msg =
        ( std::floor( 2000.0 + 2.0 * 512 * 1024 / ( 100.0 * 1073741824.0 / 1e9 ) ) + 20.0 ) * 1e-6;
    EXPECT_NEAR( one, 4.0 * 2.0 * msg, 1e-12 );
    EXPECT_NEAR( three, 3.0 * 4.0 * 2.0 * msg, 1e-12 );
}

// Uneven stages: 10 layers on pp 4 with first_stage_layers 1 and last_stage_layers 3 leave 3 to
// each middle stage; the slowest stage (3 layers, 9 ms per micro-batch) sets the pace:
// (m − 1)·9 + (3 + 9 + 9 + 9) for 1F1B, and the event simulation agrees within 2 %.
TEST( TEST_CATEGORY, transformer_uneven_stages_slowest_sets_pace )
{
    TransformerSpec m = decoder( 1024, 16, 10, 512 );
    ParallelConfig cfg;
    cfg.pp = 4;
    cfg.first_stage_layers = 1;
    cfg.last_stage_layers = 3;
    cfg.global_batch = 8;
    EXPECT_EQ( parallelConfigError( m, cfg, 4 ), "" );
    EXPECT_EQ( stageLayers( m, cfg, 0 ), 1 );
    EXPECT_EQ( stageLayers( m, cfg, 1 ), 3 );
    EXPECT_EQ( stageLayers( m, cfg, 2 ), 3 );
    EXPECT_EQ( stageLayers( m, cfg, 3 ), 3 );
    TransformerOperatorCost ops;
    ops.layer_fwd_ms = 1.0;
    ops.layer_bwd_ms = 2.0;
    EXPECT_NEAR( pipelineMs( m, cfg, ops ), 7.0 * 9.0 + 30.0, 1e-9 );

    // Only the first given: the other three share 9 layers. Shares that do not divide, pp 1 and
    // pp 2 not summing to L are refused, naming the field.
    cfg.last_stage_layers = 0;
    EXPECT_EQ( stageLayers( m, cfg, 3 ), 3 );
    cfg.first_stage_layers = 2;
    EXPECT_EQ( parallelKnobProblem( m, cfg ).key, "first_stage_layers" );
    cfg.pp = 1;
    EXPECT_EQ( parallelKnobProblem( m, cfg ).key, "first_stage_layers" );
    cfg.pp = 2;
    cfg.first_stage_layers = 4;
    cfg.last_stage_layers = 5;
    EXPECT_EQ( parallelKnobProblem( m, cfg ).key, "last_stage_layers" );
    cfg.last_stage_layers = 6;
    EXPECT_EQ( parallelKnobProblem( m, cfg ).key, "" );
    // BLOOM-176B: 70 layers on pp 12 run as 5 + 10·6 + 5.
    TransformerSpec bloom = decoder( 14336, 112, 70, 2048 );
    ParallelConfig b;
    b.pp = 12;
    b.first_stage_layers = 5;
    b.last_stage_layers = 5;
    EXPECT_EQ( parallelKnobProblem( bloom, b ).key, "" );
    EXPECT_EQ( stageLayers( bloom, b, 6 ), 6 );
    b.first_stage_layers = 0;
    b.last_stage_layers = 0;
    EXPECT_EQ( parallelKnobProblem( bloom, b ).key, "pp" );
}

// The rules of the interleaved schedule and the distributed optimizer (Megatron-LM's checks).
TEST( TEST_CATEGORY, transformer_modern_knob_rules )
{
    TransformerSpec m = decoder( 1024, 16, 24, 512 );
    ParallelConfig c;
    c.pp = 4;
    c.virtual_stages = 3;
    c.global_batch = 8; // 8 micro-batches
    EXPECT_EQ( parallelKnobProblem( m, c ).key, "" );
    c.virtual_stages = 4; // 24 layers do not split into 4 x 4 chunks
    EXPECT_EQ( parallelKnobProblem( m, c ).key, "virtual_stages" );
    c.virtual_stages = 2;
    c.global_batch = 6; // 6 micro-batches, not a multiple of pp 4
    EXPECT_EQ( parallelKnobProblem( m, c ).key, "virtual_stages" );
    c.global_batch = 8;
    c.schedule = PipelineSchedule::gpipe;
    EXPECT_EQ( parallelKnobProblem( m, c ).key, "virtual_stages" );
    c.schedule = PipelineSchedule::one_f_one_b;
    c.pp = 1;
    EXPECT_EQ( parallelKnobProblem( m, c ).key, "virtual_stages" );
    c.virtual_stages = 1;
    c.distributed_optimizer = true;
    c.zero = 2;
    EXPECT_EQ( parallelKnobProblem( m, c ).key, "distributed_optimizer" );
    EXPECT_NE( parallelConfigError( m, c, 1 ), "" );
    c.zero = 0;
    EXPECT_EQ( parallelConfigError( m, c, 1 ), "" );
    // FP8 needs FP8 tensor cores.
    GpuSpec a100 = hopperLikeGpu();
    a100.fp8_TFLOPs = 0.0;
    EXPECT_NE( gpuDataTypeError( a100, DataType::fp8 ), "" );
    EXPECT_EQ( gpuDataTypeError( a100, DataType::bf16 ), "" );
    EXPECT_EQ( gpuDataTypeError( hopperLikeGpu(), DataType::fp8 ), "" );
}

// The distributed optimizer: Megatron's table of bytes per parameter (bf16 weights, fp32
// gradients) is 18 without and 6 + 12/d with it; its gradient sync is a reduce-scatter of the
// fp32 gradients plus an all-gather of the bf16 weight shard, as ZeRO-1.
TEST( TEST_CATEGORY, transformer_distributed_optimizer_volumes )
{
    const double P = 1.0e9;
    EXPECT_DOUBLE_EQ( modelStateBytesPerGpu( DataType::bf16, P, 0, 8 ), 18.0 * P );
    ParallelConfig c;
    c.distributed_optimizer = true;
    EXPECT_EQ( zeroStage( c ), 1 );
    EXPECT_DOUBLE_EQ( modelStateBytesPerGpu( DataType::bf16, P, zeroStage( c ), 8 ),
                      ( 6.0 + 12.0 / 8.0 ) * P );

    const Platform platform = switchPlatform( 8, hopperLikeGpu() );
    TransformerSpec m = decoder( 1024, 16, 4, 512 );
    ParallelConfig cfg;
    cfg.tp = 2;
    cfg.dp = 4;
    cfg.global_batch = 8;
    cfg.distributed_optimizer = true;
    TransformerOperatorCost ops;
    ops.layer_fwd_ms = 1.0;
    ops.layer_bwd_ms = 2.0;
    StageRole only;
    only.first = only.last = true;
    const double params = transformerStageParams( m, 2, 4, only );
    Network dpn = platform.network;
    dpn.dims[0].npus_count = 4;
    const double rs =
        collectiveTimeNs( dpn, platform.system, Collective::reduce_scatter, 4.0 * params );
    const double ag =
        collectiveTimeNs( dpn, platform.system, Collective::all_gather, 2.0 * params / 4 );
    const transformer_detail::StageTimes st =
        transformerStageTimes( pureConstants(), platform, m, cfg, ops, 0, 2.0 );
    EXPECT_NEAR( st.dp, ( rs + ag ) * 1e-6, 1e-12 );

    // Overlap: the reduce-scatter hides under the stage's backward (2 ms per layer · 4 layers = 8
    // ms per micro-batch here, longer than it: nothing exposed), the all-gather under its forward.
    cfg.overlap = true;
    EXPECT_EQ( transformerStageTimes( pureConstants(), platform, m, cfg, ops, 0, 2.0 ).dp, 0.0 );
    ops.layer_fwd_ms = 0.25 * rs * 1e-6 / 4.0; // the 4 layers' backward = half the reduce-scatter
    ops.layer_bwd_ms = 0.5 * rs * 1e-6 / 4.0;
    const transformer_detail::StageTimes half =
        transformerStageTimes( pureConstants(), platform, m, cfg, ops, 0, 2.0 );
    EXPECT_NEAR( half.dp, 0.5 * rs * 1e-6 + std::max( 0.0, ag - 0.25 * rs ) * 1e-6, 1e-12 );
}

// Megatron's --tp-comm-overlap (with sequence parallelism): the TP collectives of a stage are
// exposed only where they outlast its layer GEMMs.
TEST( TEST_CATEGORY, transformer_tp_overlap_hides_behind_gemms )
{
    const Platform platform = switchPlatform( 8, hopperLikeGpu() );
    TransformerSpec m = decoder( 1024, 16, 4, 512 );
    ParallelConfig cfg;
    cfg.tp = 4;
    cfg.sequence_parallel = true;
    cfg.global_batch = 2;
    TransformerOperatorCost ops;
    ops.layer_fwd_ms = 1.0;
    ops.layer_bwd_ms = 2.0;
    const transformer_detail::StageTimes plain =
        transformerStageTimes( pureConstants(), platform, m, cfg, ops, 0, 2.0 );
    ASSERT_GT( plain.tp_f, 0.0 );
    cfg.overlap = true;
    ops.layer_gemm_fwd_ms = 0.1 * plain.tp_f / 4.0; // the 4 layers' GEMMs hide a tenth
    ops.layer_gemm_bwd_ms = 1.0;                    // and all of the backward's
    const transformer_detail::StageTimes hidden =
        transformerStageTimes( pureConstants(), platform, m, cfg, ops, 0, 2.0 );
    EXPECT_NEAR( hidden.tp_f, 0.9 * plain.tp_f, 1e-12 );
    EXPECT_EQ( hidden.tp_b, 0.0 );
    cfg.sequence_parallel = false; // Megatron overlaps TP only with SP
    const transformer_detail::StageTimes no_sp =
        transformerStageTimes( pureConstants(), platform, m, cfg, ops, 0, 2.0 );
    cfg.overlap = false;
    EXPECT_EQ( no_sp.tp_f,
               transformerStageTimes( pureConstants(), platform, m, cfg, ops, 0, 2.0 ).tp_f );
}

// FP8 (Transformer Engine): the linear layers' GEMMs run at the FP8 peak (twice BF16's here: a
// large compute-bound GEMM takes half the time), attention stays in BF16, and each linear layer
// adds its casts: the input to fp8 (T·in·3 bytes) forward; dY to fp8 and its transpose
// (T·out·4) and the saved input's transpose (T·in·2) backward. Model states as NeMo's FP8 recipe
// keeps them: bf16 weights and gradients (grad_sync_dtype bf16), fp32 master weights and Adam
// states, plus the fp8 weight and its transpose: 18 bytes per parameter.
TEST( TEST_CATEGORY, transformer_fp8_gemm_time_and_memory )
{
    const GpuSpec gpu = hopperLikeGpu();
    // The ceiling (the measured BF16 fraction of the dtype's peak) doubles exactly; a large GEMM
    // takes half the time but for its constant launch term (2e-5 of it here).
    EXPECT_DOUBLE_EQ( gemmMaxMatmulTFLOPs( gpu, DataType::fp8 ),
                      2.0 * gemmMaxMatmulTFLOPs( gpu, DataType::bf16 ) );
    const double bf16 = predictGemm( gpu, 1, 8192, 8192, 8192, DataType::bf16 ).latency_ms;
    const double fp8 = predictGemm( gpu, 1, 8192, 8192, 8192, DataType::fp8 ).latency_ms;
    EXPECT_NEAR( fp8 / bf16, 0.5, 1e-4 );
    EXPECT_GT( fp8 / bf16, 0.5 );

    TransformerOperatorCase oc;
    oc.gpu = gpu; // 1 GB/s: n bytes = n·1e-6 ms
    oc.model = decoder( 1024, 16, 2, 512 );
    oc.tp = 2;
    oc.micro_batch = 2;
    oc.fused = true;
    const TransformerOperatorCost b = transformerOperatorCostWith( pureConstants(), oc );
    oc.model.dtype = DataType::fp8;
    const TransformerOperatorCost f = transformerOperatorCostWith( pureConstants(), oc );
    const double T = 1024, h = 1024, ffn = 4096, t = 2;
    // (input, output) widths per rank of QKV, projection, FC1, FC2.
    const double in[] = { h, h / t, h, ffn / t }, out[] = { 3 * h / t, h, ffn / t, h };
    double fwd = 0.0, bwd = 0.0;
    for ( int i = 0; i < 4; ++i )
    {
        fwd += T * in[i] * 3.0;
        bwd += T * out[i] * 4.0 + T * in[i] * 2.0;
    }
    EXPECT_NEAR( ( f.layer_fwd_ms - f.layer_gemm_fwd_ms ) -
                     ( b.layer_fwd_ms - b.layer_gemm_fwd_ms ),
                 fwd * 1e-6, 1e-9 );
    EXPECT_NEAR( ( f.layer_bwd_ms - f.layer_gemm_bwd_ms ) -
                     ( b.layer_bwd_ms - b.layer_gemm_bwd_ms ),
                 bwd * 1e-6, 1e-9 );
    EXPECT_LT( f.layer_gemm_fwd_ms, b.layer_gemm_fwd_ms );
    EXPECT_EQ( f.layer_attn_core_ms, b.layer_attn_core_ms ); // flash attention in BF16 either way
    EXPECT_EQ( f.layer_flops, b.layer_flops );

    const double P = 1.0e9;
    EXPECT_DOUBLE_EQ( modelStateBytesPerGpu( DataType::fp8, P, 0, 1 ), 18.0 * P );
    EXPECT_DOUBLE_EQ( modelStateBytesPerGpu( DataType::fp8, P, 1, 8 ), ( 6.0 + 12.0 / 8.0 ) * P );
    // Activations stay bf16.
    EXPECT_EQ(
        layerActivationBytes( oc.model, 2, 2, true, true, Recompute::none ),
        layerActivationBytes( decoder( 1024, 16, 2, 512 ), 2, 2, true, true, Recompute::none ) );
}

// SwiGLU (Llama): FC1 is h × 2f (gate and up), FC2 f × h: 3hf FFN weights and 2f + h biases; 6Thf
// forward FLOPs; gate, up and FC2's input (3f per token) kept for the backward.
TEST( TEST_CATEGORY, transformer_swiglu_ffn )
{
    TransformerSpec m = decoder( 4096, 32, 32, 4096 );
    m.ffn_hidden = 11008;
    m.ffn_type = FfnType::swiglu;
    const double h = 4096, f = 11008, T = 4096;
    // QKV 3h² + 3h, projection h² + h, FC1 2hf + 2f, FC2 hf + h, two LayerNorms 4h.
    EXPECT_DOUBLE_EQ( transformerLayerParams( m, 1 ),
                      3 * h * h + 3 * h + h * h + h + 2 * h * f + 2 * f + h * f + h + 4 * h );
    TransformerOperatorCase oc;
    oc.gpu = hopperLikeGpu();
    oc.model = m;
    EXPECT_DOUBLE_EQ( transformerOperatorCostWith( pureConstants(), oc ).layer_flops,
                      8 * T * h * h + 6 * T * h * f + 4 * T * T * h );
    TransformerSpec gelu = m;
    gelu.ffn_type = FfnType::gelu;
    // One more [T, f] activation per layer in 2-byte elements (b = 1, t = 1).
    EXPECT_DOUBLE_EQ( layerActivationBytes( m, 1, 1, false, true, Recompute::none ) -
                          layerActivationBytes( gelu, 1, 1, false, true, Recompute::none ),
                      2.0 * T * f );
    // ffn_type arch is the layer family's: GELU for GPT, ReLU for OPT.
    TransformerSpec opt = decoder( 1024, 16, 2, 512 );
    opt.arch = TransformerArch::opt;
    TransformerSpec relu = decoder( 1024, 16, 2, 512 );
    relu.ffn_type = FfnType::relu;
    opt.ffn_type = FfnType::arch;
    EXPECT_EQ( layerActivationBytes( opt, 1, 1, false, true, Recompute::none ),
               layerActivationBytes( relu, 1, 1, false, true, Recompute::none ) );
}

} // namespace Test

namespace Test
{

// Context parallelism (Megatron-Core's p2p ring): per layer forward cp − 1 messages of the rank's
// K and V chunk, 2·b·(s/cp)·(g/a)·h/t·e bytes, between ranks tp apart, exposed where they outlast
// the attention core (0 here, so all of it); the backward twice the bytes. Activations per rank
// are 1/cp; gradients are reduced over the dp·cp ranks; the model's FLOPs do not change.
TEST( TEST_CATEGORY, transformer_context_parallel_exchange_and_memory )
{
    const Platform platform = switchPlatform( 8, hopperLikeGpu() );
    TransformerSpec m = decoder( 1024, 16, 4, 4096 );
    m.kv_heads = 4;
    ParallelConfig cfg;
    cfg.tp = 2;
    cfg.cp = 4;
    cfg.global_batch = 2;
    ASSERT_EQ( parallelConfigError( m, cfg, 8 ), "" );
    TransformerOperatorCost ops;
    ops.layer_fwd_ms = 1.0;
    ops.layer_bwd_ms = 2.0;
    const transformer_detail::StageTimes st =
        transformerStageTimes( pureConstants(), platform, m, cfg, ops, 0, 2.0 );
    // What CP adds to the stage's TP time, against tp alone on the same tokens per rank (a
    // quarter of the sequence, cp 1); the operator costs have no attention core to hide it.
    const double bytes = 2.0 * 1024 /* s/cp */ * 1 * 1024 * ( 4.0 / 16.0 ) / 2 * 2 /* e */;
    auto msg = [&]( double b )
    { return ( std::floor( 2000.0 + b / ( 100.0 * 1073741824.0 / 1e9 ) ) + 20.0 ) * 1e-6; };
    TransformerSpec quarter = m;
    quarter.seq_len = 1024;
    ParallelConfig tp_only = cfg;
    tp_only.cp = 1;
    const transformer_detail::StageTimes ref =
        transformerStageTimes( pureConstants(), platform, quarter, tp_only, ops, 0, 2.0 );
    EXPECT_NEAR( st.tp_f - ref.tp_f, 4 * 3 * msg( bytes ), 1e-12 );
    EXPECT_NEAR( st.tp_b - ref.tp_b, 4 * 3 * msg( 2.0 * bytes ), 1e-12 );
    // Activations: a quarter of the tokens per rank (fused attention: no s² term).
    EXPECT_DOUBLE_EQ( layerActivationBytes( m, 2, 1, true, true, Recompute::none, 4 ),
                      layerActivationBytes( quarter, 2, 1, true, true, Recompute::none ) );
    // Gradients over dp·cp = 4 ranks at stride tp: an all-reduce of 4 GPUs' worth even at dp 1.
    StageRole only;
    only.first = only.last = true;
    Network dpn = platform.network;
    dpn.dims[0].npus_count = 4;
    const double ar = collectiveTimeNs( dpn, platform.system, Collective::all_reduce,
                                        4.0 * transformerStageParams( m, 2, 4, only ) ) *
                      1e-6;
    EXPECT_NEAR( st.dp, ar, 1e-12 );
    // The model's FLOPs are the whole sequences', whatever cp.
    TransformerOperatorCase oc;
    oc.gpu = hopperLikeGpu();
    oc.model = m;
    oc.tp = 2;
    oc.cp = 4;
    const double with_cp = transformerOperatorCostWith( pureConstants(), oc ).layer_flops;
    oc.cp = 1;
    EXPECT_EQ( with_cp, transformerOperatorCostWith( pureConstants(), oc ).layer_flops );
    // Megatron splits each sequence into 2·cp chunks.
    ParallelConfig odd = cfg;
    odd.cp = 8;
    m.seq_len = 4008; // not divisible by 16
    EXPECT_EQ( parallelKnobProblem( m, odd ).key, "cp" );
}

} // namespace Test
