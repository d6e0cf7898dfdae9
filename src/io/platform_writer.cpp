// Writing a platform with a new network and system (platform_writer.hpp).
#include <fmt/format.h>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/platform_writer.hpp>
#include <yaml-cpp/yaml.h>

namespace shardsweep
{

namespace
{

YAML::Node flowList( const std::vector<std::string>& items )
{
    YAML::Node list( YAML::NodeType::Sequence );
    for ( const std::string& s : items )
        list.push_back( s );
    list.SetStyle( YAML::EmitterStyle::Flow );
    return list;
}

std::string number( double x )
{
    return fmt::format( "{}", x );
}

YAML::Node networkNode( const Network& net )
{
    std::vector<std::string> topology, npus, bandwidth, latency;
    for ( int d = 0; d < net.num_dims; ++d )
    {
        topology.push_back( nameOf( net.dims[d].topology ) );
        npus.push_back( std::to_string( net.dims[d].npus_count ) );
        bandwidth.push_back( number( net.dims[d].bandwidth_GBps ) );
        latency.push_back( number( net.dims[d].latency_ns ) );
    }
    YAML::Node n;
    n["topology"] = flowList( topology );
    n["npus_count"] = flowList( npus );
    n["bandwidth"] = flowList( bandwidth );
    n["latency"] = flowList( latency );
    return n;
}

YAML::Node systemNode( const SystemConfig& sys, int num_dims )
{
    YAML::Node n;
    n["endpoint-delay"] = std::to_string( sys.endpoint_delay_ns );
    n["active-chunks-per-dimension"] = std::to_string( sys.active_chunks_per_dimension );
    n["preferred-dataset-splits"] = std::to_string( sys.preferred_dataset_splits );
    const std::pair<const char*, Collective> keys[] = {
        { "all-reduce-implementation", Collective::all_reduce },
        { "all-gather-implementation", Collective::all_gather },
        { "reduce-scatter-implementation", Collective::reduce_scatter },
        { "all-to-all-implementation", Collective::all_to_all } };
    for ( const auto& [key, c] : keys )
    {
        std::vector<std::string> algorithms;
        for ( int d = 0; d < num_dims; ++d )
            algorithms.push_back( nameOf( sys.algorithm[static_cast<int>( c )][d] ) );
        n[key] = flowList( algorithms );
    }
    n["collective-optimization"] = std::string( nameOf( sys.optimization ) );
    n["local-mem-bw"] = number( sys.local_mem_bw_GBps );
    // shardsweep's own keys, written only when set, so that a platform without them stays an
    // ASTRA-sim system config.
    if ( sys.call_latency_ns > 0.0 )
        n["call-latency-ns"] = number( sys.call_latency_ns );
    if ( sys.call_bw_GBps > 0.0 )
        n["call-bw"] = number( sys.call_bw_GBps );
    return n;
}

} // namespace

std::string platformYamlWithNetwork( const std::string& base_path, const std::string& name,
                                     const Platform& platform,
                                     const std::vector<std::string>& comments )
{
    YAML::Node root;
    try
    {
        root = YAML::LoadFile( base_path );
    }
    catch ( const YAML::Exception& e )
    {
        throw InputError( base_path, e.what() );
    }
    root["name"] = name;
    root["network"] = networkNode( platform.network );
    root["system"] = systemNode( platform.system, platform.network.num_dims );
    YAML::Emitter out;
    out << root;
    std::string text;
    for ( const std::string& c : comments )
        text += "# " + c + "\n";
    return text + out.c_str() + "\n";
}

} // namespace shardsweep
