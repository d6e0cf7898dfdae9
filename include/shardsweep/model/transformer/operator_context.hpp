#pragma once
//! \file operator_context.hpp
//! \brief What the operator formulas of model/transformer/operators.hpp share: the sizes of one
//! operator case on one tensor-parallel rank (OperatorShape: Megatron's b, s, h, a, t, with s/cp
//! query tokens under context parallelism), the GEMM and memory-bound kernel pricing in a training
//! framework (OperatorContext, issuedMs, memoryBoundMs), the model's derived widths (ffnHidden,
//! kvHeadRatio, paddedVocab) and the dtype rules (activationBytes, sixteenBit, attentionDataType),
//! and the log of the GEMMs priced (`shardsweep shapes`).
#include <Kokkos_Core.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/domain/transformer_spec.hpp>
#include <shardsweep/model/gemm.hpp>
#include <shardsweep/model/math.hpp>
#include <shardsweep/model/transformer/operator_case.hpp>

namespace shardsweep
{

//! The GEMMs one operator-cost evaluation priced, in the order it priced them (`shardsweep shapes`
//! lists them for the GPU microbenchmark); the batched kernels pass none. Shapes past kCapacity
//! are counted but not kept.
struct GemmShapeLog
{
    static constexpr int kCapacity = 64;
    int count = 0;
    double B[kCapacity] = {}, M[kCapacity] = {}, N[kCapacity] = {}, K[kCapacity] = {};
    GemmOp op[kCapacity] = {};
    DataType dtype = DataType::fp32;

    KOKKOS_INLINE_FUNCTION void add( double b, double m, double n, double k, GemmOp o )
    {
        if ( count < kCapacity )
        {
            B[count] = b;
            M[count] = m;
            N[count] = n;
            K[count] = k;
            op[count] = o;
        }
        ++count;
    }
};

namespace transformer_detail
{

//! FFN width: ffn_hidden, or 4·hidden when 0.
KOKKOS_INLINE_FUNCTION double ffnHidden( const TransformerSpec& m )
{
    return m.ffn_hidden > 0 ? double( m.ffn_hidden ) : 4.0 * m.hidden;
}

//! The FFN's activation: ffn_type, or the arch's (ReLU for OPT, GELU otherwise).
KOKKOS_INLINE_FUNCTION FfnType ffnActivation( const TransformerSpec& m )
{
    if ( m.ffn_type != FfnType::arch )
        return m.ffn_type;
    return m.arch == TransformerArch::opt ? FfnType::relu : FfnType::gelu;
}

//! FC1's width in units of f: 2 for SwiGLU (gate and up projections), 1 otherwise.
KOKKOS_INLINE_FUNCTION double ffnGateFactor( const TransformerSpec& m )
{
    return ffnActivation( m ) == FfnType::swiglu ? 2.0 : 1.0;
}

//! g/a: the share of the query heads that have their own key and value heads (grouped-query
//! attention, Ainslie et al. 2023); 1 for multi-head attention. Q, K and V are (1 + 2·g/a)·h wide.
KOKKOS_INLINE_FUNCTION double kvHeadRatio( const TransformerSpec& m )
{
    return m.kv_heads > 0 ? double( m.kv_heads ) / m.heads : 1.0;
}

//! Megatron pads the vocabulary to a multiple of 128·tp (--make-vocab-size-divisible-by 128).
KOKKOS_INLINE_FUNCTION double paddedVocab( const TransformerSpec& m, int tp )
{
    const double unit = 128.0 * tp;
    return math::ceil( double( m.vocab ) / unit ) * unit;
}

//! Bytes per activation element: the dtype's storage (tf32 is stored as fp32; fp8 training keeps
//! bf16 activations and casts only the GEMM operands, as Transformer Engine does).
KOKKOS_INLINE_FUNCTION double activationBytes( DataType dtype )
{
    return dtype == DataType::fp8 ? 2.0 : double( dataTypeBytes( dtype ) );
}

//! True when Megatron's fused 16-bit kernels run (fp16/bf16, and fp8's bf16 activations);
//! fp32/tf32 run eager kernels.
KOKKOS_INLINE_FUNCTION bool sixteenBit( DataType dtype )
{
    return dtype == DataType::fp16 || dtype == DataType::bf16 || dtype == DataType::fp8;
}

//! The dtype of the attention core's matmuls: fp8 training runs attention in bf16 (Transformer
//! Engine's default dot-product attention), every other dtype in itself.
KOKKOS_INLINE_FUNCTION DataType attentionDataType( DataType dtype )
{
    return dtype == DataType::fp8 ? DataType::bf16 : dtype;
}

//! Time of `kernels` kernels whose GPU time is `gpu_ms`: the framework's host thread issues each
//! kernel in host_ms_per_kernel (Python, autograd, launch), and a GPU that runs kernels faster than
//! they are issued waits: max(gpu_ms, kernels · host_ms_per_kernel). Large kernels hide the host
//! time behind the queue; small ones (element-wise ops of small micro-batches) are host-bound.
KOKKOS_INLINE_FUNCTION double issuedMs( const TransformerConstants& c, double gpu_ms,
                                        double kernels )
{
    return math::fmax( gpu_ms, kernels * c.host_ms_per_kernel );
}

//! `kernels` memory-bound kernels moving `bytes` in all: kernel gaps + bytes / (bandwidth · e).
KOKKOS_INLINE_FUNCTION double memoryBoundMs( const TransformerConstants& c, const GpuSpec& gpu,
                                             double bytes, double kernels = 1.0 )
{
    if ( bytes <= 0.0 )
        return 0.0;
    const double gpu_ms =
        kernels * c.kernel_gap_ms +
        bytes / ( gpu.memory_bandwidth_GBps * 1.0e9 * c.elementwise_bw_eff ) * 1.0e3;
    return issuedMs( c, gpu_ms, kernels );
}

//! The GEMM model's constants inside a training framework: kernels are queued asynchronously, so
//! the per-call cost on the GPU is the kernel gap (the host side is issuedMs), not eager
//! PyTorch's timed launch that the GEMM model was fitted with.
KOKKOS_INLINE_FUNCTION GemmConstants frameworkGemmConstants( const TransformerConstants& c,
                                                             const GemmConstants& base )
{
    GemmConstants g = base;
    g.launch_ms = c.kernel_gap_ms;
    g.linear_launch_ratio = 1.0;
    return g;
}

//! The GPU as the GEMM model should see it: tensor-core peaks scaled by tensor_core_eff (the
//! GEMM model's efficiency constants were fitted on FP32 SIMT kernels), FP8's also by
//! fp8_gemm_eff.
KOKKOS_INLINE_FUNCTION GpuSpec tensorCoreGpu( const TransformerConstants& c, const GpuSpec& gpu )
{
    GpuSpec g = gpu;
    g.tf32_TFLOPs *= c.tensor_core_eff;
    g.fp16_TFLOPs *= c.tensor_core_eff;
    g.bf16_TFLOPs *= c.tensor_core_eff;
    g.fp8_TFLOPs *= c.tensor_core_eff * c.fp8_gemm_eff;
    return g;
}

//! Everything the operator formulas need, computed once per case.
struct OperatorContext
{
    TransformerConstants c;
    GemmConstants gemm_constants;
    GpuSpec gpu;                 //!< as the GEMM model sees it (tensor_core_eff applied)
    GpuSpec memory;              //!< as listed (bandwidth for memory-bound kernels)
    DataType dtype;              //!< of the linear layers' GEMMs
    double e;                    //!< bytes per activation element
    GemmShapeLog* log = nullptr; //!< records every GEMM priced (host tools only)

