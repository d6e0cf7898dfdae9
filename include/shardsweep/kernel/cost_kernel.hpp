#pragma once
//! \file cost_kernel.hpp
//! \brief The batched cost kernel: predicts one training iteration for many scenarios at once.
//!
//! A scenario is (workload, platform, plan, global batch, cost model); DLRM and transformer
//! scenarios share one batch and one launch path. The host flattens a batch
//! of scenarios into struct-of-arrays Views (scenarios, GPUs, shards) and one Kokkos kernel
//! evaluates them in the execution space the caller passes. Results are bit-identical between
//! Serial and OpenMP: every reduction runs in a fixed order inside one scenario's work item.
#include <cstdint>
#include <shardsweep/scenario/task.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

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
const char* phaseName( Phase phase ); //!< "input_dist", "embedding_fwd", ...

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

class TableStatsCache;

//! How many scenarios one evaluateScenarios call should hold on the default execution space (0:
//! no limit). Host backends (Serial, OpenMP): 256, so that a call's workloads, packed Views and
//! results stay in the core's cache while they are built, evaluated and read back (calls of 2048
//! 50-table scenarios, ~20 MB of table specs each, spent a quarter of their time in cache misses
//! and page faults: docs/PERFORMANCE.md). Device backends: no limit (a launch wants every
//! scenario it can get).
std::size_t preferredScenariosPerCall();

//! Whether the default execution space runs on the host (Serial, OpenMP). Then several
//! evaluateScenarios calls may run at once, one per host thread (each call's kernels then run in
//! its thread), given a TableStatsCache or none: the sweep engine evaluates a batch's tiles so.
bool evaluatesOnHost();

//! Evaluates a batch of scenarios with the default host execution space.
std::vector<ScenarioResult> evaluateScenarios( const std::vector<ScenarioInput>& inputs );
//! The same, reusing the table statistics of earlier calls kept in `cache` (bit-identical
//! results: see table_stats_cache.hpp).
std::vector<ScenarioResult> evaluateScenarios( const std::vector<ScenarioInput>& inputs,
                                               TableStatsCache& cache );

//! Convenience for planners and tests: one scenario on the host.
ScenarioResult evaluateScenario( const ScenarioInput& input );

} // namespace shardsweep
