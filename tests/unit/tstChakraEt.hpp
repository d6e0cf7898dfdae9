// Chakra ET wire format (byte for byte against the smallest ETs of mlcommons/chakra's et_def.proto,
// hand-encoded), the step graph's replay (hand-derived times) and the DLRM graph of the shipped
// scenario against the model.
#include <algorithm>
#include <cmath>
#include <gtest/gtest.h>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/chakra_et.hpp>
#include <shardsweep/io/chakra_export.hpp>
#include <shardsweep/io/scenario_yaml.hpp>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/scenario/step_graph.hpp>
#include <string>

namespace Test
{
namespace et = shardsweep::chakra;

namespace
{
std::string bytesOf( std::initializer_list<int> v )
{
    std::string s;
    for ( int b : v )
        s.push_back( static_cast<char>( b ) );
    return s;
}
} // namespace

// ASTRA-sim's shipped microbenchmark all_reduce.0.et (81 bytes, §6) and the 32-byte single
// compute node, written by the encoder exactly and decoded back.
TEST( TEST_CATEGORY, chakra_et_reference_files_byte_for_byte )
{
    et::Trace ar;
    ar.version = "0.0.4";
    et::Node n;
    n.name = "all_reduce_8npus_1MB";
    n.type = et::NodeType::comm_coll;
    n.attrs = { et::Attribute::makeBool( "is_cpu_op", false ),
                et::Attribute::makeInt64( "comm_type", 0 ),
                et::Attribute::makeInt64( "comm_size", 1048576 ) };
    ar.nodes.push_back( n );
    const std::string expected = bytesOf( { 0x07, 0x0a, 0x05 } ) + "0.0.4" +
                                 bytesOf( { 0x48, 0x12, 0x14 } ) + "all_reduce_8npus_1MB" +
                                 bytesOf( { 0x18, 0x07, 0x52, 0x0e, 0x0a, 0x09 } ) + "is_cpu_op" +
                                 bytesOf( { 0xd8, 0x01, 0x00, 0x52, 0x0d, 0x0a, 0x09 } ) +
                                 "comm_type" + bytesOf( { 0x48, 0x00, 0x52, 0x0f, 0x0a, 0x09 } ) +
                                 "comm_size" + bytesOf( { 0x48, 0x80, 0x80, 0x40 } );
    ASSERT_EQ( expected.size(), 81u );
    EXPECT_EQ( et::encodeTrace( ar ), expected );

    const et::Trace back = et::decodeTrace( expected, "all_reduce.0.et" );
    EXPECT_EQ( back.version, "0.0.4" );
    ASSERT_EQ( back.nodes.size(), 1u );
    EXPECT_EQ( back.nodes[0].id, 0u );
    EXPECT_EQ( back.nodes[0].name, "all_reduce_8npus_1MB" );
    EXPECT_EQ( back.nodes[0].type, et::NodeType::comm_coll );
    ASSERT_NE( back.nodes[0].find( "comm_size" ), nullptr );
    EXPECT_EQ( back.nodes[0].find( "comm_size" )->kind, et::Attribute::Kind::int64_value );
    EXPECT_EQ( back.nodes[0].find( "comm_size" )->int_value, 1048576 );
    EXPECT_EQ( back.nodes[0].find( "is_cpu_op" )->kind, et::Attribute::Kind::bool_value );
    EXPECT_EQ( back.nodes[0].find( "is_cpu_op" )->int_value, 0 );
    EXPECT_EQ( back.nodes[0].find( "pg_name" ), nullptr );

    et::Trace comp;
    comp.version = "1.0.0";
    et::Node c;
    c.name = "c";
    c.type = et::NodeType::comp;
    c.duration_micros = 5;
    c.attrs = { et::Attribute::makeBool( "is_cpu_op", false ) };
    comp.nodes.push_back( c );
    EXPECT_EQ( et::encodeTrace( comp ),
               bytesOf( { 0x07, 0x0a, 0x05, 0x31, 0x2e, 0x30, 0x2e, 0x30, 0x17, 0x12, 0x01,
                          0x63, 0x18, 0x04, 0x38, 0x05, 0x52, 0x0e, 0x0a, 0x09, 0x69, 0x73,
                          0x5f, 0x63, 0x70, 0x75, 0x5f, 0x6f, 0x70, 0xd8, 0x01, 0x00 } ) );
}

// Every field and attribute kind the writer uses, through encode and decode; unpacked repeated
// dependencies and unknown fields (inputs, doc_string, other oneof members) from other writers.
TEST( TEST_CATEGORY, chakra_et_round_trip_and_foreign_fields )
{
    et::Trace t;
    et::Node n;
    n.id = 300; // two-byte varint: ac 02
    n.name = "x";
    n.type = et::NodeType::comm_recv;
    n.data_deps = { 1, 200 };
    n.ctrl_deps = { 7 };
    n.start_time_micros = 9;
    n.duration_micros = 1u << 20;
    n.attrs = { et::Attribute::makeInt32( "comm_tag", -3 ),
                et::Attribute::makeUint64( "tensor_size", 1ull << 40 ),
                et::Attribute::makeString( "pg_name", "12" ),
                et::Attribute::makeBoolList( "involved_dim", { true, false, true } ) };
    t.nodes = { n, et::Node{} };
    const std::string bytes = et::encodeTrace( t );
    const et::Trace back = et::decodeTrace( bytes, "t.et" );
    ASSERT_EQ( back.nodes.size(), 2u );
    const et::Node& b = back.nodes[0];
    EXPECT_EQ( b.id, 300u );
    EXPECT_EQ( b.type, et::NodeType::comm_recv );
    EXPECT_EQ( b.data_deps, ( std::vector<std::uint64_t>{ 1, 200 } ) );
    EXPECT_EQ( b.ctrl_deps, ( std::vector<std::uint64_t>{ 7 } ) );
    EXPECT_EQ( b.start_time_micros, 9u );
    EXPECT_EQ( b.duration_micros, 1u << 20 );
    EXPECT_EQ( b.find( "comm_tag" )->int_value, -3 );
    EXPECT_EQ( b.find( "tensor_size" )->uint_value, 1ull << 40 );
    EXPECT_EQ( b.find( "pg_name" )->string_value, "12" );
    EXPECT_EQ( b.find( "involved_dim" )->bool_list, ( std::vector<bool>{ true, false, true } ) );
    // The all-default node is written as an empty message (length 0) and read back.
    EXPECT_EQ( bytes.back(), '\0' );
    EXPECT_EQ( back.nodes[1].type, et::NodeType::invalid );
    // A -3 int32 is sign-extended to ten bytes on the wire (proto3).
    EXPECT_NE( bytes.find( bytesOf(
                   { 0x38, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 } ) ),
               std::string::npos );

    // Hand-written node (31 bytes): id 5, data_deps 3 and 4 unpacked (28 03 28 04), inputs
    // (42 ..), an attribute with doc_string and a double_val (19 = fixed64) that the reader
    // skips, type COMP (18 04), duration 6 (38 06).
    const std::string foreign =
        bytesOf( { 0x02, 0x0a, 0x00 } ) + // GlobalMetadata { version: "" } with an empty string
        bytesOf( { 0x1f, 0x08, 0x05, 0x28, 0x03, 0x28, 0x04, 0x42, 0x02, 0x0a, 0x00,
                   0x52, 0x0f, 0x0a, 0x01, 'a',  0x12, 0x01, 'd',  0x19, 0,    0,
                   0,    0,    0,    0,    0xf0, 0x3f, 0x18, 0x04, 0x38, 0x06 } );
    const et::Trace f = et::decodeTrace( foreign, "foreign.et" );
    ASSERT_EQ( f.nodes.size(), 1u );
    EXPECT_EQ( f.nodes[0].id, 5u );
    EXPECT_EQ( f.nodes[0].data_deps, ( std::vector<std::uint64_t>{ 3, 4 } ) );
    EXPECT_EQ( f.nodes[0].type, et::NodeType::comp );
    EXPECT_EQ( f.nodes[0].duration_micros, 6u );
    ASSERT_EQ( f.nodes[0].attrs.size(), 1u );
    EXPECT_EQ( f.nodes[0].attrs[0].name, "a" );
    EXPECT_EQ( f.nodes[0].attrs[0].kind, et::Attribute::Kind::other );
    EXPECT_EQ( f.nodes[0].attrs[0].other_field, 3 );
}

TEST( TEST_CATEGORY, chakra_et_malformed_input )
{
    auto message = []( const std::string& bytes )
    {
        try
        {
            et::decodeTrace( bytes, "bad.et" );
        }
        catch ( const shardsweep::InputError& e )
        {
            return std::string( e.what() );
        }
        return std::string( "no error" );
    };
    EXPECT_EQ( message( "" ), "bad.et: byte 0: GlobalMetadata: empty file (a trace starts with its "
                              "GlobalMetadata)" );
    // A node announced as 9 bytes with 2 left.
    EXPECT_EQ( message( bytesOf( { 0x00, 0x09, 0x08, 0x01 } ) ),
               "bad.et: byte 2: node 0: length 9 runs past the end (2 bytes left)" );
    // Node type 12 does not exist.
    EXPECT_EQ( message( bytesOf( { 0x00, 0x02, 0x18, 0x0c } ) ),
               "bad.et: byte 4: node 0: unknown node type 12" );
    // The second node's varint is cut off.
    EXPECT_EQ( message( bytesOf( { 0x00, 0x00, 0x02, 0x08, 0x80 } ) ),
               "bad.et: byte 5: node 1: truncated varint" );
    EXPECT_EQ( message( bytesOf( { 0x1f, 0x8b, 0x08 } ) ),
               "bad.et: gzip-compressed trace: gunzip it first" );
    EXPECT_THROW( et::readTraceFile( "/nonexistent/et.0.et" ), shardsweep::InputError );
}

namespace
{
// One Switch of 2 NPUs, 1 GB/s (1.073741824 B/ns), 500 ns per hop (2 hops), one chunk, δ = 10.
shardsweep::Network twoNpuSwitch()
{
    shardsweep::Network net;
    net.num_dims = 1;
    net.dims[0] = { shardsweep::Topology::Switch, 2, 1.0, 500.0 };
    return net;
}
} // namespace

// Two ranks: the collective starts when the later rank is ready, ends together on both;
// compute after it; a send/receive pair. All-to-all of 2 MiB on the Switch above:
// δ + p(p-1)/2 (⌊2·500 + 1 MiB / 1.073741824⌋ + δ) = 10 + (⌊977562.5⌋ + 10) = 977582 ns
// (also what `predict collective` and ASTRA-sim's closed form give).
TEST( TEST_CATEGORY, step_graph_replay_hand_derived )
{
    using shardsweep::StepGraphNode;
    const shardsweep::Network net = twoNpuSwitch();
    const shardsweep::SystemConfig sys{};
    StepGraphNode comp;
    comp.kind = StepGraphNode::Kind::compute;
    StepGraphNode coll;
    coll.kind = StepGraphNode::Kind::collective;
    coll.collective = shardsweep::Collective::all_to_all;
    coll.comm_bytes = 2097152;
    EXPECT_EQ( shardsweep::collectiveNodeNs( net, sys, coll ), 977582.0 );

    shardsweep::StepGraph g;
    g.ranks.resize( 2 );
    comp.duration_ns = 1000;
    g.ranks[0].push_back( comp );
    comp.duration_ns = 3000;
    g.ranks[1].push_back( comp );
    coll.deps = { 0 };
    g.ranks[0].push_back( coll );
    g.ranks[1].push_back( coll );
    comp.duration_ns = 500;
    comp.deps = { 1 };
    g.ranks[1].push_back( comp );
    // Rank 0 sends 1074 bytes to rank 1 after the collective: ⌊2·500 + 1074/1.073741824⌋ =
    // ⌊2000.2⌋ = 2000 ns; rank 1 posts the receive after its last compute (500 ns earlier).
    StepGraphNode send;
    send.kind = StepGraphNode::Kind::send;
    send.peer = 1;
    send.tag = 7;
    send.comm_bytes = 1074;
    send.deps = { 1 };
    g.ranks[0].push_back( send );
    StepGraphNode recv = send;
    recv.kind = StepGraphNode::Kind::recv;
    recv.peer = 0;
    recv.deps = { 2 };
    g.ranks[1].push_back( recv );

    const auto replay = shardsweep::replayStepGraph( g, net, sys );
    EXPECT_EQ( replay.rank_finish_ns[0], 3000.0 + 977582.0 + 2000.0 );
    EXPECT_EQ( replay.rank_finish_ns[1], 3000.0 + 977582.0 + 2000.0 );
    EXPECT_EQ( replay.compute_ns, 3500.0 );
    // Without the send, rank 1's receive never completes.
    g.ranks[0].pop_back();
    EXPECT_THROW( shardsweep::replayStepGraph( g, net, sys ), std::invalid_argument );
}

// The comm_size search: one dimension, where the model's all-to-all-v time is the busiest GPU's
// balanced all-to-all, gives back that size (rounded up to the alignment).
TEST( TEST_CATEGORY, step_graph_comm_size_for_time )
{
    shardsweep::Network net;
    net.num_dims = 1;
    net.dims[0] = { shardsweep::Topology::Switch, 8, 400.0, 936.25 };
    shardsweep::SystemConfig sys;
    sys.preferred_dataset_splits = 4;
    sys.active_chunks_per_dimension = 2;
    const double send[8] = { 7e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6 };
    const double recv[8] = { 1.75e6, 1.75e6, 1.75e6, 1.75e6, 1.75e6, 1.75e6, 1.75e6, 1.75e6 };
    const double target = shardsweep::allToAllvTimeNs( net, sys, send, recv, 8 );
    const std::uint64_t s = shardsweep::commSizeForTime(
        net, sys, shardsweep::Collective::all_to_all, target, 7e6 * 8 / 7, 32, 0, 1 );
    EXPECT_EQ( s % 32, 0u );
    EXPECT_GE( shardsweep::collectiveTimeNs( net, sys, shardsweep::Collective::all_to_all, s ),
               target );
    EXPECT_LT( shardsweep::collectiveTimeNs( net, sys, shardsweep::Collective::all_to_all, s - 32 ),
               target );
    // 7e6 · 8/7 = 8e6 bytes is a multiple of 32: the busiest GPU's balanced size, or the first
    // aligned size below it with the same (whole-ns) time.
    EXPECT_LE( s, 8000000u );
    EXPECT_EQ( shardsweep::collectiveTimeNs( net, sys, shardsweep::Collective::all_to_all, s ),
               shardsweep::collectiveTimeNs( net, sys, shardsweep::Collective::all_to_all, 8e6 ) );
}

// A calibrated platform's call terms (a fixed time and a pass over the bytes per collective;
// ASTRA-sim has neither) reach ASTRA-sim as bytes: the exported sizes replay, with ASTRA-sim's
// semantics, to the model's time, which the call terms made longer.
TEST( TEST_CATEGORY, step_graph_call_terms_reach_astra_sim_as_bytes )
{
    const auto scenario = shardsweep::readScenarioFile( SHARDSWEEP_SOURCE_DIR
                                                        "/inputs/scenarios/mlperf-dgx-h100.yaml" );
    shardsweep::Platform platform = scenario.platform.platform;
    shardsweep::ScenarioInput input;
    input.workload = &scenario.workload;
    input.platform = &platform;
    input.plan = &scenario.plan;
    input.global_batch = scenario.global_batch;
    const double plain_ms = shardsweep::evaluateScenario( input ).iteration_ms;
    platform.system.call_latency_ns = 40000.0;
    platform.system.call_bw_GBps = 500.0;
    const auto result = shardsweep::evaluateScenario( input );
    EXPECT_GT( result.iteration_ms, plain_ms + 0.08 ); // at least two calls on the path
    const auto graph = shardsweep::buildDlrmStepGraph( input );
    // What ASTRA-sim is given: the exported system file has no call terms.
    const auto astra = shardsweep::replayStepGraph( graph, platform.network,
                                                    shardsweep::astraSystem( platform.system ) );
    // A ring all-to-all's time rises in steps of 2 chunk rounds x 28 messages = 56 ns: each of
    // the three collectives on the path may overshoot by one step.
    EXPECT_NEAR( astra.finish_ns * 1e-6, result.iteration_ms, 3 * 56e-6 );
    // shardsweep's own replay prices the sizes as ASTRA-sim does, whatever the platform says.
    EXPECT_EQ( shardsweep::replayStepGraph( graph, platform.network, platform.system ).finish_ns,
               astra.finish_ns );
    int dense_allreduce = 0;
    for ( const auto& n : graph.ranks[0] )
        if ( n.name == "dense_allreduce" )
        {
            ++dense_allreduce; // priced as ASTRA-sim will, at the model's time
            EXPECT_NEAR( shardsweep::collectiveNodeNs( platform.network, platform.system, n ) *
                             1e-6,
                         result.gpu_phase_ms[int( shardsweep::Phase::dense_allreduce )], 1e-3 );
        }
    EXPECT_EQ( dense_allreduce, 1 );
}

// The shipped MLPerf scenario: the graph, written as traces (whole µs) and read back, replays
// to the model's iteration time; ranks differ by their embedding phases only.
TEST( TEST_CATEGORY, step_graph_dlrm_replays_to_model )
{
    const auto scenario = shardsweep::readScenarioFile( SHARDSWEEP_SOURCE_DIR
                                                        "/inputs/scenarios/mlperf-dgx-h100.yaml" );
    shardsweep::ScenarioInput input;
    input.workload = &scenario.workload;
    input.platform = &scenario.platform.platform;
    input.plan = &scenario.plan;
    input.global_batch = scenario.global_batch;
    const auto result = shardsweep::evaluateScenario( input );
    const auto graph = shardsweep::buildDlrmStepGraph( input );
    EXPECT_EQ( graph.iteration_ms, result.iteration_ms );
    ASSERT_EQ( graph.numRanks(), 8 );
    const auto& net = input.platform->network;
    const auto& sys = input.platform->system;
    const auto exact = shardsweep::replayStepGraph( graph, net, sys );
    // Collective sizes are whole multiples of splits·P bytes: a few ns from the model.
    EXPECT_NEAR( exact.finish_ns * 1e-6, result.iteration_ms, 20e-6 );
    const auto traces = shardsweep::stepGraphToTraces( graph );
    const auto rounded =
        shardsweep::replayStepGraph( shardsweep::tracesToStepGraph( traces, {}, {} ), net, sys );
    // Each compute node ends at its rank's rounded cumulative compute time (±0.5 µs); a stretch
    // of the path between two collectives is off by at most 1 µs, the whole path here by ≤ 2.
    EXPECT_NEAR( rounded.finish_ns * 1e-6, result.iteration_ms, 2e-3 );
    double max_fwd = 0.0;
    for ( int g = 0; g < 8; ++g )
        max_fwd = std::max( max_fwd, result.gpu_phase_ms[g * shardsweep::kNumPhases +
                                                         int( shardsweep::Phase::embedding_fwd )] );
    int waits = 0;
    for ( int g = 0; g < 8; ++g )
    {
        const auto phase = [&]( shardsweep::Phase k )
        { return result.gpu_phase_ms[g * shardsweep::kNumPhases + static_cast<int>( k )]; };
        const auto& nodes = graph.ranks[g];
        auto index = [&]( const std::string& name )
        {
            for ( std::size_t i = 0; i < nodes.size(); ++i )
                if ( nodes[i].name == name )
                    return static_cast<int>( i );
            return -1;
        };
        // Ten nodes, plus an explicit wait before the pooled all-to-all on every GPU but the
        // slowest (GPU 2 has the most lookup work).
        const bool slowest = phase( shardsweep::Phase::embedding_fwd ) == max_fwd;
        ASSERT_EQ( nodes.size(), slowest ? 10u : 11u ) << "GPU " << g;
        waits += !slowest;
        double total = 0.0;
        for ( const auto& n : nodes )
            total += n.kind == shardsweep::StepGraphNode::Kind::compute ? n.duration_ns : 0.0;
        std::uint64_t written = 0;
        for ( const auto& n : traces[g].nodes )
            written += n.duration_micros;
        EXPECT_EQ( written, static_cast<std::uint64_t>( std::llround( total / 1000.0 ) ) );
        const int fwd = index( "embedding_fwd" ), comm = index( "embedding_comm_fwd" );
        ASSERT_GE( fwd, 0 );
        ASSERT_GE( comm, 0 );
        EXPECT_EQ( nodes[fwd].duration_ns, phase( shardsweep::Phase::embedding_fwd ) * 1e6 );
        EXPECT_EQ( nodes[index( "embedding_bwd" )].duration_ns,
                   phase( shardsweep::Phase::embedding_bwd ) * 1e6 );
        if ( !slowest )
        {
            const int wait = index( "wait_embedding_comm_fwd" );
            ASSERT_EQ( wait, fwd + 1 );
            EXPECT_EQ( nodes[wait].deps, std::vector<int>{ fwd } );
            EXPECT_EQ( nodes[comm].deps, std::vector<int>{ wait } );
            EXPECT_NEAR( nodes[fwd].duration_ns + nodes[wait].duration_ns, max_fwd * 1e6, 1e-6 );
            // Every rank reaches the all-to-all at the same whole microsecond.
            std::uint64_t at = 0;
            for ( int i = 0; i <= wait; ++i )
                at += traces[g].nodes[i].duration_micros;
            std::uint64_t at2 = 0;
            for ( int i = 0; i <= index( "embedding_fwd" ); ++i )
                at2 += traces[2].nodes[i].duration_micros;
            EXPECT_EQ( at, at2 );
        }
        else
        {
            EXPECT_EQ( nodes[comm].deps, std::vector<int>{ fwd } );
        }
        // The collectives, in order, are the same on every rank (sizes included).
        std::vector<std::pair<std::string, std::uint64_t>> colls, colls0;
        for ( const auto& n : nodes )
            if ( n.kind == shardsweep::StepGraphNode::Kind::collective )
                colls.emplace_back( n.name, n.comm_bytes );
        for ( const auto& n : graph.ranks[0] )
            if ( n.kind == shardsweep::StepGraphNode::Kind::collective )
                colls0.emplace_back( n.name, n.comm_bytes );
        EXPECT_EQ( colls.size(), 4u );
        EXPECT_EQ( colls, colls0 );
    }
    EXPECT_EQ( waits, 7 );
    // The dense all-reduce moves the model's gradient bytes, rounded to splits·P = 32 bytes.
    const auto& ar = graph.ranks[0].back();
    EXPECT_EQ( ar.name, "dense_allreduce" );
    EXPECT_EQ( ar.comm_bytes % 32, 0u );
    EXPECT_NEAR( shardsweep::collectiveNodeNs( net, sys, ar ),
                 result.gpu_phase_ms[static_cast<int>( shardsweep::Phase::dense_allreduce )] * 1e6,
                 2.0 );
}

} // namespace Test

