#pragma once
//! \file scenario_batch.hpp
//! \brief A batch of scenarios flattened into struct-of-arrays Views, and the kernel bodies that
//! evaluate one entry of it (batch_launch.hpp launches them).
//!
//! Layout: per scenario a Platform, a DenseModel, the global batch and the cost model, and
//! offsets (CSR style) into the table, shard and GPU arrays; per table its spec and plan; per
//! shard five scalar columns; per GPU the outputs plus four scratch columns (all-to-all
//! volumes). Each scenario's sums run in a fixed order (shard order, GPU order), whichever
//! threads price it, so Serial and OpenMP give bit-identical results and CUDA the same within
//! rounding (FMA contraction).
//!
//! Transformer scenarios (kind = transformer) have no tables, shards or GPU rows: per scenario
//! their model, parallel configuration and an index into the batch's distinct operator cases
//! (TransformerOperatorCase, priced once per batch like DenseCase), and per pipeline stage (CSR
//! offsets) two outputs.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <shardsweep/kernel/case_cache.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/model/step.hpp>
#include <shardsweep/model/step_torchrec.hpp>
#include <shardsweep/model/transformer.hpp>
#include <type_traits>
#include <vector>

namespace shardsweep
{

//! The inputs of the dense part of one scenario (see denseCost). Scenarios that differ only in
//! their plan share one DenseCase, priced once per batch.
struct DenseCase
{
    GpuSpec gpu;
    DenseModel dense;
    int num_tables = 0;
    double sum_embedding_dims = 0.0;
    double local_batch = 0.0;
    bool learned_gemm = false; //!< price its GEMMs with the batch's learned GEMM model
};

//! The inputs of one table's access statistics (see embeddingTableStats). Tables that recur
//! across the batch's scenarios (same spec, batch and cache) share one TableCase.
struct TableCase
{
    TableSpec spec;
    double batch = 0.0;
    double cache_fraction = 0.0;
};

template <class MemorySpace>
struct ScenarioBatch
{
    template <class T>
    using View = Kokkos::View<T*, MemorySpace>;

    // Per scenario (offset views have one more entry than scenarios).
    View<Platform> platform;
    View<DenseModel> dense;
    View<std::int64_t> global_batch;
    View<std::uint8_t> model;
    View<int> table_offset;
    View<int> shard_offset;
    View<int> gpu_offset;
    View<int> dense_index;   //!< into dense_case / dense_cost
    View<std::uint8_t> kind; //!< WorkloadKind
    //! The scenarios predictStep prices (DLRM, native or learned shard costs), and the others
    //! (transformer, torchrec), each set in a launch of its own (batch_launch.hpp); the others
    //! ordered by their pipeline stage count.
    View<int> step_scenario;
    View<int> other_scenario;
    // Per scenario, transformer workloads (unused entries default-constructed).
    View<TransformerSpec> transformer;
    View<ParallelConfig> parallel;
    View<int> transformer_index; //!< into transformer_case / transformer_cost; -1 for DLRM
    View<int> stage_offset;      //!< pipeline stages (0 for DLRM scenarios)
    // Per distinct transformer operator case and dense case. The costs hold the cached ones on
    // input (CaseCache); the kernel computes the cases listed in *_to_compute.
    View<TransformerOperatorCase> transformer_case;
    View<TransformerOperatorCost> transformer_cost;
    View<int> transformer_case_to_compute; //!< into transformer_case
    View<DenseCase> dense_case;
    View<DenseCost> dense_cost;
    View<int> dense_case_to_compute; //!< into dense_case
    //! The learned GEMM model of the dense cases with learned_gemm (empty: none).
    MlpLayout gemm_mlp;
    Kokkos::View<const double*, MemorySpace> gemm_mlp_params;
    //! The learned shard cost model of the batch's `learned` scenarios (empty: none), and per
    //! scenario its platform code in that model (-1: not learned, or a platform it never saw).
    MlpLayout cost_mlp;
    Kokkos::View<const double*, MemorySpace> cost_mlp_params;
    View<double> learned_platform;
    //! Distinct learned shard feature vectors of the batch ([case * kLearnedShardFeatures + j]),
    //! each priced once (learned_case_ms), and per shard its case (-1: not a learned shard).
    View<double> learned_case_features;
    View<double> learned_case_ms;
    View<int> shard_learned_case;
    // Per distinct table case. table_stats holds the cached statistics on input; the kernel
    // computes the cases listed in table_case_to_compute (the ones no cache knew).
    View<TableCase> table_case;
    View<EmbeddingTableStats> table_stats;
    View<int> table_case_to_compute; //!< into table_case
    // Per table.
    View<TableSpec> table_spec;
    View<ShardingType> table_sharding;
    View<ComputeKernel> table_kernel;
    View<double> table_cache_fraction;
    View<int> table_stats_index; //!< into table_case / table_stats
    // Per shard.
    View<int> shard_table; //!< index within its scenario's tables
    View<int> shard_gpu;
    View<double> shard_rows;
    View<int> shard_cols;
    // Outputs.
    View<StepSummary> summary;
    View<double> shard_fwd_ms;
    View<double> shard_bwd_ms;
    //! Scratch of the team shapes (batch_launch.hpp): each shard's contribution between its
    //! pricing and its scenario's sums. Empty until prepareForShape allocates it.
    View<ShardContribution> shard_contribution;
    View<double> gpu_phase_ms; //!< [gpu * kNumPhases + phase]
    View<double> gpu_memory_GiB;
    View<double> gpu_scratch; //!< [4 * gpu + k]: send/recv index, send/recv embedding bytes
    View<TransformerStepSummary> transformer_summary; //!< per scenario (transformers)
    View<double> stage_ms;                            //!< per pipeline stage
    View<double> stage_memory_GiB;                    //!< per pipeline stage

