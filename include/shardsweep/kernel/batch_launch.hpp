#pragma once
//! \file batch_launch.hpp
//! \brief The launches of the batched cost kernel on a packed batch (scenario_batch.hpp), in the
//! execution space the caller passes.
//!
//! One launch per distinct-case kind (dense parts, table statistics, transformer operator cases,
//! learned shard cases: the expensive, plan-independent terms), then the scenarios in two
//! launches: the DLRM ones predictStep prices, and the others (transformer, TorchRec model), each
//! kernel with only its own model inlined, the transformers ordered by their stage count so that
//! a GPU warp's threads do alike work. How the DLRM scenarios map to threads is the KernelShape:
//! one thread walking each scenario's shards, or teams of threads pricing the shards of several
//! scenarios side by side (consecutive shards on consecutive threads: coalesced loads on a GPU)
//! and then adding up one scenario each. Either way every sum runs in shard order, so the
//! results do not depend on the shape (bit for bit on the host; tests/unit/tstCostKernel.hpp).
#include <Kokkos_Core.hpp>
#include <chrono>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/kernel/scenario_batch.hpp>
#include <stdexcept>

namespace shardsweep
{

//! How the launch of the DLRM scenarios maps them to threads (transformer and TorchRec-model
//! scenarios always get one thread each, in a launch of their own).
struct KernelShape
{
    //! Threads per team that prices DLRM scenarios (the ones predictStep prices): 0 = one thread
    //! walks each scenario; > 0 = teams of that many threads.
    int step_team_size = 0;
    //! DLRM scenarios per team (team shapes): its threads price their shards together, then
    //! each thread adds up and composes one of them.
    int step_scenarios_per_team = 1;
};
// The default shape, one thread per scenario, serves the host (a scenario's tables stay in its
// core's cache; a team would only add barriers) and, for now, a GPU too. Teams of 32 threads
// pricing 32 scenarios (`bench kernel --team-size 32x32`) were 1.33 times faster on the 50-table
// bench case on an H100, but 0.80 times as fast on the 500-table case with its launches of 4096
// scenarios, and their test did not finish on the GPU in that session (docs/PERFORMANCE.md).

//! The launches of evaluateBatch, in order (bench kernel times each one).
enum class KernelStage : int
{
    dense_cases,
    table_cases,
    transformer_cases,
    learned_shard_cases,
    step_scenarios,  //!< DLRM scenarios priced by predictStep
    other_scenarios, //!< transformer and TorchRec-model scenarios
    count
};

// The stages' names in bench kernel's breakdown, in the vocabulary layer's table (nameOf).
SHARDSWEEP_ENUM_NAMES(
    KernelStage, "kernel stage",
    { KernelStage::dense_cases, "dense_cases", "the distinct dense (MLP) cases" },
    { KernelStage::table_cases, "table_cases", "the distinct embedding-table cases" },
    { KernelStage::transformer_cases, "transformer_cases", "the distinct transformer cases" },
    { KernelStage::learned_shard_cases, "learned_shard_cases", "the learned model's shard cases" },
    { KernelStage::step_scenarios, "step_scenarios", "DLRM scenarios priced by predictStep" },
    { KernelStage::other_scenarios, "other_scenarios",
      "transformer and TorchRec-model scenarios" } );
static_assert( enumCount<KernelStage>() == std::size_t( KernelStage::count ),
               "every kernel stage has a name" );

//! Wall seconds of each launch of one evaluateBatch call.
struct KernelStageSeconds
{
    double seconds[int( KernelStage::count )] = {};
};

//! The team `team` prices DLRM scenarios step_scenario( j ), j in [league·per_team,
//! (league + 1)·per_team): first all its threads price their shards side by side, consecutive
//! shards on consecutive threads (coalesced loads), into `contribution`; then each thread adds up
//! one scenario's shards in shard order (stepAddShards, as the one-thread walk does) and
//! composes its step.
template <class MemorySpace, class Member, class Contributions>
KOKKOS_INLINE_FUNCTION void evaluateStepScenarioGroup( const ScenarioBatch<MemorySpace>& b,
                                                       const Member& team, int per_team,
                                                       const Contributions& contribution )
{
    const int count = static_cast<int>( b.step_scenario.extent( 0 ) );
    const int j0 = team.league_rank() * per_team;
    const int j1 = math::min( j0 + per_team, count );
    for ( int j = j0; j < j1; ++j )
    {
        const int i = b.step_scenario( j );
        const int s0 = b.shard_offset( i );
        const StepTables tables = stepTablesOf( b, i );
        const StepShards shards = stepShardsOf( b, i );
        const LearnedShardCost learned = learnedShardCostOf( b, i );
        const StepSamples samples = stepSamples( b.platform( i ), b.global_batch( i ) );
        Kokkos::parallel_for( Kokkos::TeamThreadRange( team, shards.count ),
                              [&]( const int s )
                              {
                                  const ShardContribution c = stepShardContribution(
                                      b.platform( i ), samples, tables, shards, s, learned );
                                  b.shard_fwd_ms( s0 + s ) = c.fwd_ms;
                                  b.shard_bwd_ms( s0 + s ) = c.bwd_ms;
                                  contribution( s0 + s ) = c;
                              } );
    }
    team.team_barrier(); // every contribution of the group is written
    Kokkos::parallel_for( Kokkos::TeamThreadRange( team, j0, j1 ),
                          [&]( const int j )
                          {
                              const int i = b.step_scenario( j );
                              const int s0 = b.shard_offset( i );
                              const Platform& platform = b.platform( i );
                              const StepGpuArrays gpus = stepGpusOf( b, i );
                              const double dp_gradient_bytes = stepAddShards(
                                  platform.numGpus(), b.shard_offset( i + 1 ) - s0, gpus,
                                  [&]( int s ) { return contribution( s0 + s ); } );
                              b.summary( i ) = predictStepFromShards(
                                  platform, b.dense( i ), b.dense_cost( b.dense_index( i ) ), gpus,
                                  dp_gradient_bytes );
                          } );
}

//! Gives `b` the scratch that `shape` needs (team shapes: one ShardContribution per shard), once
//! for every launch on it.
template <class MemorySpace>
void prepareForShape( ScenarioBatch<MemorySpace>& b, KernelShape shape )
{
    if ( shape.step_team_size > 0 && b.shard_contribution.extent( 0 ) < b.shard_fwd_ms.extent( 0 ) )
        b.shard_contribution = Kokkos::View<ShardContribution*, MemorySpace>(
            Kokkos::view_alloc( Kokkos::WithoutInitializing, "shard_contribution" ),
            b.shard_fwd_ms.extent( 0 ) );
}

//! The DLRM scenarios priced by predictStep, in teams as `shape` says. `b.shard_contribution`
//! (prepareForShape) holds the shards' contributions between the two halves of a team's work.
template <class ExecutionSpace, class MemorySpace>
void evaluateStepScenariosByTeam( const ExecutionSpace& exec, const ScenarioBatch<MemorySpace>& b,
                                  KernelShape shape )
{
    using Policy = Kokkos::TeamPolicy<ExecutionSpace>;
    const int count = static_cast<int>( b.step_scenario.extent( 0 ) );
    if ( count == 0 )
        return;
    if ( b.shard_contribution.extent( 0 ) < b.shard_fwd_ms.extent( 0 ) )
        throw std::logic_error( "evaluateBatch: a team shape on a batch without prepareForShape" );
    const auto contribution = b.shard_contribution;
    const int per_team = math::max( 1, shape.step_scenarios_per_team );
    Kokkos::parallel_for(
        "shardsweep::evaluateStepScenarios",
        Policy( exec, ( count + per_team - 1 ) / per_team, shape.step_team_size ),
        KOKKOS_LAMBDA( const typename Policy::member_type& team ) {
            evaluateStepScenarioGroup( b, team, per_team, contribution );
        } );
}

//! Times the launches of one evaluateBatch call where asked to (each lap fences).
template <class ExecutionSpace>
class StageClock
{
  public:
    StageClock( const ExecutionSpace& exec, KernelStageSeconds* seconds )
        : _exec( exec ), _seconds( seconds ), _start( std::chrono::steady_clock::now() )
    {
    }

