// The step graph packed for the replay (what inspect-et holds for millions of nodes): every field
// the replay reads survives packing, dependencies and names come back per node, and a
// collective's involved dimensions keep their meaning (beyond the network: ignored; a gap among
// the network's: an error naming the collective).
#include <gtest/gtest.h>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/scenario/step_graph.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace Test
{
using shardsweep::PackedStepGraph;
using shardsweep::StepGraphNode;

namespace
{
std::vector<int> dependencies( const PackedStepGraph& g, int r, std::size_t i )
{
    const auto deps = g.deps( r, i );
    return { deps.begin(), deps.end() };
}

StepGraphNode makeNode( StepGraphNode::Kind kind, std::string name, std::vector<int> deps )
{
    StepGraphNode n;
    n.kind = kind;
    n.name = std::move( name );
    n.deps = std::move( deps );
    return n;
}
} // namespace

TEST( TEST_CATEGORY, packed_step_graph_keeps_what_the_replay_reads )
{
    using Kind = StepGraphNode::Kind;
    shardsweep::StepGraph graph;
    graph.groups = { { 0, 1 } };
    graph.ranks.resize( 2 );
    StepGraphNode load = makeNode( Kind::compute, "load", {} );
    load.duration_ns = 1500.0;
    // A name longer than std::string's inline buffer.
    StepGraphNode attn = makeNode( Kind::collective, "layer0.tp_attn@mb12", { 0 } );
    attn.collective = shardsweep::Collective::all_gather;
    attn.comm_bytes = 4096;
    attn.group = 1;
    attn.involved_dims = { false, true, true };
    StepGraphNode send = makeNode( Kind::send, "p2p", { 0, 1 } );
    send.peer = 1;
    send.tag = 3;
    send.comm_bytes = 10;
    graph.ranks[0] = { load, attn, send };
    StepGraphNode recv = makeNode( Kind::recv, "", {} );
    recv.peer = 0;
    recv.tag = 3;
    StepGraphNode all = makeNode( Kind::collective, "dp", { 0 } );
    graph.ranks[1] = { recv, all };

    const PackedStepGraph g = PackedStepGraph::pack( graph );
    ASSERT_EQ( g.numRanks(), 2 );
    ASSERT_EQ( g.size( 0 ), 3u );
    ASSERT_EQ( g.size( 1 ), 2u );
    EXPECT_EQ( g.groups, graph.groups );
    EXPECT_EQ( g.node( 0, 0 ).kind, Kind::compute );
    EXPECT_EQ( g.node( 0, 0 ).duration_ns, 1500.0 );
    EXPECT_EQ( g.node( 0, 1 ).kind, Kind::collective );
    EXPECT_EQ( g.node( 0, 1 ).collective, shardsweep::Collective::all_gather );
    EXPECT_EQ( g.node( 0, 1 ).comm_bytes, 4096u );
    EXPECT_EQ( g.node( 0, 1 ).group, 1 );
    EXPECT_FALSE( g.node( 0, 1 ).all_dims );
    EXPECT_EQ( g.node( 0, 1 ).dims_mask, 0b110 );
    EXPECT_EQ( g.node( 0, 2 ).kind, Kind::send );
    EXPECT_EQ( g.node( 0, 2 ).peer, 1 );
    EXPECT_EQ( g.node( 0, 2 ).tag, 3 );
    EXPECT_EQ( g.node( 0, 2 ).comm_bytes, 10u );
    EXPECT_EQ( g.node( 1, 0 ).kind, Kind::recv );
    EXPECT_EQ( g.node( 1, 0 ).peer, 0 );
    EXPECT_TRUE( g.node( 1, 1 ).all_dims ); // an empty involved_dims: every dimension
    EXPECT_EQ( g.node( 1, 1 ).dims_mask, 0 );

    EXPECT_EQ( dependencies( g, 0, 0 ), std::vector<int>{} );
    EXPECT_EQ( dependencies( g, 0, 1 ), std::vector<int>{ 0 } );
    EXPECT_EQ( dependencies( g, 0, 2 ), ( std::vector<int>{ 0, 1 } ) );
    EXPECT_EQ( dependencies( g, 1, 0 ), std::vector<int>{} );
    EXPECT_EQ( dependencies( g, 1, 1 ), std::vector<int>{ 0 } );
    EXPECT_EQ( g.name( 0, 0 ), "load" );
    EXPECT_EQ( g.name( 0, 1 ), "layer0.tp_attn@mb12" );
    EXPECT_EQ( g.name( 0, 2 ), "p2p" );
    EXPECT_EQ( g.name( 1, 0 ), "" );
    EXPECT_EQ( g.name( 1, 1 ), "dp" );
    // The memory figure in docs/model/chakra.md rests on this size.
    EXPECT_LE( sizeof( PackedStepGraph::Node ), 40u );
}

TEST( TEST_CATEGORY, packed_collective_involved_dimensions )
{
    shardsweep::Network net;
    net.num_dims = 2;
    net.dims[0] = { shardsweep::Topology::Switch, 4, 100.0, 500.0 };
    net.dims[1] = { shardsweep::Topology::Ring, 2, 25.0, 1000.0 };
    const shardsweep::SystemConfig sys{};
    StepGraphNode coll;
    coll.kind = StepGraphNode::Kind::collective;
    coll.name = "grads";
    coll.comm_bytes = 1 << 20;
    // Dimension 2 is not in this network: only dimension 0 counts.
    coll.involved_dims = { true, false, true };
    const double dim0 = shardsweep::collectiveTimeNsOnDims( net, sys, coll.collective,
                                                            double( coll.comm_bytes ), 0, 1 );
    EXPECT_GT( dim0, 0.0 );
    EXPECT_EQ( shardsweep::collectiveNodeNs( net, sys, coll ), dim0 );
    // Only dimension 1.
    coll.involved_dims = { false, true };
    EXPECT_EQ( shardsweep::collectiveNodeNs( net, sys, coll ),
               shardsweep::collectiveTimeNsOnDims( net, sys, coll.collective,
                                                   double( coll.comm_bytes ), 1, 1 ) );
    // None: no time.
    coll.involved_dims = { false, false };
    EXPECT_EQ( shardsweep::collectiveNodeNs( net, sys, coll ), 0.0 );
    // A gap inside a three-dimension network.
    net.num_dims = 3;
    net.dims[2] = { shardsweep::Topology::Switch, 2, 25.0, 1000.0 };
    coll.involved_dims = { true, false, true };
    try
    {
        shardsweep::collectiveNodeNs( net, sys, coll );
        ADD_FAILURE() << "no error";
    }
    catch ( const std::invalid_argument& e )
    {
        EXPECT_EQ( std::string( e.what() ),
                   "collective 'grads': involved dimensions are not contiguous" );
    }
}

} // namespace Test