    int numScenarios() const { return static_cast<int>( summary.extent( 0 ) ); }
};

using HostScenarioBatch = ScenarioBatch<Kokkos::HostSpace>;

//! Flattens scenarios into host Views (validating that every shard's table and GPU exist).
//! Table, dense and transformer cases found in `cache` (if given) get their values filled in and
//! are not listed in the *_case_to_compute Views.
HostScenarioBatch packScenarios( const std::vector<ScenarioInput>& inputs,
                                 const CaseCache* cache = nullptr );

//! Stores the values of the batch's computed cases in `cache` (after evaluateBatch and the copy
//! of table_stats, dense_cost and transformer_cost back to the host).
void rememberCases( const HostScenarioBatch& host, CaseCache& cache );

//! Copies a batch's outputs back into per-scenario results.
std::vector<ScenarioResult> unpackResults( const HostScenarioBatch& host );

//! Copies a host batch's inputs into `MemorySpace` (outputs are allocated, not copied).
template <class MemorySpace>
ScenarioBatch<MemorySpace> toMemorySpace( const HostScenarioBatch& host )
{
    if constexpr ( std::is_same<MemorySpace, Kokkos::HostSpace>::value )
    {
        // Host backends (Serial, OpenMP) evaluate the packed batch in place: every output is
        // written by the kernel (as in evaluateScenario's plain loop), so allocating and
        // zero-filling a second set of output Views per batch would only cost time.
        return host;
    }
    ScenarioBatch<MemorySpace> b;
    auto copy = []( const auto& v )
    { return Kokkos::create_mirror_view_and_copy( MemorySpace(), v ); };
    auto alloc = []( const auto& v )
    {
        using T = typename std::decay_t<decltype( v )>::value_type;
        return Kokkos::View<T*, MemorySpace>( v.label(), v.extent( 0 ) );
    };
    b.platform = copy( host.platform );
    b.dense = copy( host.dense );
    b.global_batch = copy( host.global_batch );
    b.model = copy( host.model );
    b.table_offset = copy( host.table_offset );
    b.shard_offset = copy( host.shard_offset );
    b.gpu_offset = copy( host.gpu_offset );
    b.dense_index = copy( host.dense_index );
    b.kind = copy( host.kind );
    b.step_scenario = copy( host.step_scenario );
    b.other_scenario = copy( host.other_scenario );
    b.transformer = copy( host.transformer );
    b.parallel = copy( host.parallel );
    b.transformer_index = copy( host.transformer_index );
    b.stage_offset = copy( host.stage_offset );
    b.transformer_case = copy( host.transformer_case );
    b.transformer_cost = copy( host.transformer_cost );
    b.transformer_case_to_compute = copy( host.transformer_case_to_compute );
    b.dense_case = copy( host.dense_case );
    b.dense_cost = copy( host.dense_cost );
    b.dense_case_to_compute = copy( host.dense_case_to_compute );
    b.gemm_mlp = host.gemm_mlp;
    b.gemm_mlp_params = copy( host.gemm_mlp_params );
    b.cost_mlp = host.cost_mlp;
    b.cost_mlp_params = copy( host.cost_mlp_params );
    b.learned_platform = copy( host.learned_platform );
    b.learned_case_features = copy( host.learned_case_features );
    b.learned_case_ms = alloc( host.learned_case_ms );
    b.shard_learned_case = copy( host.shard_learned_case );
    b.table_spec = copy( host.table_spec );
    b.table_sharding = copy( host.table_sharding );
    b.table_kernel = copy( host.table_kernel );
    b.table_cache_fraction = copy( host.table_cache_fraction );
    b.table_stats_index = copy( host.table_stats_index );
    b.table_case = copy( host.table_case );
    b.table_stats = copy( host.table_stats );
    b.table_case_to_compute = copy( host.table_case_to_compute );
    b.shard_table = copy( host.shard_table );
    b.shard_gpu = copy( host.shard_gpu );
    b.shard_rows = copy( host.shard_rows );
    b.shard_cols = copy( host.shard_cols );
    b.summary = alloc( host.summary );
    b.shard_fwd_ms = alloc( host.shard_fwd_ms );
    b.shard_bwd_ms = alloc( host.shard_bwd_ms );
    b.gpu_phase_ms = alloc( host.gpu_phase_ms );
    b.gpu_memory_GiB = alloc( host.gpu_memory_GiB );
    b.gpu_scratch = alloc( host.gpu_scratch );
    b.transformer_summary = alloc( host.transformer_summary );
    b.stage_ms = alloc( host.stage_ms );
    b.stage_memory_GiB = alloc( host.stage_memory_GiB );
    return b;
}

//! Scenario i's tables with their plan (a DLRM scenario).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION StepTables stepTablesOf( const ScenarioBatch<MemorySpace>& b, int i )
{
    const int t0 = b.table_offset( i );
    return { b.table_spec.data() + t0,        b.table_sharding.data() + t0,
             b.table_kernel.data() + t0,      b.table_cache_fraction.data() + t0,
             b.table_stats_index.data() + t0, b.table_stats.data(),
             b.table_offset( i + 1 ) - t0 };
}

//! Scenario i's shards.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION StepShards stepShardsOf( const ScenarioBatch<MemorySpace>& b, int i )
{
    const int s0 = b.shard_offset( i );
    return { b.shard_table.data() + s0, b.shard_gpu.data() + s0, b.shard_rows.data() + s0,
             b.shard_cols.data() + s0, b.shard_offset( i + 1 ) - s0 };
}

//! Scenario i's GPU rows and scratch.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION StepGpuArrays stepGpusOf( const ScenarioBatch<MemorySpace>& b, int i )
{
    const int g0 = b.gpu_offset( i );
    double* scratch = b.gpu_scratch.data() + 4 * g0;
    const int n = b.gpu_offset( i + 1 ) - g0;
    return { b.gpu_phase_ms.data() + kNumPhases * g0,
             b.gpu_memory_GiB.data() + g0,
             scratch,
             scratch + n,
             scratch + 2 * n,
             scratch + 3 * n };
}

//! Scenario i's learned shard cost model (inactive unless its cost model is `learned`).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION LearnedShardCost learnedShardCostOf( const ScenarioBatch<MemorySpace>& b,
                                                            int i )
{
    LearnedShardCost learned;
    if ( b.model( i ) == static_cast<std::uint8_t>( CostModel::learned ) )
    {
        learned.layout = b.cost_mlp;
        learned.params = b.cost_mlp_params.data();
        learned.platform_code = b.learned_platform( i );
        learned.shard_case = b.shard_learned_case.data() + b.shard_offset( i );
        learned.case_ms = b.learned_case_ms.data();
    }
    return learned;
}

