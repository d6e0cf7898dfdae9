// The sweep engine's per-batch work: materialise, bound and plan tiles of scenarios, evaluate
// each tile in one kernel call, fill its journal rows; tiles run on the host threads.
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

using Clock = std::chrono::steady_clock;
using HostSpace = Kokkos::DefaultHostExecutionSpace;
//! One work item at a time: planning times differ by orders of magnitude between planners.
using DynamicHostPolicy = Kokkos::RangePolicy<HostSpace, Kokkos::Schedule<Kokkos::Dynamic>>;

double seconds( Clock::time_point from, Clock::time_point to )
{
    return std::chrono::duration<double>( to - from ).count();
}

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
    // An explicit configuration is an input: stored whether or not it could be evaluated (a
    // layout slot past the GPU count's layouts keeps tp = pp = 0).
    if ( spec.planner == PlannerKind::none )
        setParallelColumns( row, spec.parallel );
}

} // namespace

BatchComputer::BatchComputer( const SweepProblem& problem, const SweepPlanFunction& plan_fn,
                              const SweepEvaluateFunction& evaluate_fn, SweepDetail detail,
                              std::uint64_t tile, Backend backend, int rank )
    : _problem( problem ), _plan_fn( plan_fn ), _evaluate_fn( evaluate_fn ), _detail( detail ),
      _tile( tile > 0 ? tile : preferredScenariosPerCall( backend ) ), _rank( rank )
{
}

void BatchComputer::compute( const std::vector<std::uint64_t>& ids, JournalBatch& batch,
                             SweepTimes& times )
{
    batch.clear();
    batch.scenarios.resize( ids.size() );
    const std::size_t size =
        _tile > 0 ? std::size_t( _tile ) : std::max<std::size_t>( ids.size(), 1 );
    const std::size_t num_tiles = ( ids.size() + size - 1 ) / size;
    if ( _tiles.size() < num_tiles )
        _tiles.resize( num_tiles );
    for ( std::size_t k = 0; k < num_tiles; ++k )
    {
        _tiles[k].first = k * size;
        _tiles[k].end = std::min( ids.size(), ( k + 1 ) * size );
    }
    // Tiles run concurrently on the host threads, whatever the backend: on a device, the
    // threads pack and unpack their tiles at the same time and take turns on the device.
    const bool concurrent = num_tiles > 1 && HostSpace().concurrency() > 1;
    const double t = mpi::wtime();
    if ( concurrent )
    {
        const Kokkos::Experimental::UniqueToken<HostSpace> token;
        if ( _workspaces.size() < std::size_t( token.size() ) )
            _workspaces.resize( std::size_t( token.size() ) );
        Kokkos::parallel_for(
            "shardsweep::computeTiles",
            DynamicHostPolicy( HostSpace(), 0, static_cast<int>( num_tiles ) ).set_chunk_size( 1 ),
            [&]( const int k )
            {
                const int slot = token.acquire();
                TileOutput& out = _tiles[k];
                out.gpus.clear();
                out.shards.clear();
                computeTile( _workspaces[slot], out, ids, batch, out.gpus, out.shards );
                token.release( slot );
            } );
        for ( std::size_t k = 0; k < num_tiles; ++k ) // rows in id order: tile after tile
        {
            batch.gpus.insert( batch.gpus.end(), _tiles[k].gpus.begin(), _tiles[k].gpus.end() );
            batch.shards.insert( batch.shards.end(), _tiles[k].shards.begin(),
                                 _tiles[k].shards.end() );
        }
    }
    else
    {
        if ( _workspaces.empty() )
            _workspaces.resize( 1 );
        for ( std::size_t k = 0; k < num_tiles; ++k )
            computeTile( _workspaces[0], _tiles[k], ids, batch, batch.gpus, batch.shards );
    }

    // Phase times: the batch's wall time split in proportion to the tiles' phase seconds
    // (thread-seconds where tiles ran concurrently).
    const double wall = mpi::wtime() - t;
    double materialize = 0, plan = 0, evaluate = 0;
    _no_plan = _failed = 0;
    _work = ClassWork{};
    for ( std::size_t k = 0; k < num_tiles; ++k )
    {
        const TileOutput& out = _tiles[k];
        _work += out.work;
        materialize += out.materialize_s;
        plan += out.plan_s;
        evaluate += out.evaluate_s;
        _no_plan += out.no_plan;
        _failed += out.failed;
        // Messages after the work, in id order (the first three of the run).
        for ( const auto& [id, message] : out.errors )
            if ( _errors_logged++ < 3 )
                std::cerr << fmt::format( "rank {}: scenario {}: {}\n", _rank, id, message );
    }
    const double total = materialize + plan + evaluate;
    if ( total > 0.0 )
    {
        times.materialize += wall * materialize / total;
        times.plan += wall * plan / total;
        times.evaluate += wall * evaluate / total;
    }
}

