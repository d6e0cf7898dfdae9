#pragma once
//! \file operators.hpp
//! \brief Operator latencies of one transformer layer, the embedding, the LM head and the loss on
//! one tensor-parallel rank for one micro-batch (reference/transformer.md §1;
//! docs/model/transformer.md).
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
#include <shardsweep/model/gemm.hpp>
#include <shardsweep/model/hardware.hpp>
#include <shardsweep/model/math.hpp>
#include <shardsweep/model/transformer_spec.hpp>

namespace shardsweep
{

//! Global constants of the transformer operator model (the same for every GPU). Fitted values
//! and how: kTransformerConstants, docs/model/transformer.md.
struct TransformerConstants
{
    double kernel_overhead_ms;    //!< per element-wise kernel (launch gap), ms
    double elementwise_bw_eff;    //!< fraction of datasheet bandwidth element-wise kernels reach
    double tensor_core_eff;       //!< scales the 16-bit/TF32 tensor-core peak the GEMM model sees
    double gemm_launch_ms;        //!< per-GEMM overhead in a training framework (replaces bmm's)
    double flash_efficiency;      //!< fraction of tensor peak a fused attention kernel sustains
    double flash_bwd_ratio;       //!< fused attention backward / forward time
    double optimizer_bytes_extra; //!< Adam bytes per parameter beyond the states (grad zeroing)
    double workspace_GiB;         //!< CUDA context, cuBLAS/NCCL workspaces, allocator slack
};

//! Shipped constants (see docs/model/transformer.md for the fit).
constexpr TransformerConstants kTransformerConstants = { 0.004, 0.80, 0.85, 0.006,
                                                         0.55,  2.5,  4.0,  1.5 };

//! The plan-independent inputs of the operator costs.
struct TransformerOperatorCase
{
    GpuSpec gpu;
    TransformerSpec model;
    int tp = 1;
    int micro_batch = 1;
    bool sequence_parallel = false;
    bool fused = true;
};

//! Operator costs of one micro-batch on one TP rank, ms. "fwd" is the forward, "bwd" the backward
//! (data + weight gradients and element-wise backward), without any recomputation.
struct TransformerOperatorCost
{
    double layer_fwd_ms = 0.0;       //!< one layer, every operator
    double layer_bwd_ms = 0.0;       //!< one layer
    double layer_attn_core_ms = 0.0; //!< forward of scores..context (selective recompute)
    double layer_dropout_ms = 0.0;   //!< dropout kernels inside layer_fwd_ms (absent at inference)
    double layer_gemm_fwd_ms = 0.0;  //!< GEMM part of layer_fwd_ms
    double layer_gemm_bwd_ms = 0.0;  //!< GEMM part of layer_bwd_ms
    double embedding_fwd_ms = 0.0;   //!< token + position embedding and its dropout
    double embedding_bwd_ms = 0.0;
    double head_fwd_ms = 0.0; //!< final LayerNorm, (BERT transform,) vocabulary GEMM
    double head_bwd_ms = 0.0;
    double loss_fwd_ms = 0.0; //!< vocab-parallel cross-entropy
    double loss_bwd_ms = 0.0;
    double layer_flops = 0.0; //!< forward FLOPs of one layer, whole model width (not per rank)
    double head_flops = 0.0;  //!< forward FLOPs of the vocabulary GEMM, whole width
};

namespace transformer_detail
{

//! FFN width: ffn_hidden, or 4·hidden when 0.
KOKKOS_INLINE_FUNCTION double ffnHidden( const TransformerSpec& m )
{
    return m.ffn_hidden > 0 ? double( m.ffn_hidden ) : 4.0 * m.hidden;
}

//! Megatron pads the vocabulary to a multiple of 128·tp (--make-vocab-size-divisible-by 128).
KOKKOS_INLINE_FUNCTION double paddedVocab( const TransformerSpec& m, int tp )
{
    const double unit = 128.0 * tp;
    return math::ceil( double( m.vocab ) / unit ) * unit;
}

//! Bytes per activation element: the dtype's storage (tf32 is stored as fp32).
KOKKOS_INLINE_FUNCTION double activationBytes( DataType dtype )
{
    return dataTypeBytes( dtype );
}

//! True when Megatron's fused 16-bit kernels run (fp16/bf16); fp32/tf32 run eager kernels.
KOKKOS_INLINE_FUNCTION bool sixteenBit( DataType dtype )
{
    return dtype == DataType::fp16 || dtype == DataType::bf16;
}

//! One memory-bound kernel moving `bytes`.
KOKKOS_INLINE_FUNCTION double memoryBoundMs( const TransformerConstants& c, const GpuSpec& gpu,
                                             double bytes )
{
    if ( bytes <= 0.0 )
        return 0.0;
    return c.kernel_overhead_ms +
           bytes / ( gpu.memory_bandwidth_GBps * 1.0e9 * c.elementwise_bw_eff ) * 1.0e3;
}

//! The GEMM model's constants inside a training framework: kernels are queued asynchronously, so
//! the per-call overhead is the framework's gemm_launch_ms, not eager PyTorch's timed launch.
KOKKOS_INLINE_FUNCTION GemmConstants frameworkGemmConstants( const TransformerConstants& c )
{
    GemmConstants g = kGemmConstants;
    g.launch_ms = c.gemm_launch_ms;
    g.linear_launch_ratio = 1.0;
    return g;
}

//! The GPU as the GEMM model should see it: tensor-core peaks scaled by tensor_core_eff (the
//! GEMM model's efficiency constants were fitted on FP32 SIMT kernels).
KOKKOS_INLINE_FUNCTION GpuSpec tensorCoreGpu( const TransformerConstants& c, const GpuSpec& gpu )
{
    GpuSpec g = gpu;
    g.tf32_TFLOPs *= c.tensor_core_eff;
    g.fp16_TFLOPs *= c.tensor_core_eff;
    g.bf16_TFLOPs *= c.tensor_core_eff;
    return g;
}

//! Forward + dgrad + wgrad of a linear layer y[T, out] = x[T, in]·W[in, out].
struct LinearMs
{
    double fwd = 0.0;
    double bwd = 0.0;
};
KOKKOS_INLINE_FUNCTION LinearMs linearMs( const GemmConstants& gc, const GpuSpec& gpu, double T,
                                          double in, double out, DataType dtype )
{
    LinearMs r;
    r.fwd = predictGemmWith( gc, gpu, 1.0, T, out, in, dtype, GemmOp::linear ).latency_ms;
    r.bwd = predictGemmWith( gc, gpu, 1.0, T, in, out, dtype ).latency_ms + // dgrad
            predictGemmWith( gc, gpu, 1.0, in, out, T, dtype ).latency_ms;  // wgrad
    return r;
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
    return oc;
}

//! Operator costs with explicit constants (the calibration varies them).
KOKKOS_INLINE_FUNCTION TransformerOperatorCost
transformerOperatorCostWith( const TransformerConstants& c, const TransformerOperatorCase& oc )
{
    namespace td = transformer_detail;
    TransformerOperatorCost r;
    const TransformerSpec& m = oc.model;
    if ( m.hidden <= 0 || m.heads <= 0 || m.seq_len <= 0 || oc.tp <= 0 || oc.micro_batch <= 0 )
        return r;
    const DataType dt = m.dtype;
    const double e = td::activationBytes( dt );
    const double t = oc.tp;
    const double b = oc.micro_batch;
    const double s = m.seq_len;
    const double h = m.hidden;
    const double a = m.heads;
    const double d = h / a;
    const double f = td::ffnHidden( m );
    const double V = td::paddedVocab( m, oc.tp );
    const double T = b * s;                              // tokens of the micro-batch
    const double Tsp = oc.sequence_parallel ? T / t : T; // tokens of LN/dropout/residual ops
    const double X = b * ( a / t ) * s * s;              // attention-score elements per rank
    const bool fast = td::sixteenBit( dt );              // Megatron's fused kernels apply
    const bool causal = m.arch != TransformerArch::bert;
    const GemmConstants gc = td::frameworkGemmConstants( c );
    const GpuSpec gpu = td::tensorCoreGpu( c, oc.gpu );
    auto mem = [&]( double bytes ) { return td::memoryBoundMs( c, oc.gpu, bytes ); };

    // --- GEMMs of one layer (per rank) ---
    const td::LinearMs qkv = td::linearMs( gc, gpu, T, h, 3.0 * h / t, dt );
    const td::LinearMs proj = td::linearMs( gc, gpu, T, h / t, h, dt );
    const td::LinearMs fc1 = td::linearMs( gc, gpu, T, h, f / t, dt );
    const td::LinearMs fc2 = td::linearMs( gc, gpu, T, f / t, h, dt );
    double gemm_fwd = qkv.fwd + proj.fwd + fc1.fwd + fc2.fwd;
    double gemm_bwd = qkv.bwd + proj.bwd + fc1.bwd + fc2.bwd;

    // --- attention core: scores, softmax, dropout, context ---
    const double heads_batch = b * a / t;
    double core_fwd = 0.0, core_bwd = 0.0, dropout_core = 0.0;
    if ( oc.fused )
    {
        // One FlashAttention kernel: 4·b·s²·h/t FLOPs forward, half of it under a causal mask.
        const double flops = 4.0 * b * s * s * h / t * ( causal ? 0.5 : 1.0 );
        const double peak = gemmPeakTFLOPs( oc.gpu, dt ) * 1.0e12 * c.flash_efficiency;
        const double ms = flops / peak * 1.0e3;
        core_fwd = c.kernel_overhead_ms + ms;
        core_bwd = c.kernel_overhead_ms + c.flash_bwd_ratio * ms;
    }
    else
    {
        const double scores = predictGemmWith( gc, gpu, heads_batch, s, s, d, dt ).latency_ms;
        const double context = predictGemmWith( gc, gpu, heads_batch, s, d, s, dt ).latency_ms;
        // Backward: dQ = dS·K (s,d,s) and dK = dSᵀ·Q (s,d,s); dP = dO·Vᵀ (s,s,d), dV = Pᵀ·dO.
        const double scores_bwd =
            2.0 * predictGemmWith( gc, gpu, heads_batch, s, d, s, dt ).latency_ms;
        const double context_bwd = predictGemmWith( gc, gpu, heads_batch, s, s, d, dt ).latency_ms +
                                   predictGemmWith( gc, gpu, heads_batch, s, d, s, dt ).latency_ms;
        gemm_fwd += scores + context;
        gemm_bwd += scores_bwd + context_bwd;
        double softmax_fwd, softmax_bwd;
        if ( fast )
        {
            // Fused scale + mask + softmax: read and write the scores once; backward reads y and
            // dy and writes dx. BERT's general mask adds a 1-byte [b, s, s] read.
            const double mask = causal ? 0.0 : b * s * s;
            softmax_fwd = mem( 2.0 * X * e + mask );
            softmax_bwd = mem( 3.0 * X * e );
        }
        else
        {
            // Eager: scale, mask (where/add), softmax as three kernels each reading and writing.
            softmax_fwd = 3.0 * mem( 2.0 * X * e );
            softmax_bwd = mem( 3.0 * X * e ) + 2.0 * mem( 2.0 * X * e );
        }
        // Attention dropout: read, write, 1-byte mask; backward reads dy and the mask.
        dropout_core = mem( X * ( 2.0 * e + 1.0 ) );
        const double dropout_bwd = mem( X * ( 2.0 * e + 1.0 ) );
        core_fwd = scores + softmax_fwd + dropout_core + context;
        core_bwd = scores_bwd + softmax_bwd + dropout_bwd + context_bwd;
    }

    // --- element-wise ops outside the attention core ---
    const double ln_fwd = mem( 2.0 * Tsp * h * e ); // read x, write y (stats negligible)
    const double ln_bwd = mem( 3.0 * Tsp * h * e ); // read x, dy; write dx
    double ew_fwd = 2.0 * ln_fwd, ew_bwd = 2.0 * ln_bwd, dropout_ms = dropout_core;
    // The GeLU/ReLU on [T, f/t] (bias folded: JIT-fused bias+GeLU, or the addmm epilogue).
    const double act_fwd = mem( 2.0 * T * f / t * e );
    const double act_bwd = mem( 3.0 * T * f / t * e );
    ew_fwd += act_fwd;
    ew_bwd += act_bwd;
    if ( fast )
    {
        // Two JIT-fused bias + dropout + residual adds: read x and residual, write y and mask.
        const double bda = mem( Tsp * h * ( 3.0 * e + 1.0 ) );
        ew_fwd += 2.0 * bda;
        dropout_ms += 2.0 * bda - 2.0 * mem( Tsp * h * 3.0 * e ); // the dropout share of it
        ew_bwd += 2.0 * mem( Tsp * h * ( 2.0 * e + 1.0 ) );
    }
    else
    {
        // Eager: dropout (read, write, mask) and residual add (2 reads, 1 write), twice.
        const double drop = mem( Tsp * h * ( 2.0 * e + 1.0 ) );
        const double add = mem( 3.0 * Tsp * h * e );
        ew_fwd += 2.0 * ( drop + add );
        dropout_ms += 2.0 * drop;
        ew_bwd += 2.0 * ( drop + add );
    }

    r.layer_gemm_fwd_ms = gemm_fwd;
    r.layer_gemm_bwd_ms = gemm_bwd;
    r.layer_attn_core_ms = core_fwd;
    r.layer_dropout_ms = dropout_ms;
    r.layer_fwd_ms = qkv.fwd + proj.fwd + fc1.fwd + fc2.fwd + core_fwd + ew_fwd;
    r.layer_bwd_ms = qkv.bwd + proj.bwd + fc1.bwd + fc2.bwd + core_bwd + ew_bwd;

    // --- embedding: gather of T rows (V/t shard, masked), + positions, dropout ---
    r.embedding_fwd_ms =
        mem( 2.0 * T * h * e ) + mem( 3.0 * Tsp * h * e ) + mem( Tsp * h * ( 2.0 * e + 1.0 ) );
    // Backward: dropout backward, then scatter-add of T rows into the fp32 gradient.
    r.embedding_bwd_ms = mem( Tsp * h * ( 2.0 * e + 1.0 ) ) + mem( T * h * ( e + 8.0 ) );

    // --- LM head: final LayerNorm, (BERT: dense h×h + GeLU + LayerNorm,) vocabulary GEMM ---
    const td::LinearMs vocab = td::linearMs( gc, gpu, T, h, V / t, dt );
    r.head_fwd_ms = ln_fwd + vocab.fwd;
    r.head_bwd_ms = ln_bwd + vocab.bwd;
    if ( m.arch == TransformerArch::bert )
    {
        const td::LinearMs dense = td::linearMs( gc, gpu, T, h, h, dt );
        r.head_fwd_ms += dense.fwd + mem( 2.0 * T * h * e ) + mem( 2.0 * T * h * e );
        r.head_bwd_ms += dense.bwd + mem( 3.0 * T * h * e ) + mem( 3.0 * T * h * e );
    }
    // --- vocab-parallel cross-entropy on fp32 logits [T, V/t]: convert, max, exp-sum, pick ---
    const double logits = T * V / t;
    r.loss_fwd_ms = mem( logits * ( e + 4.0 ) ) + 2.0 * mem( logits * 4.0 ) + mem( T * 16.0 );
    // Backward: softmax - one-hot, written as the logits' gradient in the GEMM's dtype.
    r.loss_bwd_ms = mem( logits * ( 4.0 + e ) );

    r.layer_flops = 8.0 * T * h * h + 4.0 * T * h * f + 4.0 * b * s * s * h;
    r.head_flops = 2.0 * T * h * double( m.vocab );
    return r;
}

//! Operator costs with the shipped constants.
KOKKOS_INLINE_FUNCTION TransformerOperatorCost
transformerOperatorCost( const TransformerOperatorCase& oc )
{
    return transformerOperatorCostWith( kTransformerConstants, oc );
}

} // namespace shardsweep
