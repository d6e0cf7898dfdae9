// ASTRA-sim 2.0 congestion-unaware collectives: worked examples checked against
// AstraSim_Analytical_Congestion_Unaware (astra-sim 518bd51) and upstream's regression value,
// exactly, plus hand-derived cases.
#include <algorithm>
#include <backend_equal.hpp>
#include <cmath>
#include <gtest/gtest.h>
#include <random>
#include <shardsweep/model/collectives.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
Network oneDim( Topology topology, int npus, double GBps, double latency_ns )
{
    Network net;
    net.num_dims = 1;
    net.dims[0] = { topology, npus, GBps, latency_ns };
    return net;
}

SystemConfig system( int splits, int active, double local_mem_bw )
{
    SystemConfig sys;
    sys.endpoint_delay_ns = 10;
    sys.preferred_dataset_splits = splits;
    sys.active_chunks_per_dimension = active;
    sys.local_mem_bw_GBps = local_mem_bw;
    return sys;
}

constexpr double MiB = 1048576.0;
} // namespace

TEST( TEST_CATEGORY, collectives_worked_examples )
{
    const Network ring8 = oneDim( Topology::Ring, 8, 50.0, 500.0 );
    const SystemConfig one_chunk = system( 1, 1, 3350 );
    EXPECT_EQ( collectiveTimeNs( ring8, one_chunk, Collective::all_reduce, MiB ), 42143.0 );
    EXPECT_EQ( collectiveTimeNs( ring8, one_chunk, Collective::all_gather, MiB ), 140297.0 );
    EXPECT_EQ( collectiveTimeNs( ring8, one_chunk, Collective::all_to_all, MiB ), 82638.0 );

    const Network hgx = oneDim( Topology::Switch, 8, 400.0, 936.25 );
    EXPECT_EQ( collectiveTimeNs( hgx, one_chunk, Collective::all_reduce, MiB ), 31447.0 );
    EXPECT_EQ( collectiveTimeNs( hgx, system( 4, 2, 3350 ), Collective::all_reduce, MiB ),
               55222.0 );
    // Upstream's regression reference (tests/rt_template/refs/stdout.txt).
    EXPECT_EQ( collectiveTimeNs( ring8, system( 4, 1, 50 ), Collective::all_reduce, MiB ),
               117780.0 );
}

// Hand-derived: reduce-scatter of 1 MiB on Ring_8npus, one chunk.
// B = 50·2^30/1e9 B/ns; t(131072 B, 1 hop) = ⌊500 + 2441.40625⌋ = 2941; R = 3·⌊131072/3350⌋ =
// 117; RS = δ + 7·(2941 + 10 + 117) = 10 + 21476 = 21486.
TEST( TEST_CATEGORY, collectives_hand_derived_ring_reduce_scatter )
{
    EXPECT_EQ( collectiveTimeNs( oneDim( Topology::Ring, 8, 50.0, 500.0 ), system( 1, 1, 3350 ),
                                 Collective::reduce_scatter, MiB ),
               21486.0 );
}

// Hand-derived: direct all-to-all of 1 MiB on FullyConnected 4 NPUs, 100 GB/s, 1000 ns:
// D/p = 262144 B; B = 107.3741824 B/ns → 2441.40625 ns; t = ⌊1000 + 2441.40625⌋ = 3441;
// A2A = 2δ + t = 3461.
TEST( TEST_CATEGORY, collectives_hand_derived_direct_all_to_all )
{
    SystemConfig sys = system( 1, 1, 3350 );
    sys.algorithm[static_cast<int>( Collective::all_to_all )][0] = CollectiveAlgorithm::direct;
    EXPECT_EQ( collectiveTimeNs( oneDim( Topology::FullyConnected, 4, 100.0, 1000.0 ), sys,
                                 Collective::all_to_all, MiB ),
               3461.0 );
}

