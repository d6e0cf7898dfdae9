// Host side of the batched cost kernel, part 1: packing a batch of scenarios into Views, with
// the cases that scenarios share (dense parts, table statistics, transformer operator cases,
// learned shard features) deduplicated. cost_kernel.cpp unpacks and evaluates.
#include <algorithm>
#include <array>
#include <cstring>
#include <fmt/format.h>
#include <iterator>
#include <shardsweep/core/hash.hpp>
#include <shardsweep/domain/dlrm_fields.hpp>
#include <shardsweep/domain/gpu_fields.hpp>
#include <shardsweep/domain/transformer_fields.hpp>
#include <shardsweep/kernel/case_cache.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/kernel/learned_cost_model.hpp>
#include <shardsweep/kernel/scenario_batch.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>

namespace shardsweep
{

namespace
{
//! Fixed-size keys of the deduplicated cases (kernel/case_cache.hpp): no allocation per table and
//! scenario (packing runs for every batch of a sweep).
using LearnedShardKey = std::array<double, kLearnedShardFeatures>;
constexpr std::size_t kNumDenseFields = std::size( kDenseFields );

static_assert( kNumPhases == step_phase::count, "Phase and step_phase disagree" );

//! The configuration a transformer scenario is evaluated with: the plan's, at the scenario's
//! global batch.
ParallelConfig scenarioParallelConfig( const ScenarioInput& in )
{
    ParallelConfig c = in.plan->parallel;
    c.global_batch = in.global_batch > 0 ? in.global_batch : in.workload->global_batch;
    return c;
}

} // namespace

std::string scenarioInputError( const ScenarioInput& in )
{
    if ( !in.workload || !in.platform || !in.plan )
        return "missing input";
    if ( in.workload->isTransformer() )
    {
        if ( in.model != CostModel::native )
            return "transformer workloads have only the native cost model";
        if ( std::string e = gpuDataTypeError( in.platform->gpu, in.workload->transformer.dtype );
             !e.empty() )
            return e;
        return parallelConfigError( in.workload->transformer, scenarioParallelConfig( in ),
                                    in.platform->numGpus() );
    }
    if ( std::string e = gpuDataTypeError( in.platform->gpu, in.workload->dense.dtype );
         !e.empty() )
        return "dense " + e;
    if ( in.model == CostModel::learned && !in.learned.model )
        return "cost model learned needs a model file (cost_model_file)";
    const auto num_tables = in.workload->tables.size();
    if ( in.plan->tables.size() != num_tables )
        return fmt::format( "plan has {} table entries for {} tables", in.plan->tables.size(),
                            num_tables );
    const int num_gpus = in.platform->numGpus();
    const std::int64_t batch = in.global_batch > 0 ? in.global_batch : in.workload->global_batch;
    if ( num_gpus <= 0 || batch <= 0 )
        return fmt::format( "{} GPUs, global batch {}", num_gpus, batch );
    for ( std::size_t s = 0; s < in.plan->shards.size(); ++s )
    {
        const ShardSpec& shard = in.plan->shards[s];
        if ( shard.table < 0 || static_cast<std::size_t>( shard.table ) >= num_tables ||
             shard.gpu < 0 || shard.gpu >= num_gpus || shard.num_rows < 0 || shard.num_cols < 0 )
            return fmt::format( "shard {} (table {}, GPU {}) is outside the workload or platform",
                                s, shard.table, shard.gpu );
    }
    return {};
}

//! Every field denseCost reads (structs with padding cannot be compared bytewise): the GPU, the
//! dense model's fields (domain/dlrm_fields.hpp), its layer counts, the case's inputs, then the
//! layer widths.
DenseCaseKey denseCaseKey( const DenseCase& c )
{
    const DenseModel& d = c.dense;
    double rest[kNumDenseFields + 6];
    for ( std::size_t k = 0; k < kNumDenseFields; ++k )
        rest[k] = kDenseFields[k].get( d );
    rest[kNumDenseFields + 0] = d.bottom_mlp_layers;
    rest[kNumDenseFields + 1] = d.top_mlp_layers;
    rest[kNumDenseFields + 2] = c.num_tables;
    rest[kNumDenseFields + 3] = c.sum_embedding_dims;
    rest[kNumDenseFields + 4] = c.local_batch;
    rest[kNumDenseFields + 5] = c.learned_gemm ? 1.0 : 0.0;
    DenseCaseKey key = gpuKey<kDenseCaseKeySize>( c.gpu, rest );
    std::copy( d.bottom_mlp, d.bottom_mlp + d.bottom_mlp_layers, key.begin() + kDenseCaseHeadSize );
    std::copy( d.top_mlp, d.top_mlp + d.top_mlp_layers,
               key.begin() + kDenseCaseHeadSize + kMaxMlpLayers );
    return key;
}

//! Every field of a transformer operator case.
TransformerCaseKey transformerCaseKey( const TransformerOperatorCase& c )
{
    double rest[kNumModelFields + 7];
    for ( int k = 0; k < kNumModelFields; ++k )
        rest[k] = kModelFields[k].get( c.model );
    rest[kNumModelFields + 0] = c.tp;
    rest[kNumModelFields + 1] = c.micro_batch;
    rest[kNumModelFields + 2] = c.sequence_parallel;
    rest[kNumModelFields + 3] = c.fused;
    rest[kNumModelFields + 4] = c.cp;
    rest[kNumModelFields + 5] = c.ep;
    rest[kNumModelFields + 6] = c.etp;
    return gpuKey<kTransformerCaseKeySize>( c.gpu, rest );
}

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

void rememberCases( const HostScenarioBatch& host, CaseCache& cache )
{
    for ( std::size_t j = 0; j < host.table_case_to_compute.extent( 0 ); ++j )
    {
        const int k = host.table_case_to_compute( j );
        cache.tables.insert( tableCaseKey( host.table_case( k ) ), host.table_stats( k ) );
    }
    for ( std::size_t j = 0; j < host.dense_case_to_compute.extent( 0 ); ++j )
    {
        const int k = host.dense_case_to_compute( j );
        if ( !host.dense_case( k ).learned_gemm )
            cache.dense.insert( denseCaseKey( host.dense_case( k ) ), host.dense_cost( k ) );
    }
    for ( std::size_t j = 0; j < host.transformer_case_to_compute.extent( 0 ); ++j )
    {
        const int k = host.transformer_case_to_compute( j );
        cache.transformer.insert( transformerCaseKey( host.transformer_case( k ) ),
                                  host.transformer_cost( k ) );
    }
}

namespace
{
//! A View of `size` elements, uninitialised (packing fills every element).
template <class V>
void allocate( V& view, const char* label, std::size_t size )
{
    view = V( Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( label ) ), size );
}

//! The per-scenario, per-table, per-shard, per-GPU and per-stage Views of a batch.
void allocateBatch( HostScenarioBatch& b, std::size_t n, std::size_t num_tables,
                    std::size_t num_shards, std::size_t num_gpus, std::size_t num_stages )
{
    allocate( b.platform, "platform", n );
    allocate( b.dense, "dense", n );
    allocate( b.global_batch, "global_batch", n );
    allocate( b.model, "model", n );
    allocate( b.learned_platform, "learned_platform", n );
    allocate( b.table_offset, "table_offset", n + 1 );
    allocate( b.shard_offset, "shard_offset", n + 1 );
    allocate( b.gpu_offset, "gpu_offset", n + 1 );
    allocate( b.dense_index, "dense_index", n );
    allocate( b.kind, "kind", n );
    allocate( b.transformer, "transformer", n );
    allocate( b.parallel, "parallel", n );
    allocate( b.transformer_index, "transformer_index", n );
    allocate( b.stage_offset, "stage_offset", n + 1 );
    allocate( b.transformer_summary, "transformer_summary", n );
    allocate( b.stage_ms, "stage_ms", num_stages );
    allocate( b.stage_memory_GiB, "stage_memory_GiB", num_stages );
    allocate( b.table_spec, "table_spec", num_tables );
    allocate( b.table_sharding, "table_sharding", num_tables );
    allocate( b.table_kernel, "table_kernel", num_tables );
    allocate( b.table_cache_fraction, "table_cache_fraction", num_tables );
    allocate( b.table_stats_index, "table_stats_index", num_tables );
    allocate( b.shard_table, "shard_table", num_shards );
    allocate( b.shard_gpu, "shard_gpu", num_shards );
    allocate( b.shard_rows, "shard_rows", num_shards );
    allocate( b.shard_cols, "shard_cols", num_shards );
    allocate( b.shard_learned_case, "shard_learned_case", num_shards );
    allocate( b.summary, "summary", n );
    allocate( b.shard_fwd_ms, "shard_fwd_ms", num_shards );
    allocate( b.shard_bwd_ms, "shard_bwd_ms", num_shards );
    allocate( b.gpu_phase_ms, "gpu_phase_ms", num_gpus * kNumPhases );
    allocate( b.gpu_memory_GiB, "gpu_memory_GiB", num_gpus );
    allocate( b.gpu_scratch, "gpu_scratch", num_gpus * 4 );
}

//! Packs scenarios one after the other into a batch, sharing the cases that several scenarios
//! (or tables, shards) have in common: dense parts, table statistics, transformer operator cases
//! and learned shard features are computed once per batch.
class BatchPacker
{
  public:
    BatchPacker( HostScenarioBatch& b, const CaseCache* cache ) : b_( b ), cache_( cache ) {}