void BatchComputer::computeTile( Workspace& work, TileOutput& out,
                                 const std::vector<std::uint64_t>& ids, JournalBatch& batch,
                                 std::vector<GpuRow>& gpus, std::vector<ShardRow>& shards )
{
    const auto t0 = Clock::now();
    materialiseAndPlan( work, out, ids, batch );
    const auto t1 = Clock::now();
    evaluateAndFill( work, out, batch, gpus, shards );
    out.evaluate_s = seconds( t1, Clock::now() );
    // The materialise/plan region's time, split by its scenarios' thread-seconds.
    double materialize = 0.0, plan = 0.0;
    out.errors.clear();
    out.work = ClassWork{};
    out.work.evaluate_seconds = out.evaluate_s;
    for ( std::size_t i = 0; i < work.specs.size(); ++i )
    {
        materialize += work.seconds[2 * i];
        plan += work.seconds[2 * i + 1];
        // A scenario that failed to materialise counts as the default spec's class, as in the
        // ETA's sample.
        const int c = costClass( work.specs[i].planner );
        ++out.work.count[c];
        out.work.seconds[c] += work.seconds[2 * i] + work.seconds[2 * i + 1];
        if ( !work.errors[i].empty() )
            out.errors.emplace_back( ids[out.first + i], work.errors[i] );
    }
    const double share = materialize + plan > 0.0 ? materialize / ( materialize + plan ) : 0.5;
    out.materialize_s = seconds( t0, t1 ) * share;
    out.plan_s = seconds( t0, t1 ) * ( 1.0 - share );
}

void BatchComputer::materialiseAndPlan( Workspace& work, const TileOutput& out,
                                        const std::vector<std::uint64_t>& ids, JournalBatch& batch )
{
    const std::size_t n = out.end - out.first;
    work.status.assign( n, ScenarioStatus::evaluated );
    work.specs.assign( n, ScenarioSpec{} );
    work.plans.assign( n, PlanResult{} );
    work.errors.assign( n, std::string() );
    work.seconds.assign( 2 * n, 0.0 );
    // Scenarios are independent and planners are pure functions of them (the bound keeps a
    // cache per thread); each scenario writes only its own slots, so the rows do not depend on
    // the thread count. Inside a tile that already runs on a host thread this loop runs in
    // that thread (Kokkos runs a nested host parallel_for serially).
    Kokkos::parallel_for(
        "shardsweep::materialiseAndPlan",
        DynamicHostPolicy( HostSpace(), 0, static_cast<int>( n ) ).set_chunk_size( 1 ),
        [&]( const int i )
        {
            const std::size_t row = out.first + std::size_t( i );
            materialiseAndPlanOne( work, ids[row], std::size_t( i ), batch.scenarios[row] );
        } );
}

void BatchComputer::materialiseAndPlanOne( Workspace& work, std::uint64_t id, std::size_t i,
                                           ScenarioRow& row )
{
    row.id = id;
    row.lower_bound_ms = kNaN; // kept when materialising fails
    try
    {
        const auto t0 = Clock::now();
        work.specs[i] = _problem.materialize( id );
        fillInputs( row, work.specs[i] );
        const auto t1 = Clock::now();
        row.lower_bound_ms = _problem.lower_bound ? _problem.lower_bound( work.specs[i] ) : kNaN;
        work.plans[i] = _plan_fn( work.specs[i] );
        work.seconds[2 * i] = seconds( t0, t1 );
        work.seconds[2 * i + 1] = seconds( t1, Clock::now() );
        if ( !work.plans[i].feasible )
            work.status[i] = ScenarioStatus::no_plan;
    }
    catch ( const std::exception& e )
    {
        work.status[i] = ScenarioStatus::error;
        work.errors[i] = e.what();
    }
    catch ( ... ) // nothing may leave a parallel region
    {
        work.status[i] = ScenarioStatus::error;
        work.errors[i] = "unknown exception";
    }
}

void BatchComputer::evaluateAndFill( Workspace& work, TileOutput& out, JournalBatch& batch,
                                     std::vector<GpuRow>& gpus, std::vector<ShardRow>& shards )
{
    work.inputs.clear();
    work.input_row.clear();
    for ( std::size_t i = 0; i < work.specs.size(); ++i )
    {
        if ( work.status[i] != ScenarioStatus::evaluated )
            continue;
        const ScenarioSpec& s = work.specs[i];
        work.inputs.push_back( { s.workload.get(), &s.platform, &work.plans[i].plan, s.global_batch,
                                 s.cost_model, s.learned, s.learned_gemm } );
        work.input_row.push_back( i );
    }
    std::vector<ScenarioResult> results;
    if ( !work.inputs.empty() )
        results = _evaluate_fn( work.inputs );
    out.no_plan = out.failed = 0;
    for ( std::size_t i = 0, r = 0; i < work.specs.size(); ++i )
    {
        ScenarioRow& row = batch.scenarios[out.first + i];
        if ( r < work.input_row.size() && work.input_row[r] == i )
        {
            fillResultRows( row, work.specs[i], &work.plans[i].plan, &results[r], _detail, gpus,
                            shards );
            ++r;
            continue;
        }
        fillResultRows( row, work.specs[i], nullptr, nullptr, _detail, gpus, shards );
        row.status = static_cast<std::int8_t>( work.status[i] );
        ++( work.status[i] == ScenarioStatus::no_plan ? out.no_plan : out.failed );
    }
}

} // namespace detail
} // namespace shardsweep