// How ASTRA-sim prices sub-groups and messages, by hand: [Switch 4 (150 GB/s, 500 ns), Ring 2
// (25 GB/s, 2000 ns)]; a ring over the members, each message on the first dimension where the
// two NPUs differ.
TEST( TEST_CATEGORY, step_graph_sub_groups_and_messages )
{
    shardsweep::Network net;
    net.num_dims = 2;
    net.dims[0] = { shardsweep::Topology::Switch, 4, 150.0, 500.0 };
    net.dims[1] = { shardsweep::Topology::Ring, 2, 25.0, 2000.0 };
    shardsweep::SystemConfig sys;
    sys.preferred_dataset_splits = 4;
    sys.algorithm[0][0] = shardsweep::CollectiveAlgorithm::direct;
    auto expect_view = [&]( std::vector<int> members, int npus, double bw, double latency )
    {
        const auto v = shardsweep::subGroupView( net, sys, members );
        EXPECT_EQ( v.network.num_dims, 1 );
        EXPECT_EQ( v.network.dims[0].npus_count, npus );
        EXPECT_EQ( v.network.dims[0].bandwidth_GBps, bw );
        EXPECT_EQ( v.network.dims[0].latency_ns, latency );
        EXPECT_TRUE( v.network.dims[0].topology == shardsweep::Topology::FullyConnected );
        // Two dimensions: ASTRA-sim falls back to the ring algorithm.
        EXPECT_TRUE( v.system.algorithm[0][0] == shardsweep::CollectiveAlgorithm::ring );
    };
    expect_view( { 0, 2 }, 2, 150.0, 1000.0 );       // Switch: 2 hops
    expect_view( { 1, 3, 5, 7 }, 4, 150.0, 1000.0 ); // 3 -> 5 and 7 -> 1 differ in dim 0 too
    expect_view( { 0, 4 }, 2, 25.0, 2000.0 );        // Ring of 2: 1 hop
    // A Ring dimension that the group does not close: the wrap-around pair 3 -> 0 is 3 hops.
    shardsweep::Network ring;
    ring.num_dims = 1;
    ring.dims[0] = { shardsweep::Topology::Ring, 8, 50.0, 100.0 };
    EXPECT_EQ( shardsweep::subGroupView( ring, sys, { 0, 1, 2, 3 } ).network.dims[0].latency_ns,
               300.0 );

    // ⌊2·500 + S / (150·2^30/1e9)⌋ >= 10000 ns from S = 1449551.46 bytes on.
    EXPECT_EQ( shardsweep::pointToPointNs( net, 0, 1, 1449552.0 ), 10000.0 );
    EXPECT_EQ( shardsweep::pointToPointNs( net, 0, 1, 1449551.0 ), 9999.0 );
    EXPECT_EQ( shardsweep::pointToPointSizeForTime( net, 0, 1, 10000.0 ), 1449552u );
    EXPECT_EQ( shardsweep::pointToPointSizeForTime( net, 0, 1, 500.0 ), 1u );

    // The model's size when it gives the target; else the smallest aligned size (splits ×
    // members = 8 bytes) that takes at least as long.
    const auto v = shardsweep::subGroupView( net, sys, { 0, 2 } );
    const auto ar = shardsweep::Collective::all_reduce;
    auto time = [&]( double bytes )
    { return shardsweep::collectiveTimeNsOnDims( v.network, v.system, ar, bytes, 0, 1 ); };
    EXPECT_EQ( shardsweep::groupCommSizeForTime( net, sys, { 0, 2 }, ar, time( 65536 ), 65536 ),
               65536u );
    const double target = 1.5 * time( 65536 );
    const auto s = shardsweep::groupCommSizeForTime( net, sys, { 0, 2 }, ar, target, 65536 );
    EXPECT_EQ( s % 8, 0u );
    EXPECT_GE( time( double( s ) ), std::round( target ) );
    EXPECT_LT( time( double( s - 8 ) ), std::round( target ) );

    // A collective on a group its rank is not in cannot be matched.
    shardsweep::StepGraph g;
    g.ranks.resize( 2 );
    g.groups = { { 1 } };
    shardsweep::StepGraphNode coll;
    coll.kind = shardsweep::StepGraphNode::Kind::collective;
    coll.group = 1;
    g.ranks[0].push_back( coll );
    EXPECT_THROW( shardsweep::replayStepGraph( g, net, sys ), std::invalid_argument );
}

