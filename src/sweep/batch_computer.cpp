// The sweep engine's per-batch work: materialise, bound and plan a tile of scenarios on the host
// threads, evaluate it in one kernel call, fill its journal rows.
#include "batch_computer.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <iostream>
#include <limits>
#include <shardsweep/parallel/mpi_comm.hpp>

namespace shardsweep
{
namespace detail
{

namespace
{

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

//! The row fields that say what the scenario is (its inputs), before any result.
void fillInputs( ScenarioRow& row, const ScenarioSpec& spec )
{
    row.workload = spec.workload_index;
    row.platform = spec.platform_index;
    row.planner = static_cast<std::int32_t>( spec.planner );
    row.cost_model = static_cast<std::int32_t>( spec.cost_model );
    row.task_protocol = static_cast<std::int32_t>( spec.protocol );
    row.generator = spec.generator_index;
    row.task_index = spec.task_index;
    row.task_seed = spec.task_seed;
    row.planner_seed = spec.planner_seed;
    row.global_batch = spec.global_batch;
    row.gpu_count = spec.gpu_count;
    row.memory_cap_GiB = spec.memory_cap_GiB;
    row.num_tables = spec.workload ? static_cast<std::int32_t>( spec.workload->tables.size() ) : 0;
}

} // namespace

BatchComputer::BatchComputer( const SweepProblem& problem, const SweepPlanFunction& plan_fn,
                              const SweepEvaluateFunction& evaluate_fn, SweepDetail detail,
                              std::uint64_t tile, int rank )
    : _problem( problem ), _plan_fn( plan_fn ), _evaluate_fn( evaluate_fn ), _detail( detail ),
      _tile( tile > 0 ? tile : preferredScenariosPerCall() ), _rank( rank )
{
}

void BatchComputer::compute( const std::vector<std::uint64_t>& ids, JournalBatch& batch,
                             SweepTimes& times )
{
    batch.clear();
    batch.scenarios.resize( ids.size() );
    _failed = _no_plan = 0;
    const std::size_t tile = _tile > 0 ? std::size_t( _tile ) : ids.size();
    for ( std::size_t first = 0; first < ids.size(); first += tile )
    {
        const std::size_t end = std::min( ids.size(), first + tile );
        materialiseAndPlan( ids, first, end, batch, times );
        const double t = mpi::wtime();
        evaluateAndFill( first, batch );
        times.evaluate += mpi::wtime() - t;
    }
}

void BatchComputer::materialiseAndPlan( const std::vector<std::uint64_t>& ids, std::size_t first,
                                        std::size_t end, JournalBatch& batch, SweepTimes& times )
{
    const std::size_t n = end - first;
    _status.assign( n, ScenarioStatus::evaluated );
    _specs.assign( n, ScenarioSpec{} );
    _plans.assign( n, PlanResult{} );
    _errors.assign( n, std::string() );
    _seconds.assign( 2 * n, 0.0 );
    const double t = mpi::wtime();
    // Scenarios are independent and planners are pure functions of them (the bound keeps a
    // cache per thread), so the tile is spread over the host threads; dynamically, one
    // scenario at a time, as planning times differ by orders of magnitude between planners.
    // Each scenario writes only its own slots: the rows do not depend on the thread count.
    using Host = Kokkos::DefaultHostExecutionSpace;
    Kokkos::parallel_for( "shardsweep::materialiseAndPlan",
                          Kokkos::RangePolicy<Host, Kokkos::Schedule<Kokkos::Dynamic>>(
                              Host(), 0, static_cast<int>( n ) )
                              .set_chunk_size( 1 ),
                          [&]( const int i ) {
                              materialiseAndPlanOne( ids[first + i], std::size_t( i ),
                                                     batch.scenarios[first + i] );
                          } );
    // The phases' share of the region's wall time: in proportion to their thread-seconds.
    const double wall = mpi::wtime() - t;
    double materialise_s = 0.0, plan_s = 0.0;
    for ( std::size_t i = 0; i < n; ++i )
    {
        materialise_s += _seconds[2 * i];
        plan_s += _seconds[2 * i + 1];
    }
    const double share =
        materialise_s + plan_s > 0.0 ? materialise_s / ( materialise_s + plan_s ) : 0.5;
    times.materialize += wall * share;
    times.plan += wall * ( 1.0 - share );
    // Messages after the region, in id order (the first three of the run).
    for ( std::size_t i = 0; i < n; ++i )
        if ( !_errors[i].empty() && _errors_logged++ < 3 )
            std::cerr << fmt::format( "rank {}: scenario {}: {}\n", _rank, ids[first + i],
                                      _errors[i] );
}

void BatchComputer::materialiseAndPlanOne( std::uint64_t id, std::size_t i, ScenarioRow& row )
{
    using Clock = std::chrono::steady_clock;
    row.id = id;
    row.lower_bound_ms = kNaN; // kept when materialising fails
    try
    {
        const auto t0 = Clock::now();
        _specs[i] = _problem.materialize( id );
        fillInputs( row, _specs[i] );
        const auto t1 = Clock::now();
        row.lower_bound_ms = _problem.lower_bound ? _problem.lower_bound( _specs[i] ) : kNaN;
        _plans[i] = _plan_fn( _specs[i] );
        _seconds[2 * i] = std::chrono::duration<double>( t1 - t0 ).count();
        _seconds[2 * i + 1] = std::chrono::duration<double>( Clock::now() - t1 ).count();
        if ( !_plans[i].feasible )
            _status[i] = ScenarioStatus::no_plan;
    }
    catch ( const std::exception& e )
    {
        _status[i] = ScenarioStatus::error;
        _errors[i] = e.what();
    }
    catch ( ... ) // nothing may leave a parallel region
    {
        _status[i] = ScenarioStatus::error;
        _errors[i] = "unknown exception";
    }
}

void BatchComputer::evaluateAndFill( std::size_t first, JournalBatch& batch )
{
    _inputs.clear();
    _input_row.clear();
    for ( std::size_t i = 0; i < _specs.size(); ++i )
    {
        if ( _status[i] != ScenarioStatus::evaluated )
            continue;
        _inputs.push_back( { _specs[i].workload.get(), &_specs[i].platform, &_plans[i].plan,
                             _specs[i].global_batch, _specs[i].cost_model, _specs[i].learned,
                             _specs[i].learned_gemm } );
        _input_row.push_back( i );
    }
    std::vector<ScenarioResult> results;
    if ( !_inputs.empty() )
        results = _evaluate_fn( _inputs );
    static const Workload empty;
    for ( std::size_t i = 0, r = 0; i < _specs.size(); ++i )
    {
        ScenarioRow& row = batch.scenarios[first + i];
        if ( r < _input_row.size() && _input_row[r] == i )
        {
            fillResultRows( row, *_specs[i].workload, &_plans[i].plan, &results[r], _detail,
                            batch.gpus, batch.shards );
            ++r;
            continue;
        }
        fillResultRows( row, _specs[i].workload ? *_specs[i].workload : empty, nullptr, nullptr,
                        _detail, batch.gpus, batch.shards );
        row.status = static_cast<std::int8_t>( _status[i] );
        ++( _status[i] == ScenarioStatus::no_plan ? _no_plan : _failed );
    }
}

} // namespace detail
} // namespace shardsweep
