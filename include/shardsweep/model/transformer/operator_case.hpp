#pragma once
//! \file operator_case.hpp
//! \brief The plain types of the transformer operator model (model/transformer/operators.hpp):
//! its global constants, one operator case (what the expensive, plan-independent half depends
//! on, and what the batched kernel computes once per distinct value) and what a case costs.
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/domain/transformer_spec.hpp>

namespace shardsweep
{

//! Global constants of the transformer operator model (the same for every GPU). Fitted values
//! and how: shippedTransformerConstants(), docs/model/transformer.md.
struct TransformerConstants
{
    double kernel_gap_ms;         //!< GPU-side time between back-to-back kernels, ms
    double host_ms_per_kernel;    //!< framework (Python, autograd, launch) time per kernel, ms
    double elementwise_bw_eff;    //!< fraction of datasheet bandwidth element-wise kernels reach
    double tensor_core_eff;       //!< scales the 16-bit/TF32 tensor-core peak the GEMM model sees
    double flash_efficiency;      //!< fraction of tensor peak a fused attention kernel sustains
    double flash_bwd_ratio;       //!< fused attention backward / forward time
    double optimizer_bytes_extra; //!< Adam bytes per parameter beyond the states (grad zeroing)
    double workspace_GiB;         //!< CUDA context, cuBLAS/NCCL workspaces, allocator slack
    double tp_sync_ms;            //!< per TP collective and log2(tp): rank skew at each sync
    double p2p_bw_eff;            //!< fraction of the link bandwidth a pipeline send/recv reaches
    double p2p_ms;                //!< fixed cost of one pipeline send/recv pair (framework), ms
    double dp_bw_eff;             //!< fraction of the modelled bandwidth the gradient sync reaches
    //! FP8 GEMMs reach this fraction of the BF16 GEMMs' efficiency on the FP8 peak: measured,
    //! the 54 fp8 GEMMs of the published H100 runs' shapes timed on an H100 (inputs/measured/h100)
    //! over the model's price of them (`bench transformer --table published`, row "from H100
    //! GEMMs"; NeMo's FP8 runs fitted alone give 0.745)
    double fp8_gemm_eff;
};

//! Shipped constants (see docs/model/transformer.md for the fit); a function for device code, as
//! shippedGemmConstants().
KOKKOS_INLINE_FUNCTION constexpr TransformerConstants shippedTransformerConstants()
{
    return { 0.0, 0.04615, 0.977, 0.981, 0.55, 2.5, 4.0, 1.5, 0.0, 1.479, 0.1327, 0.584, 0.748 };
}

//! The plan-independent inputs of the operator costs.
struct TransformerOperatorCase
{
    GpuSpec gpu;
    TransformerSpec model;
    int tp = 1;
    int micro_batch = 1;
    bool sequence_parallel = false;
    bool fused = true;
    int cp = 1;  //!< context parallelism: the rank holds seq_len/cp of each sequence
    int ep = 1;  //!< expert parallelism (MoE models; 1 for dense ones)
    int etp = 1; //!< tensor parallelism inside each expert (MoE models; 1 for dense ones)
};

//! Operator costs of one micro-batch on one TP rank, ms. "fwd" is the forward, "bwd" the backward
//! (data + weight gradients and element-wise backward), without any recomputation.
struct TransformerOperatorCost
{
    double layer_fwd_ms = 0.0;           //!< one layer, every operator
    double layer_bwd_ms = 0.0;           //!< one layer
    double layer_attn_core_ms = 0.0;     //!< forward of scores..context (selective recompute)
    double layer_attn_core_bwd_ms = 0.0; //!< backward of scores..context (hides CP's exchange)
    double layer_dropout_ms = 0.0;  //!< dropout kernels inside layer_fwd_ms (absent at inference)
    double layer_gemm_fwd_ms = 0.0; //!< GEMM part of layer_fwd_ms
    double layer_gemm_bwd_ms = 0.0; //!< GEMM part of layer_bwd_ms
    double embedding_fwd_ms = 0.0;  //!< token + position embedding and its dropout
    double embedding_bwd_ms = 0.0;
    double head_fwd_ms = 0.0; //!< final LayerNorm, (BERT transform,) vocabulary GEMM
    double head_bwd_ms = 0.0;
    double loss_fwd_ms = 0.0; //!< vocab-parallel cross-entropy
    double loss_bwd_ms = 0.0;
    double layer_flops = 0.0; //!< forward FLOPs of one layer, whole model width (not per rank)
    double head_flops = 0.0;  //!< forward FLOPs of the vocabulary GEMM, whole width
    // An MoE layer (model/transformer/moe.hpp): the layer's attention half and its operators,
    // with the FFN replaced by the router, token permutation, the rank's grouped expert GEMMs and
    // the shared experts. Zero for dense models. Its attention core and dropout are the layer's.
    double moe_layer_fwd_ms = 0.0;
    double moe_layer_bwd_ms = 0.0;
    double moe_layer_gemm_fwd_ms = 0.0;
    double moe_layer_gemm_bwd_ms = 0.0;
    double moe_layer_flops = 0.0; //!< forward FLOPs of one MoE layer (top_k + shared experts)
};

} // namespace shardsweep