// Hand-derived: localBWAware all-reduce of 1 MiB on [Switch 2, Ring 2], 50 GB/s, 500 ns, one
// chunk. B = 53.687091 B/ns. RS on dim 0: D/p = 524288 B → t = ⌊2·500 + 9765.625⌋ = 10765,
// R = 3·⌊524288/3350⌋ = 3·156 = 468: RS = 10 + 1·(10765 + 10 + 468) = 11253. AR on dim 1 with
// D = 524288: D/p = 262144 → t = ⌊500 + 4882.8125⌋ = 5382, R = 3·78 = 234:
// AR = 10 + 1·(2·5382 + 20 + 234) = 11028. AG on dim 0 of the 524288-B shard: t = 10765:
// AG = 10 + 10765 + 10 = 10785. Total = 11253 + 11028 + 10785 = 33066.
TEST( TEST_CATEGORY, collectives_hand_derived_two_dims )
{
    Network net;
    net.num_dims = 2;
    net.dims[0] = { Topology::Switch, 2, 50.0, 500.0 };
    net.dims[1] = { Topology::Ring, 2, 50.0, 500.0 };
    const SystemConfig sys = system( 1, 1, 3350 );
    EXPECT_EQ( collectiveTimeNs( net, sys, Collective::all_reduce, MiB ), 33066.0 );
    // A group spanning only dim 1 is the one-dimensional ring all-reduce: 11028.
    EXPECT_EQ( collectiveTimeNsOnDims( net, sys, Collective::all_reduce, MiB / 2, 1, 1 ), 11028.0 );
}

TEST( TEST_CATEGORY, collectives_unbalanced_all_to_all )
{
    const Network net = oneDim( Topology::Switch, 4, 100.0, 500.0 );
    const SystemConfig sys = system( 1, 1, 3350 );
    // Balanced: every GPU sends 3/4 of S = 1 MiB to the others.
    const double even[4] = { 0.75 * MiB, 0.75 * MiB, 0.75 * MiB, 0.75 * MiB };
    EXPECT_EQ( allToAllvTimeNs( net, sys, even, even, 4 ),
               collectiveTimeNs( net, sys, Collective::all_to_all, MiB ) );
    // The same total volume concentrated on one GPU is slower.
    const double skew_send[4] = { 1.5 * MiB, 0.25 * MiB, 0.25 * MiB, 0.25 * MiB };
    const double skew_recv[4] = { 0.75 * MiB, 0.75 * MiB, 0.75 * MiB, 0.75 * MiB };
    EXPECT_GT( allToAllvTimeNs( net, sys, skew_send, skew_recv, 4 ),
               allToAllvTimeNs( net, sys, even, even, 4 ) );
    EXPECT_EQ( allToAllvTimeNs( net, sys, even, even, 1 ), 0.0 );
}

// The body is a free function: nvcc refuses a device lambda inside gtest's TestBody, a
// private member function.
void collectives_in_kernel_bitwise_body()
{
    const Network ring8 = oneDim( Topology::Ring, 8, 50.0, 500.0 );
    const SystemConfig sys = system( 4, 1, 50 );
    Kokkos::View<double*, TEST_MEMSPACE> out( "out", 4 );
    Kokkos::parallel_for(
        "collectives", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, 4 ), KOKKOS_LAMBDA( const int c ) {
            out( c ) =
                collectiveTimeNs( ring8, sys, static_cast<Collective>( c ), 3.0 * 1048576.0 );
        } );
    auto host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), out );
    for ( int c = 0; c < 4; ++c )
        EXPECT_TRUE( sameAsHost(
            host( c ), collectiveTimeNs( ring8, sys, static_cast<Collective>( c ), 3.0 * MiB ) ) );
}

TEST( TEST_CATEGORY, collectives_in_kernel_match_host )
{
    collectives_in_kernel_bitwise_body();
}

} // namespace Test

