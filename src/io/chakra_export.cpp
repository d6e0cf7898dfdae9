// StepGraph <-> Chakra traces, and the ASTRA-sim files that replay them (docs/model/chakra.md).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/chakra_export.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/yaml_util.hpp>
#include <unordered_map>

namespace shardsweep
{

namespace
{

chakra::CommType commTypeOf( Collective c )
{
    switch ( c )
    {
    case Collective::all_reduce:
        return chakra::CommType::all_reduce;
    case Collective::all_gather:
        return chakra::CommType::all_gather;
    case Collective::reduce_scatter:
        return chakra::CommType::reduce_scatter;
    case Collective::all_to_all:
        return chakra::CommType::all_to_all;
    }
    return chakra::CommType::all_reduce;
}

// Integer attribute value whatever integer member of the oneof was used (ASTRA-sim's feeder
// converts between integer widths too).
bool integerValue( const chakra::Attribute& a, std::int64_t& out )
{
    using K = chakra::Attribute::Kind;
    if ( a.kind == K::int32_value || a.kind == K::int64_value || a.kind == K::bool_value )
    {
        out = a.int_value;
        return true;
    }
    if ( a.kind == K::uint64_value )
    {
        out = static_cast<std::int64_t>( a.uint_value );
        return true;
    }
    return false;
}

//! Node id -> position in `nodes`; an id that appears twice is an error of `source`.
std::unordered_map<std::uint64_t, int> nodePositions( const std::vector<chakra::Node>& nodes,
                                                      const std::string& source )
{
    std::unordered_map<std::uint64_t, int> index;
    for ( std::size_t i = 0; i < nodes.size(); ++i )
        if ( !index.emplace( nodes[i].id, static_cast<int>( i ) ).second )
            throw InputError( source,
                              fmt::format( "node {}: id {} appears twice", i, nodes[i].id ) );
    return index;
}

//! Reads one Chakra node of rank `r`'s trace as a StepGraph node, with ASTRA-sim's
//! analytical-backend semantics; errors name the trace (`source`) and the node.
struct ChakraNodeReader
{
    const chakra::Node& c;
    const std::string& source; //!< the trace file (or "rank R"), for error messages
    const std::size_t r;       //!< the rank whose trace holds the node
    const std::unordered_map<std::uint64_t, int>& index; //!< node id -> position in the trace
    const std::map<int, int>& group_index; //!< ASTRA-sim group id -> StepGraph group (1-based)

    StepGraphNode read() const
    {
        using Kind = StepGraphNode::Kind;
        StepGraphNode n;
        n.name = c.name;
        readDependencies( n );
        switch ( c.type )
        {
        case chakra::NodeType::comp:
            n.kind = Kind::compute;
            // ASTRA-sim: duration_micros · 1000 ns, and 1 ns for a 0 duration.
            n.duration_ns = c.duration_micros > 0 ? 1000.0 * c.duration_micros : 1.0;
            break;
        case chakra::NodeType::comm_coll:
            readCollective( n );
            break;
        case chakra::NodeType::comm_send:
        case chakra::NodeType::comm_recv:
            readSendRecv( n );
            break;
        default: // metadata, memory and invalid nodes take no time on the analytical backend
            n.kind = Kind::compute;
            n.duration_ns = 0.0;
        }
        return n;
    }

    [[noreturn]] void fail( const std::string& what ) const
    {
        throw InputError( source, fmt::format( "node {} ('{}'): {}", c.id, c.name, what ) );
    }

    //! The integer attribute `name`; `fallback` when it is absent and not `required`.
    std::int64_t integer( const char* name, bool required, std::int64_t fallback ) const
    {
        const chakra::Attribute* a = c.find( name );
        std::int64_t v = fallback;
        if ( !a )
        {
            if ( required )
                fail( fmt::format( "attribute '{}' is missing", name ) );
            return v;
        }
        if ( !integerValue( *a, v ) )
            fail( fmt::format( "attribute '{}' is not an integer", name ) );
        return v;
    }

    //! Data and control dependencies, as positions in the trace.
    void readDependencies( StepGraphNode& n ) const
    {
        for ( const auto* deps : { &c.data_deps, &c.ctrl_deps } )
            for ( std::uint64_t d : *deps )
            {
                auto it = index.find( d );
                if ( it == index.end() )
                    fail( fmt::format( "dependency {} is not a node of this trace", d ) );
                n.deps.push_back( it->second );
            }
    }