//! Whether predictStep prices scenario i (DLRM with native or learned shard costs): the
//! scenarios of `step_scenario`, the others being `other_scenario`'s.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION bool isStepScenario( const ScenarioBatch<MemorySpace>& b, int i )
{
    return b.kind( i ) != static_cast<std::uint8_t>( WorkloadKind::transformer ) &&
           b.model( i ) != static_cast<std::uint8_t>( CostModel::torchrec );
}

//! Evaluates DLRM scenario `i` with predictStep, in one thread. A kernel of its own: without the
//! transformer model inlined next to it, it needs fewer registers per thread.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void evaluateStepEntry( const ScenarioBatch<MemorySpace>& b, int i )
{
    const int s0 = b.shard_offset( i );
    b.summary( i ) = predictStep( b.platform( i ), b.dense( i ), b.dense_cost( b.dense_index( i ) ),
                                  b.global_batch( i ), stepTablesOf( b, i ), stepShardsOf( b, i ),
                                  stepGpusOf( b, i ), b.shard_fwd_ms.data() + s0,
                                  b.shard_bwd_ms.data() + s0, learnedShardCostOf( b, i ) );
}

//! Evaluates transformer or TorchRec-model scenario `i`, in one thread.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void evaluateOtherEntry( const ScenarioBatch<MemorySpace>& b, int i )
{
    if ( b.kind( i ) == static_cast<std::uint8_t>( WorkloadKind::transformer ) )
    {
        const int st = b.stage_offset( i );
        b.transformer_summary( i ) =
            predictTransformerStep( b.platform( i ), b.transformer( i ), b.parallel( i ),
                                    b.transformer_cost( b.transformer_index( i ) ),
                                    b.stage_ms.data() + st, b.stage_memory_GiB.data() + st );
        return;
    }
    const int s0 = b.shard_offset( i );
    b.summary( i ) = predictStepTorchrec(
        b.platform( i ), b.global_batch( i ), stepTablesOf( b, i ), stepShardsOf( b, i ),
        stepGpusOf( b, i ), b.shard_fwd_ms.data() + s0, b.shard_bwd_ms.data() + s0 );
}

