#pragma once
//! \file step_torchrec.hpp
//! \brief A scenario priced with TorchRec's planner estimator instead of the native model.
//!
//! TorchRec's objective is the maximum over ranks of the summed per-shard Perf totals
//! (torchrec_estimator.md; docs/model/torchrec.md). Each shard's forward/backward compute and
//! communication go to the phases of its GPU (prefetch counts as forward compute, blocking as
//! in TorchRec); the iteration is the largest rank total and its phases are that rank's.
//! TorchRec does not price the dense part or the dense all-reduce, so those phases stay 0, and
//! memory is TorchRec's HBM storage estimate per rank (with the table's optimizer explicit).
#include <shardsweep/model/memory.hpp>
#include <shardsweep/model/step.hpp>
#include <shardsweep/model/torchrec/adapter.hpp>

namespace shardsweep
{

KOKKOS_INLINE_FUNCTION StepSummary predictStepTorchrec( const Platform& platform,
                                                        std::int64_t global_batch,
                                                        StepTables tables, StepShards shards,
                                                        StepGpuArrays gpus, double* shard_fwd_ms,
                                                        double* shard_bwd_ms )
{
    namespace ph = step_phase;
    StepSummary summary;
    const int num_gpus = platform.numGpus();
    for ( int g = 0; g < num_gpus; ++g )
    {
        for ( int k = 0; k < ph::count; ++k )
            gpus.phase_ms[g * ph::count + k] = 0.0;
        gpus.memory_GiB[g] = 0.0;
        gpus.send_index_bytes[g] = 0.0; // scratch: the rank's summed perf.total()
    }
    for ( int s = 0; s < shards.count; ++s )
    {
        const int t = shards.table[s];
        const int g = shards.gpu[s];
        ShardSpec shard;
        shard.table = t;
        shard.gpu = g;
        shard.num_rows = static_cast<std::int64_t>( shards.num_rows[s] );
        shard.num_cols = shards.num_cols[s];
        TablePlan plan;
        plan.sharding = tables.sharding[t];
        plan.kernel = tables.kernel[t];
        plan.cache_fraction = tables.cache_fraction[t];
        const auto perf = torchrecShardPerf( tables.spec[t], shard, plan, platform, global_batch );
        const auto storage =
            torchrecShardStorageOf( tables.spec[t], shard, plan, platform, global_batch );
        double* row = gpus.phase_ms + g * ph::count;
        row[ph::embedding_fwd] += perf.fwd_compute + perf.prefetch;
        row[ph::embedding_comm_fwd] += perf.fwd_comms;
        row[ph::embedding_bwd] += perf.bwd_compute;
        row[ph::embedding_comm_bwd] += perf.bwd_comms;
        // As torchrecPlanCost reports shards: prefetch with the backward side.
        shard_fwd_ms[s] = perf.fwd_compute + perf.fwd_comms;
        shard_bwd_ms[s] = perf.bwd_compute + perf.bwd_comms + perf.prefetch;
        gpus.send_index_bytes[g] += perf.total(); // TorchRec's order of summation
        gpus.memory_GiB[g] += static_cast<double>( storage.hbm ) / kBytesPerGiB;
    }
    int slowest = 0;
    for ( int g = 0; g < num_gpus; ++g )
    {
        const double total = gpus.send_index_bytes[g];
        if ( total > summary.iteration_ms )
        {
            summary.iteration_ms = total;
            slowest = g;
        }
        gpus.memory_GiB[g] += platform.hbm_reserve_GiB;
        const double overflow = gpus.memory_GiB[g] - platform.gpu.memory_GiB;
        if ( overflow > 0.0 && overflow > summary.overflow_GiB )
        {
            summary.feasible = false;
            summary.overflow_gpu = g;
            summary.overflow_GiB = overflow;
        }
    }
    for ( int k = 0; k < ph::count; ++k )
        summary.phase_ms[k] = gpus.phase_ms[slowest * ph::count + k];
    // TorchRec adds communication to compute (no overlap): all of the slowest rank's is exposed.
    summary.exposed_comm_ms =
        summary.phase_ms[ph::embedding_comm_fwd] + summary.phase_ms[ph::embedding_comm_bwd];
    return summary;
}

} // namespace shardsweep
