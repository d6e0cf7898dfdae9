#pragma once
//! \file published_runs.hpp
//! \brief Published H100 training runs (inputs/measured/transformer/published_h100_dev.csv: NeMo
//! 24.07's performance summary in FP8, Megatron-LM's 2024 README table) as measurements the
//! transformer model predicts (`bench transformer --table published`, docs/MODEL.md).
//!
//! The sources state tp, pp, dp, the global batch and the model; what they leave out is set as a
//! Megatron-LM / NeMo user of that release would run it, and each choice is part of the row's
//! label: sequence parallelism with tp > 1, the distributed optimizer, DP/TP overlap, fused
//! (flash) attention, the virtual pipeline size NeMo states (VP=n), FP8 where the source says so
//! (bf16 otherwise), micro-batch 1 where none is given, and the activation recompute: NeMo's
//! GPT-3 configurations state selective (priced so even where the memory model says it does not
//! fit), Megatron's table none, so there the cheapest (none, selective, full) with which the
//! fullest stage fits in the GPU's memory.
#include <shardsweep/calibration/transformer_fit.hpp>
#include <shardsweep/model/gpu_calibration.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! The rows of `path` on `platform` (an H100 cluster; its last network dimension grows with the
//! GPU count). measured_ms is the step time the source's per-GPU TFLOP/s implies with the model's
//! FLOPs count, which is Megatron's and NeMo's (72·B·s·L·h²·(1 + s/(6h) + V/(12hL)) for GPT).
//! `set` is the source ("nemo2407", "megatron2024").
std::vector<TransformerMeasurement> readPublishedMeasurements( const std::string& path,
                                                               const Platform& platform );

//! The fp8_gemm_eff (on a 0.001 grid over [0.3, 1.2]) that minimises the mean |log(predicted /
//! measured)| over the fp8 rows of `rows`, the other constants as in `base`; `base`'s own value
//! when there are none.
double fitFp8GemmEfficiency( const TransformerConstants& base,
                             const std::vector<TransformerMeasurement>& rows );

//! The fp8_gemm_eff (same grid) at which the transformer model prices `measured` (fp8 GEMMs timed
//! on `gpu`; rows in other dtypes are ignored) closest to them in geometric mean: |mean log(model /
//! measured)| smallest, GEMM time on the GPU alone (the microbenchmark's launches are not the
//! framework's). `base`'s own value when there are none. Independent of any end-to-end run.
double fp8GemmEfficiencyFromGemms( const TransformerConstants& base, const GpuSpec& gpu,
                                   const std::vector<GemmSample>& measured );

} // namespace shardsweep
