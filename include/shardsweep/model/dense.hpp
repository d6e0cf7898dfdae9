#pragma once
//! \file dense.hpp
//! \brief Cost of DLRM's dense part on one GPU: bottom MLP, interaction, top MLP (forward and
//! backward) as GEMMs priced by the tile/wave model, plus parameter and activation counts.
//!
//! Every GPU runs the dense part data-parallel on its local batch, so these costs are the same on
//! all GPUs of a scenario. A linear layer y = x·W (x: b×in, W: in×out) is one forward GEMM
//! (M=b, N=out, K=in) and two backward GEMMs: dX = dY·Wᵀ (M=b, N=in, K=out) and dW = xᵀ·dY
//! (M=in, N=out, K=b). The forward GEMM is priced as a linear layer (bias epilogue: the GEMM
//! model's linear launch overhead); ReLU and other element-wise work is small next to the GEMMs.
#include <shardsweep/domain/dlrm_spec.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/model/gemm.hpp>
#include <shardsweep/model/learned_operator.hpp>

namespace shardsweep
{

struct DenseCost
{
    double bottom_fwd_ms = 0.0;
    double bottom_bwd_ms = 0.0;
    double top_fwd_ms = 0.0; //!< interaction + top MLP
    double top_bwd_ms = 0.0;
    double parameters = 0.0;       //!< weights + biases of both MLPs
    double activation_bytes = 0.0; //!< saved for backward plus their gradients, per GPU
};

//! Width of the interaction's output, the top MLP's input. Dot: F = tables + 1 features of the
//! bottom MLP's output width d give F(F-1)/2 pairwise products, concatenated with the dense
//! feature vector (DLRM). Cat: all pooled embeddings and the dense vector side by side.
KOKKOS_INLINE_FUNCTION double interactionWidth( const DenseModel& dense, int num_tables,
                                                double sum_embedding_dims )
{
    const double d = dense.bottom_mlp_layers > 0 ? dense.bottom_mlp[dense.bottom_mlp_layers - 1]
                                                 : dense.num_dense_features;
    if ( dense.interaction == Interaction::dot )
    {
        const double f = num_tables + 1.0;
        return f * ( f - 1.0 ) / 2.0 + d;
    }
    return sum_embedding_dims + d;
}

//! Forward and backward time of one linear layer on `batch` samples.
KOKKOS_INLINE_FUNCTION void linearLayerMs( const GpuSpec& gpu, double batch, double in, double out,
                                           DataType dtype, double& fwd_ms, double& bwd_ms,
                                           const GemmPricer& gemm = GemmPricer() )
{
    fwd_ms += gemm( gpu, 1.0, batch, out, in, dtype, GemmOp::linear ).latency_ms;
    bwd_ms += gemm( gpu, 1.0, batch, in, out, dtype ).latency_ms +
              gemm( gpu, 1.0, in, out, batch, dtype ).latency_ms;
}

//! Dense cost of one GPU with `local_batch` samples, for a model with `num_tables` embedding
//! tables whose dims add up to `sum_embedding_dims`. `gemm` prices the GEMMs (default: the
//! analytic model; a learned GemmPricer: model/learned_operator.hpp).
KOKKOS_INLINE_FUNCTION DenseCost denseCost( const GpuSpec& gpu, const DenseModel& dense,
                                            int num_tables, double sum_embedding_dims,
                                            double local_batch,
                                            const GemmPricer& gemm = GemmPricer() )
{
    DenseCost cost;
    const double bytes = dataTypeBytes( dense.dtype );
    double widths = 0.0; // sum of layer output widths: activations kept for backward
    double in = dense.num_dense_features;
    for ( int l = 0; l < dense.bottom_mlp_layers; ++l )
    {
        const double out = dense.bottom_mlp[l];
        linearLayerMs( gpu, local_batch, in, out, dense.dtype, cost.bottom_fwd_ms,
                       cost.bottom_bwd_ms, gemm );
        cost.parameters += in * out + out;
        widths += out;
        in = out;
    }
    const double d = in;
    if ( dense.interaction == Interaction::dot )
    {
        // Z = X·Xᵀ per sample (X: F×d), backward dX = (dZ + dZᵀ)·X.
        const double f = num_tables + 1.0;
        cost.top_fwd_ms += gemm( gpu, local_batch, f, f, d, dense.dtype ).latency_ms;
        cost.top_bwd_ms += gemm( gpu, local_batch, f, d, f, dense.dtype ).latency_ms;
        widths += f * d;
    }
    else
    {
        widths += sum_embedding_dims + d;
    }
    in = interactionWidth( dense, num_tables, sum_embedding_dims );
    widths += in;
    for ( int l = 0; l < dense.top_mlp_layers; ++l )
    {
        const double out = dense.top_mlp[l];
        linearLayerMs( gpu, local_batch, in, out, dense.dtype, cost.top_fwd_ms, cost.top_bwd_ms,
                       gemm );
        cost.parameters += in * out + out;
        widths += out;
        in = out;
    }
    // Activations saved in forward and their gradients in backward.
    cost.activation_bytes = 2.0 * local_batch * widths * bytes;
    return cost;
}

} // namespace shardsweep
