// The chunks of a collective in the dimensions' queues (model/chunk_pipeline.hpp): hand-derived
// schedules, a reference simulation written the way ASTRA-sim's system layer keeps its queues
// (a list per queue, running streams at its front, an event queue ordered by time and then by
// scheduling order), and times of AstraSim_Analytical_Congestion_Unaware (astra-sim 518bd51).
#include "input_test_support.hpp"

#include <gtest/gtest.h>
#include <list>
#include <queue>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/yaml_util.hpp>
#include <shardsweep/model/collectives.hpp>
#include <tuple>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace chunks
{
inline SystemConfig sys( int splits, int active )
{
    SystemConfig s;
    s.endpoint_delay_ns = 10;
    s.preferred_dataset_splits = splits;
    s.active_chunks_per_dimension = active;
    s.local_mem_bw_GBps = 3350;
    return s;
}

//! The reference: `chunks` streams created in order, each running phase k in queue queue[k]
//! (ASTRA-sim's active_Streams[queue]); a queue's list holds its running streams first, then the
//! waiting ones in arrival order, and runs at most `active` (Sys::SchedulerUnit). A stream that
//! ends a phase is erased from its list, appended to its next queue's list, then its old queue
//! starts what it can (notify_stream_removed), then the new one (notify_stream_added).
inline double referenceNs( const std::vector<double>& phase, const std::vector<int>& queue,
                           int chunks, int active )
{
    const int num_queues = 1 + *std::max_element( queue.begin(), queue.end() );
    std::vector<std::list<int>> lists( num_queues );
    std::vector<int> running( num_queues, 0 );
    std::vector<int> stage( chunks, 0 );
    using Event = std::tuple<double, long, int>; // end, scheduling order, stream
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
    long scheduled = 0;
    double now = 0.0;
    auto start_waiting = [&]( int q )
    {
        auto it = lists[q].begin();
        std::advance( it, running[q] );
        for ( ; it != lists[q].end() && running[q] < active; ++it, ++running[q] )
            events.emplace( now + phase[stage[*it]], scheduled++, *it );
    };
    for ( int s = 0; s < chunks; ++s )
    {
        lists[queue[0]].push_back( s );
        start_waiting( queue[0] );
    }
    while ( !events.empty() )
    {
        const auto [end, order, s] = events.top();
        events.pop();
        now = end;
        const int from = queue[stage[s]];
        lists[from].remove( s );
        --running[from];
        if ( ++stage[s] == static_cast<int>( phase.size() ) )
        {
            start_waiting( from );
            continue;
        }
        lists[queue[stage[s]]].push_back( s );
        start_waiting( from );
        start_waiting( queue[stage[s]] );
    }
    return now;
}

inline double modelNs( const std::vector<double>& phase, const std::vector<int>& queue, int chunks,
                       int active )
{
    return collective_detail::pipelineNs( sys( chunks, active ), phase.data(), queue.data(),
                                          static_cast<int>( phase.size() ) );
}
} // namespace chunks

// Phases 3, 1, 3 ns in the queues of dims 0, 1, 0 (a reduce-scatter and all-gather sharing dim
// 0 around an all-reduce on dim 1), one slot per queue.
// 2 chunks: t0 c0 RS; t3 c0 -> AR (ends 4), c1 RS (ends 6); t4 c0 waits for dim 0;
//   t6 c1 -> AR (7), c0 AG (9); t7 c1 waits; t9 c1 AG -> 12. (Flow shop: 7 + 1·3 = 10.)
// 3 chunks: t3 c1 RS (6); t4 c0 queues behind c2; t6 c2 RS (9), c1 AR (7); t7 c1 queues;
//   t9 c0 AG (12), c2 AR (10); t12 c1 AG (15); t15 c2 AG -> 18. (Flow shop: 13.)
// Two slots, 3 chunks: c0, c1 RS to 3 together; c0, c1 AR to 4 (dim 1 has two slots), c2 RS
//   (3 to 6); t4 c0 AG (4 to 7), c1 waits (c2 holds the other slot); t6 c2 AR (7), c1 AG (9);
//   t7 c2 AG -> 10. (Flow shop: 7 + 1·3 = 10.)
TEST( TEST_CATEGORY, chunk_pipeline_hand_derived_shared_queue )
{
    const std::vector<double> phase = { 3.0, 1.0, 3.0 };
    const std::vector<int> queue = { 0, 1, 0 };
    EXPECT_EQ( chunks::modelNs( phase, queue, 1, 1 ), 7.0 );
    EXPECT_EQ( chunks::modelNs( phase, queue, 2, 1 ), 12.0 );
    EXPECT_EQ( chunks::modelNs( phase, queue, 3, 1 ), 18.0 );
    EXPECT_EQ( chunks::modelNs( phase, queue, 3, 2 ), 10.0 );
    // Every phase in a queue of its own: the flow shop, 7 + (3 - 1)·3.
    EXPECT_EQ( chunks::modelNs( phase, { 0, 1, 2 }, 3, 1 ), 13.0 );
}

