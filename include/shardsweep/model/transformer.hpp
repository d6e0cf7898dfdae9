#pragma once
//! \file transformer.hpp
//! \brief Transformer training and inference steps under Megatron-LM 3D parallelism (issue 11):
//! the one header the kernel, planners and CLI include.
//!
//! Two halves, so that a batched kernel can deduplicate the expensive one:
//! - transformerOperatorCost(TransformerOperatorCase) (model/transformer/operators.hpp): operator
//!   latencies of one layer, the embedding, the LM head and the loss on one TP rank for one
//!   micro-batch. Depends only on (GPU, model, tp, micro_batch, sequence_parallel, fused, cp, and
//!   for MoE models ep and etp);
//!   transformerOperatorCase(gpu, model, config) extracts that key.
//! - predictTransformerStep(platform, model, config, ops) (model/transformer/step.hpp): the cheap
//!   composition of one configuration: TP/PP/DP communication on the network dimensions each
//!   group spans, the pipeline schedule, the optimizer and the memory of every stage.
//! Parameter and memory formulas: model/transformer/memory.hpp. Equations and sources:
//! docs/model/transformer.md.
#include <shardsweep/model/transformer/memory.hpp>
#include <shardsweep/model/transformer/operators.hpp>
#include <shardsweep/model/transformer/step.hpp>
