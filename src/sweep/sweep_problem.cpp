// A ScenarioSpace as the engine's SweepProblem, and the per-scenario planner call.
#include <limits>
#include <memory>
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
    // One cache of per-table bound terms per problem, i.e. per rank (the engine calls this from
    // one thread).
    auto bound_terms = std::make_shared<LowerBoundCache>();
    p.lower_bound = [bound_terms]( const ScenarioSpec& s )
    {
        // iterationLowerBoundMs bounds the native model only.
        return s.cost_model == CostModel::native
                   ? iterationLowerBoundMs( s.workloadRef(), s.platform, s.global_batch,
                                            *bound_terms )
                   : std::numeric_limits<double>::quiet_NaN();
    };
    p.workload_names = space.workloadNames();
    p.platform_names = space.platformNames();
    for ( const auto& g : space.config().generators )
        p.generator_names.push_back( g.name );
    p.planner_names = ScenarioSpace::plannerNames();
    p.cost_model_names = ScenarioSpace::costModelNames();
    p.protocol_names = ScenarioSpace::protocolNames();
    p.config_text = space.config().text;
    p.config_file = space.config().file;
    p.config_hash = sweepConfigHash( space.config() );
    return p;
}

PlanResult planSweepScenario( const ScenarioSpec& s )
{
    PlannerOptions options;
    options.seed = s.planner_seed;
    options.model = s.cost_model;
    // Iteration-bounded, never time-bounded: a scenario's plan must not depend on the rank's
    // load (results are bit-identical whatever the rank count).
    options.time_budget_s = 1e30;
    options.max_iterations = 2000;
    options.price_plan = false; // the engine evaluates every plan in its batched kernel call
    return makePlan( s.planner, s.workloadRef(), s.platform, s.global_batch, options );
}

} // namespace shardsweep