//! Evaluates scenario `i` of a batch in one thread, whatever its kind (the plain host loops of
//! evaluateScenario and bench kernel's reference).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void evaluateBatchEntry( const ScenarioBatch<MemorySpace>& b, int i )
{
    if ( isStepScenario( b, i ) )
        evaluateStepEntry( b, i );
    else
        evaluateOtherEntry( b, i );
}

//! Prices the batch's distinct dense cases (run before the scenarios).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void evaluateDenseCase( const ScenarioBatch<MemorySpace>& b, int k )
{
    const DenseCase& c = b.dense_case( k );
    GemmPricer gemm;
    if ( c.learned_gemm )
    {
        gemm.layout = b.gemm_mlp;
        gemm.params = b.gemm_mlp_params.data();
    }
    b.dense_cost( k ) =
        denseCost( c.gpu, c.dense, c.num_tables, c.sum_embedding_dims, c.local_batch, gemm );
}

//! Prices the batch's distinct learned shard case `k` (exp of the learned model's MLP).
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void evaluateLearnedShardCase( const ScenarioBatch<MemorySpace>& b, int k )
{
    b.learned_case_ms( k ) = learnedShardTotalMs( b.cost_mlp, b.cost_mlp_params.data(),
                                                  b.learned_case_features.data() +
                                                      std::size_t( k ) * kLearnedShardFeatures );
}

//! Computes the access statistics of the batch's distinct table case `k`.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void evaluateTableCase( const ScenarioBatch<MemorySpace>& b, int k )
{
    const TableCase& c = b.table_case( k );
    b.table_stats( k ) = embeddingTableStats( c.spec, c.batch, c.cache_fraction );
}

//! Prices the batch's distinct transformer operator cases.
template <class MemorySpace>
KOKKOS_INLINE_FUNCTION void evaluateTransformerCase( const ScenarioBatch<MemorySpace>& b, int k )
{
    b.transformer_cost( k ) = transformerOperatorCost( b.transformer_case( k ) );
}

} // namespace shardsweep
