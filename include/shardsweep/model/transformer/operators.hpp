#pragma once
//! \file operators.hpp
//! \brief Operator latencies of one transformer layer, the embedding, the LM head and the loss on
//! one tensor-parallel rank for one micro-batch (Narayanan et al., SC'21, §3; Korthikanti et al.,
//! MLSys'23, §4; docs/model/transformer.md).
//!
//! This is the plan-independent, expensive half of the transformer model: it depends only on
//! TransformerOperatorCase (GPU, model, tp, micro-batch, sequence parallelism, fusion), so a
//! batched kernel computes it once per distinct case and composes many parallel configurations
//! from it with predictTransformerStep (model/transformer/step.hpp).
//!
//! GEMMs (QKV, attention output, FC1, FC2, LM head; scores QKᵀ and context P·V as batched GEMMs)
//! are priced by the tile/wave GEMM model of model/gemm.hpp at the dtype's tensor-core peak;
//! element-wise and normalisation kernels are memory-bound: overhead + bytes / (bandwidth · e).
//! Kernel paths follow Megatron-LM: with 16-bit dtypes the fused scale-mask-softmax, JIT-fused
//! bias+GeLU and bias+dropout+add kernels (SC'21 §4.2); with fp32/tf32 the fused kernels do not
//! apply (the softmax kernel needs 16-bit input) and every element-wise op is its own kernel, as
//! in eager PyTorch; `fused` replaces scores, softmax, dropout and context by one
//! FlashAttention kernel.
#include <Kokkos_Core.hpp>
#include <shardsweep/model/transformer/moe.hpp>
#include <shardsweep/model/transformer/operator_context.hpp>

