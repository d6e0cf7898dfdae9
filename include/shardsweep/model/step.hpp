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

//! What one shard adds to its GPU's rows and to the scenario's totals (stepShardContribution).
//! Kept whole so that a kernel can price shards in parallel and still add them in shard order.
struct ShardContribution
{
    int gpu = 0;
    bool replicated = false; //!< data-parallel table: its gradient joins the dense all-reduce
    double fwd_ms = 0.0, bwd_ms = 0.0;
    double state_GiB = 0.0;       //!< rows and optimizer state in HBM
    double output_GiB = 0.0;      //!< pooled outputs and their gradients
    double index_bytes = 0.0;     //!< ids every other GPU sends it (0 if replicated)
    double embedding_bytes = 0.0; //!< pooled values it sends every other GPU (0 if replicated)
    double gradient_bytes = 0.0;  //!< its share of the dense all-reduce (replicated only)
};

//! Sums over a scenario's shards, in shard order.
struct ShardTotals
{
    double index_bytes = 0.0;
    double embedding_bytes = 0.0;
    double gradient_bytes = 0.0; //!< bytes that data-parallel tables add to the dense all-reduce
};

//! A scenario's GPU count and batch sizes, computed once for all its shards.
struct StepSamples
{
    int num_gpus = 1;
    double global = 0.0; //!< samples per iteration
    double local = 0.0;  //!< per GPU: global / num_gpus
};

KOKKOS_INLINE_FUNCTION StepSamples stepSamples( const Platform& platform,
                                                std::int64_t global_batch )
{
    StepSamples x;
    x.num_gpus = platform.numGpus();
    x.global = static_cast<double>( global_batch );
    x.local = x.global / x.num_gpus;
    return x;
}

//! Shard s of a scenario: its lookup cost and what it adds to memory and the all-to-alls. Every
//! GPU holds `local` = global/P samples. A model-parallel shard serves the ids of all `global`
//! samples that hash to its rows (its row share of each sample's pooling_factor lookups): every
//! other GPU sends it local·pf·share ids and receives local·cols pooled values (partial sums for
//! row-split shards, which is the reduce-scatter's volume). Forced inline: out of line (GCC's
//! choice), its 64-byte result went through memory and the host walk ran 8-15 % slower on
//! scenarios of thousands of shards (docs/PERFORMANCE.md).
KOKKOS_FORCEINLINE_FUNCTION ShardContribution stepShardContribution(
    const Platform& platform, const StepSamples& samples, const StepTables& tables,
    const StepShards& shards, int s, const LearnedShardCost& learned )
{
    const int num_gpus = samples.num_gpus;
    const double p = num_gpus;
    const double global = samples.global;
    const double local = samples.local;
    const int t = shards.table[s];
    const TableSpec& table = tables.spec[t];
    const ShardingType sharding = tables.sharding[t];
    const ComputeKernel kernel = tables.kernel[t];
    const double rows = shards.num_rows[s];
    const double cols = shards.num_cols[s];
    const double row_share = table.rows > 0 ? rows / static_cast<double>( table.rows ) : 0.0;
    ShardContribution c;
    c.gpu = shards.gpu[s];
    c.replicated = sharding == ShardingType::data_parallel;
    EmbeddingCost cost = embeddingShardCostFromStats(
        platform.gpu, platform.host_to_gpu_GBps, table, tables.stats[tables.stats_index[t]],
        row_share, static_cast<int>( cols ), c.replicated ? local : global, kernel );
    if ( learned.active() && learned.case_ms )
        cost = learnedShardSplit( cost, learned.case_ms[learned.shard_case[s]] );
    else if ( learned.active() )
    {
        double x[kLearnedShardFeatures];
        learnedShardFeatures( table, sharding, kernel, tables.cache_fraction[t], rows,
                              shards.num_cols[s], global, num_gpus, learned.platform_code, x );
        cost = learnedShardCost( learned, cost, x );
    }
    c.fwd_ms = cost.fwd_ms;
    c.bwd_ms = cost.bwd_ms;
    c.state_GiB =
        shardHbmBytes( table, rows, cols, kernel, tables.cache_fraction[t] ) / kBytesPerGiB;
    const double elem = dataTypeBytes( table.dtype );
    if ( c.replicated )
    {
        // Each replica's weight gradient joins the dense all-reduce; count the table once.
        c.gradient_bytes = rows * cols * elem / p;
        // Its pooled output stays local.
        c.output_GiB = 2.0 * local * cols * elem / kBytesPerGiB;
        return c;
    }
    c.index_bytes = local * table.pooling_factor * row_share * kIndexBytes;
    c.embedding_bytes = local * cols * elem;
    // The shard's output for all samples before the all-to-all, and its gradient.
    c.output_GiB = 2.0 * global * cols * elem / kBytesPerGiB;
    return c;
}

//! Zeroes GPU g's rows and all-to-all volumes (before its shards are added).
KOKKOS_INLINE_FUNCTION void stepClearGpu( const StepGpuArrays& gpus, int g )
{
    for ( int k = 0; k < step_phase::count; ++k )
        gpus.phase_ms[g * step_phase::count + k] = 0.0;
    gpus.memory_GiB[g] = 0.0;
    gpus.send_index_bytes[g] = 0.0;
    gpus.recv_index_bytes[g] = 0.0;
    gpus.send_embedding_bytes[g] = 0.0;
    gpus.recv_embedding_bytes[g] = 0.0;
}