    //! A collective: its type, size, communicator group (pg_name) and involved dimensions.
    void readCollective( StepGraphNode& n ) const
    {
        n.kind = StepGraphNode::Kind::collective;
        const std::int64_t type = integer( "comm_type", true, 0 );
        switch ( static_cast<chakra::CommType>( type ) )
        {
        case chakra::CommType::all_reduce:
            n.collective = Collective::all_reduce;
            break;
        case chakra::CommType::all_gather:
            n.collective = Collective::all_gather;
            break;
        case chakra::CommType::reduce_scatter:
            n.collective = Collective::reduce_scatter;
            break;
        case chakra::CommType::all_to_all:
            n.collective = Collective::all_to_all;
            break;
        default:
            fail( fmt::format( "comm_type {} ({}) is not one ASTRA-sim's analytical "
                               "backend simulates (ALL_REDUCE, ALL_GATHER, "
                               "REDUCE_SCATTER, ALL_TO_ALL)",
                               type, chakra::commTypeName( chakra::CommType( type ) ) ) );
        }
        const std::int64_t size = integer( "comm_size", true, 0 );
        if ( size < 0 )
            fail( "negative comm_size" );
        n.comm_bytes = static_cast<std::uint64_t>( size );
        if ( const chakra::Attribute* pg = c.find( "pg_name" ) )
            readGroup( *pg, n );
        if ( const chakra::Attribute* dims = c.find( "involved_dim" ) )
        {
            if ( dims->kind != chakra::Attribute::Kind::bool_list )
                fail( "attribute 'involved_dim' is not a bool_list" );
            n.involved_dims = dims->bool_list;
        }
    }

    //! The StepGraph group of pg_name `pg` (empty or "0": all ranks, n.group unchanged).
    void readGroup( const chakra::Attribute& pg, StepGraphNode& n ) const
    {
        if ( pg.kind != chakra::Attribute::Kind::string_value )
            fail( "attribute 'pg_name' is not a string" );
        if ( !pg.string_value.empty() && pg.string_value != "0" )
        {
            int id = 0;
            try
            {
                id = std::stoi( pg.string_value );
            }
            catch ( const std::exception& )
            {
                fail( "pg_name '" + pg.string_value + "' is not a group id" );
            }
            auto it = group_index.find( id );
            if ( it == group_index.end() )
                fail( "communicator group " + pg.string_value +
                      " is not in the comm-group configuration" );
            n.group = it->second;
        }
    }

