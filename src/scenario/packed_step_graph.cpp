// A step graph packed for the replay (step_graph.hpp): fixed-size nodes, one dependency array and
// one name string per rank.
#include <limits>
#include <shardsweep/scenario/step_graph.hpp>
#include <stdexcept>

namespace shardsweep
{

PackedStepGraph::Node PackedStepGraph::packNode( const StepGraphNode& node )
{
    Node n;
    n.duration_ns = node.duration_ns;
    n.comm_bytes = node.comm_bytes;
    n.group = node.group;
    n.peer = node.peer;
    n.tag = node.tag;
    n.kind = node.kind;
    n.collective = node.collective;
    n.all_dims = node.involved_dims.empty();
    // Dimensions beyond kMaxNetworkDims cannot be in a network: the replay never reads them.
    for ( std::size_t d = 0; d < node.involved_dims.size() && d < kMaxNetworkDims; ++d )
        if ( node.involved_dims[d] )
            n.dims_mask |= std::uint8_t( 1u << d );
    return n;
}

PackedStepGraph PackedStepGraph::pack( const StepGraph& graph )
{
    PackedStepGraph packed;
    packed.groups = graph.groups;
    for ( const auto& nodes : graph.ranks )
    {
        packed.addRank();
        Rank& rank = packed._ranks.back();
        rank.nodes.reserve( nodes.size() );
        rank.deps_end.reserve( nodes.size() );
        rank.names_end.reserve( nodes.size() );
        for ( const auto& node : nodes )
            packed.append( node );
    }
    return packed;
}

void PackedStepGraph::append( const StepGraphNode& node )
{
    Rank& rank = _ranks.back();
    // 32-bit offsets: 4 G dependencies or name bytes per rank.
    if ( rank.deps.size() + node.deps.size() > std::numeric_limits<std::uint32_t>::max() ||
         rank.names.size() + node.name.size() > std::numeric_limits<std::uint32_t>::max() )
        throw std::length_error( "a rank of the step graph has more than 4 G dependencies or name "
                                 "bytes" );
    rank.nodes.push_back( packNode( node ) );
    rank.deps.insert( rank.deps.end(), node.deps.begin(), node.deps.end() );
    rank.deps_end.push_back( static_cast<std::uint32_t>( rank.deps.size() ) );
    rank.names += node.name;
    rank.names_end.push_back( static_cast<std::uint32_t>( rank.names.size() ) );
}

PackedStepGraph::Dependencies PackedStepGraph::deps( int r, std::size_t i ) const
{
    const Rank& rank = _ranks[r];
    const int* base = rank.deps.data();
    return { base + ( i > 0 ? rank.deps_end[i - 1] : 0 ), base + rank.deps_end[i] };
}

std::string PackedStepGraph::name( int r, std::size_t i ) const
{
    const Rank& rank = _ranks[r];
    const std::uint32_t begin = i > 0 ? rank.names_end[i - 1] : 0;
    return rank.names.substr( begin, rank.names_end[i] - begin );
}

} // namespace shardsweep
