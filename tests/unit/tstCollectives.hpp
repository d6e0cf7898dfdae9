// ASTRA-sim 2.0 congestion-unaware collectives: reference/collectives.md §12's worked examples
// and upstream's regression value, exactly, plus hand-derived cases.
#include <gtest/gtest.h>
#include <shardsweep/model/collectives.hpp>

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

TEST( TEST_CATEGORY, collectives_in_kernel_bitwise )
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
        EXPECT_EQ( host( c ),
                   collectiveTimeNs( ring8, sys, static_cast<Collective>( c ), 3.0 * MiB ) );
}

} // namespace Test
