#pragma once
//! \file transformer_spec.hpp
//! \brief Plain structs of the transformer workload kind: the model, its parallel configuration
//! (Megatron-LM 3D parallelism) and what one predicted step reports. The cost functions that use
//! them live in model/transformer.hpp (docs/model/transformer.md).
//!
//! Plain-old-data only: copied by value into Kokkos kernels. Units are in the field names.
#include <Kokkos_Macros.hpp>
#include <cstdint>
#include <shardsweep/domain/hardware.hpp>

namespace shardsweep
{

//! Layer family: decoder with GELU (GPT), encoder with GELU (BERT), decoder with ReLU (OPT).
enum class TransformerArch : std::uint8_t
{
    gpt = 0,
    bert = 1,
    opt = 2,
};
constexpr int kNumTransformerArchs = 3;

//! The FFN's activation. `arch` takes the layer family's (GELU for gpt and bert, ReLU for opt);
//! SwiGLU (Shazeer 2020; Llama, Mixtral, DeepSeek) gates: FC1 is 2·f wide (gate and up
//! projections, as Megatron's --swiglu fuses them), SiLU(gate)·up feeds FC2.
enum class FfnType : std::uint8_t
{
    arch = 0,
    gelu = 1,
    relu = 2,
    swiglu = 3,
};

//! One transformer model (notation of Narayanan et al., SC'21, and Korthikanti et al., MLSys'23).
struct TransformerSpec
{
    TransformerArch arch = TransformerArch::gpt;
    int hidden = 0;     //!< h
    int heads = 0;      //!< a
    int kv_heads = 0;   //!< g, key/value heads (grouped-query attention); 0 = heads
    int layers = 0;     //!< L
    int seq_len = 0;    //!< s
    int vocab = 0;      //!< V, before Megatron's padding to a multiple of 128·tp
    int ffn_hidden = 0; //!< f; 0 = 4·hidden
    DataType dtype = DataType::bf16;
    FfnType ffn_type = FfnType::arch;
    // Mixture-of-experts (Megatron-Core MoE, Fedus et al. 2022; DeepSeek-V3, arXiv:2412.19437):
    // every layer after the first `first_dense_layers` replaces its FFN by a router, `experts`
    // routed experts of which each token takes `top_k`, and `shared_experts` that every token
    // takes. 0 experts: a dense model (the other MoE fields are then unused).
    int experts = 0;              //!< E routed experts per MoE layer; 0 = dense
    int top_k = 2;                //!< k routed experts per token (Megatron's default 2)
    int moe_ffn_hidden = 0;       //!< f_e, each expert's FFN width; 0 = ffn_hidden
    int shared_experts = 0;       //!< n_s shared experts (each f_e wide) every token passes
    double capacity_factor = 0.0; //!< C: each expert takes at most C·T·k/E tokens; 0 = dropless
    int first_dense_layers = 0;   //!< leading layers with a dense FFN (DeepSeek-V3: 3)
    KOKKOS_INLINE_FUNCTION bool moe() const { return experts > 0; }
};

enum class PipelineSchedule : std::uint8_t
{
    one_f_one_b = 0, //!< PipeDream-Flush (Megatron's default)
    gpipe = 1,       //!< all forwards, then all backwards
};

enum class Recompute : std::uint8_t
{
    none = 0,
    selective = 1, //!< only the attention core is recomputed in the backward
    full = 2,      //!< every layer's forward is repeated in the backward
};

enum class RunMode : std::uint8_t
{
    train = 0,
    infer = 1, //!< forward only
};

//! How one transformer step is parallelised: tp · cp · pp · dp GPUs.
struct ParallelConfig
{
    int tp = 1;
    int pp = 1;
    int dp = 1;
    int micro_batch = 1;           //!< sequences per micro-batch and data-parallel replica
    std::int64_t global_batch = 1; //!< sequences per optimizer step
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    Recompute recompute = Recompute::none;
    int zero = 0; //!< ZeRO stage 0..3 over the data-parallel group
    bool sequence_parallel = false;
    bool fused = true; //!< fused attention / softmax / bias-GELU kernels
    RunMode mode = RunMode::train;
    //! Model chunks per pipeline rank (Megatron's virtual pipeline stages); > 1 is the
    //! interleaved 1F1B schedule (Narayanan et al., SC'21, §2.2.2).
    int virtual_stages = 1;
    //! Megatron's distributed optimizer: fp32 master weights and Adam states sharded over dp,
    //! gradients reduce-scattered and weights all-gathered (ZeRO-1's sharding).
    bool distributed_optimizer = false;
    //! Communication overlapped with compute as Megatron's flags do: the DP gradient reduction
    //! with the backward and the weight all-gather with the forward (--overlap-grad-reduce,
    //! --overlap-param-gather), TP collectives with the GEMMs (--tp-comm-overlap, with SP), MoE
    //! all-to-alls with another micro-batch's compute (--overlap-moe-expert-parallel-comm).
    bool overlap = false;
    //! Layers of the first and last pipeline stage (Megatron's --decoder-first/last-pipeline-
    //! num-layers); 0 = even. The other stages share the rest evenly.
    int first_stage_layers = 0;
    int last_stage_layers = 0;
    //! Context parallelism (Megatron-Core's --context-parallel-size): each sequence split over cp
    //! GPUs, attention as a ring exchange of key/value chunks. Ranks in Megatron's tp-cp-dp-pp
    //! order; gradients reduced (and the distributed optimizer sharded) over dp·cp.
    int cp = 1;
    //! Expert parallelism (Megatron-Core's MoE parallel folding, --expert-model-parallel-size):
    //! the experts of an MoE layer split over ep GPUs, tokens dispatched to them and combined by
    //! all-to-alls. Expert ranks in etp-ep-edp-pp order: an EP group is ep ranks at stride etp,
    //! and ep·etp divides the tp·cp·dp GPUs of a stage (edp = tp·cp·dp / (ep·etp)).
    int ep = 1;
    //! Tensor parallelism inside each expert (--expert-tensor-parallel-size); 0 = tp, Megatron's
    //! default.
    int etp = 0;
    int numGpus() const { return tp * cp * pp * dp; }
    KOKKOS_INLINE_FUNCTION int expertTp() const { return etp > 0 ? etp : tp; }
};

//! Phases of a transformer step, as reported (critical-path shares, adding up to iteration_ms).
enum class TransformerPhase : int
{
    compute = 0,   //!< forward, backward and recompute of the slowest stage's micro-batches
    tp_comm = 1,   //!< exposed tensor-parallel collectives
    pp_comm = 2,   //!< exposed pipeline send/recv
    dp_comm = 3,   //!< exposed data-parallel gradient (ZeRO) collectives
    bubble = 4,    //!< pipeline fill and drain
    optimizer = 5, //!< the optimizer step
    ep_comm = 6,   //!< exposed expert-parallel all-to-alls (and expert-TP collectives) of MoE
};
constexpr int kNumTransformerPhases = 7;

//! What one predicted transformer step reports.
struct TransformerStepSummary
{
    bool feasible = true;
    double iteration_ms = 0.0;
    double phase_ms[kNumTransformerPhases] = {};
    double peak_memory_GiB = 0.0; //!< the fullest GPU (pipeline stage)
    int peak_memory_stage = 0;
    double model_flops = 0.0; //!< per iteration, for model-FLOPs utilisation
};

} // namespace shardsweep