    void add( std::size_t i, const ScenarioInput& in );
    void finish( std::size_t n );

  private:
    void addTransformer( std::size_t i, const ScenarioInput& in );
    void addDlrm( std::size_t i, const ScenarioInput& in );
    void addTables( std::size_t i, const ScenarioInput& in );
    void addShards( std::size_t i, const ScenarioInput& in );

    HostScenarioBatch& b_;
    const CaseCache* cache_;
    std::unordered_map<DenseCaseKey, int, CaseKeyHash> dense_ids_;
    std::unordered_map<TableCaseKey, int, TableCaseKeyHash> table_ids_;
    std::vector<DenseCase> dense_cases_;
    std::vector<TableCase> table_cases_;
    std::vector<EmbeddingTableStats> known_stats_; //!< per table case (cached ones filled in)
    std::vector<int> to_compute_;
    std::vector<DenseCost> known_dense_; //!< per dense case (cached ones filled in)
    std::vector<int> dense_to_compute_;
    std::unordered_map<TransformerCaseKey, int, CaseKeyHash> transformer_ids_;
    std::vector<TransformerOperatorCase> transformer_cases_;
    std::vector<TransformerOperatorCost> known_transformer_; //!< per transformer case
    std::vector<int> transformer_to_compute_;
    const LearnedCostModel* learned_model_ = nullptr;
    // Distinct learned shard feature vectors: a sweep's planners share most shards of a task.
    std::unordered_map<LearnedShardKey, int, CaseKeyHash> learned_ids_;
    std::vector<double> learned_features_;
    const LearnedGemmModel* gemm_model_ = nullptr;
    std::vector<int> step_scenarios_, other_scenarios_;
    int t_ = 0, s_ = 0, g_ = 0, st_ = 0; //!< next table, shard, GPU, stage
};

void BatchPacker::add( std::size_t i, const ScenarioInput& in )
{
    HostScenarioBatch& b = b_;
    b.learned_platform( i ) = -1.0;
    if ( in.model == CostModel::learned )
    {
        if ( learned_model_ && in.learned.model != learned_model_ )
            throw std::invalid_argument(
                fmt::format( "scenario {}: one batch can hold one learned cost model only", i ) );
        learned_model_ = in.learned.model;
        b.learned_platform( i ) = in.learned.platform_code;
    }
    b.global_batch( i ) = in.global_batch > 0 ? in.global_batch : in.workload->global_batch;
    b.kind( i ) = static_cast<std::uint8_t>( in.workload->kind );
    b.stage_offset( i ) = st_;
    b.table_offset( i ) = t_;
    b.shard_offset( i ) = s_;
    b.gpu_offset( i ) = g_;
    b.platform( i ) = *in.platform;
    b.model( i ) = static_cast<std::uint8_t>( in.model );
    ( isStepScenario( b, static_cast<int>( i ) ) ? step_scenarios_ : other_scenarios_ )
        .push_back( static_cast<int>( i ) );
    if ( in.workload->isTransformer() )
        addTransformer( i, in );
    else
        addDlrm( i, in );
}

void BatchPacker::addTransformer( std::size_t i, const ScenarioInput& in )
{
    HostScenarioBatch& b = b_;
    const ParallelConfig config = scenarioParallelConfig( in );
    b.transformer( i ) = in.workload->transformer;
    b.parallel( i ) = config;
    b.dense( i ) = DenseModel{};
    b.dense_index( i ) = -1;
    const TransformerOperatorCase oc =
        transformerOperatorCase( in.platform->gpu, in.workload->transformer, config );
    const TransformerCaseKey key = transformerCaseKey( oc );
    const auto [it, fresh] =
        transformer_ids_.emplace( key, static_cast<int>( transformer_cases_.size() ) );
    if ( fresh )
    {
        TransformerOperatorCost known{};
        if ( !cache_ || !cache_->transformer.find( key, known ) )
            transformer_to_compute_.push_back( static_cast<int>( transformer_cases_.size() ) );
        transformer_cases_.push_back( oc );
        known_transformer_.push_back( known );
    }
    b.transformer_index( i ) = it->second;
    st_ += config.pp;
}

void BatchPacker::addDlrm( std::size_t i, const ScenarioInput& in )
{
    HostScenarioBatch& b = b_;
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
        if ( gemm_model_ && in.learned_gemm != gemm_model_ )
            throw std::invalid_argument(
                fmt::format( "scenario {}: one batch can hold one learned GEMM model only", i ) );
        gemm_model_ = in.learned_gemm;
        dc.learned_gemm = true;
    }
    // find before emplace: emplace allocates a node even for a key already present.
    const DenseCaseKey dense_key = denseCaseKey( dc );
    auto it = dense_ids_.find( dense_key );
    if ( it == dense_ids_.end() )
    {
        it = dense_ids_.emplace( dense_key, static_cast<int>( dense_cases_.size() ) ).first;
        // A learned GEMM model's dense costs are not kept: the key does not name the model.
        DenseCost known{};
        if ( dc.learned_gemm || !cache_ || !cache_->dense.find( dense_key, known ) )
            dense_to_compute_.push_back( static_cast<int>( dense_cases_.size() ) );
        dense_cases_.push_back( dc );
        known_dense_.push_back( known );
    }
    b.dense_index( i ) = it->second;
    b.dense( i ) = in.workload->dense;
    addTables( i, in );
    addShards( i, in );
    g_ += in.platform->numGpus();
}

