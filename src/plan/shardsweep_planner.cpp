// shardsweep's planner: cost-guided greedy placement, then a local search (moves, swaps,
// column/row/table-row re-sharding) priced incrementally on the native model (docs/PLANNERS.md).
// This file seeds the search with every baseline's plan (and, where memory binds, with a search
// without the capacity) and lets the kernel's own step decide;
// the steps are in shardsweep_greedy.cpp and shardsweep_search.cpp.
#include "plan_state.hpp"
#include "planner_detail.hpp"
#include "shardsweep_search.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <functional>
#include <limits>
#include <shardsweep/kernel/learned_cost_model.hpp>
#include <shardsweep/plan/torchrec_planner.hpp>

namespace shardsweep
{
using namespace planner_detail;

namespace
{
//! Largest tables × GPUs for which TorchRec's plan seeds the search: beyond a few thousand
//! (table, GPU) pairs its enumeration takes longer than the whole planning budget.
constexpr long kTorchrecSeedLimit = 4096;

//! The inputs of one planShardsweep call.
struct PlanInputs
{
    const Workload& workload;
    const Platform& platform;
    std::int64_t global_batch;
    const PlannerOptions& options;
};

//! A plan that fits and its objective as PlanState prices it.
struct Seed
{
    Plan plan;
    double objective;
};

//! Orders seeds by objective, fastest first (stable: ties keep their order).
void sortByObjective( std::vector<Seed>& fitting )
{
    std::stable_sort( fitting.begin(), fitting.end(),
                      []( const Seed& a, const Seed& b ) { return a.objective < b.objective; } );
}

//! The plans of every baseline and (when the problem is small enough) TorchRec's.
std::vector<PlanResult> baselineSeeds( const PlanInputs& in )
{
    const int gpus = in.platform.numGpus();
    const int num_tables = static_cast<int>( in.workload.tables.size() );
    std::vector<PlanResult> seeds;
    for ( PlannerKind kind : { PlannerKind::round_robin, PlannerKind::random } )
        seeds.push_back( planUnchecked( kind, in.workload, in.platform, in.options.seed ) );
    for ( PlannerKind kind : { PlannerKind::dim_greedy, PlannerKind::size_greedy,
                               PlannerKind::lookup_greedy, PlannerKind::size_lookup_greedy } )
        seeds.push_back( planGreedyBaseline( kind, in.workload, in.platform ) );
    if ( static_cast<long>( num_tables ) * gpus <= kTorchrecSeedLimit )
    {
        PlannerOptions torchrec_options = in.options;
        torchrec_options.model = CostModel::torchrec;
        seeds.push_back(
            planTorchrec( in.workload, in.platform, in.global_batch, torchrec_options ) );
    }
    return seeds;
}

//! Appends the baseline seeds that fit (loaded into `state` to price them), then orders all of
//! `fitting` by objective (stable).
void addFittingBaselineSeeds( PlanState& state, const PlanInputs& in, std::vector<Seed>& fitting )
{
    std::vector<PlanResult> seeds = baselineSeeds( in );
    for ( PlanResult& seed : seeds )
    {
        // An infeasible baseline plan over-commits tables already (or is incomplete).
        if ( !seed.feasible )
            continue;
        state.load( seed.plan );
        if ( allFit( state ) )
            fitting.push_back( { std::move( seed.plan ), state.objective() } );
    }
    sortByObjective( fitting );
}

//! True if some table of `plan` keeps its rows in host memory (UVM).
bool usesHostMemory( const Plan& plan )
{
    return std::any_of( plan.tables.begin(), plan.tables.end(),
                        []( const TablePlan& tp ) { return inHostMemory( tp.kernel ); } );
}

//! The kernel's step of `plan` (the model the plan is judged by).
StepSummary kernelStep( const PlanInputs& in, const Plan& plan )
{
    return stepOnHost( { &in.workload, &in.platform, &plan, in.global_batch, in.options.model,
                         in.options.learned, in.options.learned_gemm } );
}

//! The searched plan if the kernel finds it fits, else the fastest seed that fits; a searched
//! plan that the kernel prices above the best seed gives way to the seed. `plan`: the searched
//! plan, replaced by the chosen one; returns the chosen plan's step, `searched` the searched's.
StepSummary kernelChoice( const PlanInputs& in, const std::vector<Seed>& fitting, Plan& plan,
                          StepSummary& searched )
{
    StepSummary summary = kernelStep( in, plan );
    searched = summary;
    for ( std::size_t k = 0; k < fitting.size(); ++k )
    {
        if ( summary.feasible && ( k > 0 || in.options.model == CostModel::torchrec ) )
            break;
        const StepSummary seed = kernelStep( in, fitting[k].plan );
        if ( seed.feasible && ( !summary.feasible || seed.iteration_ms < summary.iteration_ms ) )
        {
            plan = fitting[k].plan;
            summary = seed;
        }
    }
    return summary;
}

//! Share of the search budget the unconstrained seed's search may take.
constexpr double kUnconstrainedShare = 0.25;
//! Largest tables × GPUs for which the unconstrained seed is tried: on the 856 tables of the
//! large protocol over 128 GPUs its greedy placement alone took the rest of a 0.5 s budget.
constexpr long kUnconstrainedSeedLimit = 4096;

//! When memory binds, a search under the capacity walks among plans that fill it, where few moves
//! fit. The same search without a capacity finds balanced plans that often fit anyway, or fit
//! after the memory repair: such a plan joins the seeds (ordered by objective again).
//! `emptyState( capacity )`: an empty state of the task.
void addUnconstrainedSeed( const PlanInputs& in,
                           const std::function<PlanState( double )>& emptyState, Budget& budget,
                           std::vector<Seed>& fitting )
{
    PlanState capped = emptyState( gpuMemoryBytes( in.platform ) );
    PlanState free = emptyState( std::numeric_limits<double>::infinity() );
    if ( !greedyPlacement( free, in.workload, in.platform ).empty() )
        return;
    capped.load( free.toPlan() );
    if ( allFit( capped ) )
        return; // memory does not bind the greedy placement: the main search covers it
    const Budget granted{
        static_cast<int>( kUnconstrainedShare * budget.iterations_left ),
        ( *budget.elapsed )() + kUnconstrainedShare * ( budget.deadline_s - ( *budget.elapsed )() ),
        budget.elapsed,
        static_cast<std::int64_t>( kUnconstrainedShare * double( budget.evaluations_left ) ) };
    Budget share = granted;
    localSearch( free, in.workload, in.platform, share, true );
    capped.load( free.toPlan() );
    const bool fits = repairMemory( capped, share );
    budget.charge( granted, share );
    if ( !fits )
        return;
    capped.refresh();
    fitting.push_back( { capped.toPlan(), capped.objective() } );
    sortByObjective( fitting );
}
} // namespace

PlanResult planShardsweep( const Workload& workload, const Platform& platform,
                           std::int64_t global_batch, const PlannerOptions& options )
{
    const auto start = std::chrono::steady_clock::now();
    const std::function<double()> elapsed = [start]
    { return std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count(); };
    const PlanInputs in{ workload, platform, global_batch, options };
    PlanResult result;

    // Memory is priced with the model that decides feasibility (predictStep's memory(g):
    // tables, activations, buffers, dense replica, reserve) against the GPU's whole memory.
    // The search prices shards with the model the plan is judged by: native, or learned.
    const std::function<PlanState( double )> stateWith = [&]( double capacity )
    {
        return PlanState( workload, platform, global_batch, capacity,
                          options.model == CostModel::learned
                              ? hostLearnedShardCost( options.learned )
                              : LearnedShardCost{},
                          hostGemmPricer( options.learned_gemm ) );
    };
    auto emptyState = [&] { return stateWith( gpuMemoryBytes( platform ) ); };
    PlanState state = emptyState();
    const std::string greedy_reason = greedyPlacement( state, workload, platform );

    // 2. The search starts from the fastest plan that fits among the greedy placement, every
    //    baseline and TorchRec's plan, so it is never worse than any of them that fits. Seeds
    //    are priced by PlanState (predictStep's composition on the host, serial: no kernel
    //    launch per seed).
    std::vector<Seed> fitting;
    if ( greedy_reason.empty() && allFit( state ) )
        fitting.push_back( { state.toPlan(), state.objective() } );
    const Plan greedy_plan = greedy_reason.empty() ? state.toPlan() : Plan{};
    if ( !greedy_reason.empty() || !allFit( state ) || usesHostMemory( greedy_plan ) )
    {
        // Memory is tight: the cost-ordered greedy fragments it. Seed with a packing too.
        PlanState packed = emptyState();
        if ( packedPlacement( packed, workload, platform ).empty() && allFit( packed ) )
            fitting.push_back( { packed.toPlan(), packed.objective() } );
    }
    addFittingBaselineSeeds( state, in, fitting );

    Budget budget{ options.max_iterations, options.time_budget_s, &elapsed,
                   options.max_evaluations > 0 ? options.max_evaluations
                                               : std::numeric_limits<std::int64_t>::max() };
    if ( greedy_reason.empty() &&
         static_cast<long>( workload.tables.size() ) * platform.numGpus() <=
             kUnconstrainedSeedLimit )
        addUnconstrainedSeed( in, stateWith, budget, fitting );
    if ( !fitting.empty() )
        state.load( fitting.front().plan );
    else if ( greedy_reason.empty() )
    {
        // Nothing known fits: try to move the greedy placement's overflow away.
        state.load( greedy_plan );
        repairMemory( state, budget );
    }
    else
    {
        result.reason = greedy_reason;
        return result;
    }
    localSearch( state, workload, platform, budget, true );
    iteratedSearch( state, workload, platform, budget, options.seed );
    result.stopped_on_clock = budget.stopped_on_clock;

    // 3. The kernel's own step decides: the searched plan if it fits (the search's sums run in
    //    another order than the kernel's), else the fastest seed that fits.
    result.plan = state.toPlan();
    StepSummary searched;
    const StepSummary summary = kernelChoice( in, fitting, result.plan, searched );
    if ( !summary.feasible )
    {
        const double need = platform.gpu.memory_GiB + searched.overflow_GiB;
        result.reason = fmt::format(
            "no plan fits in memory: the best one found needs {:.3f} GiB on GPU {}, "
            "{:.3f} GiB more than its {:.3f} GiB (tables, activations, all-to-all buffers, dense "
            "replica and reserve)",
            need, searched.overflow_gpu, searched.overflow_GiB, platform.gpu.memory_GiB );
        return result;
    }
    result.feasible = true;
    result.predicted_ms = summary.iteration_ms;
    return result;
}

} // namespace shardsweep
