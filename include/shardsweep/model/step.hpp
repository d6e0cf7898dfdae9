#pragma once
//! \file step.hpp
//! \brief One training iteration of one scenario along its critical path (docs/model/step.md).
//!
//! predictStep is the native cost model's top level. It prices every shard's lookups
//! (embedding.hpp), the dense part (dense.hpp), the per-GPU all-to-all volumes the plan creates
//! and the collectives on the platform's network (collectives.hpp), and composes them on a
//! timeline in which every collective starts when the slowest GPU it spans is ready.
//!
//! Inputs and outputs are raw pointers into struct-of-arrays storage (Views in the batched
//! kernel, std::vectors on the host), so the same function runs on host and in any Kokkos
//! backend. The loops run in a fixed order: results do not depend on the backend.
#include <cstdint>
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/model/dense.hpp>
#include <shardsweep/model/embedding.hpp>
#include <shardsweep/model/learned_shard_cost.hpp>
#include <shardsweep/model/math.hpp>
#include <shardsweep/model/memory.hpp>

namespace shardsweep
{

//! Phases of an iteration as array indices (domain/scenario.hpp's Phase, declared once there).
namespace step_phase
{
constexpr int input_dist = static_cast<int>( Phase::input_dist );
constexpr int embedding_fwd = static_cast<int>( Phase::embedding_fwd );
constexpr int bottom_mlp_fwd = static_cast<int>( Phase::bottom_mlp_fwd );
constexpr int embedding_comm_fwd = static_cast<int>( Phase::embedding_comm_fwd );
constexpr int top_fwd = static_cast<int>( Phase::top_fwd );
constexpr int top_bwd = static_cast<int>( Phase::top_bwd );
constexpr int embedding_comm_bwd = static_cast<int>( Phase::embedding_comm_bwd );
constexpr int bottom_mlp_bwd = static_cast<int>( Phase::bottom_mlp_bwd );
constexpr int embedding_bwd = static_cast<int>( Phase::embedding_bwd );
constexpr int dense_allreduce = static_cast<int>( Phase::dense_allreduce );
constexpr int count = kNumPhases;
} // namespace step_phase

//! Bytes per sparse index sent in the input distribution (int64 ids, TorchRec's default).
constexpr double kIndexBytes = 8.0;

//! The tables of one scenario with their plan (indexed by table, 0-based within the scenario).
struct StepTables
{
    const TableSpec* spec;
    const ShardingType* sharding;
    const ComputeKernel* kernel;
    const double* cache_fraction;
    //! Whole-table access statistics of table t: stats[stats_index[t]], computed by
    //! embeddingTableStats( spec[t], batch, cache ) with batch = the global batch for
    //! model-parallel tables and the local batch for data-parallel ones, cache = the table's
    //! cache_fraction for uvm_caching and 0 otherwise (see stepTableBatch / stepTableCache).
    const int* stats_index;
    const EmbeddingTableStats* stats;
    int count;
};

//! The batch a table's statistics are taken at: all samples' ids reach a model-parallel
//! table's shards, a data-parallel replica sees only its GPU's samples.
KOKKOS_INLINE_FUNCTION double stepTableBatch( ShardingType sharding, double global_batch,
                                              int num_gpus )
{
    return sharding == ShardingType::data_parallel ? global_batch / num_gpus : global_batch;
}

//! The HBM cache share a table's statistics are taken with.
KOKKOS_INLINE_FUNCTION double stepTableCache( ComputeKernel kernel, double cache_fraction )
{
    return kernel == ComputeKernel::uvm_caching ? cache_fraction : 0.0;
}

//! The shards of one scenario, struct-of-arrays.
struct StepShards
{
    const int* table; //!< index into StepTables
    const int* gpu;
    const double* num_rows;
    const int* num_cols;
    int count;
};

//! Per-GPU outputs and scratch of one scenario (arrays of num_gpus entries; phase_ms has
//! num_gpus × step_phase::count, GPU-major).
struct StepGpuArrays
{
    double* phase_ms;
    double* memory_GiB;
    double* send_index_bytes;     //!< scratch
    double* recv_index_bytes;     //!< scratch
    double* send_embedding_bytes; //!< scratch
    double* recv_embedding_bytes; //!< scratch
};

struct StepSummary
{
    bool feasible = true;
    int overflow_gpu = -1;
    double overflow_GiB = 0.0;
    double iteration_ms = 0.0;
    double exposed_comm_ms = 0.0;
    double phase_ms[step_phase::count] = {};
    //! comm_size of the dense all-reduce (dense gradients + data-parallel tables), bytes.
    double allreduce_bytes = 0.0;
};

//! The dense part's inputs for a scenario: scenarios that share them share one denseCost()
//! evaluation in the batched kernel (the GEMM model is the most expensive term per scenario).
KOKKOS_INLINE_FUNCTION double sumEmbeddingDims( const StepTables& tables )
{
    double sum_dims = 0.0;
    for ( int t = 0; t < tables.count; ++t )
        sum_dims += tables.spec[t].dim;
    return sum_dims;
}

//! The durations one DLRM iteration is composed of (ms): the collectives, the dense part and the
//! slowest GPU's embedding lookups and updates.
struct StepDurations
{
    double input_dist = 0.0;      //!< sparse-index all-to-all
    double bottom_fwd = 0.0;      //!< bottom MLP forward
    double embedding_fwd = 0.0;   //!< the slowest GPU's lookups
    double a2a_fwd = 0.0;         //!< pooled-embedding all-to-all
    double top_fwd = 0.0;         //!< interaction + top MLP forward
    double top_bwd = 0.0;         //!< their backward
    double a2a_bwd = 0.0;         //!< gradient all-to-all
    double bottom_bwd = 0.0;      //!< bottom MLP backward
    double embedding_bwd = 0.0;   //!< the slowest GPU's embedding backward and update
    double dense_allreduce = 0.0; //!< dense-gradient all-reduce
};

//! When each part of the iteration starts and ends (ms from the iteration's start).
struct StepTimeline
{
    double lookup_start, top_end, grad_arrived, update_start, compute_end, iteration;
};

//! The DLRM step's timeline, the one composition that the model (predictStep), the planners'
//! incremental state (plan/plan_state) and the lower bound on any plan (plan/lower_bound) use.
//! The bottom MLP needs no sparse input: it runs while the ids are distributed. The embedding
//! all-to-all starts when the slowest GPU has finished its lookups; the interaction and top MLP
//! run on every GPU alike; the gradient all-to-all follows, while the bottom MLP's backward runs;
//! then each GPU updates its shards while the dense all-reduce (issued after the gradient
//! all-to-all on the same network) proceeds.
KOKKOS_INLINE_FUNCTION StepTimeline stepTimeline( const StepDurations& d )
{
    StepTimeline t{};
    t.lookup_start = math::fmax( d.input_dist, d.bottom_fwd );
    const double top_start = t.lookup_start + d.embedding_fwd + d.a2a_fwd;
    t.top_end = top_start + d.top_fwd + d.top_bwd;
    t.grad_arrived = t.top_end + d.a2a_bwd;
    t.update_start = math::fmax( t.grad_arrived, t.top_end + d.bottom_bwd );
    t.compute_end = t.update_start + d.embedding_bwd;
    t.iteration = math::fmax( t.compute_end, t.grad_arrived + d.dense_allreduce );
    return t;
}

//! The collectives of one iteration (ms on the platform's network; all 0 on one GPU).
struct StepCollectives
{
    double index_ms = 0.0;     //!< sparse-index all-to-all
    double a2a_fwd_ms = 0.0;   //!< pooled-embedding all-to-all
    double a2a_bwd_ms = 0.0;   //!< its gradients, the transposed volumes
    double allreduce_ms = 0.0; //!< dense gradients (and data-parallel tables)
};

//! Prices every shard (shard_fwd_ms / shard_bwd_ms), sums each GPU's lookups into its
//! embedding_fwd/bwd phases and its shard memory, and fills the per-GPU all-to-all volumes of
//! `gpus`. Returns the bytes that data-parallel tables add to the dense all-reduce.
KOKKOS_INLINE_FUNCTION double stepShards( const Platform& platform, std::int64_t global_batch,
                                          const StepTables& tables, const StepShards& shards,
                                          const StepGpuArrays& gpus, double* shard_fwd_ms,
                                          double* shard_bwd_ms, const LearnedShardCost& learned )
{
    namespace ph = step_phase;
    const int num_gpus = platform.numGpus();
    const double p = num_gpus;
    const double global = static_cast<double>( global_batch );
    const double local = global / p;
    for ( int g = 0; g < num_gpus; ++g )
    {
        for ( int k = 0; k < ph::count; ++k )
            gpus.phase_ms[g * ph::count + k] = 0.0;
        gpus.memory_GiB[g] = 0.0;
        gpus.send_index_bytes[g] = 0.0;
        gpus.recv_index_bytes[g] = 0.0;
        gpus.send_embedding_bytes[g] = 0.0;
        gpus.recv_embedding_bytes[g] = 0.0;
    }

    // Shards. Every GPU holds `local` samples. A model-parallel shard serves the ids of all
    // `global` samples that hash to its rows (its row share of each sample's pooling_factor
    // lookups): every other GPU sends it local·pf·share ids and receives local·cols pooled
    // values (partial sums for row-split shards, which is the reduce-scatter's volume). Sends
    // into a GPU from "every other GPU" are accumulated as totals minus the GPU's own part, so
    // the loop is O(shards), not O(shards × GPUs). The own parts live in the send arrays until
    // the totals are known.
    double total_index = 0.0;
    double total_embedding = 0.0;
    double dp_gradient_bytes = 0.0;
    for ( int s = 0; s < shards.count; ++s )
    {
        const int t = shards.table[s];
        const int g = shards.gpu[s];
        const TableSpec& table = tables.spec[t];
        const ShardingType sharding = tables.sharding[t];
        const ComputeKernel kernel = tables.kernel[t];
        const double rows = shards.num_rows[s];
        const double cols = shards.num_cols[s];
        const double row_share = table.rows > 0 ? rows / static_cast<double>( table.rows ) : 0.0;
        const bool replicated = sharding == ShardingType::data_parallel;
        EmbeddingCost cost = embeddingShardCostFromStats(
            platform.gpu, platform.host_to_gpu_GBps, table, tables.stats[tables.stats_index[t]],
            row_share, static_cast<int>( cols ), replicated ? local : global, kernel );
        if ( learned.active() && learned.case_ms )
            cost = learnedShardSplit( cost, learned.case_ms[learned.shard_case[s]] );
        else if ( learned.active() )
        {
            double x[kLearnedShardFeatures];
            learnedShardFeatures( table, sharding, kernel, tables.cache_fraction[t], rows,
                                  shards.num_cols[s], global, num_gpus, learned.platform_code, x );
            cost = learnedShardCost( learned, cost, x );
        }
        shard_fwd_ms[s] = cost.fwd_ms;
        shard_bwd_ms[s] = cost.bwd_ms;
        gpus.phase_ms[g * ph::count + ph::embedding_fwd] += cost.fwd_ms;
        gpus.phase_ms[g * ph::count + ph::embedding_bwd] += cost.bwd_ms;
        gpus.memory_GiB[g] +=
            shardHbmBytes( table, rows, cols, kernel, tables.cache_fraction[t] ) / kBytesPerGiB;
        const double elem = dataTypeBytes( table.dtype );
        if ( replicated )
        {
            // Each replica's weight gradient joins the dense all-reduce; count the table once.
            dp_gradient_bytes += rows * cols * elem / p;
            // Its pooled output stays local.
            gpus.memory_GiB[g] += 2.0 * local * cols * elem / kBytesPerGiB;
            continue;
        }
        const double ids = local * table.pooling_factor * row_share * kIndexBytes;
        const double pooled = local * cols * elem;
        total_index += ids;
        total_embedding += pooled;
        gpus.send_index_bytes[g] += ids;                      // own part, subtracted below
        gpus.recv_index_bytes[g] += ( p - 1.0 ) * ids;        // from every other GPU
        gpus.recv_embedding_bytes[g] += pooled;               // own part, subtracted below
        gpus.send_embedding_bytes[g] += ( p - 1.0 ) * pooled; // to every other GPU
        // The shard's output for all samples before the all-to-all, and its gradient.
        gpus.memory_GiB[g] += 2.0 * global * cols * elem / kBytesPerGiB;
    }
    for ( int g = 0; g < num_gpus; ++g )
    {
        gpus.send_index_bytes[g] = total_index - gpus.send_index_bytes[g];
        gpus.recv_embedding_bytes[g] = total_embedding - gpus.recv_embedding_bytes[g];
    }
    return dp_gradient_bytes;
}

//! The all-to-alls of the volumes stepShards filled in, and the all-reduce of `gradient_bytes`.
KOKKOS_INLINE_FUNCTION StepCollectives stepCollectives( const Platform& platform,
                                                        const StepGpuArrays& gpus,
                                                        double gradient_bytes )
{
    StepCollectives c;
    const int num_gpus = platform.numGpus();
    if ( num_gpus <= 1 )
        return c;
    c.index_ms = 1e-6 * allToAllvTimeNs( platform.network, platform.system, gpus.send_index_bytes,
                                         gpus.recv_index_bytes, num_gpus );
    c.a2a_fwd_ms =
        1e-6 * allToAllvTimeNs( platform.network, platform.system, gpus.send_embedding_bytes,
                                gpus.recv_embedding_bytes, num_gpus );
    // Backward sends the gradients of the pooled values back: the transposed volumes.
    c.a2a_bwd_ms =
        1e-6 * allToAllvTimeNs( platform.network, platform.system, gpus.recv_embedding_bytes,
                                gpus.send_embedding_bytes, num_gpus );
    c.allreduce_ms = 1e-6 * collectiveTimeNs( platform.network, platform.system,
                                              Collective::all_reduce, gradient_bytes );
    return c;
}

//! Completes each GPU's row: the busy time of every phase and the memory (dense replica,
//! communication buffers, reserve); marks `summary` infeasible at the fullest overflowing GPU.
//! Returns the busiest GPU's compute time.
KOKKOS_INLINE_FUNCTION double stepGpuRows( const Platform& platform, const DenseModel& dense,
                                           const DenseCost& dense_cost, const StepCollectives& c,
                                           const StepGpuArrays& gpus, StepSummary& summary )
{
    namespace ph = step_phase;
    const int num_gpus = platform.numGpus();
    const double index_ms = c.index_ms, a2a_fwd_ms = c.a2a_fwd_ms, a2a_bwd_ms = c.a2a_bwd_ms,
                 allreduce_ms = c.allreduce_ms;
    // Per-GPU busy time of each phase and memory.
    const double dense_GiB =
        ( denseReplicaBytes( dense, dense_cost.parameters ) + dense_cost.activation_bytes ) /
        kBytesPerGiB;
    double max_compute = 0.0;
    for ( int g = 0; g < num_gpus; ++g )
    {
        double* row = gpus.phase_ms + g * ph::count;
        row[ph::input_dist] = index_ms;
        row[ph::bottom_mlp_fwd] = dense_cost.bottom_fwd_ms;
        row[ph::embedding_comm_fwd] = a2a_fwd_ms;
        row[ph::top_fwd] = dense_cost.top_fwd_ms;
        row[ph::top_bwd] = dense_cost.top_bwd_ms;
        row[ph::embedding_comm_bwd] = a2a_bwd_ms;
        row[ph::bottom_mlp_bwd] = dense_cost.bottom_bwd_ms;
        row[ph::dense_allreduce] = allreduce_ms;
        const double compute = row[ph::embedding_fwd] + row[ph::bottom_mlp_fwd] + row[ph::top_fwd] +
                               row[ph::top_bwd] + row[ph::bottom_mlp_bwd] + row[ph::embedding_bwd];
        max_compute = math::fmax( max_compute, compute );

        // Communication buffers: ids received, pooled values sent and received (and their
        // gradients), on top of shard state and the dense replica.
        const double buffers = gpus.recv_index_bytes[g] + 2.0 * ( gpus.send_embedding_bytes[g] +
                                                                  gpus.recv_embedding_bytes[g] );
        gpus.memory_GiB[g] += dense_GiB + buffers / kBytesPerGiB + platform.hbm_reserve_GiB;
        const double overflow = gpus.memory_GiB[g] - platform.gpu.memory_GiB;
        if ( overflow > 0.0 && overflow > summary.overflow_GiB )
        {
            summary.feasible = false;
            summary.overflow_gpu = g;
            summary.overflow_GiB = overflow;
        }
    }
    return max_compute;
}

//! Predicts one iteration. `dense_cost` is denseCost( platform.gpu, dense, tables.count,
//! sumEmbeddingDims( tables ), global_batch / numGpus ). `shard_fwd_ms`/`shard_bwd_ms` receive
//! each shard's lookup cost. With an active `learned` model (cost_model: learned) each shard's
//! compute time is the learned one (learned_shard_cost.hpp); everything else stays native.
KOKKOS_INLINE_FUNCTION StepSummary predictStep( const Platform& platform, const DenseModel& dense,
                                                const DenseCost& dense_cost,
                                                std::int64_t global_batch, StepTables tables,
                                                StepShards shards, StepGpuArrays gpus,
                                                double* shard_fwd_ms, double* shard_bwd_ms,
                                                const LearnedShardCost& learned = {} )
{
    namespace ph = step_phase;
    StepSummary summary;
    const int num_gpus = platform.numGpus();
    const double dp_gradient_bytes = stepShards( platform, global_batch, tables, shards, gpus,
                                                 shard_fwd_ms, shard_bwd_ms, learned );
    const double gradient_bytes =
        dense_cost.parameters * dataTypeBytes( dense.dtype ) + dp_gradient_bytes;
    summary.allreduce_bytes = gradient_bytes;
    const StepCollectives comm = stepCollectives( platform, gpus, gradient_bytes );

    double max_fwd = 0.0, max_bwd = 0.0;
    for ( int g = 0; g < num_gpus; ++g )
    {
        max_fwd = math::fmax( max_fwd, gpus.phase_ms[g * ph::count + ph::embedding_fwd] );
        max_bwd = math::fmax( max_bwd, gpus.phase_ms[g * ph::count + ph::embedding_bwd] );
    }
    StepDurations d;
    d.input_dist = comm.index_ms;
    d.bottom_fwd = dense_cost.bottom_fwd_ms;
    d.embedding_fwd = max_fwd;
    d.a2a_fwd = comm.a2a_fwd_ms;
    d.top_fwd = dense_cost.top_fwd_ms;
    d.top_bwd = dense_cost.top_bwd_ms;
    d.a2a_bwd = comm.a2a_bwd_ms;
    d.bottom_bwd = dense_cost.bottom_bwd_ms;
    d.embedding_bwd = max_bwd;
    d.dense_allreduce = comm.allreduce_ms;
    const StepTimeline t = stepTimeline( d );
    summary.iteration_ms = t.iteration;

    // Critical-path share of each phase (they add up to the iteration time).
    summary.phase_ms[ph::bottom_mlp_fwd] = dense_cost.bottom_fwd_ms;
    summary.phase_ms[ph::input_dist] = t.lookup_start - dense_cost.bottom_fwd_ms;
    summary.phase_ms[ph::embedding_fwd] = max_fwd;
    summary.phase_ms[ph::embedding_comm_fwd] = comm.a2a_fwd_ms;
    summary.phase_ms[ph::top_fwd] = dense_cost.top_fwd_ms;
    summary.phase_ms[ph::top_bwd] = dense_cost.top_bwd_ms;
    summary.phase_ms[ph::embedding_comm_bwd] = comm.a2a_bwd_ms;
    summary.phase_ms[ph::bottom_mlp_bwd] = t.update_start - t.grad_arrived;
    summary.phase_ms[ph::embedding_bwd] = max_bwd;
    summary.phase_ms[ph::dense_allreduce] = summary.iteration_ms - t.compute_end;

    const double max_compute = stepGpuRows( platform, dense, dense_cost, comm, gpus, summary );
    summary.exposed_comm_ms = summary.iteration_ms - max_compute;
    return summary;
}

} // namespace shardsweep