// The model equals the reference, and is at least the flow shop of separate queues, for every
// chunk count it simulates, 1 to 5 slots, on the phases of a two-dimension all-reduce (RS0 8665,
// AR1 13911, AG0 7963 ns: [Ring 4, Switch 2], 1-MiB chunks, tstCollectives) and of three- and
// four-dimension ones with a slow outer or a slow inner dimension.
TEST( TEST_CATEGORY, chunk_pipeline_equals_reference )
{
    const std::vector<std::pair<std::vector<double>, std::vector<int>>> cases = {
        { { 8665.0, 13911.0, 7963.0 }, { 0, 1, 0 } },
        { { 2979.0, 8249.0, 25936.0, 7850.0, 2511.0 }, { 0, 1, 2, 1, 0 } },
        { { 215082.0, 107801.0, 100168.0, 91517.0, 182514.0 }, { 0, 1, 2, 1, 0 } },
        { { 900.0, 4000.0, 250.0, 7000.0, 240.0, 3900.0, 880.0 }, { 0, 1, 2, 3, 2, 1, 0 } },
    };
    for ( const auto& [phase, queue] : cases )
        for ( int splits = 1; splits <= kMaxSimulatedChunks; ++splits )
            for ( int active = 1; active <= 5; ++active )
            {
                const double model = chunks::modelNs( phase, queue, splits, active );
                ASSERT_EQ( model, chunks::referenceNs( phase, queue, splits, active ) )
                    << "phases " << phase.size() << " splits " << splits << " active " << active;
                // Sharing a queue only adds waiting: never below separate queues (what the
                // model falls back to beyond kMaxSimulatedChunks).
                ASSERT_GE( model, collective_detail::flowShopNs( phase.data(),
                                                                 static_cast<int>( phase.size() ),
                                                                 splits, active ) );
            }
}

// End to end on [Ring 4, Switch 2] (tstCollectives' collcli::ringSwitch), localBWAware
// all-reduce of 7 MiB in 7 chunks, one slot: the reference over RS0 8665, AR1 13911, AG0 7963
// gives 116396 ns, where the flow shop of separate queues gives 30539 + 6·13911 = 114005.
// Dimension 0 carries 8665 + 7963 = 16628 ns per chunk against dimension 1's 13911, so the
// shared queue, not the all-reduce, paces the later chunks.
TEST( TEST_CATEGORY, chunk_pipeline_all_reduce_two_dims )
{
    Network net;
    net.num_dims = 2;
    net.dims[0] = { Topology::Ring, 4, 100.0, 200.0 };
    net.dims[1] = { Topology::Switch, 2, 25.0, 1000.0 };
    const double MiB = 1048576.0;
    EXPECT_EQ( chunks::referenceNs( { 8665.0, 13911.0, 7963.0 }, { 0, 1, 0 }, 7, 1 ), 116396.0 );
    EXPECT_EQ( collectiveTimeNs( net, chunks::sys( 7, 1 ), Collective::all_reduce, 7 * MiB ),
               116396.0 );
    // The reduce-scatter alone has a queue per phase: the flow shop, RS0 8665 + RS1 7019 +
    // 6·8665 = 67674.
    EXPECT_EQ( collectiveTimeNs( net, chunks::sys( 7, 1 ), Collective::reduce_scatter, 7 * MiB ),
               67674.0 );
}

