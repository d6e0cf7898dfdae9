// A ScenarioSpace as the engine's SweepProblem, and the per-scenario planner call.
#include <limits>
#include <memory>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/plan/planner.hpp>
#include <shardsweep/scenario/sweep_config.hpp>
#include <shardsweep/sweep/sweep_problem.hpp>

namespace shardsweep
{

SweepProblem sweepProblemFromSpace( const ScenarioSpace& space )
{
    SweepProblem p;
    p.num_scenarios = space.size();
    p.materialize = [&space]( std::uint64_t id ) { return space.materialize( id ); };
    p.lower_bound = []( const ScenarioSpec& s )
    {
        // One cache of per-table bound terms per thread: the engine bounds a tile's scenarios
        // on the host threads, and a cache is not thread-safe. Its terms are pure functions of
        // their key (every input they read), so a thread's cache may serve any problem, and
        // which thread saw a table first changes no bit of any bound.
        thread_local LowerBoundCache bound_terms;
        // iterationLowerBoundMs bounds the native model only.
        // (a DLRM bound: NaN for transformer workloads).
        return s.cost_model == CostModel::native && !s.workloadRef().isTransformer()
                   ? iterationLowerBoundMs( s.workloadRef(), s.platform, s.global_batch,
                                            bound_terms )
                   : std::numeric_limits<double>::quiet_NaN();
    };
    p.workload_names = space.workloadNames();
    p.platform_names = space.platformNames();
    for ( const auto& g : space.config().generators )
        p.generator_names.push_back( g.name );
    p.planner_names = enumNameList<PlannerKind>();
    p.cost_model_names = enumNameList<CostModel>();
    p.protocol_names = enumNameList<TaskProtocol>();
    for ( const CatalogTable& t : space.tableCatalog() )
    {
        p.tables.push_back( tableRow( t ) );
        p.table_names.push_back( t.name );
    }
    p.config_text = space.config().text;
    p.config_file = space.config().file;
    p.config_hash = sweepConfigHash( space.config(), space.inputs().files_fingerprint );
    return p;
}

namespace
{
//! An explicit configuration (planner none), checked by the kernel's one check of a scenario.
PlanResult explicitPlan( const ScenarioSpec& s )
{
    PlanResult r;
    r.plan.parallel = s.parallel;
    if ( !s.workloadRef().isTransformer() )
        r.reason = "a parallel configuration applies to transformer workloads only";
    else if ( s.parallel.tp == 0 )
        r.reason = "no such (tp, pp) layout for this GPU count";
    else
    {
        ScenarioInput input;
        input.workload = s.workload.get();
        input.platform = &s.platform;
        input.plan = &r.plan;
        input.global_batch = s.global_batch;
        input.model = s.cost_model;
        r.reason = scenarioInputError( input );
    }
    r.feasible = r.reason.empty();
    return r;
}
} // namespace

PlanResult planSweepScenario( const ScenarioSpec& s )
{
    // Transformer workloads take their configuration from the sweep's parallel: grid (planner
    // none) or from a transformer planner (megatron, exhaustive, shardsweep: makePlan); DLRM
    // planners do not apply to them and vice versa. A scenario that cannot run becomes status
    // no_plan, never an exception inside the batched kernel call.
    if ( s.planner == PlannerKind::none )
        return explicitPlan( s );
    if ( s.workloadRef().isTransformer() )
    {
        if ( plannerPlans( s.planner, WorkloadKind::transformer ) &&
             s.cost_model == CostModel::native )
        {
            PlannerOptions options;
            options.price_plan = false; // the engine evaluates the configuration in its kernel call
            return makePlan( s.planner, s.workloadRef(), s.platform, s.global_batch, options );
        }
        PlanResult r;
        r.reason = s.cost_model != CostModel::native
                       ? "transformer workloads have only the native cost model"
                       : std::string( "planner " ) + plannerName( s.planner ) +
                             " does not plan transformer workloads";
        return r;
    }
    PlannerOptions options;
    options.seed = s.planner_seed;
    options.model = s.cost_model;
    options.learned = s.learned;
    options.learned_gemm = s.learned_gemm;
    // Iteration-bounded, never time-bounded: a scenario's plan must not depend on the rank's
    // load (results are bit-identical whatever the rank count).
    options.time_budget_s = 1e30;
    options.max_iterations = 2000;
    options.price_plan = false; // the engine evaluates every plan in its batched kernel call
    return makePlan( s.planner, s.workloadRef(), s.platform, s.global_batch, options );
}

} // namespace shardsweep
