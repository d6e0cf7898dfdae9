#include <algorithm>
#include <limits>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/kernel/learned_cost_model.hpp>
#include <shardsweep/model/rng.hpp>
#include <shardsweep/scenario/scenario_space.hpp>
#include <stdexcept>
#include <string>

namespace shardsweep
{

namespace
{
// Mixed-radix digits, least significant first.
struct Digits
{
    std::uint64_t rest;
    std::uint64_t take( std::uint64_t radix )
    {
        const std::uint64_t d = rest % radix;
        rest /= radix;
        return d;
    }
};

std::uint64_t checkedProduct( std::uint64_t a, std::uint64_t b )
{
    if ( b != 0 && a > ~std::uint64_t( 0 ) / b )
        throw std::invalid_argument( "the sweep has more than 2^64 scenarios" );
    return a * b;
}
} // namespace

Platform resizePlatform( const Platform& platform, int num_gpus, int gpus_per_node_hint )
{
    if ( num_gpus <= 0 )
        throw std::invalid_argument( "GPU count must be > 0, got " + std::to_string( num_gpus ) );
    Platform p = platform;
    const int per_node = gpus_per_node_hint > 0 ? gpus_per_node_hint : platform.gpus_per_node;
    if ( num_gpus == platform.numGpus() && per_node == platform.gpus_per_node )
        return p;
    if ( platform.network.num_dims < 1 )
        throw std::invalid_argument( "the platform has no network dimensions" );
    if ( num_gpus <= per_node )
    {
        p.gpus_per_node = num_gpus;
        p.num_nodes = 1;
        p.network.num_dims = 1;
        p.network.dims[0].npus_count = num_gpus;
        for ( int d = 1; d < kMaxNetworkDims; ++d )
            p.network.dims[d] = NetworkDim{};
        return p;
    }
    if ( num_gpus % per_node != 0 )
        throw std::invalid_argument( std::to_string( num_gpus ) + " GPUs is not a multiple of " +
                                     std::to_string( per_node ) + " GPUs per node" );
    if ( platform.network.num_dims < 2 )
        throw std::invalid_argument( "the platform has no inter-node network dimension, so it "
                                     "cannot grow to " +
                                     std::to_string( num_gpus ) + " GPUs (more than one node)" );
    p.gpus_per_node = per_node;
    p.num_nodes = num_gpus / per_node;
    p.network.dims[0].npus_count = per_node;
    // Outer dims: keep an inner dim's size while it divides the remaining node count and is
    // smaller than it; the outermost kept dim takes the rest; dims of size 1 are dropped.
    int remaining = p.num_nodes;
    int out = 1;
    for ( int d = 1; d < platform.network.num_dims && remaining > 1; ++d )
    {
        NetworkDim dim = platform.network.dims[d];
        const bool last = d == platform.network.num_dims - 1;
        if ( !last && dim.npus_count > 1 && dim.npus_count < remaining &&
             remaining % dim.npus_count == 0 )
            remaining /= dim.npus_count;
        else
        {
            dim.npus_count = remaining;
            remaining = 1;
        }
        p.network.dims[out++] = dim;
    }
    p.network.num_dims = out;
    for ( int d = out; d < kMaxNetworkDims; ++d )
        p.network.dims[d] = NetworkDim{};
    return p;
}

Platform applyMemoryCap( const Platform& platform, double cap_GiB )
{
    Platform p = platform;
    if ( cap_GiB > 0.0 )
    {
        p.gpu.memory_GiB = std::min( p.gpu.memory_GiB, cap_GiB );
        p.hbm_reserve_GiB = 0.0;
    }
    return p;
}

ScenarioSpace::ScenarioSpace( SweepConfig config, SweepInputs inputs )
    : _config( std::move( config ) ), _inputs( std::move( inputs ) )
{
    const SweepConfig& c = _config;
    if ( _inputs.workloads.size() != c.workloads.size() )
        throw std::invalid_argument( "loaded workloads do not match the sweep's list" );
    if ( _inputs.platforms.size() < c.platforms.size() )
        throw std::invalid_argument( "loaded platforms do not match the sweep's list" );
    if ( _inputs.generator_platform.size() != c.generators.size() ||
         _inputs.generator_pool.size() != c.generators.size() )
        throw std::invalid_argument( "loaded generator inputs do not match the sweep's list" );
    if ( usesCostModel( c, CostModel::learned ) && !_inputs.learned_cost_model )
        throw std::invalid_argument( "cost model learned needs a model (cost_model_file)" );

    for ( const Workload& w : _inputs.workloads )
    {
        _workloads.push_back( std::make_shared<const Workload>( w ) );
        _workload_names.push_back( w.name );
    }
    for ( const TaskGeneratorConfig& g : c.generators )
        _workload_names.push_back( g.name );
    std::int64_t catalog_rows = 0;
    const auto addCatalogPart = [&]( std::size_t tables )
    {
        _catalog_offsets.push_back( std::int32_t( catalog_rows ) );
        catalog_rows += std::int64_t( tables );
        if ( catalog_rows > std::numeric_limits<std::int32_t>::max() )
            throw std::invalid_argument( "the sweep's workloads and pools hold more than 2^31 "
                                         "tables" );
    };
    for ( const Workload& w : _inputs.workloads )
        addCatalogPart( w.tables.size() );
    for ( const TablePool& pool : _inputs.generator_pool )
        addCatalogPart( pool.tables.size() );
    for ( const NamedPlatform& p : _inputs.platforms )
        _platform_names.push_back( p.name );

    // Every GPU count must fit every grid platform: fail now, not in the middle of a sweep.
    for ( std::size_t p = 0; p < c.platforms.size(); ++p )
        for ( int g : c.gpu_counts )
            if ( g > 0 )
            {
                try
                {
                    resizePlatform( _inputs.platforms[p].platform, g );
                }
                catch ( const std::invalid_argument& e )
                {
                    throw std::invalid_argument( "platform '" + _inputs.platforms[p].name +
                                                 "' with gpu_counts " + std::to_string( g ) + ": " +
                                                 e.what() );
                }
            }

    _grid_size = c.gridSize();
    _planner_axis_size = c.plannerAxisSize();
    std::uint64_t offset = _grid_size;
    _generator_offsets.push_back( offset );
    for ( std::size_t j = 0; j < c.generators.size(); ++j )
    {
        const TaskGeneratorConfig& g = c.generators[j];
        const ProtocolSpec spec = protocolSpec( g.protocol, g.options );
        const int pi = _inputs.generator_platform[j];
        if ( pi < 0 || pi >= int( _inputs.platforms.size() ) )
            throw std::invalid_argument( "generator '" + g.name + "' has no platform" );
        try
        {
            resizePlatform(
                _inputs.platforms[pi].platform, spec.num_gpus,
                std::min( spec.gpus_per_node, _inputs.platforms[pi].platform.gpus_per_node ) );
        }
        catch ( const std::invalid_argument& e )
        {
            throw std::invalid_argument( "generator '" + g.name + "': platform '" +
                                         _inputs.platforms[pi].name + "': " + e.what() );
        }
        _splits.push_back( g.protocol == TaskProtocol::dreamshard ||
                                   g.protocol == TaskProtocol::surco
                               ? dreamshardSplit( int( _inputs.generator_pool[j].size() ), g.seed )
                               : std::vector<int>{} );
        // Checks the pool size against the protocol once (task 0 stands for all tasks).
        if ( g.count > 0 )
            generateTask( g.protocol, _inputs.generator_pool[j], g.seed, 0, g.options );
        const std::uint64_t n = checkedProduct(
            checkedProduct( checkedProduct( g.count, g.batches.size() ), g.planners.size() ),
            g.cost_models.size() );
        offset += n;
        if ( offset < n )
            throw std::invalid_argument( "the sweep has more than 2^64 scenarios" );
        _generator_offsets.push_back( offset );
    }
    _size = offset;
}

std::uint64_t ScenarioSpace::generatorOffset( int j ) const
{
    return _generator_offsets.at( std::size_t( j ) );
}

namespace
{
//! A `learned` scenario's model and the code of its platform in it.
void bindLearnedModel( ScenarioSpec& s, const SweepInputs& inputs )
{
    if ( s.cost_model == CostModel::learned && inputs.learned_cost_model )
        s.learned = inputs.learned_cost_model->bind( inputs.platforms[s.platform_index].name );
    if ( inputs.learned_gemm_model && inputs.platform_learned_gemm[s.platform_index] )
        s.learned_gemm = inputs.learned_gemm_model.get();
}
} // namespace

ScenarioSpec ScenarioSpace::materialize( std::uint64_t id ) const
{
    if ( id >= _size )
        throw std::out_of_range( "scenario id " + std::to_string( id ) +
                                 " >= " + std::to_string( _size ) );
    const SweepConfig& c = _config;
    ScenarioSpec s;
    s.id = id;
    {
        CounterRng rng( c.seed, id, kStreamScenarioSeed );
        s.planner_seed = rng.next64();
    }
    if ( id < _grid_size )
    {
        Digits d{ id };
        s.cost_model = c.cost_models[d.take( c.cost_models.size() )];
        const std::uint64_t k = d.take( _planner_axis_size );
        const std::int64_t batch = c.batches[d.take( c.batches.size() )];
        const int gpus = c.gpu_counts[d.take( c.gpu_counts.size() )];
        s.platform_index = int( d.take( c.platforms.size() ) );
        s.workload_index = int( d.take( c.workloads.size() ) );
        s.workload = _workloads[s.workload_index];
        s.table_catalog_offset = _catalog_offsets[std::size_t( s.workload_index )];
        s.global_batch = batch > 0 ? batch : s.workload->global_batch;
        const Platform& base = _inputs.platforms[s.platform_index].platform;
        s.platform = gpus > 0 ? resizePlatform( base, gpus ) : base;
        s.gpu_count = s.platform.numGpus();
        if ( k < c.planners.size() )
            s.planner = c.planners[k];
        else
        {
            s.planner = PlannerKind::none;
            s.parallel = c.parallel.at( k - c.planners.size(), s.gpu_count, s.global_batch );
        }
        bindLearnedModel( s, _inputs );
        return s;
    }
    // Generated tasks: find the generator (a handful; linear search is fine).
    int j = 0;
    while ( id >= _generator_offsets[j + 1] )
        ++j;
    const TaskGeneratorConfig& g = c.generators[j];
    Digits d{ id - _generator_offsets[j] };
    s.cost_model = g.cost_models[d.take( g.cost_models.size() )];
    s.planner = g.planners[d.take( g.planners.size() )];
    s.global_batch = g.batches[d.take( g.batches.size() )];
    s.task_index = std::int64_t( d.rest );
    s.generator_index = j;
    s.protocol = g.protocol;
    s.task_seed = g.seed;
    s.workload_index = int( c.workloads.size() ) + j;
    s.platform_index = _inputs.generator_platform[j];

    GeneratedTask task =
        generateTask( g.protocol, _inputs.generator_pool[j], g.seed, std::uint64_t( s.task_index ),
                      g.options, DenseModel{}, _splits[j].empty() ? nullptr : &_splits[j] );
    task.workload.global_batch = s.global_batch;
    s.workload = std::make_shared<const Workload>( std::move( task.workload ) );
    s.table_catalog_offset = _catalog_offsets[c.workloads.size() + std::size_t( j )];
    s.pool_ids = std::move( task.pool_ids );
    const Platform& base = _inputs.platforms[s.platform_index].platform;
    s.platform = applyMemoryCap(
        resizePlatform( base, task.num_gpus, std::min( task.gpus_per_node, base.gpus_per_node ) ),
        task.memory_cap_GiB );
    s.gpu_count = s.platform.numGpus();
    s.memory_cap_GiB = task.memory_cap_GiB;
    bindLearnedModel( s, _inputs );
    return s;
}

std::vector<CatalogTable> ScenarioSpace::tableCatalog() const
{
    std::vector<CatalogTable> catalog;
    for ( std::size_t w = 0; w < _inputs.workloads.size(); ++w )
    {
        const Workload& workload = *_workloads[w];
        for ( std::size_t t = 0; t < workload.tables.size(); ++t )
            catalog.push_back( { &workload.tables[t],
                                 t < workload.table_names.size() ? workload.table_names[t] : "",
                                 int( w ), -1, int( t ) } );
    }
    for ( std::size_t j = 0; j < _inputs.generator_pool.size(); ++j )
    {
        const TablePool& pool = _inputs.generator_pool[j];
        for ( std::size_t i = 0; i < pool.tables.size(); ++i )
            catalog.push_back( { &pool.tables[i], i < pool.names.size() ? pool.names[i] : "", -1,
                                 int( j ), int( i ) } );
    }
    return catalog;
}

} // namespace shardsweep