//! Adds a shard to its GPU's rows. Sends into a GPU from "every other GPU" are accumulated as
//! totals minus the GPU's own part (stepFinishShards), so that pricing a plan is O(shards), not
//! O(shards × GPUs); the own parts live in the send arrays until the totals are known.
KOKKOS_INLINE_FUNCTION void stepAddShardToGpu( const ShardContribution& c, double num_gpus,
                                               const StepGpuArrays& gpus )
{
    namespace ph = step_phase;
    const int g = c.gpu;
    gpus.phase_ms[g * ph::count + ph::embedding_fwd] += c.fwd_ms;
    gpus.phase_ms[g * ph::count + ph::embedding_bwd] += c.bwd_ms;
    gpus.memory_GiB[g] += c.state_GiB;
    gpus.memory_GiB[g] += c.output_GiB;
    if ( c.replicated )
        return;
    gpus.send_index_bytes[g] += c.index_bytes;                              // own part
    gpus.recv_index_bytes[g] += ( num_gpus - 1.0 ) * c.index_bytes;         // from every other GPU
    gpus.recv_embedding_bytes[g] += c.embedding_bytes;                      // own part
    gpus.send_embedding_bytes[g] += ( num_gpus - 1.0 ) * c.embedding_bytes; // to every other GPU
}

//! Adds a shard to the scenario's totals.
KOKKOS_INLINE_FUNCTION void stepAddShardToTotals( const ShardContribution& c, ShardTotals& totals )
{
    if ( c.replicated )
    {
        totals.gradient_bytes += c.gradient_bytes;
        return;
    }
    totals.index_bytes += c.index_bytes;
    totals.embedding_bytes += c.embedding_bytes;
}

//! GPU g's index sends and embedding receives from its own parts and the totals.
KOKKOS_INLINE_FUNCTION void stepFinishGpu( const ShardTotals& totals, const StepGpuArrays& gpus,
                                           int g )
{
    gpus.send_index_bytes[g] = totals.index_bytes - gpus.send_index_bytes[g];
    gpus.recv_embedding_bytes[g] = totals.embedding_bytes - gpus.recv_embedding_bytes[g];
}

//! Adds every shard's contribution (`contribution_of( s )` for s = 0 .. count − 1, in that order)
//! to its GPU's rows and the totals, and completes the GPUs' all-to-all volumes. Returns the
//! bytes that data-parallel tables add to the dense all-reduce.
template <class ContributionOf>
KOKKOS_INLINE_FUNCTION double stepAddShards( int num_gpus, int count, const StepGpuArrays& gpus,
                                             const ContributionOf& contribution_of )
{
    for ( int g = 0; g < num_gpus; ++g )
        stepClearGpu( gpus, g );
    ShardTotals totals;
    for ( int s = 0; s < count; ++s )
    {
        const ShardContribution c = contribution_of( s );
        stepAddShardToGpu( c, num_gpus, gpus );
        stepAddShardToTotals( c, totals );
    }
    for ( int g = 0; g < num_gpus; ++g )
        stepFinishGpu( totals, gpus, g );
    return totals.gradient_bytes;
}

//! Prices every shard (shard_fwd_ms / shard_bwd_ms), sums each GPU's lookups into its
//! embedding_fwd/bwd phases and its shard memory, and fills the per-GPU all-to-all volumes of
//! `gpus`, in shard order. Returns the bytes that data-parallel tables add to the dense
//! all-reduce. (The batched kernel on a GPU prices the shards first, many threads at once, and
//! then adds them with stepAddShards.)
KOKKOS_INLINE_FUNCTION double stepShards( const Platform& platform, std::int64_t global_batch,
                                          const StepTables& tables, const StepShards& shards,
                                          const StepGpuArrays& gpus, double* shard_fwd_ms,
                                          double* shard_bwd_ms, const LearnedShardCost& learned )
{
    const StepSamples samples = stepSamples( platform, global_batch );
    return stepAddShards( samples.num_gpus, shards.count, gpus,
                          [&]( int s )
                          {
                              const ShardContribution c = stepShardContribution(
                                  platform, samples, tables, shards, s, learned );
                              shard_fwd_ms[s] = c.fwd_ms;
                              shard_bwd_ms[s] = c.bwd_ms;
                              return c;
                          } );
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

//! The rest of predictStep once stepShards has filled `gpus`: the collectives, the timeline and
//! each GPU's row. `dp_gradient_bytes` is stepShards' result.
KOKKOS_INLINE_FUNCTION StepSummary predictStepFromShards( const Platform& platform,
                                                          const DenseModel& dense,
                                                          const DenseCost& dense_cost,
                                                          const StepGpuArrays& gpus,
                                                          double dp_gradient_bytes )
{
    namespace ph = step_phase;
    StepSummary summary;
    const int num_gpus = platform.numGpus();
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
    const double dp_gradient_bytes = stepShards( platform, global_batch, tables, shards, gpus,
                                                 shard_fwd_ms, shard_bwd_ms, learned );
    return predictStepFromShards( platform, dense, dense_cost, gpus, dp_gradient_bytes );
}

} // namespace shardsweep
