#pragma once
//! \file transformer_planner.hpp
//! \brief Parallelisation planners of transformer workloads (issue 13): the best Megatron-LM
//! configuration (tp, pp, dp, micro-batch, recompute, ZeRO, sequence parallelism, schedule) of a
//! model on N GPUs at a global batch, under the cost model of model/transformer.hpp.
//!
//! Three planners, PlannerKind values like the embedding planners (plan/planner.hpp; makePlan
//! dispatches on the workload's kind):
//! - megatron: the SC'21 rule of thumb (TP = GPUs per node, the smallest PP that fits, the largest
//!   micro-batch that fits with at least pp micro-batches per iteration, full recompute, no ZeRO,
//!   no SP, 1F1B);
//! - exhaustive: every configuration of transformerSearchSpace through the batched cost kernel
//!   (the ground truth);
//! - shardsweep: branch and bound over the same space, returning exactly exhaustive's top K while
//!   pricing few configurations (docs/model/transformer_planner.md).
//! Candidates are ranked by iteration time, ties by peak memory (the same speed with more headroom
//! first), then by configuration key (tp, pp, micro-batch, recompute, ZeRO, SP, schedule, virtual
//! stages, ascending): the result is the same for any thread count. ZeRO-1 is what Megatron calls
//! the distributed optimizer (the model prices both alike), and overlap is a property of the run
//! (TransformerPlanOptions), as fused attention is: it never makes a step slower, so searching it
//! would only ever switch it on.
#include <cstdint>
#include <shardsweep/domain/transformer_spec.hpp>
#include <shardsweep/plan/planner.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

struct TransformerPlanOptions
{
    int top_k = 1;        //!< candidates returned, best first
    bool fused = true;    //!< fused (flash) attention: a property of the run, not searched
    bool overlap = false; //!< DP/TP communication overlap: a property of the run, not searched
    //! Search interleaved 1F1B (virtual_stages > 1); false: one chunk per stage only (the plans
    //! export-et can write as traces today)
    bool interleave = true;
    bool price = true; //!< megatron: price its configuration (false: summary left empty)
};

//! A configuration and its predicted step.
struct TransformerCandidate
{
    ParallelConfig config;
    TransformerStepSummary summary;
};

//! How much work a search did (what the planners are compared on besides their time).
struct TransformerSearchStats
{
    std::int64_t space = 0; //!< configurations in transformerSearchSpace (megatron: it tried)
    std::int64_t memory_checked = 0; //!< peak-memory evaluations (closed form, cheap)
    std::int64_t operator_cases =
        0; //!< distinct operator cases priced (tp, micro-batch, SP, ep, etp)
    std::int64_t stage_bounds = 0; //!< single-stage evaluations for lower bounds
    std::int64_t priced = 0;       //!< full step compositions (predictTransformerStep)
};

struct TransformerPlanResult
{
    bool feasible = false;
    std::string reason;                    //!< why no configuration fits (or none is valid)
    std::vector<TransformerCandidate> top; //!< best first, at most top_k, all feasible
    TransformerSearchStats stats;
    //! The configuration needing the least memory per GPU when none fits (for the message).
    TransformerCandidate leanest;
    double plan_seconds = 0.0;
};

//! Plans `model` on every GPU of `platform` at `global_batch` sequences with planner `kind`
//! (megatron, exhaustive or shardsweep; others throw std::invalid_argument).
TransformerPlanResult planTransformer( PlannerKind kind, const TransformerSpec& model,
                                       const Platform& platform, std::int64_t global_batch,
                                       const TransformerPlanOptions& options = {} );

//! Every configuration the planners consider, in key order: tp dividing the GPUs, the heads and
//! the FFN width; pp dividing the remaining GPUs, with even stages where it divides the layers and
//! otherwise the uneven stages of unevenStages (⌈L/pp⌉ per middle stage); cp 1, and on long
//! sequences (at least 2048 tokens per CP rank) every cp with 2·cp dividing them; dp the rest,
//! dividing the global batch; every micro-batch b with b·dp dividing it; recompute
//! none/selective/full; ZeRO 0..3 (0 only when dp = 1); SP off/on (off only when tp = 1); 1F1B, and
//! GPipe when pp > 1; under 1F1B every virtual pipeline size Megatron's interleaved schedule
//! allows; an MoE model's every expert layout (ep dividing the experts, etp = tp or 1, ep·etp
//! dividing tp·dp), without the combinations Megatron-Core rejects (no SP with tp > 1, dense layers
//! outside the first stage). The excluded combinations are ones the model cannot tell apart (ZeRO
//! or SP on a group of one) or a schedule without a pipeline. Train mode.
std::vector<ParallelConfig> transformerSearchSpace( const TransformerSpec& model, int num_gpus,
                                                    std::int64_t global_batch,
                                                    const TransformerPlanOptions& options = {} );

//! True when `a` ranks before `b`: shorter iteration, ties by less peak memory, then by key.
bool transformerCandidateBefore( const TransformerCandidate& a, const TransformerCandidate& b );

} // namespace shardsweep