    KOKKOS_INLINE_FUNCTION double gemm( double B, double M, double N, double K,
                                        GemmOp op = GemmOp::bmm ) const
    {
        if ( log )
            log->add( B, M, N, K, op );
        // A calibrated dtype takes the mixture fitted to this GPU's measured GEMMs, on the GPU as
        // listed (the fit's view of it) and at the framework's kernel gap; its tensor cores
        // need no tensor_core_eff then: the measurements are what they reach.
        if ( const GemmTileCalibration* cal = gemmCalibrationOf( memory, dtype ) )
            return issuedMs(
                c, calibratedTileGemmMs( *cal, gemm_constants, memory, B, M, N, K, dtype, op ),
                1.0 );
        return issuedMs(
            c, predictGemmWith( gemm_constants, gpu, B, M, N, K, dtype, op ).latency_ms, 1.0 );
    }
    KOKKOS_INLINE_FUNCTION double mem( double bytes, double kernels = 1.0 ) const
    {
        return memoryBoundMs( c, memory, bytes, kernels );
    }
};

//! Forward and backward time of a group of element-wise or normalisation kernels, ms.
struct FwdBwdMs
{
    double fwd = 0.0;
    double bwd = 0.0;
};

//! Forward and backward of a linear layer y[T, out] = x[T, in]·W[in, out] (+ bias).
struct LinearMs
{
    double fwd = 0.0;
    double bwd = 0.0;
    double gemm_fwd = 0.0;
    double gemm_bwd = 0.0;
};
//! Forward: one GEMM (bias in its epilogue or fused downstream). Backward: dgrad and wgrad GEMMs,
//! the bias gradient (a reduction over the T rows of dY) and the accumulation of each parameter's
//! gradient into its fp32 main_grad buffer (Megatron, every micro-batch: read grad and main_grad,
//! write main_grad).
KOKKOS_INLINE_FUNCTION LinearMs linearMs( const OperatorContext& x, double T, double in, double out,
                                          bool bias, double groups = 1.0 )
{
    // `groups` > 1: that many independent layers of T rows each, as one grouped (batched) GEMM
    // launch (the experts of an MoE layer on one rank).
    const double g = groups;
    const GemmOp op = g == 1.0 ? GemmOp::linear : GemmOp::bmm;
    LinearMs r;
    r.gemm_fwd = x.gemm( g, T, out, in, op );
    r.gemm_bwd = x.gemm( g, T, in, out ) + x.gemm( g, in, out, T );
    r.fwd = r.gemm_fwd;
    r.bwd = r.gemm_bwd + x.mem( g * in * out * ( x.e + 8.0 ) );
    if ( x.dtype == DataType::fp8 )
    {
        // Transformer Engine's casts with their amax reductions fused: the input to fp8 in the
        // forward (read e, write 1 byte); in the backward dY to fp8 and its transpose (read e,
        // write 2 × 1) and the saved fp8 input's transpose for wgrad (read 1, write 1). The
        // weights' casts run once per step (optimizer phase, step.hpp).
        r.fwd += x.mem( g * T * in * ( x.e + 1.0 ) );
        r.bwd += x.mem( g * T * out * ( x.e + 2.0 ) ) + x.mem( 2.0 * g * T * in );
    }
    if ( bias )
        r.bwd += x.mem( g * T * out * x.e ) + x.mem( g * out * ( x.e + 8.0 ) );
    return r;
}

//! The FFN activation on `elements` elements of its input width: JIT-fused bias + GeLU (16-bit,
//! `fast`), GPT-2's tanh GeLU as eight eager kernels (fp32), erf GeLU (BERT) or ReLU (OPT) as
//! one. SwiGLU (Megatron's fused bias_swiglu): reads gate and up and writes one; its backward
//! reads both and dY and writes both gradients.
KOKKOS_INLINE_FUNCTION FwdBwdMs ffnActivationMs( const OperatorContext& x, const TransformerSpec& m,
                                                 bool fast, double elements, double e )
{
    FwdBwdMs r;
    if ( ffnActivation( m ) == FfnType::swiglu )
    {
        r.fwd = x.mem( 3.0 * elements * e );
        r.bwd = x.mem( 5.0 * elements * e );
        return r;
    }
    const bool eager_tanh_gelu =
        !fast && m.arch == TransformerArch::gpt && ffnActivation( m ) == FfnType::gelu;
    const double act_kernels = eager_tanh_gelu ? 8.0 : 1.0;
    r.fwd = x.mem( act_kernels * 2.0 * elements * e, act_kernels );
    r.bwd = x.mem( act_kernels * 3.0 * elements * e, act_kernels );
    return r;
}

//! The operator context of a case: framework GEMM constants, tensor-core GPU, activation bytes.
KOKKOS_INLINE_FUNCTION OperatorContext operatorContext( const TransformerConstants& c,
                                                        const TransformerOperatorCase& oc,
                                                        const GemmConstants& gemm )
{
    OperatorContext x;
    x.c = c;
    x.gemm_constants = frameworkGemmConstants( c, gemm );
    x.gpu = tensorCoreGpu( c, oc.gpu );
    x.memory = oc.gpu;
    x.dtype = oc.model.dtype;
    x.e = activationBytes( oc.model.dtype );
    return x;
}

//! The sizes of one case on one TP rank (Megatron's notation: b, s, h, a, t).
struct OperatorShape
{
    double e = 0.0;      //!< bytes per activation element
    double t = 0.0;      //!< tensor-parallel degree
    double b = 0.0;      //!< micro-batch
    double s = 0.0;      //!< sequence length (keys and values attended to)
    double sq = 0.0;     //!< query tokens per sequence on this rank: s/cp
    double h = 0.0;      //!< hidden size
    double a = 0.0;      //!< attention heads
    double d = 0.0;      //!< head dimension
    double f = 0.0;      //!< FFN width
    double V = 0.0;      //!< padded vocabulary
    double T = 0.0;      //!< tokens of the micro-batch
    double Tsp = 0.0;    //!< tokens of LN/dropout/residual ops
    double X = 0.0;      //!< attention-score elements per rank
    bool fast = false;   //!< Megatron's fused kernels apply
    bool causal = false; //!< causal attention mask (not BERT)
};

//! The sizes of a case (its model must have positive hidden, heads and seq_len).
KOKKOS_INLINE_FUNCTION OperatorShape operatorShape( const TransformerOperatorCase& oc )
{
    const TransformerSpec& m = oc.model;
    OperatorShape p;
    p.e = activationBytes( m.dtype );
    p.t = oc.tp;
    p.b = oc.micro_batch;
    p.s = m.seq_len;
    p.sq = p.s / math::max( 1, oc.cp );
    p.h = m.hidden;
    p.a = m.heads;
    p.d = p.h / p.a;
    p.f = ffnHidden( m );
    p.V = paddedVocab( m, oc.tp );
    p.T = p.b * p.sq;
    p.Tsp = oc.sequence_parallel ? p.T / p.t : p.T;
    p.X = p.b * ( p.a / p.t ) * p.sq * p.s;
    p.fast = sixteenBit( m.dtype );
    p.causal = m.arch != TransformerArch::bert;
    return p;
}

} // namespace transformer_detail
} // namespace shardsweep
