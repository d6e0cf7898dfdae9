#pragma once
//! \file planner.hpp
//! \brief One interface for every sharding planner (baselines, TorchRec-like, shardsweep's own).
#include <cstdint>
#include <memory>
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! The planners that plan (PlannerKind::none, an explicit configuration, follows them).
constexpr int kNumPlanners = 10;
static_assert( static_cast<int>( PlannerKind::none ) == kNumPlanners, "none follows the planners" );
//! The planner's name in every file and printout: nameOf( kind ) of domain/names.hpp.
const char* plannerName( PlannerKind kind );
//! The planner named `name`, one of the kNumPlanners that plan (not "none": an explicit
//! configuration comes from a sweep's parallel: section or a scenario's plan, not by name).
//! Throws UsageError naming the known planners otherwise.
PlannerKind parsePlannerName( const std::string& name );
//! Whether planner `kind` plans workloads of `workload` kind: the embedding planners plan DLRMs,
//! megatron and exhaustive transformers, shardsweep both, none neither. Loops over every
//! PlannerKind (plan, bench planners) skip the others.
bool plannerPlans( PlannerKind kind, WorkloadKind workload );

struct PlannerOptions
{
    std::uint64_t seed = 0;      //!< random baseline and search tie-breaking
    double time_budget_s = 0.5;  //!< shardsweep planner's improvement phase
    int max_iterations = 100000; //!< shardsweep planner's improvement phase
    //! shardsweep planner: candidate moves and swaps priced, at most (0: no limit). Unlike the
    //! clock it stops the search at the same point on any machine, and unlike iterations it
    //! tracks the search's work on tasks of any size (about 0.1 µs per evaluation on 4-8 GPUs).
    std::int64_t max_evaluations = 0;
    CostModel model = CostModel::native; //!< the model the plan is priced (and searched) with
    LearnedCostBinding learned;          //!< the learned model and platform (model == learned)
    const LearnedGemmModel* learned_gemm = nullptr; //!< dense GEMMs: learned (null: analytic)
    //! Price the returned plan (PlanResult::predicted_ms). Callers that evaluate the plan
    //! themselves anyway (the sweep's batched kernel) switch it off; predicted_ms is then 0
    //! for planners that do not price plans while searching.
    bool price_plan = true;
};

struct PlanResult
{
    bool feasible = false;
    std::string reason; //!< why infeasible ("table 12 (3.2 GiB) fits on no GPU")
    Plan plan;
    double predicted_ms = 0.0; //!< iteration time of the plan under options.model
    double plan_seconds = 0.0; //!< wall time spent planning
    //! The shardsweep planner's search ran out of time_budget_s before its iteration and
    //! evaluation budgets and before it converged: the plan depends on the machine's speed.
    bool stopped_on_clock = false;
};

//! Plans `workload` on `platform` at `global_batch` (0: workload.global_batch). A transformer
//! workload is planned by planTransformer (plan/transformer_planner.hpp: plan.parallel is the
//! best configuration); a planner that does not plan the workload's kind returns an infeasible
//! result saying so.
PlanResult makePlan( PlannerKind kind, const Workload& workload, const Platform& platform,
                     std::int64_t global_batch, const PlannerOptions& options );

//! A lower bound on the native-model iteration time of any plan for this task.
double iterationLowerBoundMs( const Workload& workload, const Platform& platform,
                              std::int64_t global_batch );

//! The per-table terms of iterationLowerBoundMs (the model-parallel floor searches over shard
//! counts: the costly part) kept across calls, keyed by every input they read. A sweep's tasks
//! draw their tables from one pool, so a sweep computes each table's terms about once per
//! platform and batch. The terms are pure functions of the key: the bound is bit-identical with
//! or without the cache. Not thread-safe (one per rank).
class LowerBoundCache
{
  public:
    //! Beyond `max_tables` tables of one kind (terms, holdings, access curves) the cache starts
    //! over, before a bound, never during one: memory stays bounded.
    explicit LowerBoundCache( std::size_t max_tables = std::size_t( 1 ) << 20 );
    ~LowerBoundCache();
    LowerBoundCache( const LowerBoundCache& ) = delete;
    LowerBoundCache& operator=( const LowerBoundCache& ) = delete;
    struct Impl;
    Impl& impl() { return *_impl; }

  private:
    std::unique_ptr<Impl> _impl;
};

//! iterationLowerBoundMs with the per-table terms looked up in (and added to) `cache`.
double iterationLowerBoundMs( const Workload& workload, const Platform& platform,
                              std::int64_t global_batch, LowerBoundCache& cache );

} // namespace shardsweep
