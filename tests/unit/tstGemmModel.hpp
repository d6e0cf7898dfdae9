#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <shardsweep/model/gemm.hpp>

namespace Test
{
using namespace shardsweep;

namespace
{
//! A made-up GPU with round numbers: 10 SMs, 10 TFLOP/s FP32 (1e12 FLOP/s per SM), 100 GB/s.
GpuSpec toyGpu()
{
    GpuSpec g;
    g.sm_count = 10;
    g.boost_clock_MHz = 1000.0;
    g.fp32_TFLOPs = 10.0;
    g.memory_bandwidth_GBps = 100.0;
    g.memory_GiB = 16.0;
    g.l2_cache_MiB = 4.0;
    return g;
}

//! launch 0.01 ms, e_max 0.5, k_overhead 32, i_half 16, occupancy 16384, e_bw 0.5, split-K 0.05.
constexpr GemmConstants kToy = { 0.01, 0.5, 32.0, 16.0, 16384.0, 0.5, 0.05 };

//! Realistic GPUs (NeuSight's spec files) for the properties that must hold for any input.
GpuSpec a100()
{
    GpuSpec g;
    g.sm_count = 108;
    g.boost_clock_MHz = 1410.0;
    g.fp32_TFLOPs = 19.492;
    g.tf32_TFLOPs = 156.0;
    g.memory_bandwidth_GBps = 1555.0;
    g.l2_cache_MiB = 40.0;
    return g;
}
} // namespace

// Derivations by hand (toy GPU, kToy). Tiles per SM = clamp(floor(16384 / (tm·tn)), 1, 8):
// 128x128 → 1, 32x32 → 8; a 32x32 tile has I = 1024/64 = 16 so its SM rate is
// 1e12 · 0.5 · 16/32 = 2.5e11 FLOP/s; 128x128: I = 64, 1e12 · 0.5 · 64/80 = 4e11 FLOP/s.
TEST( TEST_CATEGORY, gemm_hand_computed_compute_bound )
{
    const GpuSpec g = toyGpu();
    // B=1, M=N=256, K=1024: 32x32 gives 64 tiles ≤ 80 slots → 1 wave of 8 tiles per SM:
    // 8 · 2 · 1024 · (1024 + 32) / 2.5e11 s = 0.069206016 ms; memory 4·(2·256·1024 + 256²) B /
    // 50 GB/s = 0.04718592 ms < compute; + launch 0.01 ms. (128x128: 4 tiles, 1 wave,
    // 2·16384·1056/4e11 = 0.08650752 ms, slower; split-K adds ≥ 0.05 ms.)
    GemmPrediction p = predictGemmWith( kToy, g, 1, 256, 256, 1024, DataType::fp32 );
    EXPECT_NEAR( p.latency_ms, 0.079206016, 1e-12 );
    EXPECT_EQ( p.tile_m, 32 );
    EXPECT_EQ( p.tile_n, 32 );
    EXPECT_EQ( p.waves, 1.0 );
    EXPECT_FALSE( p.memory_bound );

    // B=4, M=100, N=60, K=64: 32x32 tiles 4·4·2 = 32 → 1 wave;
    // 8 · 2 · 1024 · (64 + 32) / 2.5e11 s = 0.006291456 ms, + 0.01 ms.
    p = predictGemmWith( kToy, g, 4, 100, 60, 64, DataType::fp32 );
    EXPECT_NEAR( p.latency_ms, 0.016291456, 1e-12 );
    EXPECT_EQ( p.waves, 1.0 );
    // FP16 halves the bytes; the GPU lists no FP16 rate, so FP32's is used: same compute time.
    EXPECT_NEAR( predictGemmWith( kToy, g, 4, 100, 60, 64, DataType::fp16 ).latency_ms, 0.016291456,
                 1e-12 );

    // B=1, M=N=K=4096: 128x128, 1024 tiles over 10 slots → ceil(102.4) = 103 waves of
    // 2 · 16384 · (4096 + 32) / 4e11 s: 34.83107328 ms, + 0.01 ms.
    p = predictGemmWith( kToy, g, 1, 4096, 4096, 4096, DataType::fp32 );
    EXPECT_NEAR( p.latency_ms, 34.84107328, 1e-9 );
    EXPECT_EQ( p.tile_m, 128 );
    EXPECT_EQ( p.tile_n, 128 );
    EXPECT_EQ( p.waves, 103.0 );
}

TEST( TEST_CATEGORY, gemm_hand_computed_split_k_memory_bound )
{
    // B=1, M=N=32, K=8192, 32x32 tiles. A tile occupies one of 8 slots of an SM, so it runs at
    // 2.5e11/8 FLOP/s. Split-K s (allowed: 1 tile < 80 slots): s tiles (1 wave), compute
    // 8·2·1024·(8192/s + 32)/2.5e11 s; memory 4·(2·32·8192 + 32²) B at 50 GB/s = 0.04202496 ms;
    // reduction 0.05 ms + 4·(s+1)·32² B at 50 GB/s:
    //   s=8:  compute 0.069206016 → 0.01 + 0.069206016 + 0.05073728 = 0.129943296 ms
    //   s=16: compute 0.035651584 < memory → 0.01 + 0.04202496 + 0.05139264 = 0.1034176 ms (min)
    //   s=32: memory-bound too → 0.01 + 0.04202496 + 0.05270336 = 0.10472832 ms
    const GemmPrediction p = predictGemmWith( kToy, toyGpu(), 1, 32, 32, 8192, DataType::fp32 );
    EXPECT_NEAR( p.latency_ms, 0.1034176, 1e-12 );
    EXPECT_EQ( p.waves, 1.0 );
    EXPECT_TRUE( p.memory_bound );
    // Candidate s = 16 reproduced on its own.
    const GemmPrediction c16 =
        gemmCandidate( kToy, toyGpu(), 1, 32, 32, 8192, DataType::fp32, kGemmNumTiles - 1, 16.0 );
    EXPECT_EQ( c16.latency_ms, p.latency_ms );
}

TEST( TEST_CATEGORY, gemm_tile_and_wave_counts )
{
    const GpuSpec g = a100();
    for ( int t = 0; t < kGemmNumTiles; ++t )
    {
        const int tm = gemmTileM( t ), tn = gemmTileN( t );
        // 3 batches of 1000 x 700 (K = 300): tiles = 3·ceil(1000/tm)·ceil(700/tn).
        const GemmPrediction c =
            gemmCandidate( kGemmConstants, g, 3, 1000, 700, 300, DataType::fp32, t, 1.0 );
        const long tiles = 3L * ( ( 1000 + tm - 1 ) / tm ) * ( ( 700 + tn - 1 ) / tn );
        const double per_sm = gemmTilesPerSm( kGemmConstants, tm, tn );
        const long slots = 108L * static_cast<long>( per_sm );
        EXPECT_EQ( c.waves, double( ( tiles + slots - 1 ) / slots ) ) << tm << "x" << tn;
        EXPECT_EQ( c.tile_m, tm );
        EXPECT_EQ( c.tile_n, tn );
    }
}

//! No prediction beats the plain roofline (plus the launch overhead); large GEMMs approach it.
TEST( TEST_CATEGORY, gemm_roofline_bound )
{
    const GpuSpec g = a100();
    const double dims[] = { 1, 7, 64, 100, 512, 1000, 4096, 12288 };
    for ( double b : { 1.0, 8.0 } )
        for ( double m : dims )
            for ( double n : dims )
                for ( double k : dims )
                    for ( DataType d : { DataType::fp32, DataType::tf32, DataType::bf16 } )
                    {
                        const GemmPrediction p = predictGemm( g, b, m, n, k, d );
                        const double roof = gemmRooflineMs( g, b, m, n, k, d );
                        ASSERT_GE( p.latency_ms, roof + kGemmConstants.launch_ms )
                            << b << " " << m << " " << n << " " << k;
                        ASSERT_TRUE( std::isfinite( p.latency_ms ) );
                    }
    // 8192³ FP32 on an A100: within a factor 1.6 of the roofline (efficiency ≥ 60 %).
    const double big = predictGemm( g, 1, 8192, 8192, 8192, DataType::fp32 ).latency_ms;
    EXPECT_LT( big, 1.6 * gemmRooflineMs( g, 1, 8192, 8192, 8192, DataType::fp32 ) );
    // Zero-sized GEMMs cost nothing.
    EXPECT_EQ( predictGemm( g, 1, 0, 10, 10, DataType::fp32 ).latency_ms, 0.0 );
}

//! The same function inside a Kokkos kernel on TEST_EXECSPACE gives bit-identical results.
TEST( TEST_CATEGORY, gemm_kernel_matches_host )
{
    const int n = 512;
    Kokkos::View<double* [4], TEST_MEMSPACE> shapes( "shapes", n );
    Kokkos::View<double*, TEST_MEMSPACE> lat( "lat", n ), waves( "waves", n );
    Kokkos::View<int*, TEST_MEMSPACE> tile( "tile", n );
    auto hs = Kokkos::create_mirror_view( shapes );
    for ( int i = 0; i < n; ++i )
    {
        hs( i, 0 ) = 1 + i % 5;
        hs( i, 1 ) = 1 + ( i * 37 ) % 3001;
        hs( i, 2 ) = 1 + ( i * 101 ) % 5003;
        hs( i, 3 ) = 1 + ( i * 13 ) % 20011;
    }
    Kokkos::deep_copy( shapes, hs );
    const GpuSpec g = a100();
    Kokkos::parallel_for(
        "gemm", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( const int i ) {
            const GemmPrediction p = predictGemm( g, shapes( i, 0 ), shapes( i, 1 ), shapes( i, 2 ),
                                                  shapes( i, 3 ), DataType::fp32 );
            lat( i ) = p.latency_ms;
            waves( i ) = p.waves;
            tile( i ) = p.tile_m * 1000 + p.tile_n;
        } );
    auto hl = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), lat );
    auto hw = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), waves );
    auto ht = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), tile );
    for ( int i = 0; i < n; ++i )
    {
        const GemmPrediction p =
            predictGemm( g, hs( i, 0 ), hs( i, 1 ), hs( i, 2 ), hs( i, 3 ), DataType::fp32 );
        EXPECT_EQ( std::memcmp( &hl( i ), &p.latency_ms, sizeof( double ) ), 0 ) << i;
        EXPECT_EQ( hw( i ), p.waves );
        EXPECT_EQ( ht( i ), p.tile_m * 1000 + p.tile_n );
    }
}

} // namespace Test
