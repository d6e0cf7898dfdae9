// Host side of the batched cost kernel, part 2: unpacking results and the evaluateScenarios
// entry points (pack_scenarios.cpp packs).
#include <algorithm>
#include <chrono>
#include <mutex>
#include <shardsweep/kernel/batch_launch.hpp>
#include <shardsweep/kernel/case_cache.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>

namespace shardsweep
{
namespace
{
//! Callers of evaluateScenarios on several host threads pack and unpack concurrently; on a
//! device, the batches' copies and launches run one caller at a time.
std::mutex g_device_mutex;
} // namespace

std::vector<ScenarioResult> unpackResults( const HostScenarioBatch& b )
{
    const int n = b.numScenarios();
    std::vector<ScenarioResult> results( n );
    for ( int i = 0; i < n; ++i )
    {
        ScenarioResult& r = results[i];
        if ( b.kind( i ) == static_cast<std::uint8_t>( WorkloadKind::transformer ) )
        {
            const TransformerStepSummary& ts = b.transformer_summary( i );
            r.kind = WorkloadKind::transformer;
            r.transformer = ts;
            r.parallel = b.parallel( i );
            r.feasible = ts.feasible;
            r.iteration_ms = ts.iteration_ms;
            r.exposed_comm_ms = ts.phase_ms[int( TransformerPhase::tp_comm )] +
                                ts.phase_ms[int( TransformerPhase::pp_comm )] +
                                ts.phase_ms[int( TransformerPhase::dp_comm )] +
                                ts.phase_ms[int( TransformerPhase::ep_comm )];
            const Platform& p = b.platform( i );
            const double capacity = p.gpu.memory_GiB - p.hbm_reserve_GiB;
            r.overflow_GiB = ts.feasible ? 0.0 : ts.peak_memory_GiB - capacity;
            r.num_gpus = p.numGpus();
            const int st0 = b.stage_offset( i ), st1 = b.stage_offset( i + 1 );
            r.stage_ms.assign( b.stage_ms.data() + st0, b.stage_ms.data() + st1 );
            r.stage_memory_GiB.assign( b.stage_memory_GiB.data() + st0,
                                       b.stage_memory_GiB.data() + st1 );
            continue;
        }
        const StepSummary& sum = b.summary( i );
        r.feasible = sum.feasible;
        r.overflow_gpu = sum.overflow_gpu;
        r.overflow_GiB = sum.overflow_GiB;
        r.iteration_ms = sum.iteration_ms;
        r.exposed_comm_ms = sum.exposed_comm_ms;
        for ( int k = 0; k < kNumPhases; ++k )
            r.phase_ms[k] = sum.phase_ms[k];
        const int g0 = b.gpu_offset( i ), g1 = b.gpu_offset( i + 1 );
        const int s0 = b.shard_offset( i ), s1 = b.shard_offset( i + 1 );
        r.num_gpus = g1 - g0;
        r.gpu_phase_ms.assign( b.gpu_phase_ms.data() + kNumPhases * g0,
                               b.gpu_phase_ms.data() + kNumPhases * g1 );
        r.gpu_memory_GiB.assign( b.gpu_memory_GiB.data() + g0, b.gpu_memory_GiB.data() + g1 );
        r.shard_fwd_ms.assign( b.shard_fwd_ms.data() + s0, b.shard_fwd_ms.data() + s1 );
        r.shard_bwd_ms.assign( b.shard_bwd_ms.data() + s0, b.shard_bwd_ms.data() + s1 );
    }
    return results;
}

std::size_t preferredScenariosPerCall( Backend backend )
{
    return runsOnHost( backend ) ? 256 : 1024;
}

std::vector<ScenarioResult>
evaluateScenarios( Backend backend, const std::vector<ScenarioInput>& inputs, CaseCache* cache )
{
    HostScenarioBatch host = packScenarios( inputs, cache );
    withExecutionSpace( backend,
                        [&]( const auto& exec )
                        {
                            std::unique_lock<std::mutex> lock( g_device_mutex, std::defer_lock );
                            if ( !runsOnHost( backend ) )
                                lock.lock();
                            evaluatePacked( exec, host, cache != nullptr );
                        } );
    if ( cache )
        rememberCases( host, *cache );
    return unpackResults( host );
}

std::vector<ScenarioResult> evaluateScenarios( const std::vector<ScenarioInput>& inputs )
{
    return evaluateScenarios( defaultBackend(), inputs );
}

KernelTiming timeKernelLaunches( Backend backend, const HostScenarioBatch& host, KernelShape shape,
                                 double min_seconds )
{
    return withExecutionSpace(
        backend,
        [&]( const auto& exec )
        {
            using MemorySpace = typename std::decay_t<decltype( exec )>::memory_space;
            auto batch = toMemorySpace<MemorySpace>( host );
            prepareForShape( batch, shape );
            // Warm-up: first touch, and the JIT of the PTX on a newer GPU.
            evaluateBatch( exec, batch, shape );
            KernelTiming timing;
            long long launches = 0;
            const auto start = std::chrono::steady_clock::now();
            double seconds = 0.0;
            do
            {
                evaluateBatch( exec, batch, shape ); // fences
                ++launches;
                seconds = std::chrono::duration<double>( std::chrono::steady_clock::now() - start )
                              .count();
            } while ( seconds < min_seconds );
            timing.launches_per_s = launches / seconds;
            evaluateBatch( exec, batch, shape, &timing.stage_seconds );
            return timing;
        } );
}

ScenarioResult evaluateScenario( const ScenarioInput& input )
{
    // Planners call this in tight loops: a plain host loop, no kernel launch.
    HostScenarioBatch batch = packScenarios( { input } );
    for ( int k = 0; k < static_cast<int>( batch.dense_case.extent( 0 ) ); ++k )
        evaluateDenseCase( batch, k );
    for ( int k = 0; k < static_cast<int>( batch.transformer_case.extent( 0 ) ); ++k )
        evaluateTransformerCase( batch, k );
    for ( int k = 0; k < static_cast<int>( batch.table_case.extent( 0 ) ); ++k )
        evaluateTableCase( batch, k );
    for ( int k = 0; k < static_cast<int>( batch.learned_case_ms.extent( 0 ) ); ++k )
        evaluateLearnedShardCase( batch, k );
    evaluateBatchEntry( batch, 0 );
    return unpackResults( batch ).front();
}

} // namespace shardsweep
