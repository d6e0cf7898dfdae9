// shardsweep's planner: cost-guided greedy placement, then a local search (moves, swaps,
// column/row/table-row re-sharding) priced incrementally on the native model (docs/PLANNERS.md).
// This file seeds the search with every baseline's plan and lets the kernel's own step decide;
// the steps are in shardsweep_greedy.cpp and shardsweep_search.cpp.
#include "plan_state.hpp"
#include "planner_detail.hpp"
#include "shardsweep_search.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <functional>
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
} // namespace

PlanResult planShardsweep( const Workload& workload, const Platform& platform,
                           std::int64_t global_batch, const PlannerOptions& options )
{
    const auto start = std::chrono::steady_clock::now();
    const std::function<double()> elapsed = [start]
    { return std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count(); };
    const int gpus = platform.numGpus();
    const int num_tables = static_cast<int>( workload.tables.size() );
    PlanResult result;

    // Memory is priced with the model that decides feasibility (predictStep's memory(g):
    // tables, activations, buffers, dense replica, reserve) against the GPU's whole memory.
    // The search prices shards with the model the plan is judged by: native, or learned.
    PlanState state( workload, platform, global_batch, gpuMemoryBytes( platform ),
                     options.model == CostModel::learned ? hostLearnedShardCost( options.learned )
                                                         : LearnedShardCost{},
                     hostGemmPricer( options.learned_gemm ) );
    const std::string greedy_reason = greedyPlacement( state, workload, platform );

    // 2. The search starts from the fastest plan that fits among the greedy placement, every
    //    baseline and TorchRec's plan, so it is never worse than any of them that fits. Seeds
    //    are priced by PlanState (predictStep's composition on the host, serial: no kernel
    //    launch per seed).
    struct Seed
    {
        Plan plan;
        double objective;
    };
    std::vector<Seed> fitting;
    if ( greedy_reason.empty() && allFit( state ) )
        fitting.push_back( { state.toPlan(), state.objective() } );
    const Plan greedy_plan = greedy_reason.empty() ? state.toPlan() : Plan{};
    std::vector<PlanResult> seeds;
    for ( PlannerKind kind : { PlannerKind::round_robin, PlannerKind::random } )
        seeds.push_back( planUnchecked( kind, workload, platform, options.seed ) );
    for ( PlannerKind kind : { PlannerKind::dim_greedy, PlannerKind::size_greedy,
                               PlannerKind::lookup_greedy, PlannerKind::size_lookup_greedy } )
        seeds.push_back( planGreedyBaseline( kind, workload, platform ) );
    if ( static_cast<long>( num_tables ) * gpus <= kTorchrecSeedLimit )
    {
        PlannerOptions torchrec_options = options;
        torchrec_options.model = CostModel::torchrec;
        seeds.push_back( planTorchrec( workload, platform, global_batch, torchrec_options ) );
    }
    for ( PlanResult& seed : seeds )
    {
        // An infeasible baseline plan over-commits tables already (or is incomplete).
        if ( !seed.feasible )
            continue;
        state.load( seed.plan );
        if ( allFit( state ) )
            fitting.push_back( { std::move( seed.plan ), state.objective() } );
    }
    std::stable_sort( fitting.begin(), fitting.end(),
                      []( const Seed& a, const Seed& b ) { return a.objective < b.objective; } );

    Budget budget{ options.max_iterations, options.time_budget_s, &elapsed };
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
    localSearch( state, workload, platform, budget );
    iteratedSearch( state, workload, platform, budget, options.seed );

    // 3. The kernel's own step decides: the searched plan if it fits (the search's sums run in
    //    another order than the kernel's), else the fastest seed that fits. A searched plan
    //    that the kernel prices above the best seed gives way to the seed.
    auto check = [&]( const Plan& plan )
    {
        return stepOnHost( { &workload, &platform, &plan, global_batch, options.model,
                             options.learned, options.learned_gemm } );
    };
    result.plan = state.toPlan();
    StepSummary summary = check( result.plan );
    const StepSummary searched = summary;
    for ( std::size_t k = 0; k < fitting.size(); ++k )
    {
        if ( summary.feasible && ( k > 0 || options.model == CostModel::torchrec ) )
            break;
        const StepSummary seed = check( fitting[k].plan );
        if ( seed.feasible && ( !summary.feasible || seed.iteration_ms < summary.iteration_ms ) )
        {
            result.plan = fitting[k].plan;
            summary = seed;
        }
    }
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