// ---- collcli: more hand-derived cases (the congestion-unaware backend's formulas) ----
namespace Test
{
namespace collcli
{
//! [Ring 4 at 100 GB/s, 200 ns] x [Switch 2 at 25 GB/s, 1000 ns]: B0 = 107.3741824 B/ns,
//! B1 = 26.8435456 B/ns (GB = 2^30 B).
inline shardsweep::Network ringSwitch()
{
    shardsweep::Network net;
    net.num_dims = 2;
    net.dims[0] = { shardsweep::Topology::Ring, 4, 100.0, 200.0 };
    net.dims[1] = { shardsweep::Topology::Switch, 2, 25.0, 1000.0 };
    return net;
}

inline shardsweep::SystemConfig sys( int splits, int active )
{
    shardsweep::SystemConfig s;
    s.endpoint_delay_ns = 10;
    s.preferred_dataset_splits = splits;
    s.active_chunks_per_dimension = active;
    s.local_mem_bw_GBps = 3350;
    return s;
}
} // namespace collcli

// Halving-doubling on Ring_8npus (Ring 8, 50 GB/s, 500 ns; B = 53.6870912 B/ns), 1 MiB, one
// chunk, δ = 10, local-mem-bw 3350. k = 3, h(d) = min(d, 8 − d).
// RS: messages D/2 over h(1) = 1: ⌊500 + 9765.625⌋ = 10265; D/4 over h(2) = 2:
//   ⌊1000 + 4882.8125⌋ = 5882; D/8 over h(4) = 4: ⌊2000 + 2441.40625⌋ = 4441. Reductions
//   (k − 1 = 2, sized by the next message): R(D/4) = 3·⌊262144/3350⌋ = 234, R(D/8) = 3·39 = 117.
//   RS = 10 + (10265 + 5882 + 4441) + 3·10 + 234 + 117 = 20979.
// AG (input shard D = 1 MiB): D over h(4) = 4: ⌊2000 + 19531.25⌋ = 21531; 2D over h(2) = 2:
//   ⌊1000 + 39062.5⌋ = 40062; 4D over h(1) = 1: ⌊500 + 78125⌋ = 78625.
//   AG = 10 + 140218 + 30 = 140258.
// AR: the RS part + gathers of D/8 over h(4): 4441, D/4 over h(2): 5882, D/2 over h(1): 10265,
//   each + δ: AR = 20979 + 20588 + 30 = 41597.
TEST( TEST_CATEGORY, collectives_hand_derived_halving_doubling_ring8 )
{
    using namespace shardsweep;
    Network ring8;
    ring8.num_dims = 1;
    ring8.dims[0] = { Topology::Ring, 8, 50.0, 500.0 };
    SystemConfig s = collcli::sys( 1, 1 );
    for ( int c = 0; c < kNumCollectives; ++c )
        s.algorithm[c][0] = CollectiveAlgorithm::halving_doubling;
    const double MiB = 1048576.0;
    EXPECT_EQ( collectiveTimeNs( ring8, s, Collective::reduce_scatter, MiB ), 20979.0 );
    EXPECT_EQ( collectiveTimeNs( ring8, s, Collective::all_gather, MiB ), 140258.0 );
    EXPECT_EQ( collectiveTimeNs( ring8, s, Collective::all_reduce, MiB ), 41597.0 );
}

// Baseline (non-localBWAware) all-reduce on [Ring 4, Switch 2], 1 MiB, one chunk: a full ring
// all-reduce on each dim over the full D.
// Dim 0 (p = 4, h = 1): t(262144) = ⌊200 + 2441.40625⌋ = 2641, R(262144) = 3·78 = 234:
//   10 + 3·(2·2641 + 20 + 234) = 16618.
// Dim 1 (p = 2, Switch h = 2): t(524288) = ⌊2000 + 19531.25⌋ = 21531, R(524288) = 3·156 = 468:
//   10 + (2·21531 + 20 + 468) = 43560.  Baseline = 16618 + 43560 = 60178.
// localBWAware for contrast: RS dim 0 = 10 + 3·(2641 + 10 + 234) = 8665; AR dim 1 on 262144 B:
//   t(131072) = ⌊2000 + 4882.8125⌋ = 6882, R = 117: 10 + 2·6882 + 20 + 117 = 13911; AG dim 0 of
//   the 262144-B shard: 10 + 3·(2641 + 10) = 7963. Total 30539.
// Other collectives on both dims (order 0, 1; all-gather 1, 0):
//   RS: 8665, then dim 1 on 262144 B: 10 + (6882 + 10 + 117) = 7019 → 15684.
//   AG of a 262144-B shard: dim 1: 10 + ⌊2000 + 9765.625⌋ + 10 = 11785, then dim 0 on
//   524288 B: 10 + 3·(⌊200 + 4882.8125⌋ + 10) = 10 + 3·5092 = 15286 → 27071.
//   A2A: dim 0 ring 10 + 4·3/2·(2641 + 10) = 15916; dim 1 10 + 1·(21531 + 10) = 21551 → 37467.
TEST( TEST_CATEGORY, collectives_hand_derived_baseline_two_dims )
{
    using namespace shardsweep;
    const double MiB = 1048576.0;
    const Network net = collcli::ringSwitch();
    SystemConfig s = collcli::sys( 1, 1 );
    EXPECT_EQ( collectiveTimeNs( net, s, Collective::all_reduce, MiB ), 30539.0 );
    s.optimization = CollectiveOptimization::baseline;
    EXPECT_EQ( collectiveTimeNs( net, s, Collective::all_reduce, MiB ), 60178.0 );
    EXPECT_EQ( collectiveTimeNs( net, s, Collective::reduce_scatter, MiB ), 15684.0 );
    EXPECT_EQ( collectiveTimeNs( net, s, Collective::all_gather, MiB / 4 ), 27071.0 );
    EXPECT_EQ( collectiveTimeNs( net, s, Collective::all_to_all, MiB ), 37467.0 );
}

// Chunk pipeline on [Ring 4, Switch 2], localBWAware all-reduce, 1-MiB chunks: phases
// RS0 = 8665, AR1 = 13911, AG0 = 7963 (above); RS0 and AG0 wait in dimension 0's queue, which
// serves in arrival order (model/chunk_pipeline.hpp).
// 4 splits (4 MiB), active 1 (chunk: phase start–end):
//   c0 RS 0–8665, AR 8665–22576; c1 RS 8665–17330; c2 RS 17330–25995; c0 queues for AG at
//   22576 behind c3; c1 AR 22576–36487; c3 RS 25995–34660; c0 AG 34660–42623; c2 AR
//   36487–50398; c1 AG 42623–50586; c2 AG 50586–58549; c3 AR 50398–64309, AG 64309–72272.
//   → 72272 (what separate queues would give too: 30539 + 3·13911).
// 3 splits (3 MiB), active 2: c0 and c1 run side by side to 30539; c2 RS 8665–17330, AR (after
//   c0 and c1 left dim 1) 22576–36487, AG 36487–44450.
TEST( TEST_CATEGORY, collectives_hand_derived_pipeline_two_dims )
{
    using namespace shardsweep;
    const double MiB = 1048576.0;
    const Network net = collcli::ringSwitch();
    EXPECT_EQ( collectiveTimeNs( net, collcli::sys( 4, 1 ), Collective::all_reduce, 4 * MiB ),
               72272.0 );
    EXPECT_EQ( collectiveTimeNs( net, collcli::sys( 3, 2 ), Collective::all_reduce, 3 * MiB ),
               44450.0 );
}

// A group spanning only dim 0 (the inner Ring 4) of [Ring 4, Switch 2]: the one-dimensional
// ring collectives (numbers above): AR 1 MiB = 16618, RS 1 MiB = 8665, AG of a 262144-B shard =
// 7963, A2A 1 MiB = 15916. The outer dim alone (Switch 2): AR 1 MiB = 43560.
TEST( TEST_CATEGORY, collectives_hand_derived_inner_group )
{
    using namespace shardsweep;
    const double MiB = 1048576.0;
    const Network net = collcli::ringSwitch();
    const SystemConfig s = collcli::sys( 1, 1 );
    EXPECT_EQ( collectiveTimeNsOnDims( net, s, Collective::all_reduce, MiB, 0, 1 ), 16618.0 );
    EXPECT_EQ( collectiveTimeNsOnDims( net, s, Collective::reduce_scatter, MiB, 0, 1 ), 8665.0 );
    EXPECT_EQ( collectiveTimeNsOnDims( net, s, Collective::all_gather, MiB / 4, 0, 1 ), 7963.0 );
    EXPECT_EQ( collectiveTimeNsOnDims( net, s, Collective::all_to_all, MiB, 0, 1 ), 15916.0 );
    EXPECT_EQ( collectiveTimeNsOnDims( net, s, Collective::all_reduce, MiB, 1, 1 ), 43560.0 );
}
} // namespace Test

