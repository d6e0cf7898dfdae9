#pragma once
//! \file scenario.hpp
//! \brief Host-side descriptions of what one scenario is made of (a named workload, a named
//! platform, a plan, the cost model that prices it) and of what the kernel predicts for it. I/O
//! turns files into these; planners produce Plans; the batched kernel flattens them into
//! struct-of-arrays Views.
//!
//! Workload kinds share these structs: a DLRM workload fills tables and dense and its plan the
//! table shards; a transformer workload fills `transformer` and its plan `parallel` (the
//! Megatron-LM 3D-parallel configuration). Everything downstream (scenario space, kernel, HDF5,
//! CLI) dispatches on Workload::kind.

#include <cstdint>
#include <shardsweep/domain/dlrm_spec.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/domain/transformer_spec.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! Which model family a workload describes (the kernel's per-scenario switch).
enum class WorkloadKind : std::uint8_t
{
    dlrm = 0,        //!< embedding tables + dense MLPs, sharded by a table plan
    transformer = 1, //!< GPT / BERT / OPT, parallelised by a ParallelConfig
};
constexpr int kNumWorkloadKinds = 2;

//! A model trained at a global batch size: a DLRM (embedding tables and the dense part) or a
//! transformer (`transformer`; tables empty). global_batch counts samples (DLRM) or sequences.
struct Workload
{
    std::string name;
    WorkloadKind kind = WorkloadKind::dlrm;
    std::vector<std::string> table_names; //!< one per table
    std::vector<TableSpec> tables;
    DenseModel dense;
    TransformerSpec transformer; //!< kind == transformer only
    std::int64_t global_batch = 0;

    bool isTransformer() const { return kind == WorkloadKind::transformer; }
};

//! A platform with the catalog name of its GPU.
struct NamedPlatform
{
    std::string name;
    std::string gpu_name;
    Platform platform;
    std::string calibration; //!< the GPU calibration file applied to platform.gpu ("" = none)
};

//! The sharding decision for one table.
struct TablePlan
{
    ShardingType sharding = ShardingType::table_wise;
    ComputeKernel kernel = ComputeKernel::hbm;
    double cache_fraction = 0.0; //!< HBM cache share of the rows, uvm_caching only
};

//! A full plan. DLRM: one TablePlan per workload table and the shards that realise it.
//! Transformer: the parallel configuration (tables and shards empty).
struct Plan
{
    std::vector<TablePlan> tables;
    std::vector<ShardSpec> shards; //!< every shard of every table (data-parallel: one per GPU)
    ParallelConfig parallel;       //!< transformer workloads only
};

//! Who chose a scenario's plan: a planner (plan/planner.hpp) or nobody (none).
enum class PlannerKind : std::uint8_t
{
    round_robin = 0,        //!< paper baseline (also the sweep's simple placement)
    random = 1,             //!< NeuroShard/DreamShard/AutoShard baseline
    dim_greedy = 2,         //!< NeuroShard/DreamShard/AutoShard baseline
    size_greedy = 3,        //!< NeuroShard/DreamShard/AutoShard baseline
    lookup_greedy = 4,      //!< NeuroShard/DreamShard/AutoShard baseline
    size_lookup_greedy = 5, //!< NeuroShard/DreamShard/AutoShard baseline
    torchrec = 6,           //!< TorchRec's enumerator + proposers + greedy-perf partitioner
    //! DLRM: cost-guided greedy + improvement search on the native model; transformer: branch
    //! and bound returning exhaustive's optimum (plan/transformer_planner.hpp)
    shardsweep = 7,
    megatron = 8,   //!< transformer: Megatron-LM's rule of thumb (TP = node, smallest PP, ...)
    exhaustive = 9, //!< transformer: every configuration through the batched kernel
    //! No planner: the configuration is given explicitly (a sweep's `parallel:` grid, a scenario
    //! file's plan). A scenario space's plan axis lists the planners, then these configurations.
    none = 10,
};

//! Which cost model prices the shards: shardsweep's own (critical path, distribution-aware
//! lookups, ASTRA-sim collectives), TorchRec's planner estimator, reproduced exactly, or the
//! native model with each shard's compute time from a learned MLP (learned_cost_model.hpp).
enum class CostModel : std::uint8_t
{
    native = 0,
    torchrec = 1,
    learned = 2,
};