// AstraSim_Analytical_Congestion_Unaware (astra-sim 518bd51, analytical backend 599a047), one
// all-reduce of comm_size 16 MiB per NPU, localBWAware, ring on every dimension (one
// `*-implementation` entry per dimension), endpoint-delay 10, run 2026-11-26 (`sys[*] finished`):
//   DGX-1 cube of rings [Ring 2, Ring 2, Ring 2], 50 GB/s, 500 ns, local-mem-bw 900:
//     splits/active 1/1 598914, 2/1 430752, 4/1 344616, 4/2 217960, 8/1 348776, 16/3 121865;
//   HGX-H100 pair [Switch 8 400 GB/s 936.25 ns, Ring 2 50 GB/s 1000 ns], local-mem-bw 3350:
//     1/1 149907, 2/1 134230, 4/1 186952, 4/2 93476, 8/1 292368, 16/3 172604.
// The flow shop of separate queues (the model before 2026-11-26) misses all 10 chunked ones.
TEST( TEST_CATEGORY, chunk_pipeline_matches_astra_sim )
{
    Network cube;
    cube.num_dims = 3;
    for ( int d = 0; d < 3; ++d )
        cube.dims[d] = { Topology::Ring, 2, 50.0, 500.0 };
    Network hgx;
    hgx.num_dims = 2;
    hgx.dims[0] = { Topology::Switch, 8, 400.0, 936.25 };
    hgx.dims[1] = { Topology::Ring, 2, 50.0, 1000.0 };
    const int splits_active[6][2] = { { 1, 1 }, { 2, 1 }, { 4, 1 }, { 4, 2 }, { 8, 1 }, { 16, 3 } };
    const double cube_ns[6] = { 598914.0, 430752.0, 344616.0, 217960.0, 348776.0, 121865.0 };
    const double hgx_ns[6] = { 149907.0, 134230.0, 186952.0, 93476.0, 292368.0, 172604.0 };
    const double bytes = 16.0 * 1048576.0;
    for ( int i = 0; i < 6; ++i )
    {
        SystemConfig s = chunks::sys( splits_active[i][0], splits_active[i][1] );
        s.local_mem_bw_GBps = 900;
        EXPECT_EQ( collectiveTimeNs( cube, s, Collective::all_reduce, bytes ), cube_ns[i] )
            << "cube, splits " << splits_active[i][0] << " active " << splits_active[i][1];
        s.local_mem_bw_GBps = 3350;
        EXPECT_EQ( collectiveTimeNs( hgx, s, Collective::all_reduce, bytes ), hgx_ns[i] )
            << "hgx, splits " << splits_active[i][0] << " active " << splits_active[i][1];
    }
}

// The simulation keeps kMaxSimulatedChunks chunks: a system file with more splits is refused
// where an all-reduce could share queues (localBWAware, two or more dimensions) and accepted
// elsewhere.
TEST( TEST_CATEGORY, chunk_pipeline_splits_limit_in_system_files )
{
    const YamlView sixty_five = loadYamlString( "preferred-dataset-splits: 65\n", "sys.json" );
    EXPECT_EQ( parseAstraSystem( sixty_five, 1 ).preferred_dataset_splits, 65 );
    expectInputError( [&] { parseAstraSystem( sixty_five, 2 ); },
                      "sys.json:1:27: field 'preferred-dataset-splits': expected at most 64 with "
                      "collective-optimization localBWAware on a network of 2 dimensions "
                      "(shardsweep simulates that all-reduce's chunks one by one), found '65'" );
    EXPECT_EQ( parseAstraSystem( loadYamlString( "preferred-dataset-splits: 64\n", "s.json" ), 4 )
                   .preferred_dataset_splits,
               64 );
    const YamlView baseline = loadYamlString(
        "preferred-dataset-splits: 1000\ncollective-optimization: baseline\n", "b.json" );
    EXPECT_EQ( parseAstraSystem( baseline, 3 ).preferred_dataset_splits, 1000 );
}
} // namespace Test
