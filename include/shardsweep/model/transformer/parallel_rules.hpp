#pragma once
//! \file parallel_rules.hpp
//! \brief Host-side rules of transformer parallel configurations: which (tp, pp, dp,
//! micro-batch, ...) can run a model on N GPUs (Megatron-LM's constraints: Narayanan et al.,
//! SC'21, §2-§3), and the enumeration of the layouts that sweeps ("every layout") and the
//! transformer planners walk.

#include <cstdint>
#include <shardsweep/domain/transformer_spec.hpp>
#include <string>
#include <utility>
#include <vector>

namespace shardsweep
{

//! One line for messages and tables: "tp 8 x pp 16 x dp 8, micro-batch 1, 1f1b, recompute full,
//! ZeRO-1, SP, fused, train".
std::string parallelConfigSummary( const ParallelConfig& config );

//! f = ffn_hidden, or 4·hidden when the spec leaves it 0.
int ffnHidden( const TransformerSpec& model );

//! `model` with every field whose 0 means "derived" (ffn_hidden: 4·hidden) set to the value the
//! model prices, for printouts of what was priced. Prices exactly as `model`.
TransformerSpec resolvedModel( const TransformerSpec& model );

//! Parameters Ψ: per layer transformerLayerParams at tp = 1 (4h² + 2hf + 9h + f: QKV,
//! projection, FC1, FC2 with biases, two LayerNorms), plus the (V + s)·h word and position
//! embeddings and the final LayerNorm; for f = 4h this is SC'21 eq. 2, 12Lh²(1 + 13/(12h) + (V +
//! s)/(12Lh)) + 2h.
double transformerParameters( const TransformerSpec& model );

//! A model whose fields are each in range but disagree: the field to blame and what it should
//! be ("a head count dividing hidden 12288"). The workload reader and `predict transformer`
//! report it with the file, line and column.
struct ModelFieldProblem
{
    std::string key; //!< empty: no problem
    std::string expected;
};
ModelFieldProblem transformerSpecProblem( const TransformerSpec& model );

//! Why tensor parallelism of degree `tp` (≥ 1) cannot split `model`, or "" when it can: tp
//! divides the heads (each rank holds whole heads) and the FFN width (Megatron-LM's column- and
//! row-parallel MLP). Every rule on tp (the checks, the planners' layouts) asks this.
std::string tensorParallelError( const TransformerSpec& model, int tp );

//! Why `config` cannot run `model` on `num_gpus` GPUs (its global_batch included), or "" when it
//! can: tp·pp·dp = GPUs, tp divides the heads and the FFN width, the micro-batch times dp divides
//! the global batch, ZeRO stage 0..3, and parallelKnobProblem's rules.
std::string parallelConfigError( const TransformerSpec& model, const ParallelConfig& config,
                                 int num_gpus );

//! Why the pipeline and optimizer knobs of `config` do not fit `model` (the knob to blame and
//! what it must be), or an empty key: pp divides the layers, or first_stage_layers /
//! last_stage_layers leave the other stages an even, positive share; virtual_stages > 1 needs
//! pp > 1, 1F1B, even stages, pp·v dividing the layers and pp dividing the micro-batches
//! (Megatron-LM's interleaved schedule); the distributed optimizer is not combined with ZeRO.
ModelFieldProblem parallelKnobProblem( const TransformerSpec& model, const ParallelConfig& config );

//! Why `gpu` cannot compute in `dtype`, or "": fp8 needs FP8 tensor cores (fp8_TFLOPs > 0).
std::string gpuDataTypeError( const GpuSpec& gpu, DataType dtype );

//! Every ordered (tp, pp) with tp·pp dividing `num_gpus` (dp = num_gpus / (tp·pp)), tp ascending
//! then pp ascending: the "every layout of N GPUs" of sweeps, before the model's divisibility.
std::vector<std::pair<int, int>> gpuLayouts( int num_gpus );

//! The divisors of n, ascending.
std::vector<int> divisorsOf( std::int64_t n );

} // namespace shardsweep