void BatchPacker::addTables( std::size_t i, const ScenarioInput& in )
{
    HostScenarioBatch& b = b_;
    for ( std::size_t k = 0; k < in.workload->tables.size(); ++k, ++t_ )
    {
        const int t = t_;
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
        // Most tables of a batch are cases seen before: look up first, build the case (and the
        // map node) only for new ones.
        auto at = table_ids_.find( key );
        if ( at == table_ids_.end() )
        {
            at = table_ids_.emplace( key, static_cast<int>( table_cases_.size() ) ).first;
            EmbeddingTableStats known{};
            if ( !cache_ || !cache_->tables.find( key, known ) )
                to_compute_.push_back( static_cast<int>( table_cases_.size() ) );
            table_cases_.push_back( { in.workload->tables[k], case_batch, case_cache } );
            known_stats_.push_back( known );
        }
        b.table_stats_index( t ) = at->second;
    }
}

void BatchPacker::addShards( std::size_t i, const ScenarioInput& in )
{
    HostScenarioBatch& b = b_;
    const bool learned_shards = in.model == CostModel::learned && in.learned.platform_code >= 0;
    for ( const ShardSpec& shard : in.plan->shards )
    {
        const int s = s_++;
        b.shard_table( s ) = shard.table;
        b.shard_gpu( s ) = shard.gpu;
        b.shard_rows( s ) = static_cast<double>( shard.num_rows );
        b.shard_cols( s ) = shard.num_cols;
        b.shard_learned_case( s ) = -1;
        if ( !learned_shards )
            continue;
        // The features predictStep would build for this shard (same inputs, same order).
        const int tk = t_ - static_cast<int>( in.workload->tables.size() ) + shard.table;
        LearnedShardKey x;
        learnedShardFeatures( b.table_spec( tk ), b.table_sharding( tk ), b.table_kernel( tk ),
                              b.table_cache_fraction( tk ), b.shard_rows( s ), b.shard_cols( s ),
                              static_cast<double>( b.global_batch( i ) ), in.platform->numGpus(),
                              in.learned.platform_code, x.data() );
        const auto [at, fresh] = learned_ids_.emplace( x, static_cast<int>( learned_ids_.size() ) );
        if ( fresh )
            learned_features_.insert( learned_features_.end(), x.begin(), x.end() );
        b.shard_learned_case( s ) = at->second;
    }
}