// The shipped BERT-large scenario (TP 2 x DP 4 on one DGX H100): the graph replays to the
// model's iteration time; TP groups first, then DP groups.
TEST( TEST_CATEGORY, step_graph_transformer_replays_to_model )
{
    const auto scenario = shardsweep::readScenarioFile(
        SHARDSWEEP_SOURCE_DIR "/inputs/scenarios/bert-large-inline.yaml" );
    shardsweep::ScenarioInput input;
    input.workload = &scenario.workload;
    input.platform = &scenario.platform.platform;
    input.plan = &scenario.plan;
    input.global_batch = scenario.global_batch;
    const auto result = shardsweep::evaluateScenario( input );
    const auto graph = shardsweep::buildTransformerStepGraph( input );
    EXPECT_EQ( graph.iteration_ms, result.iteration_ms );
    ASSERT_EQ( graph.numRanks(), 8 );
    const std::vector<std::vector<int>> groups = { { 0, 1 }, { 2, 3 },       { 4, 5 },
                                                   { 6, 7 }, { 0, 2, 4, 6 }, { 1, 3, 5, 7 } };
    EXPECT_EQ( graph.groups, groups );
    const auto replay =
        shardsweep::replayStepGraph( graph, input.platform->network, input.platform->system );
    // Exact durations; collective sizes within 1 ns of the model's time each.
    int collectives = 0;
    for ( const auto& n : graph.ranks[0] )
        collectives += n.kind == shardsweep::StepGraphNode::Kind::collective;
    EXPECT_NEAR( replay.finish_ns * 1e-6, result.iteration_ms, collectives * 1e-6 );
    {
        // With call terms (step_graph_call_terms_reach_astra_sim_as_bytes), ASTRA-sim without
        // them replays the longer step: sizes within a few ns of the model's time each.
        shardsweep::Platform calibrated = *input.platform;
        calibrated.system.call_latency_ns = 40000.0;
        calibrated.system.call_bw_GBps = 500.0;
        shardsweep::ScenarioInput with_calls = input;
        with_calls.platform = &calibrated;
        const double ms = shardsweep::evaluateScenario( with_calls ).iteration_ms;
        EXPECT_GT( ms, result.iteration_ms + 20.0 );
        const auto astra = shardsweep::replayStepGraph(
            shardsweep::buildTransformerStepGraph( with_calls ), calibrated.network,
            shardsweep::astraSystem( calibrated.system ) );
        EXPECT_NEAR( astra.finish_ns * 1e-6, ms, collectives * 5e-6 );
    }
    // 8 micro-batches x 24 layers x (forward, recompute, backward + 4 TP all-reduces), the
    // embedding's and head's and the loss's, one DP all-reduce and the optimizer. Every TP
    // all-reduce (8 MiB or less on NVLink: < 46 us) is host-bound: each is followed by its
    // `.host` compute node.
    const int tp_per_micro_batch = 24 * 4 + 1 + 1 + 3;
    EXPECT_EQ( graph.ranks[0].size(),
               std::size_t( 8 * ( 24 * 7 + 2 + 4 + 3 + 2 + tp_per_micro_batch ) + 2 ) );
    int host = 0;
    for ( const auto& n : graph.ranks[0] )
        host += n.name.find( ".host@" ) != std::string::npos;
    EXPECT_EQ( host, 8 * tp_per_micro_batch );
}