struct LearnedCostModel; // kernel/learned_cost_model.hpp
struct LearnedGemmModel; // kernel/learned_cost_model.hpp

//! The learned model a `learned` scenario is priced with, and the code of its platform in the
//! model's trained_on list (-1: the model never saw the platform; its shards are priced
//! natively). One model per batch.
struct LearnedCostBinding
{
    const LearnedCostModel* model = nullptr;
    int platform_code = -1;
};

//! Phases of one training iteration, in execution order (docs/model/step.md).
enum class Phase : int
{
    input_dist = 0,         //!< sparse-index all-to-all (TorchRec's input dist)
    embedding_fwd = 1,      //!< embedding lookups of the local shards
    bottom_mlp_fwd = 2,     //!< dense bottom MLP
    embedding_comm_fwd = 3, //!< pooled-embedding all-to-all / reduce-scatter / all-gather
    top_fwd = 4,            //!< interaction + top MLP
    top_bwd = 5,            //!< their backward
    embedding_comm_bwd = 6, //!< gradient all-to-all back to the shard owners
    bottom_mlp_bwd = 7,     //!< bottom MLP backward
    embedding_bwd = 8,      //!< embedding backward + optimizer update
    dense_allreduce = 9,    //!< dense-gradient all-reduce (overlapped with backward compute)
};
constexpr int kNumPhases = 10;

//! One scenario to evaluate. Pointers are borrowed for the duration of the call. A transformer
//! workload is evaluated with plan->parallel (its global batch replaced by the scenario's).
struct ScenarioInput
{
    ScenarioInput() = default;
    //! A constructor (not aggregate initialisation) so that callers that need no learned model
    //! can leave it out without -Wmissing-field-initializers.
    ScenarioInput( const Workload* w, const Platform* p, const Plan* pl, std::int64_t batch = 0,
                   CostModel m = CostModel::native, LearnedCostBinding l = {},
                   const LearnedGemmModel* g = nullptr )
        : workload( w ), platform( p ), plan( pl ), global_batch( batch ), model( m ), learned( l ),
          learned_gemm( g )
    {
    }

    const Workload* workload = nullptr;
    const Platform* platform = nullptr;
    const Plan* plan = nullptr;
    std::int64_t global_batch = 0; //!< 0: workload->global_batch
    CostModel model = CostModel::native;
    LearnedCostBinding learned; //!< for model == learned
    //! Price the dense part's GEMMs with this learned model (null: the analytic model). Set only
    //! for GPUs the model was trained on (`gemm_model: learned`); one model per batch.
    const LearnedGemmModel* learned_gemm = nullptr;
};

//! What the kernel predicts for one scenario. Fields above the DLRM block hold for every
//! workload kind (for a transformer exposed_comm_ms is its TP + PP + DP communication).
struct ScenarioResult
{
    WorkloadKind kind = WorkloadKind::dlrm;
    bool feasible = true;
    int overflow_gpu = -1;            //!< first GPU whose memory overflows (infeasible plans)
    double overflow_GiB = 0.0;        //!< by how much
    double iteration_ms = 0.0;        //!< along the critical path
    double exposed_comm_ms = 0.0;     //!< communication not hidden behind compute
    double phase_ms[kNumPhases] = {}; //!< critical-path duration of each phase
    int num_gpus = 0;
    std::vector<double> gpu_phase_ms;   //!< [gpu * kNumPhases + phase], busy time of that GPU
    std::vector<double> gpu_memory_GiB; //!< [gpu] total memory needed on that GPU
    std::vector<double> shard_fwd_ms;   //!< [shard] in plan->shards order
    std::vector<double> shard_bwd_ms;   //!< [shard]
    // Transformer workloads (kind == transformer); the DLRM arrays above are then empty.
    TransformerStepSummary transformer;   //!< phases, peak memory, model FLOPs
    ParallelConfig parallel;              //!< the configuration evaluated (global batch resolved)
    std::vector<double> stage_ms;         //!< [pipeline stage] busy time of one stage's GPUs
    std::vector<double> stage_memory_GiB; //!< [pipeline stage] memory of one of its GPUs
};

} // namespace shardsweep