void BatchPacker::finish( std::size_t n )
{
    HostScenarioBatch& b = b_;
    auto fill = []( auto& view, const char* label, const auto& values )
    {
        allocate( view, label, values.size() );
        std::copy( values.begin(), values.end(), view.data() );
    };
    fill( b.learned_case_features, "learned_case_features", learned_features_ );
    allocate( b.learned_case_ms, "learned_case_ms", learned_ids_.size() );
    fill( b.dense_case, "dense_case", dense_cases_ );
    fill( b.dense_cost, "dense_cost", known_dense_ );
    fill( b.dense_case_to_compute, "dense_case_to_compute", dense_to_compute_ );
    fill( b.table_case, "table_case", table_cases_ );
    fill( b.table_stats, "table_stats", known_stats_ );
    fill( b.table_case_to_compute, "table_case_to_compute", to_compute_ );
    fill( b.transformer_case, "transformer_case", transformer_cases_ );
    fill( b.transformer_cost, "transformer_cost", known_transformer_ );
    fill( b.transformer_case_to_compute, "transformer_case_to_compute", transformer_to_compute_ );
    fill( b.step_scenario, "step_scenario", step_scenarios_ );
    if ( gemm_model_ )
    {
        b.gemm_mlp = gemm_model_->layout;
        b.gemm_mlp_params = gemm_model_->params;
    }
    if ( learned_model_ )
    {
        b.cost_mlp = learned_model_->layout;
        b.cost_mlp_params = learned_model_->params;
    }
    b.stage_offset( n ) = st_;
    b.table_offset( n ) = t_;
    b.shard_offset( n ) = s_;
    b.gpu_offset( n ) = g_;
    // Transformer scenarios' work grows with their pipeline stages (per-stage memory): neighbours
    // in the launch with alike stage counts keep a GPU warp's threads in step.
    std::stable_sort( other_scenarios_.begin(), other_scenarios_.end(),
                      [&]( int x, int y )
                      {
                          return b.stage_offset( x + 1 ) - b.stage_offset( x ) <
                                 b.stage_offset( y + 1 ) - b.stage_offset( y );
                      } );
    fill( b.other_scenario, "other_scenario", other_scenarios_ );
}
} // namespace

HostScenarioBatch packScenarios( const std::vector<ScenarioInput>& inputs, const CaseCache* cache )
{
    const std::size_t n = inputs.size();
    std::size_t num_tables = 0, num_shards = 0, num_gpus = 0, num_stages = 0;
    for ( std::size_t i = 0; i < n; ++i )
    {
        const std::string error = scenarioInputError( inputs[i] );
        if ( !error.empty() )
            throw std::invalid_argument( fmt::format( "scenario {}: {}", i, error ) );
        if ( inputs[i].workload->isTransformer() )
        {
            num_stages += std::size_t( inputs[i].plan->parallel.pp );
            continue;
        }
        num_tables += inputs[i].workload->tables.size();
        num_shards += inputs[i].plan->shards.size();
        num_gpus += inputs[i].platform->numGpus();
    }
    HostScenarioBatch b;
    allocateBatch( b, n, num_tables, num_shards, num_gpus, num_stages );
    BatchPacker packer( b, cache );
    for ( std::size_t i = 0; i < n; ++i )
        packer.add( i, inputs[i] );
    packer.finish( n );
    return b;
}

} // namespace shardsweep
