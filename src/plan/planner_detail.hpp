#pragma once
//! \file planner_detail.hpp
//! \brief Pieces shared by the planners' implementations (not part of the public API).
#include <shardsweep/model/step.hpp>
#include <shardsweep/plan/planner.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! shardsweep's own planner (src/plan/shardsweep_planner.cpp, docs/PLANNERS.md).
PlanResult planShardsweep( const Workload& workload, const Platform& platform,
                           std::int64_t global_batch, const PlannerOptions& options );

//! The greedy baselines of NeuroShard/DreamShard/AutoShard (docs/PLANNERS.md)
//! (dim/size/lookup/size_lookup greedy).
PlanResult planGreedyBaseline( PlannerKind kind, const Workload& workload,
                               const Platform& platform );

//! round_robin and random: table-wise placements without a memory check (infeasible when a GPU
//! is over-committed).
PlanResult planUnchecked( PlannerKind kind, const Workload& workload, const Platform& platform,
                          std::uint64_t seed );

namespace planner_detail
{
//! HBM a GPU offers to embedding tables: its memory minus the platform's reserve.
double gpuCapacityBytes( const Platform& platform );
//! All of a GPU's memory: the bound of predictStep's feasibility rule (memory(g) counts the
//! reserve, the dense replica, activations and buffers besides the tables).
double gpuMemoryBytes( const Platform& platform );
//! Weights + optimizer state of a whole table.
double tableStateBytes( const TableSpec& t );
//! Every table whole (table-wise, HBM) on the GPU given per table.
Plan tableWisePlan( const Workload& workload, const std::vector<int>& gpu_of_table );
//! Why a table-wise placement over-commits a GPU, or "" if it does not.
std::string overCommitReason( const Workload& workload, const Platform& platform,
                              const std::vector<int>& gpu_of_table );
//! evaluateScenario( input ).iteration_ms computed in a plain serial host loop (the same kernel
//! body, bit-identical): a planner prices one plan at a time, and a parallel launch per plan
//! costs more than the plan on a loaded machine.
double iterationMsOnHost( const ScenarioInput& input );
//! The whole step summary of iterationMsOnHost: iteration time and the kernel's feasibility
//! (which GPU overflows, by how much).
StepSummary stepOnHost( const ScenarioInput& input );
} // namespace planner_detail

} // namespace shardsweep