    //! Charges the time since the last lap to `stage`.
    void lap( KernelStage stage )
    {
        if ( !_seconds )
            return;
        _exec.fence();
        const auto now = std::chrono::steady_clock::now();
        _seconds->seconds[int( stage )] += std::chrono::duration<double>( now - _start ).count();
        _start = now;
    }

  private:
    ExecutionSpace _exec;
    KernelStageSeconds* _seconds;
    std::chrono::steady_clock::time_point _start;
};

//! The batched cost kernel in `exec`: the distinct cases, then the scenarios as `shape` says.
//! With `stage_seconds`, each launch is fenced and timed (bench kernel's breakdown).
template <class ExecutionSpace, class MemorySpace>
void evaluateBatch( const ExecutionSpace& exec, const ScenarioBatch<MemorySpace>& batch,
                    KernelShape shape = {}, KernelStageSeconds* stage_seconds = nullptr )
{
    using Range = Kokkos::RangePolicy<ExecutionSpace>;
    auto size = []( const auto& view ) { return static_cast<int>( view.extent( 0 ) ); };
    StageClock<ExecutionSpace> clock( exec, stage_seconds );
    Kokkos::parallel_for(
        "shardsweep::evaluateDenseCases", Range( exec, 0, size( batch.dense_case_to_compute ) ),
        KOKKOS_LAMBDA( const int j ) {
            evaluateDenseCase( batch, batch.dense_case_to_compute( j ) );
        } );
    clock.lap( KernelStage::dense_cases );
    Kokkos::parallel_for(
        "shardsweep::evaluateTableCases", Range( exec, 0, size( batch.table_case_to_compute ) ),
        KOKKOS_LAMBDA( const int j ) {
            evaluateTableCase( batch, batch.table_case_to_compute( j ) );
        } );
    clock.lap( KernelStage::table_cases );
    Kokkos::parallel_for(
        "shardsweep::evaluateTransformerCases",
        Range( exec, 0, size( batch.transformer_case_to_compute ) ), KOKKOS_LAMBDA( const int j ) {
            evaluateTransformerCase( batch, batch.transformer_case_to_compute( j ) );
        } );
    clock.lap( KernelStage::transformer_cases );
    Kokkos::parallel_for(
        "shardsweep::evaluateLearnedShardCases", Range( exec, 0, size( batch.learned_case_ms ) ),
        KOKKOS_LAMBDA( const int k ) { evaluateLearnedShardCase( batch, k ); } );
    clock.lap( KernelStage::learned_shard_cases );
    if ( shape.step_team_size <= 0 )
        Kokkos::parallel_for(
            "shardsweep::evaluateStepScenarios", Range( exec, 0, size( batch.step_scenario ) ),
            KOKKOS_LAMBDA( const int j ) {
                evaluateStepEntry( batch, batch.step_scenario( j ) );
            } );
    else
        evaluateStepScenariosByTeam( exec, batch, shape );
    clock.lap( KernelStage::step_scenarios );
    Kokkos::parallel_for(
        "shardsweep::evaluateOtherScenarios", Range( exec, 0, size( batch.other_scenario ) ),
        KOKKOS_LAMBDA( const int j ) { evaluateOtherEntry( batch, batch.other_scenario( j ) ); } );
    clock.lap( KernelStage::other_scenarios );
    exec.fence();
}

//! What `bench kernel` measures of one batch on one backend.
struct KernelTiming
{
    double launches_per_s = 0.0;
    KernelStageSeconds stage_seconds; //!< of one more launch, each stage fenced
};

//! Launches of evaluateBatch per second on `backend` for `host` with `shape` (copied there once,
//! launched once to warm up, then repeatedly until `min_seconds` have passed), and the stages of
//! one more launch: `bench kernel`'s probe. Here rather than in the bench so that the kernel's
//! device code is compiled in one place.
KernelTiming timeKernelLaunches( Backend backend, const HostScenarioBatch& host, KernelShape shape,
                                 double min_seconds );

//! Evaluates a packed batch in `exec`: its inputs copied to `exec`'s memory once, the kernel
//! launched, its outputs copied back into `host` once (the values of the computed cases too
//! where `computed_cases` is set, for a CaseCache). evaluateScenarios( Backend, ... )
//! packs, calls this and unpacks.
template <class ExecutionSpace>
void evaluatePacked( const ExecutionSpace& exec, HostScenarioBatch& host, bool computed_cases,
                     KernelShape shape = {} )
{
    using MemorySpace = typename ExecutionSpace::memory_space;
    auto device = toMemorySpace<MemorySpace>( host );
    prepareForShape( device, shape );
    evaluateBatch( exec, device, shape );
    if ( computed_cases )
    {
        Kokkos::deep_copy( host.table_stats, device.table_stats );
        Kokkos::deep_copy( host.dense_cost, device.dense_cost );
        Kokkos::deep_copy( host.transformer_cost, device.transformer_cost );
    }
    Kokkos::deep_copy( host.summary, device.summary );
    Kokkos::deep_copy( host.shard_fwd_ms, device.shard_fwd_ms );
    Kokkos::deep_copy( host.shard_bwd_ms, device.shard_bwd_ms );
    Kokkos::deep_copy( host.gpu_phase_ms, device.gpu_phase_ms );
    Kokkos::deep_copy( host.gpu_memory_GiB, device.gpu_memory_GiB );
    Kokkos::deep_copy( host.transformer_summary, device.transformer_summary );
    Kokkos::deep_copy( host.stage_ms, device.stage_ms );
    Kokkos::deep_copy( host.stage_memory_GiB, device.stage_memory_GiB );
}

} // namespace shardsweep
