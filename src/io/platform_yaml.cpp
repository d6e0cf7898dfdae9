#include <filesystem>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/gpu_calibration_yaml.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/model/chunk_pipeline.hpp>

namespace shardsweep
{

namespace
{
std::string listText( const std::vector<std::int64_t>& v )
{
    std::string s = "[";
    for ( std::size_t i = 0; i < v.size(); ++i )
        s += ( i ? ", " : "" ) + std::to_string( v[i] );
    return s + "]";
}

std::string fileStem( const std::string& file )
{
    return std::filesystem::path( file ).stem().string();
}
} // namespace

Network parseAstraNetwork( const YamlView& node )
{
    node.checkKeys( { "topology", "npus_count", "bandwidth", "latency" } );
    YamlView topology = node.at( "topology" );
    topology.requireSequence( "a list of topologies (one per dimension)" );
    const std::size_t dims = topology.size();
    if ( dims < 1 || dims > static_cast<std::size_t>( kMaxNetworkDims ) )
        topology.fail( "a list of 1 to " + std::to_string( kMaxNetworkDims ) + " dimensions",
                       std::to_string( dims ) + " entries" );
    for ( const char* key : { "npus_count", "bandwidth", "latency" } )
    {
        YamlView list = node.at( key );
        list.requireSequence( "a list (one entry per dimension)" );
        if ( list.size() != dims )
            list.fail( std::to_string( dims ) + " entries, one per dimension as in 'topology'",
                       std::to_string( list.size() ) + " entries" );
    }
    Network net;
    net.num_dims = static_cast<int>( dims );
    for ( std::size_t d = 0; d < dims; ++d )
    {
        NetworkDim& dim = net.dims[d];
        dim.topology = topology.element( d ).asEnum( enumPairs<Topology>() );
        // ASTRA-sim rejects a dimension of one NPU (NetworkParser: npus_count <= 1).
        dim.npus_count = node.at( "npus_count" ).element( d ).asInt32( Range::between( 2, 1e6 ) );
        dim.bandwidth_GBps =
            node.at( "bandwidth" ).element( d ).asDouble( Range{ 0.0, 1.0e6, false, true } );
        dim.latency_ns = node.at( "latency" ).element( d ).asDouble( Range::between( 0, 1.0e9 ) );
    }
    return net;
}

Network readAstraNetworkFile( const std::string& path )
{
    return parseAstraNetwork( loadYamlFile( path ) );
}

SystemConfig parseAstraSystem( const YamlView& node, int num_dims )
{
    std::vector<std::string> keys = { "endpoint-delay",
                                      "active-chunks-per-dimension",
                                      "preferred-dataset-splits",
                                      "collective-optimization",
                                      "local-mem-bw",
                                      "call-latency-ns",
                                      "call-bw" };
    for ( int c = 0; c < kNumCollectives; ++c )
        keys.push_back( astraImplementationKey( Collective( c ) ) );
    // Accepted so that ASTRA-sim system files work unchanged; they do not change an analytical,
    // congestion-unaware collective time (docs/INPUTS.md).
    const std::vector<std::string> ignored = { "scheduling-policy",
                                               "boost-mode",
                                               "roofline-enabled",
                                               "peak-perf",
                                               "track-local-mem",
                                               "replay-only",
                                               "L",
                                               "o",
                                               "g",
                                               "G",
                                               "local-reduction-delay",
                                               "model-shared-bus",
                                               "intra-dimension-scheduling",
                                               "inter-dimension-scheduling",
                                               "local-reduction-delay-ns" };
    keys.insert( keys.end(), ignored.begin(), ignored.end() );
    node.checkKeys( {}, keys );

    SystemConfig sys;
    sys.endpoint_delay_ns =
        node.getInt32Or( "endpoint-delay", sys.endpoint_delay_ns, Range::between( 0, 1e9 ) );
    sys.active_chunks_per_dimension = node.getInt32Or(
        "active-chunks-per-dimension", sys.active_chunks_per_dimension, Range::between( 1, 1e6 ) );
    sys.preferred_dataset_splits = node.getInt32Or(
        "preferred-dataset-splits", sys.preferred_dataset_splits, Range::between( 1, 1e6 ) );
    sys.optimization = node.getEnumOr( "collective-optimization", sys.optimization,
                                       enumPairs<CollectiveOptimization>() );
    // A localBWAware all-reduce on two or more dimensions shares queues between its phases, and
    // the model simulates those chunk by chunk (model/chunk_pipeline.hpp), up to a fixed count.
    if ( num_dims >= 2 && sys.optimization == CollectiveOptimization::local_bw_aware &&
         sys.preferred_dataset_splits > kMaxSimulatedChunks )
        node.find( "preferred-dataset-splits" )
            ->fail( "at most " + std::to_string( kMaxSimulatedChunks ) +
                        " with collective-optimization localBWAware on a network of " +
                        std::to_string( num_dims ) +
                        " dimensions (shardsweep simulates that all-reduce's chunks one by one)",
                    "'" + std::to_string( sys.preferred_dataset_splits ) + "'" );
    sys.local_mem_bw_GBps =
        node.getDoubleOr( "local-mem-bw", sys.local_mem_bw_GBps, Range{ 0.0, 1.0e6, false, true } );
    sys.call_latency_ns =
        node.getDoubleOr( "call-latency-ns", sys.call_latency_ns, Range::between( 0, 1.0e9 ) );
    sys.call_bw_GBps =
        node.getDoubleOr( "call-bw", sys.call_bw_GBps, Range{ 0.0, 1.0e9, false, true } );
    for ( int c = 0; c < kNumCollectives; ++c )
    {
        auto list = node.find( astraImplementationKey( Collective( c ) ) );
        if ( !list )
            continue;
        list->requireSequence( "a list of algorithms (one per network dimension)" );
        if ( list->size() < 1 ||
             list->size() > static_cast<std::size_t>( std::max( num_dims, 1 ) ) )
            list->fail( "1 to " + std::to_string( std::max( num_dims, 1 ) ) +
                            " algorithms (one per network dimension)",
                        std::to_string( list->size() ) + " entries" );
        for ( int d = 0; d < kMaxNetworkDims; ++d )
        {
            std::size_t i = std::min<std::size_t>( d, list->size() - 1 );
            YamlView e = list->element( i );
            CollectiveAlgorithm a = e.asEnum( enumPairs<CollectiveAlgorithm>() );
            if ( a == CollectiveAlgorithm::double_binary_tree &&
                 c != static_cast<int>( Collective::all_reduce ) )
                e.fail( "ring, direct or halvingDoubling (doubleBinaryTree is all-reduce only)" );
            sys.algorithm[c][d] = a;
        }
    }
    if ( auto v = node.find( "scheduling-policy" ) )
        v->asOneOf( { "LIFO", "FIFO", "EXPLICIT" } );
    for ( const char* flag : { "boost-mode", "roofline-enabled", "track-local-mem", "replay-only",
                               "model-shared-bus" } )
        if ( auto v = node.find( flag ) )
            v->asInt( Range::between( 0, 1 ) );
    for ( const char* number : { "peak-perf", "L", "o", "g", "G", "local-reduction-delay" } )
        if ( auto v = node.find( number ) )
            v->asDouble( Range::nonNegative() );
    return sys;
}

SystemConfig readAstraSystemFile( const std::string& path, int num_dims )
{
    return parseAstraSystem( loadYamlFile( path ), num_dims );
}

NamedPlatform parsePlatform( const YamlView& root, const GpuCatalog& catalog, bool embedded )
{
    std::vector<std::string> required = { "gpu", "gpus_per_node", "num_nodes" };
    std::vector<std::string> optional = {
        "name",    "description", "hbm_reserve_GiB", "host_memory_GiB", "host_to_gpu_GBps",
        "network", "system",      "calibration" };
    if ( embedded && !root.has( "kind" ) )
        root.requireMap( "a platform file path or a mapping of platform fields" );
    else
    {
        expectKind( root, "platform" );
        required.insert( required.begin(), "kind" );
    }
    root.checkKeys( required, optional );

    NamedPlatform out;
    out.name = root.find( "name" ) ? root.at( "name" ).asName() : fileStem( root.file() );
    Platform& p = out.platform;

    YamlView gpu = root.at( "gpu" );
    if ( gpu.isMap() )
    {
        GpuEntry e = parseGpu( gpu, true );
        out.gpu_name = e.name;
        p.gpu = e.spec;
    }
    else
    {
        std::string name = gpu.asName();
        const GpuEntry* e = catalog.find( name );
        if ( !e )
            gpu.fail( "a GPU of the catalog (" + joinChoices( catalog.names() ) + ")" +
                      [&]
                      {
                          std::string c = closestName( name, catalog.names() );
                          return c.empty() ? std::string() : " (did you mean '" + c + "'?)";
                      }() );
        out.gpu_name = e->name;
        p.gpu = e->spec;
    }

    p.gpus_per_node = root.getInt32( "gpus_per_node", Range::between( 1, 1024 ) );
    p.num_nodes = root.getInt32( "num_nodes", Range::between( 1, 1000000 ) );
    p.hbm_reserve_GiB =
        root.getDoubleOr( "hbm_reserve_GiB", 0.0, Range{ 0.0, p.gpu.memory_GiB, true, false } );
    p.host_memory_GiB = root.getDoubleOr( "host_memory_GiB", 0.0, Range::between( 0, 1.0e7 ) );
    p.host_to_gpu_GBps = root.getDoubleOr( "host_to_gpu_GBps", p.gpu.pcie_bandwidth_GBps,
                                           Range{ 0.0, 1.0e5, false, true } );

    const std::int64_t gpus = static_cast<std::int64_t>( p.gpus_per_node ) * p.num_nodes;
    auto network = root.find( "network" );
    if ( !network )
    {
        if ( gpus > 1 )
            root.at( "network" ).fail( "a network for " + std::to_string( gpus ) + " GPUs" );
    }
    else
    {
        std::string source;
        if ( network->isScalar() )
        {
            source = network->resolvePath( network->asName() );
            p.network = readAstraNetworkFile( source );
        }
        else
            p.network = parseAstraNetwork( *network );
        std::vector<std::int64_t> counts;
        std::int64_t product = 1;
        for ( int d = 0; d < p.network.num_dims; ++d )
        {
            counts.push_back( p.network.dims[d].npus_count );
            product *= p.network.dims[d].npus_count;
        }
        if ( product != gpus )
        {
            YamlView where = source.empty() ? network->at( "npus_count" ) : *network;
            where.fail( "npus_count multiplying to gpus_per_node x num_nodes = " +
                            std::to_string( p.gpus_per_node ) + " x " +
                            std::to_string( p.num_nodes ) + " = " + std::to_string( gpus ),
                        ( source.empty() ? "" : source + " with " ) + listText( counts ) +
                            " (product " + std::to_string( product ) + ")" );
        }
    }

    if ( auto system = root.find( "system" ) )
    {
        if ( system->isScalar() )
            p.system =
                readAstraSystemFile( system->resolvePath( system->asName() ), p.network.num_dims );
        else
            p.system = parseAstraSystem( *system, p.network.num_dims );
    }
    // A GPU calibration (`shardsweep calibrate gpu`) of the platform's GPU: its measured matmul
    // ceilings and effective bandwidth replace the spec's (model/gpu_calibration.hpp).
    if ( auto calibration = root.find( "calibration" ) )
    {
        CalibrationFile file;
        file.path = calibration->resolvePath( calibration->asName() );
        file.calibration = readGpuCalibration( file.path );
        if ( !applyGpuCalibration( out, file ) )
            calibration->fail( "a calibration of the platform's GPU '" + out.gpu_name + "'",
                               "one of '" + file.calibration.gpu + "' (" + file.path + ")" );
    }
    return out;
}

NamedPlatform readPlatformFile( const std::string& path )
{
    return readPlatformFile( path, defaultGpuCatalog() );
}

NamedPlatform readPlatformFile( const std::string& path, const GpuCatalog& catalog )
{
    return parsePlatform( loadYamlFile( path ), catalog );
}

NamedPlatform parsePlatformString( const std::string& text, const std::string& name,
                                   const GpuCatalog& catalog )
{
    return parsePlatform( loadYamlString( text, name ), catalog );
}

} // namespace shardsweep
