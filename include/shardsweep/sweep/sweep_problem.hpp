#pragma once
//! \file sweep_problem.hpp
//! \brief What `shardsweep run` (and `bench sweep`) hand the sweep engine: a ScenarioSpace as a
//! SweepProblem, and the planner call every scenario goes through.

#include <shardsweep/plan/planner.hpp>
#include <shardsweep/scenario/scenario_space.hpp>
#include <shardsweep/sweep/sweep_engine.hpp>

namespace shardsweep
{

//! The engine's view of a scenario space (names, config text and hash); `space` must outlive it.
SweepProblem sweepProblemFromSpace( const ScenarioSpace& space );

//! Plans one scenario with its planner, seeded by the scenario, iteration-bounded (never
//! time-bounded: a plan must not depend on the load of the rank that computes it).
PlanResult planSweepScenario( const ScenarioSpec& scenario );

} // namespace shardsweep
