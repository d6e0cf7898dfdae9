// Host side of the batched cost kernel: packing scenarios into Views, unpacking results.
#include <algorithm>
#include <array>
#include <cstring>
#include <fmt/format.h>
#include <iterator>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/kernel/learned_cost_model.hpp>
#include <shardsweep/kernel/scenario_batch.hpp>
#include <shardsweep/kernel/table_stats_cache.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

namespace shardsweep
{

namespace
{
//! Fixed-size keys of the deduplicated cases: no allocation per table and scenario (packing runs
//! for every batch of a sweep). Unused entries stay 0.
constexpr std::size_t kDenseKeySize = 23 + 2 * kMaxMlpLayers;
using DenseKey = std::array<double, kDenseKeySize>;
constexpr std::size_t kTransformerKeySize = 25;
using TransformerKey = std::array<double, kTransformerKeySize>;
using LearnedShardKey = std::array<double, kLearnedShardFeatures>;

//! Multiply-xorshift over the key's 64-bit words (equal keys with equal bits hash alike; the
//! maps compare with ==). Word-wise: packing hashes every table of every scenario of a batch.
std::uint64_t hashWords( const double* key, std::size_t n )
{
    std::uint64_t h = 0x9e3779b97f4a7c15ull;
    for ( std::size_t i = 0; i < n; ++i )
    {
        std::uint64_t w;
        std::memcpy( &w, key + i, sizeof( w ) );
        h = ( h ^ w ) * 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return h;
}

struct KeyHash
{
    template <std::size_t N>
    std::size_t operator()( const std::array<double, N>& key ) const
    {
        return static_cast<std::size_t>( hashWords( key.data(), N ) );
    }
};

//! Every field denseCost reads (structs with padding cannot be compared bytewise).
DenseKey denseCaseKey( const DenseCase& c )
{
    const DenseModel& d = c.dense;
    const double rest[] = { double( d.num_dense_features ),
                            double( d.bottom_mlp_layers ),
                            double( d.top_mlp_layers ),
                            double( d.interaction ),
                            double( d.dtype ),
                            double( d.optimizer ),
                            double( c.num_tables ),
                            c.sum_embedding_dims,
                            c.local_batch,
                            c.learned_gemm ? 1.0 : 0.0 };
    static_assert( kGpuSpecWords + std::size( rest ) == 23, "the MLP widths start at word 23" );
    DenseKey key = gpuKey<kDenseKeySize>( c.gpu, rest );
    std::copy( d.bottom_mlp, d.bottom_mlp + d.bottom_mlp_layers, key.begin() + 23 );
    std::copy( d.top_mlp, d.top_mlp + d.top_mlp_layers, key.begin() + 23 + kMaxMlpLayers );
    return key;
}

//! Every field of a transformer operator case.
TransformerKey transformerCaseKey( const TransformerOperatorCase& c )
{
    const TransformerSpec& m = c.model;
    const double rest[] = { double( m.arch ),
                            double( m.hidden ),
                            double( m.heads ),
                            double( m.layers ),
                            double( m.seq_len ),
                            double( m.vocab ),
                            double( m.ffn_hidden ),
                            double( m.dtype ),
                            double( c.tp ),
                            double( c.micro_batch ),
                            double( c.sequence_parallel ),
                            double( c.fused ) };
    static_assert( kGpuSpecWords + std::size( rest ) == kTransformerKeySize, "every word used" );
    return gpuKey<kTransformerKeySize>( c.gpu, rest );
}

static_assert( kNumPhases == step_phase::count, "Phase and step_phase disagree" );

//! The configuration a transformer scenario is evaluated with: the plan's, at the scenario's
//! global batch.
ParallelConfig scenarioParallelConfig( const ScenarioInput& in )
{
    ParallelConfig c = in.plan->parallel;
    c.global_batch = in.global_batch > 0 ? in.global_batch : in.workload->global_batch;
    return c;
}

void checkScenario( const ScenarioInput& in, std::size_t index )
{
    if ( !in.workload || !in.platform || !in.plan )
        throw std::invalid_argument( fmt::format( "scenario {}: missing input", index ) );
    if ( in.workload->isTransformer() )
    {
        if ( in.model != CostModel::native )
            throw std::invalid_argument( fmt::format(
                "scenario {}: transformer workloads have only the native cost model", index ) );
        const std::string error = parallelConfigError(
            in.workload->transformer, scenarioParallelConfig( in ), in.platform->numGpus() );
        if ( !error.empty() )
            throw std::invalid_argument( fmt::format( "scenario {}: {}", index, error ) );
        return;
    }
    if ( in.model == CostModel::learned && !in.learned.model )
        throw std::invalid_argument( fmt::format(
            "scenario {}: cost model learned needs a model file (cost_model_file)", index ) );
    const auto num_tables = in.workload->tables.size();
    if ( in.plan->tables.size() != num_tables )
        throw std::invalid_argument(
            fmt::format( "scenario {}: plan has {} table entries for {} tables", index,
                         in.plan->tables.size(), num_tables ) );
    const int num_gpus = in.platform->numGpus();
    const std::int64_t batch = in.global_batch > 0 ? in.global_batch : in.workload->global_batch;
    if ( num_gpus <= 0 || batch <= 0 )
        throw std::invalid_argument(
            fmt::format( "scenario {}: {} GPUs, global batch {}", index, num_gpus, batch ) );
    for ( std::size_t s = 0; s < in.plan->shards.size(); ++s )
    {
        const ShardSpec& shard = in.plan->shards[s];
        if ( shard.table < 0 || static_cast<std::size_t>( shard.table ) >= num_tables ||
             shard.gpu < 0 || shard.gpu >= num_gpus || shard.num_rows < 0 || shard.num_cols < 0 )
            throw std::invalid_argument( fmt::format(
                "scenario {}: shard {} (table {}, GPU {}) is outside the workload or platform",
                index, s, shard.table, shard.gpu ) );
    }
}
} // namespace

TableCaseKey tableCaseKey( const TableSpec& t, double batch, double cache_fraction )
{
    TableCaseKey key = { double( t.rows ),
                         t.pooling_factor,
                         double( t.distribution ),
                         t.zipf_alpha,
                         double( t.histogram_batch ),
                         batch,
                         cache_fraction };
    if ( t.distribution == AccessDistribution::histogram )
        std::copy( t.reuse_histogram, t.reuse_histogram + kReuseBins, key.begin() + 7 );
    return key;
}

TableCaseKey tableCaseKey( const TableCase& c )
{
    return tableCaseKey( c.spec, c.batch, c.cache_fraction );
}

std::size_t TableCaseKeyHash::operator()( const TableCaseKey& key ) const
{
    // The seven scalars only: tables that agree on rows, pooling, distribution and batch but
    // differ in their reuse histogram are rare, and the maps' equality test still compares the
    // whole key. Hashing all 24 words in one dependent multiply chain, for every table of every
    // scenario of a batch, was a tenth of packScenarios.
    return static_cast<std::size_t>( hashWords( key.data(), 7 ) );
}

void rememberTableStats( const HostScenarioBatch& host, TableStatsCache& cache )
{
    for ( std::size_t j = 0; j < host.table_case_to_compute.extent( 0 ); ++j )
    {
        const int k = host.table_case_to_compute( j );
        cache.insert( tableCaseKey( host.table_case( k ) ), host.table_stats( k ) );
    }
}

HostScenarioBatch packScenarios( const std::vector<ScenarioInput>& inputs,
                                 const TableStatsCache* cache )
{
    const std::size_t n = inputs.size();
    std::size_t num_tables = 0, num_shards = 0, num_gpus = 0, num_stages = 0;
    for ( std::size_t i = 0; i < n; ++i )
    {
        checkScenario( inputs[i], i );
        if ( inputs[i].workload->isTransformer() )
        {
            num_stages += std::size_t( inputs[i].plan->parallel.pp );
            continue;
        }
        num_tables += inputs[i].workload->tables.size();
        num_shards += inputs[i].plan->shards.size();
        num_gpus += inputs[i].platform->numGpus();
    }
    using Kokkos::view_alloc;
    using Kokkos::WithoutInitializing;
    HostScenarioBatch b;
    auto make = []( auto& view, const char* label, std::size_t size )
    {
        using V = std::decay_t<decltype( view )>;
        view = V( view_alloc( WithoutInitializing, std::string( label ) ), size );
    };
    make( b.platform, "platform", n );
    make( b.dense, "dense", n );
    make( b.global_batch, "global_batch", n );
    make( b.model, "model", n );
    make( b.learned_platform, "learned_platform", n );
    make( b.table_offset, "table_offset", n + 1 );
    make( b.shard_offset, "shard_offset", n + 1 );
    make( b.gpu_offset, "gpu_offset", n + 1 );
    make( b.dense_index, "dense_index", n );
    make( b.kind, "kind", n );
    make( b.transformer, "transformer", n );
    make( b.parallel, "parallel", n );
    make( b.transformer_index, "transformer_index", n );
    make( b.stage_offset, "stage_offset", n + 1 );
    make( b.transformer_summary, "transformer_summary", n );
    make( b.stage_ms, "stage_ms", num_stages );
    make( b.stage_memory_GiB, "stage_memory_GiB", num_stages );
    make( b.table_spec, "table_spec", num_tables );
    make( b.table_sharding, "table_sharding", num_tables );
    make( b.table_kernel, "table_kernel", num_tables );
    make( b.table_cache_fraction, "table_cache_fraction", num_tables );
    make( b.table_stats_index, "table_stats_index", num_tables );
    make( b.shard_table, "shard_table", num_shards );
    make( b.shard_gpu, "shard_gpu", num_shards );
    make( b.shard_rows, "shard_rows", num_shards );
    make( b.shard_cols, "shard_cols", num_shards );
    make( b.shard_learned_case, "shard_learned_case", num_shards );
    make( b.summary, "summary", n );
    make( b.shard_fwd_ms, "shard_fwd_ms", num_shards );
    make( b.shard_bwd_ms, "shard_bwd_ms", num_shards );
    make( b.gpu_phase_ms, "gpu_phase_ms", num_gpus * kNumPhases );
    make( b.gpu_memory_GiB, "gpu_memory_GiB", num_gpus );
    make( b.gpu_scratch, "gpu_scratch", num_gpus * 4 );

    // Distinct dense cases, keyed by every field denseCost reads.
    std::unordered_map<DenseKey, int, KeyHash> dense_ids;
    std::unordered_map<TableCaseKey, int, TableCaseKeyHash> table_ids;
    std::vector<DenseCase> dense_cases;
    std::vector<TableCase> table_cases;
    std::vector<EmbeddingTableStats> known_stats; //!< per table case (cached ones filled in)
    std::vector<int> to_compute;
    std::unordered_map<TransformerKey, int, KeyHash> transformer_ids;
    std::vector<TransformerOperatorCase> transformer_cases;
    const LearnedCostModel* learned_model = nullptr;
    // Distinct learned shard feature vectors: a sweep's planners share most shards of a task.
    std::unordered_map<LearnedShardKey, int, KeyHash> learned_ids;
    std::vector<double> learned_features;
    const LearnedGemmModel* gemm_model = nullptr;
    int t = 0, s = 0, g = 0, st = 0;
    for ( std::size_t i = 0; i < n; ++i )
    {
        const ScenarioInput& in = inputs[i];
        b.learned_platform( i ) = -1.0;
        if ( in.model == CostModel::learned )
        {
            if ( learned_model && in.learned.model != learned_model )
                throw std::invalid_argument( fmt::format(
                    "scenario {}: one batch can hold one learned cost model only", i ) );
            learned_model = in.learned.model;
            b.learned_platform( i ) = in.learned.platform_code;
        }
        b.global_batch( i ) = in.global_batch > 0 ? in.global_batch : in.workload->global_batch;
        b.kind( i ) = static_cast<std::uint8_t>( in.workload->kind );
        b.stage_offset( i ) = st;
        b.table_offset( i ) = t;
        b.shard_offset( i ) = s;
        b.gpu_offset( i ) = g;
        b.platform( i ) = *in.platform;
        b.model( i ) = static_cast<std::uint8_t>( in.model );
        if ( in.workload->isTransformer() )
        {
            const ParallelConfig config = scenarioParallelConfig( in );
            b.transformer( i ) = in.workload->transformer;
            b.parallel( i ) = config;
            b.dense( i ) = DenseModel{};
            b.dense_index( i ) = -1;
            const TransformerOperatorCase oc =
                transformerOperatorCase( in.platform->gpu, in.workload->transformer, config );
            const auto [it, fresh] = transformer_ids.emplace(
                transformerCaseKey( oc ), static_cast<int>( transformer_cases.size() ) );
            if ( fresh )
                transformer_cases.push_back( oc );
            b.transformer_index( i ) = it->second;
            st += config.pp;
            continue;
        }
        b.transformer( i ) = TransformerSpec{};
        b.parallel( i ) = ParallelConfig{};
        b.transformer_index( i ) = -1;
        DenseCase dc;
        dc.gpu = in.platform->gpu;
        dc.dense = in.workload->dense;
        dc.num_tables = static_cast<int>( in.workload->tables.size() );
        for ( const TableSpec& spec : in.workload->tables )
            dc.sum_embedding_dims += spec.dim;
        dc.local_batch = static_cast<double>( b.global_batch( i ) ) / in.platform->numGpus();
        if ( in.learned_gemm )
        {
            if ( gemm_model && in.learned_gemm != gemm_model )
                throw std::invalid_argument( fmt::format(
                    "scenario {}: one batch can hold one learned GEMM model only", i ) );
            gemm_model = in.learned_gemm;
            dc.learned_gemm = true;
        }
        // find before emplace: emplace allocates a node even for a key already present.
        const DenseKey dense_key = denseCaseKey( dc );
        auto it = dense_ids.find( dense_key );
        if ( it == dense_ids.end() )
        {
            it = dense_ids.emplace( dense_key, static_cast<int>( dense_cases.size() ) ).first;
            dense_cases.push_back( dc );
        }
        b.dense_index( i ) = it->second;
        b.dense( i ) = in.workload->dense;
        for ( std::size_t k = 0; k < in.workload->tables.size(); ++k, ++t )
        {
            b.table_spec( t ) = in.workload->tables[k];
            b.table_sharding( t ) = in.plan->tables[k].sharding;
            b.table_kernel( t ) = in.plan->tables[k].kernel;
            b.table_cache_fraction( t ) = in.plan->tables[k].cache_fraction;
            const double case_batch =
                stepTableBatch( b.table_sharding( t ), static_cast<double>( b.global_batch( i ) ),
                                in.platform->numGpus() );
            const double case_cache =
                stepTableCache( b.table_kernel( t ), b.table_cache_fraction( t ) );
            const TableCaseKey key = tableCaseKey( in.workload->tables[k], case_batch, case_cache );
            // Most tables of a batch are cases seen before: look up first, build the case (and
            // the map node) only for new ones.
            auto at = table_ids.find( key );
            if ( at == table_ids.end() )
            {
                at = table_ids.emplace( key, static_cast<int>( table_cases.size() ) ).first;
                EmbeddingTableStats known{};
                if ( !cache || !cache->find( key, known ) )
                    to_compute.push_back( static_cast<int>( table_cases.size() ) );
                table_cases.push_back( { in.workload->tables[k], case_batch, case_cache } );
                known_stats.push_back( known );
            }
            b.table_stats_index( t ) = at->second;
        }
        const bool learned_shards = in.model == CostModel::learned && in.learned.platform_code >= 0;
        for ( const ShardSpec& shard : in.plan->shards )
        {
            b.shard_table( s ) = shard.table;
            b.shard_gpu( s ) = shard.gpu;
            b.shard_rows( s ) = static_cast<double>( shard.num_rows );
            b.shard_cols( s ) = shard.num_cols;
            b.shard_learned_case( s ) = -1;
            if ( learned_shards )
            {
                // The features predictStep would build for this shard (same inputs, same order).
                const int tk = t - static_cast<int>( in.workload->tables.size() ) + shard.table;
                LearnedShardKey x;
                learnedShardFeatures( b.table_spec( tk ), b.table_sharding( tk ),
                                      b.table_kernel( tk ), b.table_cache_fraction( tk ),
                                      b.shard_rows( s ), b.shard_cols( s ),
                                      static_cast<double>( b.global_batch( i ) ),
                                      in.platform->numGpus(), in.learned.platform_code, x.data() );
                const auto [at, fresh] =
                    learned_ids.emplace( x, static_cast<int>( learned_ids.size() ) );
                if ( fresh )
                    learned_features.insert( learned_features.end(), x.begin(), x.end() );
                b.shard_learned_case( s ) = at->second;
            }
            ++s;
        }
        g += in.platform->numGpus();
    }
    make( b.learned_case_features, "learned_case_features", learned_features.size() );
    std::copy( learned_features.begin(), learned_features.end(), b.learned_case_features.data() );
    make( b.learned_case_ms, "learned_case_ms", learned_ids.size() );
    make( b.dense_case, "dense_case", dense_cases.size() );
    make( b.dense_cost, "dense_cost", dense_cases.size() );
    std::copy( dense_cases.begin(), dense_cases.end(), b.dense_case.data() );
    make( b.table_case, "table_case", table_cases.size() );
    make( b.table_stats, "table_stats", table_cases.size() );
    std::copy( table_cases.begin(), table_cases.end(), b.table_case.data() );
    std::copy( known_stats.begin(), known_stats.end(), b.table_stats.data() );
    make( b.table_case_to_compute, "table_case_to_compute", to_compute.size() );
    std::copy( to_compute.begin(), to_compute.end(), b.table_case_to_compute.data() );
    make( b.transformer_case, "transformer_case", transformer_cases.size() );
    make( b.transformer_cost, "transformer_cost", transformer_cases.size() );
    std::copy( transformer_cases.begin(), transformer_cases.end(), b.transformer_case.data() );
    if ( gemm_model )
    {
        b.gemm_mlp = gemm_model->layout;
        b.gemm_mlp_params = gemm_model->params;
    }
    if ( learned_model )
    {
        b.cost_mlp = learned_model->layout;
        b.cost_mlp_params = learned_model->params;
    }
    b.stage_offset( n ) = st;
    b.table_offset( n ) = t;
    b.shard_offset( n ) = s;
    b.gpu_offset( n ) = g;
    return b;
}

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
                                ts.phase_ms[int( TransformerPhase::dp_comm )];
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

bool evaluatesOnHost()
{
    return std::is_same<Kokkos::DefaultExecutionSpace::memory_space, Kokkos::HostSpace>::value;
}

std::size_t preferredScenariosPerCall()
{
    return evaluatesOnHost() ? 256 : 0;
}

std::vector<ScenarioResult> evaluateScenarios( const std::vector<ScenarioInput>& inputs )
{
    return evaluateScenarios( Kokkos::DefaultExecutionSpace(), inputs );
}

std::vector<ScenarioResult> evaluateScenarios( const std::vector<ScenarioInput>& inputs,
                                               TableStatsCache& cache )
{
    return evaluateScenarios( Kokkos::DefaultExecutionSpace(), inputs, &cache );
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