// ---- collectives: chunk pipeline in closed form, three dimensions, per-GPU all-to-all ----
namespace Test
{
namespace pipeline
{
//! Brute-force FIFO flow shop (the reference the closed form must equal): chunk j starts phase
//! k when it has left phase k-1 and chunk j-active has left phase k.
inline double flowShop( const double* phase, int num_phases, int chunks, int active )
{
    std::vector<std::vector<double>> finish( chunks, std::vector<double>( num_phases, 0.0 ) );
    for ( int j = 0; j < chunks; ++j )
        for ( int k = 0; k < num_phases; ++k )
        {
            double start = k > 0 ? finish[j][k - 1] : 0.0;
            if ( j >= active )
                start = std::max( start, finish[j - active][k] );
            finish[j][k] = start + phase[k];
        }
    return finish[chunks - 1][num_phases - 1];
}

//! ASTRA-sim's example input/Ring_FullyConnected_Switch.yml (astra-sim 518bd51):
//! [Ring 2, FullyConnected 8, Switch 4], [200, 100, 50] GB/s, [50, 500, 2000] ns.
inline shardsweep::Network ringFcSwitch()
{
    shardsweep::Network net;
    net.num_dims = 3;
    net.dims[0] = { shardsweep::Topology::Ring, 2, 200.0, 50.0 };
    net.dims[1] = { shardsweep::Topology::FullyConnected, 8, 100.0, 500.0 };
    net.dims[2] = { shardsweep::Topology::Switch, 4, 50.0, 2000.0 };
    return net;
}
} // namespace pipeline

// The reduce-scatter on [Ring 4, Switch 2] has the phases RS0 = 8665 and RS1 = 7019 per 1-MiB
// chunk (hand-derived above), each in a queue of its own. For every splits 1..100 and active
// 1..5 the model must equal a brute-force simulation of the flow shop over those two phases (no
// chunk cap: the closed form holds for any number of chunks). The all-reduce, whose
// reduce-scatter and all-gather share dimension 0's queue, is tstChunkPipeline's.
TEST( TEST_CATEGORY, collectives_pipeline_equals_flow_shop )
{
    using namespace shardsweep;
    const double MiB = 1048576.0;
    const Network net = collcli::ringSwitch();
    const double phases[2] = { 8665.0, 7019.0 };
    for ( int splits = 1; splits <= 100; ++splits )
        for ( int active = 1; active <= 5; ++active )
            ASSERT_EQ( collectiveTimeNs( net, collcli::sys( splits, active ),
                                         Collective::reduce_scatter, splits * MiB ),
                       pipeline::flowShop( phases, 2, splits, active ) )
                << "splits " << splits << " active " << active;
}

// One dimension, many chunks: Ring_8npus, all-reduce, 100 splits of 1 MiB, 3 active, LMBW 3350:
// ⌈100 / 3⌉ = 34 rounds of the 1-MiB chunk (42143, §12) = 1432862. (A 64-chunk simulation
// scaled by 100/64 would give 22·42143·100/64 = 1448665.6.)
// Ring_8npus with ASTRA-sim's Ring_4chunks.json (4 splits, 1 active, LMBW 1600), AR 1 MiB:
// chunk 262144 B, message 32768 B: t = ⌊500 + 32768/53.6870912⌋ = ⌊1110.35⌋ = 1110,
// R = 3·⌊32768/1600⌋ = 60; one chunk = 10 + 7·(2·1110 + 20 + 60) = 16110; 4 rounds = 64440.
TEST( TEST_CATEGORY, collectives_hand_derived_many_chunks )
{
    using namespace shardsweep;
    const double MiB = 1048576.0;
    const Network ring8 = oneDim( Topology::Ring, 8, 50.0, 500.0 );
    EXPECT_EQ( collectiveTimeNs( ring8, system( 100, 3, 3350 ), Collective::all_reduce, 100 * MiB ),
               1432862.0 );
    EXPECT_EQ( collectiveTimeNs( ring8, system( 4, 1, 1600 ), Collective::all_reduce, MiB ),
               64440.0 );
}

// Three dimensions, Ring_FullyConnected_Switch, 1 MiB, one chunk, δ = 10, LMBW 3350, ring on
// every dim. B = 214.7483648 / 107.3741824 / 53.6870912 B/ns.
// localBWAware AR:
//   RS dim 0 (Ring 2, h 1), m = 524288: t = ⌊50 + 2441.40625⌋ = 2491, R = 3·156 = 468:
//     10 + 1·(2491 + 10 + 468) = 2979;
//   RS dim 1 (FC 8, h 1) on 524288, m = 65536: t = ⌊500 + 610.3515625⌋ = 1110, R = 3·19 = 57:
//     10 + 7·(1110 + 10 + 57) = 8249;
//   AR dim 2 (Switch 4, h 2) on 65536, m = 16384: t = ⌊4000 + 305.17578125⌋ = 4305, R = 3·4 = 12:
//     10 + 3·(2·4305 + 20 + 12) = 25936;
//   AG dim 1 of the 65536-B shard: 10 + 7·(1110 + 10) = 7850;
//   AG dim 0 of the 524288-B shard: 10 + 1·(2491 + 10) = 2511.   Total 47525.
// A2A (every dim a full ring all-to-all over S):
//   dim 0: 10 + 2·1/2·(2491 + 10) = 2511; dim 1: m = 131072, t = ⌊500 + 1220.703125⌋ = 1720:
//   10 + 28·1730 = 48450; dim 2: m = 262144, t = ⌊4000 + 4882.8125⌋ = 8882:
//   10 + 6·8892 = 53362.   Total 104323.
TEST( TEST_CATEGORY, collectives_hand_derived_three_dims )
{
    using namespace shardsweep;
    const double MiB = 1048576.0;
    const Network net = pipeline::ringFcSwitch();
    const SystemConfig s = collcli::sys( 1, 1 );
    EXPECT_EQ( collectiveTimeNs( net, s, Collective::all_reduce, MiB ), 47525.0 );
    EXPECT_EQ( collectiveTimeNs( net, s, Collective::all_to_all, MiB ), 104323.0 );
    // The per-GPU all-to-all with every GPU sending and receiving 63/64 of 1 MiB is the balanced
    // one (P = 64).
    std::vector<double> even( 64, 63.0 / 64.0 * MiB );
    EXPECT_EQ( allToAllvTimeNs( net, s, even.data(), even.data(), 64 ), 104323.0 );
}

// More skew → slower: GPU 0's send (or receive) volume grows while the total stays put (the
// others shrink); the time never decreases and ends above the balanced time. On one dimension
// a send skew and the same receive skew cost the same.
TEST( TEST_CATEGORY, collectives_all_to_all_skew_monotone )
{
    using namespace shardsweep;
    const double MiB = 1048576.0;
    const double v = 7.0 / 8.0 * MiB;
    std::vector<double> even( 8, v );
    Network one_dim;
    one_dim.num_dims = 1;
    one_dim.dims[0] = { Topology::Switch, 8, 100.0, 500.0 };
    for ( const Network& net : { collcli::ringSwitch(), one_dim } ) // P = 8 both
    {
        const SystemConfig s = collcli::sys( 4, 2 );
        const double balanced = allToAllvTimeNs( net, s, even.data(), even.data(), 8 );
        EXPECT_EQ( balanced, collectiveTimeNs( net, s, Collective::all_to_all, MiB ) );
        double previous_send = balanced, previous_recv = balanced;
        for ( int step = 1; step <= 10; ++step )
        {
            std::vector<double> skew( 8, v * ( 1.0 - 0.05 * step ) );
            skew[0] = 8 * v - 7 * skew[1];
            const double t_send = allToAllvTimeNs( net, s, skew.data(), even.data(), 8 );
            const double t_recv = allToAllvTimeNs( net, s, even.data(), skew.data(), 8 );
            EXPECT_GE( t_send, previous_send ) << "step " << step;
            EXPECT_GE( t_recv, previous_recv ) << "step " << step;
            if ( net.num_dims == 1 )
            {
                EXPECT_EQ( t_send, t_recv );
            }
            previous_send = t_send;
            previous_recv = t_recv;
        }
        EXPECT_GT( previous_send, 1.5 * balanced );
        EXPECT_GT( previous_recv, 1.5 * balanced );
    }
}

// Per-dimension loads of the per-GPU all-to-all on [Ring 4 (100 GB/s, 200 ns), Switch 2
// (25 GB/s, 1 µs)], P = 8, one chunk, ring, u = 64 KiB.
// Send skew: send = [14u, 7u × 7], recv = 7.875u each (total 63u; recv ratios all 1).
//   Boundary b = 1 (before dim 0): max send = 14u; b = 4: block means (14+7+7+7)/4 = 8.75u and
//   7u → 8.75u; b = 8: 7.875u. Dim 0 carries max(14, 8.75)u · 8/7 = 16u = 1 MiB: ring A2A on
//   Ring 4 = 10 + 6·(⌊200 + 2441.40625⌋ + 10) = 15916; dim 1 carries max(8.75, 7.875)u · 8/7 =
//   10u = 655360 B: m = 327680, t = ⌊2000 + 12207.03125⌋ = 14207: 10 + 1·(14207 + 10) = 14227.
//   Total 30143 (pricing the busiest GPU on every dim would give 15916 + 21551 = 37467).
// Receive skew: send = 7.875u each, recv = [14u, 7u × 7] (mean 7.875u).
//   b = 1: 7.875u; b = 4: residue means mod 4: {0, 4} = 10.5u → 7.875 · 10.5/7.875 = 10.5u;
//   b = 8: 14u. Dim 0 carries 10.5u · 8/7 = 12u = 786432 B: m = 196608,
//   t = ⌊200 + 1831.0546875⌋ = 2031: 10 + 6·2041 = 12256; dim 1 carries 14u · 8/7 = 1 MiB:
//   t = ⌊2000 + 19531.25⌋ = 21531: 10 + 21541 = 21551. Total 33807.
TEST( TEST_CATEGORY, collectives_hand_derived_all_to_all_per_dimension )
{
    using namespace shardsweep;
    const double u = 65536.0;
    const Network net = collcli::ringSwitch();
    const SystemConfig s = collcli::sys( 1, 1 );
    std::vector<double> skew( 8, 7.0 * u );
    skew[0] = 14.0 * u;
    std::vector<double> even( 8, 7.875 * u );
    EXPECT_EQ( allToAllvTimeNs( net, s, skew.data(), even.data(), 8 ), 30143.0 );
    EXPECT_EQ( allToAllvTimeNs( net, s, even.data(), skew.data(), 8 ), 33807.0 );
    // One dimension (the inner Ring 4 as a network of its own, P = 4): the busiest GPU,
    // max(send, recv) · 4/3: send [6u, 3u, 3u, 3u] → 8u = 524288 B: m = 131072,
    // t = ⌊200 + 1220.703125⌋ = 1420: 10 + 6·1430 = 8590, whichever side is skewed.
    Network ring4;
    ring4.num_dims = 1;
    ring4.dims[0] = net.dims[0];
    const double skew4[4] = { 6.0 * u, 3.0 * u, 3.0 * u, 3.0 * u };
    const double even4[4] = { 3.75 * u, 3.75 * u, 3.75 * u, 3.75 * u };
    EXPECT_EQ( allToAllvTimeNs( ring4, s, skew4, even4, 4 ), 8590.0 );
    EXPECT_EQ( allToAllvTimeNs( ring4, s, even4, skew4, 4 ), 8590.0 );
}

// Independent check of the block / residue factorisation: build the traffic matrix
// M[s][t] = send_s · recv_t / total explicitly, route it dimension by dimension (before phase d
// GPU x holds the data of sources that differ from x only in dims < d to destinations that agree
// with x in dims < d; after it, the same with dims <= d), take the busiest GPU's buffer per
// phase, and price each phase alone (one chunk, so phases add). [Ring 2, Switch 4, Ring 2],
// direct all-to-all (one message per phase, so rounding differences move at most 1 ns a phase).
TEST( TEST_CATEGORY, collectives_all_to_all_per_dimension_brute_force )
{
    using namespace shardsweep;
    Network net;
    net.num_dims = 3;
    net.dims[0] = { Topology::Ring, 2, 200.0, 100.0 };
    net.dims[1] = { Topology::Switch, 4, 50.0, 500.0 };
    net.dims[2] = { Topology::Ring, 2, 10.0, 2000.0 };
    const int P = 16;
    SystemConfig sys = collcli::sys( 1, 1 );
    for ( int d = 0; d < 3; ++d )
        sys.algorithm[static_cast<int>( Collective::all_to_all )][d] = CollectiveAlgorithm::direct;
    auto coord = []( int g, int d ) { return d == 0 ? g % 2 : ( d == 1 ? ( g / 2 ) % 4 : g / 8 ); };
    std::mt19937 rng( 12345 );
    std::uniform_real_distribution<double> uni( 0.1, 3.0 );
    for ( int trial = 0; trial < 20; ++trial )
    {
        std::vector<double> send( P ), recv( P );
        double total = 0.0, total_recv = 0.0;
        for ( int g = 0; g < P; ++g )
        {
            send[g] = std::round( uni( rng ) * 100000.0 );
            total += send[g];
        }
        for ( int g = 0; g < P; ++g )
            recv[g] = uni( rng );
        for ( int g = 0; g < P; ++g )
            total_recv += recv[g];
        for ( int g = 0; g < P; ++g )
            recv[g] *= total / total_recv; // same total as the sends
        double expected = 0.0;
        for ( int d = 0; d < 3; ++d )
        {
            double busiest = 0.0;
            for ( int x = 0; x < P; ++x )
                for ( int side = 0; side < 2; ++side ) // before / after phase d
                {
                    const int split = d + side; // dims < split: destination side
                    double held = 0.0;
                    for ( int src = 0; src < P; ++src )
                        for ( int dst = 0; dst < P; ++dst )
                        {
                            bool here = true;
                            for ( int k = 0; k < 3; ++k )
                                here = here && ( k < split ? coord( dst, k ) == coord( x, k )
                                                           : coord( src, k ) == coord( x, k ) );
                            if ( here )
                                held += send[src] * recv[dst] / total;
                        }
                    busiest = std::max( busiest, held );
                }
            expected += collectiveTimeNsOnDims( net, sys, Collective::all_to_all,
                                                busiest * P / ( P - 1.0 ), d, 1 );
        }
        EXPECT_NEAR( allToAllvTimeNs( net, sys, send.data(), recv.data(), P ), expected, 3.0 )
            << "trial " << trial;
    }
}

// Inside a kernel: the three-dimension, many-chunk and per-GPU all-to-all cases give the same
// bits as on the host.
// The body is a free function: nvcc refuses a device lambda inside gtest's TestBody, a
// private member function.
void collectives_in_kernel_three_dims_body()
{
    using namespace shardsweep;
    const Network net = pipeline::ringFcSwitch();
    const SystemConfig s = collcli::sys( 7, 3 );
    Kokkos::View<double*, TEST_MEMSPACE> vol( "vol", 64 );
    Kokkos::parallel_for(
        "fill", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, 64 ),
        KOKKOS_LAMBDA( const int g ) { vol( g ) = 1000.0 + 37.0 * ( g % 5 ); } );
    Kokkos::View<double*, TEST_MEMSPACE> out( "out", 5 );
    Kokkos::parallel_for(
        "collectives3", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, 5 ), KOKKOS_LAMBDA( const int c ) {
            out( c ) = c < 4 ? collectiveTimeNs( net, s, static_cast<Collective>( c ), 123456.0 )
                             : allToAllvTimeNs( net, s, vol.data(), vol.data(), 64 );
        } );
    auto host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), out );
    auto host_vol = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), vol );
    for ( int c = 0; c < 4; ++c )
        EXPECT_TRUE( sameAsHost(
            host( c ), collectiveTimeNs( net, s, static_cast<Collective>( c ), 123456.0 ) ) );
    EXPECT_TRUE(
        sameAsHost( host( 4 ), allToAllvTimeNs( net, s, host_vol.data(), host_vol.data(), 64 ) ) );
    EXPECT_GT( host( 4 ), 0.0 );
}

