#pragma once
//! \file transformer_spec.hpp
//! \brief Plain structs of the transformer workload kind: the model, its parallel configuration
//! (Megatron-LM 3D parallelism) and what one predicted step reports. The cost functions that use
//! them live in model/transformer.hpp (docs/model/transformer.md).
//!
//! Plain-old-data only: copied by value into Kokkos kernels. Units are in the field names.
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
    //! --overlap-param-gather), TP collectives with the GEMMs (--tp-comm-overlap, with SP).
    bool overlap = false;
    //! Layers of the first and last pipeline stage (Megatron's --decoder-first/last-pipeline-
    //! num-layers); 0 = even. The other stages share the rest evenly.
    int first_stage_layers = 0;
    int last_stage_layers = 0;
    //! Context parallelism (Megatron-Core's --context-parallel-size): each sequence split over cp
    //! GPUs, attention as a ring exchange of key/value chunks. Ranks in Megatron's tp-cp-dp-pp
    //! order; gradients reduced (and the distributed optimizer sharded) over dp·cp.
    int cp = 1;
    int numGpus() const { return tp * cp * pp * dp; }
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
};
constexpr int kNumTransformerPhases = 6;

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
