#pragma once
//! \file pipeline_order.hpp
//! \brief The order in which one pipeline rank runs its micro-batches' forward and backward
//! passes (per model chunk when interleaved): what the transformer step graph
//! (transformer_step_graph.cpp) chains, so that replaying the graph runs the schedule that
//! model/transformer/step.hpp prices in closed form (docs/model/chakra.md).

#include <shardsweep/domain/transformer_spec.hpp>
#include <vector>

namespace shardsweep
{

//! One pass of one micro-batch through one of the rank's model chunks.
struct PipelinePass
{
    bool forward = true;
    int micro_batch = 0;
    int chunk = 0; //!< model chunk of the rank, 0 … virtual_stages − 1 (0 without interleaving)
    bool operator==( const PipelinePass& o ) const
    {
        return forward == o.forward && micro_batch == o.micro_batch && chunk == o.chunk;
    }
};

//! The passes of pipeline rank `stage` of `stages`, in the order it runs them, for
//! `micro_batches` micro-batches and `virtual_stages` chunks per rank.
//! - Inference (`train` false): every forward, in the forward order below.
//! - GPipe: every forward, then every backward.
//! - 1F1B (SC'21 §2.2.1): min(stages − stage − 1, m) warm-up forwards, then one forward and one
//!   backward alternately, then the remaining backwards.
//! - Interleaved 1F1B (virtual_stages v > 1; Megatron-LM's
//!   `forward_backward_pipelining_with_interleaving`): min(2(p − stage − 1) + (v − 1)p, m·v)
//!   warm-up chunk forwards, then alternately; the k-th forward runs chunk ⌊k/p⌋ mod v of
//!   micro-batch ⌊k/(p·v)⌋·p + k mod p, the k-th backward the same micro-batch on chunk
//!   v − 1 − (⌊k/p⌋ mod v). Needs m divisible by p (parallelKnobProblem checks it).
std::vector<PipelinePass> pipelinePasses( PipelineSchedule schedule, bool train, int stages,
                                          int virtual_stages, int micro_batches, int stage );

} // namespace shardsweep