TEST( TEST_CATEGORY, collectives_in_kernel_three_dims )
{
    collectives_in_kernel_three_dims_body();
}
} // namespace Test

namespace Test
{
// The minimum chunk is one byte per NPU of the whole system (ASTRA-sim's Sys::total_nodes), also
// for a group on fewer dims. [Ring 4 at 0.5 GB/s, 0 ns] x [Ring 4 at 1 GB/s, 100 ns] = 16 NPUs;
// reduce-scatter of S = 8 B on dim 0 only, one chunk, δ 10: chunk = max(8, 16) = 16 B,
// m = 16/4 = 4 B, B = 0.536870912 B/ns: t = ⌊4 / 0.536870912⌋ = ⌊7.45⌋ = 7, R(4) = 0:
// RS = 10 + 3·(7 + 10) = 61. (With the group's 4 NPUs as the minimum it would be m = 2 B,
// t = 3: 49.) The same RS over both dims: dim 0 as above (61), then dim 1 on the 4-B output:
// m = 1 B over 1.073741824 B/ns: t = ⌊100 + 0.93⌋ = 100: 10 + 3·(100 + 10) = 340 → 401.
// All-gather has no minimum: AG of 8 B on dim 0: t(8 B) = ⌊14.9⌋ = 14: 10 + 3·(14 + 10) = 82.
TEST( TEST_CATEGORY, collectives_minimum_chunk_whole_system )
{
    using namespace shardsweep;
    Network net;
    net.num_dims = 2;
    net.dims[0] = { Topology::Ring, 4, 0.5, 0.0 };
    net.dims[1] = { Topology::Ring, 4, 1.0, 100.0 };
    const SystemConfig s = collcli::sys( 1, 1 );
    EXPECT_EQ( collectiveTimeNsOnDims( net, s, Collective::reduce_scatter, 8.0, 0, 1 ), 61.0 );
    EXPECT_EQ( collectiveTimeNs( net, s, Collective::reduce_scatter, 8.0 ), 401.0 );
    EXPECT_EQ( collectiveTimeNsOnDims( net, s, Collective::all_gather, 8.0, 0, 1 ), 82.0 );
}
} // namespace Test