namespace shardsweep
{

namespace transformer_detail
{

//! The attention core (scores, softmax, dropout, context) of one layer, ms.
struct AttentionCoreMs
{
    double fwd = 0.0;
    double bwd = 0.0;
    double dropout = 0.0;  //!< attention dropout inside fwd
    double gemm_fwd = 0.0; //!< batched-GEMM part of fwd (unfused only)
    double gemm_bwd = 0.0; //!< batched-GEMM part of bwd (unfused only)
};

//! One FlashAttention kernel: 4·b·s²·h/t FLOPs forward, half of it under a causal mask. `gpu`:
//! as listed (the kernel sustains flash_efficiency of its tensor peak).
KOKKOS_INLINE_FUNCTION AttentionCoreMs flashAttentionMs( const TransformerConstants& c,
                                                         const GpuSpec& gpu, DataType dtype,
                                                         const OperatorShape& p )
{
    AttentionCoreMs r;
    const double flops = 4.0 * p.b * p.sq * p.s * p.h / p.t * ( p.causal ? 0.5 : 1.0 );
    const double peak =
        gemmPeakTFLOPs( gpu, attentionDataType( dtype ) ) * 1.0e12 * c.flash_efficiency;
    const double ms = flops / peak * 1.0e3;
    r.fwd = issuedMs( c, c.kernel_gap_ms + ms, 1.0 );
    r.bwd = issuedMs( c, c.kernel_gap_ms + c.flash_bwd_ratio * ms, 2.0 );
    return r;
}

//! The unfused attention core: batched GEMMs for scores and context, softmax and dropout kernels.
KOKKOS_INLINE_FUNCTION AttentionCoreMs unfusedAttentionMs( const OperatorContext& linear,
                                                           const OperatorShape& p )
{
    OperatorContext x = linear;
    x.dtype = attentionDataType( linear.dtype );
    const double e = p.e, s = p.s, sq = p.sq, d = p.d, X = p.X;
    const double heads_batch = p.b * p.a / p.t;
    AttentionCoreMs r;
    // sq queries of this rank against all s keys (context parallelism: sq = s/cp).
    const double scores = x.gemm( heads_batch, sq, s, d );
    const double context = x.gemm( heads_batch, sq, d, s );
    // Backward: dQ = dS·K (sq, d, s) and dK = dSᵀ·Q (s, d, sq); dP = dO·Vᵀ (sq, s, d),
    // dV = Pᵀ·dO (s, d, sq). Without CP the two shapes of each pair are one, priced twice.
    const double scores_bwd =
        sq == s ? 2.0 * x.gemm( heads_batch, s, d, s )
                : x.gemm( heads_batch, sq, d, s ) + x.gemm( heads_batch, s, d, sq );
    const double context_bwd = x.gemm( heads_batch, sq, s, d ) + x.gemm( heads_batch, s, d, sq );
    r.gemm_fwd = scores + context;
    r.gemm_bwd = scores_bwd + context_bwd;
    double softmax_fwd, softmax_bwd;
    if ( p.fast )
    {
        // Fused scale + mask + softmax: read and write the scores once; backward reads y and
        // dy and writes dx. BERT's general mask adds a 1-byte [b, s, s] read.
        softmax_fwd = x.mem( 2.0 * X * e + ( p.causal ? 0.0 : p.b * sq * s ) );
        softmax_bwd = x.mem( 3.0 * X * e );
    }
    else
    {
        // Eager: scale, mask, softmax as three kernels each reading and writing the scores;
        // backward: softmax backward and the scale's.
        softmax_fwd = x.mem( 6.0 * X * e, 3.0 );
        softmax_bwd = x.mem( 3.0 * X * e ) + x.mem( 2.0 * X * e );
    }
    // Attention dropout: read, write, 1-byte mask; backward reads dy and the mask.
    r.dropout = x.mem( X * ( 2.0 * e + 1.0 ) );
    const double dropout_bwd = x.mem( X * ( 2.0 * e + 1.0 ) );
    r.fwd = scores + softmax_fwd + r.dropout + context;
    r.bwd = scores_bwd + softmax_bwd + dropout_bwd + context_bwd;
    return r;
}

//! LayerNorms: forward reads x, writes y; backward dx (reads x, dy) and the γ/β gradient, then γ
//! and β accumulate into main_grad.
KOKKOS_INLINE_FUNCTION FwdBwdMs layerNormMs( const OperatorContext& x, const OperatorShape& p )
{
    const double e = p.e, h = p.h, Tsp = p.Tsp;
    FwdBwdMs r;
    r.fwd = x.mem( 2.0 * Tsp * h * e );
    r.bwd =
        x.mem( 3.0 * Tsp * h * e ) + x.mem( 2.0 * Tsp * h * e ) + 2.0 * x.mem( h * ( e + 8.0 ) );
    return r;
}

//! Activation on [T, f/t] (ffnActivationMs).
KOKKOS_INLINE_FUNCTION FwdBwdMs activationMs( const OperatorContext& x, const OperatorShape& p,
                                              const TransformerSpec& m )
{
    return ffnActivationMs( x, m, p.fast, p.T * p.f / p.t, p.e );
}

//! Dropout + residual add after the projection or after FC2, ms.
struct ResidualMs
{
    double fwd = 0.0;
    double bwd = 0.0;
    double dropout = 0.0; //!< dropout part of fwd
};

//! One dropout + residual add on [Tsp, h].
KOKKOS_INLINE_FUNCTION ResidualMs residualMs( const OperatorContext& x, const OperatorShape& p )
{
    const double e = p.e, h = p.h, Tsp = p.Tsp;
    ResidualMs r;
    if ( p.fast )
    {
        // JIT-fused bias + dropout + add: read x and the residual, write y and the 1-byte mask;
        // backward: dropout backward (dy, mask → dx) and the residual's gradient sum.
        r.fwd = x.mem( Tsp * h * ( 3.0 * e + 1.0 ) );
        r.dropout = r.fwd - x.mem( Tsp * h * 3.0 * e );
        r.bwd = x.mem( Tsp * h * ( 2.0 * e + 1.0 ) ) + x.mem( 3.0 * Tsp * h * e );
    }
    else
    {
        // Eager: dropout (read, write, mask), then the add (two reads, one write).
        const double drop = x.mem( Tsp * h * ( 2.0 * e + 1.0 ) );
        r.fwd = drop + x.mem( 3.0 * Tsp * h * e );
        r.dropout = drop;
        r.bwd = x.mem( Tsp * h * ( 2.0 * e + 1.0 ) ) + x.mem( 3.0 * Tsp * h * e );
    }
    return r;
}

//! The layer_* fields of `r`: one transformer layer's operators on one rank. `ln`: one LayerNorm.
KOKKOS_INLINE_FUNCTION void layerCosts( const TransformerConstants& c,
                                        const TransformerOperatorCase& oc, const OperatorContext& x,
                                        const OperatorShape& p, const FwdBwdMs& ln,
                                        TransformerOperatorCost& r )
{
    const TransformerSpec& m = oc.model;
    const double e = p.e, t = p.t, h = p.h, f = p.f, T = p.T;

    // --- the four linear layers of a layer (per rank) ---
    const LinearMs qkv = linearMs( x, T, h, ( 1.0 + 2.0 * kvHeadRatio( m ) ) * h / t, true );
    const LinearMs proj = linearMs( x, T, h / t, h, true );
    const LinearMs fc1 = linearMs( x, T, h, ffnGateFactor( m ) * f / t, true );
    const LinearMs fc2 = linearMs( x, T, f / t, h, true );
    double gemm_fwd = qkv.gemm_fwd + proj.gemm_fwd + fc1.gemm_fwd + fc2.gemm_fwd;
    double gemm_bwd = qkv.gemm_bwd + proj.gemm_bwd + fc1.gemm_bwd + fc2.gemm_bwd;

    // --- attention core: scores, softmax, dropout, context ---
    const AttentionCoreMs core =
        oc.fused ? flashAttentionMs( c, oc.gpu, m.dtype, p ) : unfusedAttentionMs( x, p );
    if ( !oc.fused )
    {
        gemm_fwd += core.gemm_fwd;
        gemm_bwd += core.gemm_bwd;
    }
    // The context [b, a/t, s, d] is permuted back to [s, b, h/t] by a copy (and its backward).
    const double permute = x.mem( 2.0 * T * h / t * e );

    const FwdBwdMs act = activationMs( x, p, m );
    const ResidualMs res = residualMs( x, p );

    r.layer_gemm_fwd_ms = gemm_fwd;
    r.layer_gemm_bwd_ms = gemm_bwd;
    r.layer_attn_core_ms = core.fwd;
    r.layer_attn_core_bwd_ms = core.bwd;
    r.layer_dropout_ms = core.dropout + 2.0 * res.dropout;
    r.layer_fwd_ms = qkv.fwd + proj.fwd + fc1.fwd + fc2.fwd + core.fwd + permute + 2.0 * ln.fwd +
                     act.fwd + 2.0 * res.fwd;
    r.layer_bwd_ms = qkv.bwd + proj.bwd + fc1.bwd + fc2.bwd + core.bwd + permute + 2.0 * ln.bwd +
                     act.bwd + 2.0 * res.bwd;
    if ( !m.moe() )
        return;
    // An MoE layer: the same attention half, the MoE block in place of FC1, activation and FC2.
    const MoeFfnMs moe = moeFfnMs( x, m, p, oc.ep, oc.etp );
    double attn_gemm_fwd = qkv.gemm_fwd + proj.gemm_fwd;
    double attn_gemm_bwd = qkv.gemm_bwd + proj.gemm_bwd;
    if ( !oc.fused )
    {
        attn_gemm_fwd += core.gemm_fwd;
        attn_gemm_bwd += core.gemm_bwd;
    }
    r.moe_layer_gemm_fwd_ms = attn_gemm_fwd + moe.gemm_fwd;
    r.moe_layer_gemm_bwd_ms = attn_gemm_bwd + moe.gemm_bwd;
    r.moe_layer_fwd_ms =
        qkv.fwd + proj.fwd + moe.fwd + core.fwd + permute + 2.0 * ln.fwd + 2.0 * res.fwd;
    r.moe_layer_bwd_ms =
        qkv.bwd + proj.bwd + moe.bwd + core.bwd + permute + 2.0 * ln.bwd + 2.0 * res.bwd;
}

//! The embedding_*, head_* and loss_* fields of `r`. `ln`: one LayerNorm (the final one).
KOKKOS_INLINE_FUNCTION void embeddingHeadLossCosts( const OperatorContext& x,
                                                    const TransformerSpec& m,
                                                    const OperatorShape& p, const FwdBwdMs& ln,
                                                    TransformerOperatorCost& r )
{
    const double e = p.e, t = p.t, h = p.h, V = p.V, T = p.T, Tsp = p.Tsp;

    // --- embedding: gather of T rows from the V/t shard (masked), + positions, dropout ---
    r.embedding_fwd_ms = x.mem( 2.0 * T * h * e ) + x.mem( 3.0 * Tsp * h * e ) +
                         x.mem( Tsp * h * ( 2.0 * e + 1.0 ) );
    // Backward: dropout backward, then the scatter-add of T rows into the fp32 gradients of the
    // word and position embeddings.
    r.embedding_bwd_ms = x.mem( Tsp * h * ( 2.0 * e + 1.0 ) ) + 2.0 * x.mem( T * h * ( e + 8.0 ) );

    // --- LM head: final LayerNorm, (BERT: dense h×h + GeLU + LayerNorm,) vocabulary GEMM
    // (tied weight, no bias) ---
    const LinearMs vocab = linearMs( x, T, h, V / t, false );
    r.head_fwd_ms = ln.fwd + vocab.fwd;
    r.head_bwd_ms = ln.bwd + vocab.bwd;
    if ( m.arch == TransformerArch::bert )
    {
        const LinearMs dense = linearMs( x, T, h, h, true );
        r.head_fwd_ms += dense.fwd + x.mem( 2.0 * T * h * e ) + x.mem( 2.0 * T * h * e );
        r.head_bwd_ms += dense.bwd + x.mem( 3.0 * T * h * e ) + x.mem( 3.0 * T * h * e );
    }
    // --- vocab-parallel cross-entropy on fp32 logits [T, V/t]: convert, max, exp-sum, pick ---
    const double logits = T * V / t;
    r.loss_fwd_ms =
        x.mem( logits * ( e + 4.0 ) ) + x.mem( 2.0 * logits * 4.0, 2.0 ) + x.mem( T * 16.0, 2.0 );
    // Backward: softmax minus one-hot, written as the logits' gradient in the GEMM's dtype.
    r.loss_bwd_ms = x.mem( logits * ( 4.0 + e ) );
}

} // namespace transformer_detail

//! The operator case of a configuration.
KOKKOS_INLINE_FUNCTION TransformerOperatorCase transformerOperatorCase(
    const GpuSpec& gpu, const TransformerSpec& model, const ParallelConfig& cfg )
{
    TransformerOperatorCase oc;
    oc.gpu = gpu;
    oc.model = model;
    oc.tp = cfg.tp;
    oc.micro_batch = cfg.micro_batch;
    oc.sequence_parallel = cfg.sequence_parallel && cfg.tp > 1;
    oc.fused = cfg.fused;
    oc.cp = cfg.cp;
    // Dense models price no experts: one case for every ep and etp.
    oc.ep = model.moe() ? cfg.ep : 1;
    oc.etp = model.moe() ? cfg.expertTp() : 1;
    return oc;
}

//! Operator costs with explicit constants (the calibration varies them; `gemm`: the GEMM model's
//! constants, varied by leave-one-GPU-out validation). `log`, when given, receives every GEMM
//! priced.
KOKKOS_INLINE_FUNCTION TransformerOperatorCost transformerOperatorCostWith(
    const TransformerConstants& c, const TransformerOperatorCase& oc,
    const GemmConstants& gemm = shippedGemmConstants(), GemmShapeLog* log = nullptr )
{
    namespace td = transformer_detail;
    TransformerOperatorCost r;
    const TransformerSpec& m = oc.model;
    if ( m.hidden <= 0 || m.heads <= 0 || m.seq_len <= 0 || oc.tp <= 0 || oc.micro_batch <= 0 )
        return r;
    td::OperatorContext x = td::operatorContext( c, oc, gemm );
    x.log = log;
    if ( log )
        log->dtype = x.dtype;
    const td::OperatorShape p = td::operatorShape( oc );
    const td::FwdBwdMs ln = td::layerNormMs( x, p );
    td::layerCosts( c, oc, x, p, ln, r );
    td::embeddingHeadLossCosts( x, m, p, ln, r );

    // Model FLOPs of whole sequences (all cp ranks): T = b·s tokens.
    const double b = p.b, s = p.s, h = p.h, f = p.f, T = p.b * p.s;
    r.layer_flops = ( 4.0 + 4.0 * td::kvHeadRatio( m ) ) * T * h * h +
                    2.0 * ( 1.0 + td::ffnGateFactor( m ) ) * T * h * f + 4.0 * b * s * s * h;
    r.head_flops = 2.0 * T * h * double( m.vocab );
    if ( m.moe() )
        r.moe_layer_flops = ( 4.0 + 4.0 * td::kvHeadRatio( m ) ) * T * h * h + 4.0 * b * s * s * h +
                            td::moeFfnFlops( m, T );
    return r;
}

//! Operator costs with the shipped constants.
KOKKOS_INLINE_FUNCTION TransformerOperatorCost
transformerOperatorCost( const TransformerOperatorCase& oc )
{
    return transformerOperatorCostWith( shippedTransformerConstants(), oc );
}

} // namespace shardsweep
