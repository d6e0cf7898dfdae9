#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdint>
#include <gtest/gtest.h>
#include <set>
#include <shardsweep/model/rng.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

//! Random123 kat_vectors, philox4x32 R=10: counter[4] key[2] -> output[4].
TEST( TEST_CATEGORY, rng_philox_known_answers )
{
    struct Kat
    {
        std::uint32_t ctr[4];
        std::uint32_t key[2];
        std::uint32_t out[4];
    };
    const Kat kats[3] = {
        { { 0, 0, 0, 0 }, { 0, 0 }, { 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 } },
        { { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff },
          { 0xffffffff, 0xffffffff },
          { 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd } },
        { { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344 },
          { 0xa4093822, 0x299f31d0 },
          { 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 } },
    };
    for ( const Kat& kat : kats )
    {
        Philox4x32Block counter;
        for ( int i = 0; i < 4; ++i )
            counter.v[i] = kat.ctr[i];
        const Philox4x32Block out = philox4x32<10>( counter, kat.key[0], kat.key[1] );
        for ( int i = 0; i < 4; ++i )
            EXPECT_EQ( out.v[i], kat.out[i] ) << "word " << i;
    }
}

//! The stream layout: key = seed, counter = (id lo, id hi, stream, block).
TEST( TEST_CATEGORY, rng_counter_layout )
{
    const std::uint64_t seed = 0x299f31d0a4093822ull;
    const std::uint64_t id = 0x85a308d3243f6a88ull;
    CounterRng rng( seed, id, 0x13198a2e );
    // Block 0 of this stream is the KAT counter with word 3 = 0.
    Philox4x32Block c;
    c.v[0] = 0x243f6a88;
    c.v[1] = 0x85a308d3;
    c.v[2] = 0x13198a2e;
    c.v[3] = 0;
    const Philox4x32Block b0 = philox4x32<10>( c, 0xa4093822, 0x299f31d0 );
    c.v[3] = 1;
    const Philox4x32Block b1 = philox4x32<10>( c, 0xa4093822, 0x299f31d0 );
    for ( int i = 0; i < 4; ++i )
        EXPECT_EQ( rng.next32(), b0.v[i] );
    for ( int i = 0; i < 4; ++i )
        EXPECT_EQ( rng.next32(), b1.v[i] );

    // Seed 0, id 0, stream 0, block 0 is the all-zero KAT.
    CounterRng zero( 0, 0, 0 );
    EXPECT_EQ( zero.next64(), 0x6627e8d5e169c58dull );
    // uniform() uses the top 53 bits of the next 64: 0xbc57ac4c9b00dbd8 >> 11.
    EXPECT_EQ( zero.uniform(),
               static_cast<double>( 0xbc57ac4c9b00dbd8ull >> 11 ) / 9007199254740992.0 );
}

TEST( TEST_CATEGORY, rng_streams_are_reproducible_and_distinct )
{
    CounterRng a( 42, 7, kStreamTaskTables );
    CounterRng b( 42, 7, kStreamTaskTables );
    CounterRng other_id( 42, 8, kStreamTaskTables );
    CounterRng other_stream( 42, 7, kStreamTaskDims );
    CounterRng other_seed( 43, 7, kStreamTaskTables );
    int same_id = 0, same_stream = 0, same_seed = 0;
    for ( int i = 0; i < 64; ++i )
    {
        const std::uint32_t x = a.next32();
        EXPECT_EQ( x, b.next32() );
        same_id += x == other_id.next32();
        same_stream += x == other_stream.next32();
        same_seed += x == other_seed.next32();
    }
    EXPECT_LE( same_id, 1 );
    EXPECT_LE( same_stream, 1 );
    EXPECT_LE( same_seed, 1 );
}

TEST( TEST_CATEGORY, rng_uniform_int_range_and_moments )
{
    CounterRng rng( 1, 2, 3 );
    std::vector<int> counts( 6, 0 );
    const int n = 60000;
    for ( int i = 0; i < n; ++i )
    {
        const std::int64_t v = rng.uniformInt( 10, 15 );
        ASSERT_GE( v, 10 );
        ASSERT_LE( v, 15 );
        ++counts[v - 10];
    }
    // Each face 10000 +- 5 sigma (sigma = sqrt(n p (1-p)) = 91).
    for ( int c : counts )
        EXPECT_NEAR( c, 10000, 460 );

    EXPECT_EQ( rng.uniformInt( 5, 5 ), 5 );
    double sum = 0.0, sum2 = 0.0;
    for ( int i = 0; i < n; ++i )
    {
        const double u = rng.uniform();
        ASSERT_GE( u, 0.0 );
        ASSERT_LT( u, 1.0 );
        const double z = rng.normal();
        sum += z;
        sum2 += z * z;
    }
    EXPECT_NEAR( sum / n, 0.0, 0.02 );
    EXPECT_NEAR( sum2 / n, 1.0, 0.03 );
}

TEST( TEST_CATEGORY, rng_choose_without_replacement )
{
    CounterRng rng( 9, 9, 9 );
    std::vector<int> scratch( 856 ), out( 50 );
    chooseWithoutReplacement( rng, 856, 50, scratch.data(), out.data() );
    std::set<int> distinct( out.begin(), out.end() );
    EXPECT_EQ( distinct.size(), 50u );
    EXPECT_GE( *distinct.begin(), 0 );
    EXPECT_LT( *distinct.rbegin(), 856 );

    // Same stream, same choice; k = n is a permutation.
    CounterRng again( 9, 9, 9 );
    std::vector<int> out2( 50 );
    chooseWithoutReplacement( again, 856, 50, scratch.data(), out2.data() );
    EXPECT_EQ( out, out2 );
    std::vector<int> perm( 10 ), scratch10( 10 );
    chooseWithoutReplacement( again, 10, 10, scratch10.data(), perm.data() );
    std::sort( perm.begin(), perm.end() );
    for ( int i = 0; i < 10; ++i )
        EXPECT_EQ( perm[i], i );
}

//! The same stream drawn inside a Kokkos kernel gives the host's numbers (device-callable).
// The body is a free function: nvcc refuses a device lambda inside gtest's TestBody, a
// private member function.
void rng_in_kernel_matches_host_body()
{
    const int n = 64;
    Kokkos::View<std::uint64_t*, TEST_MEMSPACE> draws( "draws", n );
    Kokkos::parallel_for(
        "Test::rng", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( const int i ) {
            CounterRng rng( 1234, static_cast<std::uint64_t>( i ), kStreamUser );
            rng.next32();
            draws( i ) = static_cast<std::uint64_t>( rng.uniformInt( 0, 1000000 ) );
        } );
    auto host = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), draws );
    for ( int i = 0; i < n; ++i )
    {
        CounterRng rng( 1234, static_cast<std::uint64_t>( i ), kStreamUser );
        rng.next32();
        EXPECT_EQ( host( i ), static_cast<std::uint64_t>( rng.uniformInt( 0, 1000000 ) ) );
    }
}

TEST( TEST_CATEGORY, rng_in_kernel_matches_host )
{
    rng_in_kernel_matches_host_body();
}

TEST( TEST_CATEGORY, rng_mix_seed )
{
    // SplitMix64 of seed + golden-gamma * (salt + 1); the first SplitMix64 output for state 0.
    EXPECT_EQ( mixSeed( 0, 0 ), 0xe220a8397b1dcdafull );
    EXPECT_NE( mixSeed( 1, 0 ), mixSeed( 0, 1 ) );
}

} // namespace Test
