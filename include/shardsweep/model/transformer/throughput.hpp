#pragma once
//! \file throughput.hpp
//! \brief What a predicted transformer step achieves, in the units practitioners compare: model
//! TFLOP/s per GPU, model-FLOPs utilisation (MFU: model FLOPs without recompute over the GPUs'
//! dense peak in the model's dtype, as in Chowdhery et al., PaLM, App. B) and tokens per second.
//! `plan`, `evaluate` and `predict transformer` print these three from this one function.

#include <Kokkos_Macros.hpp>
#include <cmath>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/domain/transformer_spec.hpp>

namespace shardsweep
{

//! Dense peak TFLOP/s of `gpu` in `dtype`: the tensor-core rate where the GPU has one (fp16 for
//! int8, which no transformer computes in).
KOKKOS_INLINE_FUNCTION double peakTFLOPs( const GpuSpec& gpu, DataType dtype )
{
    switch ( dtype )
    {
    case DataType::fp32:
        return gpu.fp32_TFLOPs;
    case DataType::tf32:
        return gpu.tf32_TFLOPs;
    case DataType::bf16:
        return gpu.bf16_TFLOPs;
    case DataType::fp8:
        return gpu.fp8_TFLOPs;
    case DataType::fp16:
    case DataType::int8:
        break;
    }
    return gpu.fp16_TFLOPs;
}

struct TransformerThroughput
{
    double tflops_per_gpu = 0.0; //!< model FLOPs per second and GPU, in TFLOP/s
    double mfu_pct = 0.0;        //!< of the dense peak; NaN where the GPU has no peak in dtype
    double tokens_per_s = 0.0;   //!< sequences x sequence length per second, all GPUs
};

//! The throughput of `step` on `gpus` GPUs of `gpu` computing in `dtype`, `tokens` tokens per step
//! (global batch x sequence length).
KOKKOS_INLINE_FUNCTION TransformerThroughput
transformerThroughput( const TransformerStepSummary& step, const GpuSpec& gpu, int gpus,
                       DataType dtype, double tokens )
{
    TransformerThroughput t;
    if ( !( step.iteration_ms > 0.0 ) || gpus < 1 )
        return t;
    const double seconds = step.iteration_ms * 1e-3;
    t.tflops_per_gpu = step.model_flops / seconds / gpus / 1e12;
    const double peak = peakTFLOPs( gpu, dtype );
    // The same operations in the same order as before this function existed (bit-identical MFU).
    t.mfu_pct =
        peak > 0.0 ? 100.0 * step.model_flops / seconds / gpus / 1e12 / peak : double( NAN );
    t.tokens_per_s = tokens / seconds;
    return t;
}

} // namespace shardsweep