    //! A send or receive: its peer (this rank must be the source, resp. destination), tag, size.
    void readSendRecv( StepGraphNode& n ) const
    {
        const bool send = c.type == chakra::NodeType::comm_send;
        n.kind = send ? StepGraphNode::Kind::send : StepGraphNode::Kind::recv;
        const std::int64_t src = integer( "comm_src", !send, static_cast<int>( r ) );
        const std::int64_t dst = integer( "comm_dst", send, static_cast<int>( r ) );
        if ( ( send ? src : dst ) != static_cast<std::int64_t>( r ) )
            fail( fmt::format( "a {} on rank {} names rank {} as its {}", send ? "send" : "receive",
                               r, send ? src : dst, send ? "source" : "destination" ) );
        n.peer = static_cast<int>( send ? dst : src );
        n.tag = static_cast<int>( integer( "comm_tag", true, 0 ) );
        n.comm_bytes = static_cast<std::uint64_t>( integer( "comm_size", true, 0 ) );
    }
};

} // namespace

std::vector<chakra::Trace> stepGraphToTraces( const StepGraph& graph )
{
    std::vector<chakra::Trace> traces;
    for ( int r = 0; r < graph.numRanks(); ++r )
        traces.push_back( stepGraphRankToTrace( graph, r ) );
    return traces;
}

chakra::Trace stepGraphRankToTrace( const StepGraph& graph, int r )
{
    using chakra::Attribute;
    using Kind = StepGraphNode::Kind;
    chakra::Trace trace;
    {
        trace.version = "0.0.4";
        // Compute time so far on this rank, exact and as written (whole µs).
        double exact_ns = 0.0;
        std::uint64_t written_us = 0;
        const auto& nodes = graph.ranks[r];
        for ( std::size_t i = 0; i < nodes.size(); ++i )
        {
            const StepGraphNode& n = nodes[i];
            chakra::Node out;
            out.id = i;
            out.name = n.name;
            for ( int d : n.deps )
                out.data_deps.push_back( static_cast<std::uint64_t>( d ) );
            out.attrs.push_back( Attribute::makeBool( "is_cpu_op", false ) );
            switch ( n.kind )
            {
            case Kind::compute:
            {
                out.type = chakra::NodeType::comp;
                exact_ns += std::max( 0.0, n.duration_ns );
                const auto end_us = static_cast<std::uint64_t>( std::llround( exact_ns / 1000.0 ) );
                out.duration_micros = end_us > written_us ? end_us - written_us : 0;
                written_us += out.duration_micros;
                break;
            }
            case Kind::collective:
                out.type = chakra::NodeType::comm_coll;
                out.attrs.push_back( Attribute::makeInt64(
                    "comm_type", static_cast<std::int64_t>( commTypeOf( n.collective ) ) ) );
                out.attrs.push_back( Attribute::makeInt64(
                    "comm_size", static_cast<std::int64_t>( n.comm_bytes ) ) );
                out.attrs.push_back(
                    Attribute::makeString( "pg_name", std::to_string( n.group ) ) );
                if ( !n.involved_dims.empty() )
                    out.attrs.push_back(
                        Attribute::makeBoolList( "involved_dim", n.involved_dims ) );
                break;
            case Kind::send:
            case Kind::recv:
            {
                const bool send = n.kind == Kind::send;
                out.type = send ? chakra::NodeType::comm_send : chakra::NodeType::comm_recv;
                out.attrs.push_back( Attribute::makeInt32( "comm_src", send ? r : n.peer ) );
                out.attrs.push_back( Attribute::makeInt32( "comm_dst", send ? n.peer : r ) );
                out.attrs.push_back( Attribute::makeInt32( "comm_tag", n.tag ) );
                out.attrs.push_back( Attribute::makeInt64(
                    "comm_size", static_cast<std::int64_t>( n.comm_bytes ) ) );
                break;
            }
            }
            trace.nodes.push_back( std::move( out ) );
        }
    }
    return trace;
}

namespace
{

//! Reads rank r's `trace` node by node into `sink( StepGraphNode&& )`.
template <class Sink>
void readRankNodes( const chakra::Trace& trace, const std::string& source, std::size_t r,
                    const std::map<int, int>& group_index, Sink&& sink )
{
    const std::unordered_map<std::uint64_t, int> index = nodePositions( trace.nodes, source );
    for ( const chakra::Node& node : trace.nodes )
        sink( ChakraNodeReader{ node, source, r, index, group_index }.read() );
}

//! The comm groups as StepGraph groups (appended to `graph_groups`); returns ASTRA-sim group id
//! -> StepGraph group (1-based).
std::map<int, int> indexGroups( const std::map<int, std::vector<int>>& groups,
                                std::vector<std::vector<int>>& graph_groups )
{
    std::map<int, int> group_index;
    for ( const auto& [id, ranks] : groups )
    {
        graph_groups.push_back( ranks );
        group_index[id] = static_cast<int>( graph_groups.size() );
    }
    return group_index;
}

} // namespace

StepGraph tracesToStepGraph( const std::vector<chakra::Trace>& traces,
                             const std::map<int, std::vector<int>>& groups,
                             const std::vector<std::string>& sources )
{
    StepGraph graph;
    graph.workload_kind = "chakra";
    const std::map<int, int> group_index = indexGroups( groups, graph.groups );
    graph.ranks.resize( traces.size() );
    for ( std::size_t r = 0; r < traces.size(); ++r )
        readRankNodes( traces[r], r < sources.size() ? sources[r] : "rank " + std::to_string( r ),
                       r, group_index,
                       [&]( StepGraphNode&& node )
                       { graph.ranks[r].push_back( std::move( node ) ); } );
    return graph;
}

TraceGraphReader::TraceGraphReader( const std::map<int, std::vector<int>>& groups )
    : _group_index( indexGroups( groups, _graph.groups ) )
{
}

void TraceGraphReader::addRank( const chakra::Trace& trace, const std::string& source )
{
    const std::size_t r = static_cast<std::size_t>( _graph.numRanks() );
    _graph.addRank();
    readRankNodes( trace, source, r, _group_index,
                   [&]( const StepGraphNode& node ) { _graph.append( node ); } );
}

std::string astraNetworkYaml( const Network& net )
{
    std::string topology, npus, bandwidth, latency;
    for ( int d = 0; d < net.num_dims; ++d )
    {
        const char* sep = d ? ", " : "";
        topology += fmt::format( "{}{}", sep, nameOf( net.dims[d].topology ) );
        npus += fmt::format( "{}{}", sep, net.dims[d].npus_count );
        bandwidth += fmt::format( "{}{}", sep, net.dims[d].bandwidth_GBps );
        latency += fmt::format( "{}{}", sep, net.dims[d].latency_ns );
    }
    return fmt::format( "# ASTRA-sim analytical network (written by shardsweep export-et)\n"
                        "topology: [ {} ]\nnpus_count: [ {} ]\n"
                        "bandwidth: [ {} ]  # GB/s per link and direction (GB = 2^30 B)\n"
                        "latency: [ {} ]  # ns per hop\n",
                        topology, npus, bandwidth, latency );
}

std::string astraSystemJson( const SystemConfig& sys, int num_dims )
{
    std::string out = "{\n  \"scheduling-policy\": \"LIFO\",\n";
    out += fmt::format( "  \"endpoint-delay\": {},\n", sys.endpoint_delay_ns );
    out +=
        fmt::format( "  \"active-chunks-per-dimension\": {},\n", sys.active_chunks_per_dimension );
    out += fmt::format( "  \"preferred-dataset-splits\": {},\n", sys.preferred_dataset_splits );
    for ( int c = 0; c < kNumCollectives; ++c )
    {
        std::string list;
        for ( int d = 0; d < std::max( num_dims, 1 ); ++d )
            list += fmt::format( "{}\"{}\"", d ? ", " : "", nameOf( sys.algorithm[c][d] ) );
        out +=
            fmt::format( "  \"{}\": [ {} ],\n", astraImplementationKey( Collective( c ) ), list );
    }
    out += fmt::format( "  \"collective-optimization\": \"{}\",\n", nameOf( sys.optimization ) );
    out += fmt::format( "  \"local-mem-bw\": {},\n", sys.local_mem_bw_GBps );
    out += "  \"boost-mode\": 0,\n  \"roofline-enabled\": 0\n}\n";
    return out;
}

std::string astraRemoteMemoryJson()
{
    return "{\n  \"memory-type\": \"NO_MEMORY_EXPANSION\"\n}\n";
}

std::string astraCommGroupsJson( const std::vector<std::vector<int>>& groups )
{
    std::string out = "{\n";
    for ( std::size_t g = 0; g < groups.size(); ++g )
    {
        std::string ranks;
        for ( std::size_t i = 0; i < groups[g].size(); ++i )
            ranks += fmt::format( "{}{}", i ? ", " : "", groups[g][i] );
        out +=
            fmt::format( "  \"{}\": [ {} ]{}\n", g + 1, ranks, g + 1 < groups.size() ? "," : "" );
    }
    return out + "}\n";
}

std::map<int, std::vector<int>> readAstraCommGroups( const std::string& path, int num_ranks )
{
    YamlView root = loadYamlFile( path );
    root.requireMap( "a JSON object of group ids to lists of NPU ids" );
    std::map<int, std::vector<int>> groups;
    for ( const std::string& key : root.keys() )
    {
        YamlView list = root.at( key );
        int id = 0;
        try
        {
            std::size_t used = 0;
            id = std::stoi( key, &used );
            if ( used != key.size() || id <= 0 )
                throw std::invalid_argument( key );
        }
        catch ( const std::exception& )
        {
            list.fail( "a positive decimal group id as the key", "'" + key + "'" );
        }
        std::vector<int> ranks;
        for ( std::int64_t v : list.asIntList( Range::between( 0, num_ranks - 1 ) ) )
            ranks.push_back( static_cast<int>( v ) );
        groups[id] = ranks;
    }
    return groups;
}

} // namespace shardsweep
