#include <Kokkos_Core.hpp>
#include <algorithm>
#include <backend_equal.hpp>
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

//! launch 0.01 ms, e_max 0.5, k_overhead 32, i_half 16, occupancy 16384, e_bw 0.5, split-K 0.05,
//! linear launch ratio 2, 25 GFLOP/J at 16 nm, boost_ms 0.1.
constexpr GemmConstants kToy = { 0.01, 0.5, 32.0, 16.0, 16384.0, 0.5, 0.05, 2.0, 25.0, 0.1 };

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
    g.tdp_W = 250.0;
    g.process_nm = 7.0;
    return g;
}
} // namespace

// Derivations by hand (toy GPU, kToy; the toy GPU lists no board power, so no power cap).
// Tiles per SM = clamp(floor(16384 / (tm·tn)), 1, 8): 128x128 → 1, 32x32 → 8; a 32x32 tile has
// I = 1024/64 = 16 so its SM rate is 1e12 · 0.5 · 16/32 = 2.5e11 FLOP/s; 128x128: I = 64,
// 1e12 · 0.5 · 64/80 = 4e11 FLOP/s. Tile index 0 is 128x128, index 7 is 32x32.
TEST( TEST_CATEGORY, gemm_hand_computed_compute_bound )
{
    const GpuSpec g = toyGpu();
    // B=1, M=N=256, K=1024, 32x32: 64 tiles ≤ 80 slots → 1 wave of 8 tiles per SM:
    // 8 · 2 · 1024 · (1024 + 32) / 2.5e11 s = 0.069206016 ms; memory 4·(2·256·1024 + 256²) B /
    // 50 GB/s = 0.04718592 ms < compute; + launch 0.01 ms.
    GemmPrediction p = gemmCandidate( kToy, g, 1, 256, 256, 1024, DataType::fp32, 7, 1.0 );
    EXPECT_NEAR( p.latency_ms, 0.079206016, 1e-12 );
    EXPECT_EQ( p.tile_m, 32 );
    EXPECT_EQ( p.tile_n, 32 );
    EXPECT_EQ( p.waves, 1.0 );
    EXPECT_FALSE( p.memory_bound );
    // 128x128: 4 tiles, 1 wave, 2·16384·1056/4e11 s = 0.08650752 ms, + 0.01 ms.
    EXPECT_NEAR( gemmCandidate( kToy, g, 1, 256, 256, 1024, DataType::fp32, 0, 1.0 ).latency_ms,
                 0.09650752, 1e-12 );
    // A linear call pays launch · 2 = 0.02 ms.
    EXPECT_NEAR( gemmCandidate( kToy, g, 1, 256, 256, 1024, DataType::fp32, 7, 1.0, GemmOp::linear )
                     .latency_ms,
                 0.089206016, 1e-12 );

    // B=4, M=100, N=60, K=64: 32x32 tiles 4·4·2 = 32 → 1 wave;
    // 8 · 2 · 1024 · (64 + 32) / 2.5e11 s = 0.006291456 ms, + 0.01 ms.
    p = gemmCandidate( kToy, g, 4, 100, 60, 64, DataType::fp32, 7, 1.0 );
    EXPECT_NEAR( p.latency_ms, 0.016291456, 1e-12 );
    EXPECT_EQ( p.waves, 1.0 );
    // FP16 halves the bytes; the GPU lists no FP16 rate, so FP32's is used: same compute time.
    EXPECT_NEAR( gemmCandidate( kToy, g, 4, 100, 60, 64, DataType::fp16, 7, 1.0 ).latency_ms,
                 0.016291456, 1e-12 );

    // B=1, M=N=K=4096: 128x128, 1024 tiles over 10 slots → ceil(102.4) = 103 waves of
    // 2 · 16384 · (4096 + 32) / 4e11 s: 34.83107328 ms, + 0.01 ms.
    p = gemmCandidate( kToy, g, 1, 4096, 4096, 4096, DataType::fp32, 0, 1.0 );
    EXPECT_NEAR( p.latency_ms, 34.84107328, 1e-9 );
    EXPECT_EQ( p.tile_m, 128 );
    EXPECT_EQ( p.tile_n, 128 );
    EXPECT_EQ( p.waves, 103.0 );
}

//! Every tile memory-bound: the geometric mean over the tiles is launch + memory time exactly.
TEST( TEST_CATEGORY, gemm_hand_computed_memory_bound_prediction )
{
    // B=1, M=N=4096, K=1 (no split: a slice keeps ≥ 32 elements). Memory 4·(4096 + 4096 + 4096²) B
    // at 50 GB/s = 1.34283264 ms; the slowest tile's compute is 32x32's: 205 waves of
    // 8·2·1024·(1+32)/2.5e11 s = 0.4435 ms < memory. So every tile gives 0.01 + 1.34283264 ms.
    const GemmPrediction p = predictGemmWith( kToy, toyGpu(), 1, 4096, 4096, 1, DataType::fp32 );
    EXPECT_NEAR( p.latency_ms, 1.35283264, 1e-12 );
    EXPECT_TRUE( p.memory_bound );
    // All tiles tie: the first (128x128) is reported.
    EXPECT_EQ( p.tile_m, 128 );
    EXPECT_EQ( p.tile_n, 128 );
    EXPECT_EQ( p.waves, 103.0 );
}

//! The power cap: with tdp 100 W at 8 nm and 25 GFLOP/J at 16 nm the cap is
//! 100 · 25e9 · 16/8 = 5e12 FLOP/s, half the toy GPU's 10 TFLOP/s peak, so capped compute takes
//! twice the boost time; the blend weight is w = t_boost / (t_boost + 0.1 ms).
TEST( TEST_CATEGORY, gemm_power_cap )
{
    GpuSpec g = toyGpu();
    g.tdp_W = 100.0;
    g.process_nm = 8.0;
    EXPECT_DOUBLE_EQ( gemmPowerCapFlops( kToy, g ), 5.0e12 );
    // 32x32, B=1, M=N=256, K=1024: t_boost = 0.069206016 ms (above), t_cap = 0.138412032 ms,
    // w = 0.069206016 / 0.169206016 = 0.409004464711231; compute = t_boost + w·t_boost
    // = 0.0975115855288769 ms; + launch 0.01 ms.
    EXPECT_NEAR( gemmCandidate( kToy, g, 1, 256, 256, 1024, DataType::fp32, 7, 1.0 ).latency_ms,
                 0.1075115855288769, 1e-12 );
    // A long kernel (4096³, 128x128: t_boost 34.83107328 ms) runs almost entirely capped:
    // 34.83107328 · (1 + 34.83107328/34.93107328) + 0.01 = 69.57243283806307 ms.
    EXPECT_NEAR( gemmCandidate( kToy, g, 1, 4096, 4096, 4096, DataType::fp32, 0, 1.0 ).latency_ms,
                 69.57243283806307, 1e-9 );
    // The limiter lowers the clock: a BF16 peak of 40 TFLOP/s is capped by the same fraction
    // 5e12 / 1e13 = 0.5. 32x32 as above (bandwidth raised so that memory does not dominate):
    // work 8·2·1024·1056·10 FLOP at 40e12 · 0.25 → t_boost = 0.017301504 ms, t_cap twice that,
    // w = t_boost / (t_boost + 0.1); compute = t_boost·(1 + w); + launch 0.01 ms.
    {
        GpuSpec h = g;
        h.bf16_TFLOPs = 40.0;
        h.memory_bandwidth_GBps = 1.0e4;
        EXPECT_DOUBLE_EQ( gemmPowerFraction( kToy, h ), 0.5 );
        EXPECT_NEAR( gemmCandidate( kToy, h, 1, 256, 256, 1024, DataType::bf16, 7, 1.0 ).latency_ms,
                     0.029853406835465918, 1e-12 );
    }
    // A cap above the peak changes nothing; an unknown power or node means no cap.
    g.tdp_W = 1000.0;
    EXPECT_NEAR( gemmCandidate( kToy, g, 1, 256, 256, 1024, DataType::fp32, 7, 1.0 ).latency_ms,
                 0.079206016, 1e-12 );
    g.tdp_W = 100.0;
    g.process_nm = 0.0;
    EXPECT_EQ( gemmPowerCapFlops( kToy, g ), 0.0 );
    EXPECT_EQ( gemmPowerFraction( kToy, g ), 1.0 );
    EXPECT_NEAR( gemmCandidate( kToy, g, 1, 256, 256, 1024, DataType::fp32, 7, 1.0 ).latency_ms,
                 0.079206016, 1e-12 );
}

TEST( TEST_CATEGORY, gemm_hand_computed_split_k_memory_bound )
{
    // B=1, M=N=32, K=8192, 32x32 tiles. A tile occupies one of 8 slots of an SM, so it runs at
    // 2.5e11/8 FLOP/s. Split-K s (allowed: 1 tile < 80 slots): s tiles (1 wave), compute
    // 8·2·1024·(8192/s + 32)/2.5e11 s; memory 4·(2·32·8192 + 32²) B at 50 GB/s = 0.04202496 ms;
    // reduction 0.05 ms + 4·(s+1)·32² B at 50 GB/s:
    //   s=1:  compute 0.539492352 → 0.549492352 ms
    //   s=8:  compute 0.069206016 → 0.01 + 0.069206016 + 0.05073728 = 0.129943296 ms
    //   s=16: compute 0.035651584 < memory → 0.01 + 0.04202496 + 0.05139264 = 0.1034176 ms (min)
    //   s=32: memory-bound too → 0.01 + 0.04202496 + 0.05270336 = 0.10472832 ms
    const GemmPrediction p =
        gemmBestSplit( kToy, toyGpu(), 1, 32, 32, 8192, DataType::fp32, 7, GemmOp::bmm );
    EXPECT_NEAR( p.latency_ms, 0.1034176, 1e-12 );
    EXPECT_EQ( p.waves, 1.0 );
    EXPECT_TRUE( p.memory_bound );
    // Candidate s = 16 reproduced on its own.
    const GemmPrediction c16 =
        gemmCandidate( kToy, toyGpu(), 1, 32, 32, 8192, DataType::fp32, kGemmNumTiles - 1, 16.0 );
    EXPECT_EQ( c16.latency_ms, p.latency_ms );
}

//! predictGemmWith against a brute force written out here: every (tile, split) candidate the rules
//! allow, the fastest split per tile, the geometric mean over the tiles.
TEST( TEST_CATEGORY, gemm_geometric_mean_brute_force )
{
    GpuSpec g = a100();
    const double shapes[][4] = { { 1, 32, 32, 8192 },  { 7, 300, 20, 999 }, { 1, 4096, 4096, 4096 },
                                 { 512, 64, 64, 64 },  { 1, 1, 1, 1 },      { 3, 1000, 700, 300 },
                                 { 1, 128, 50000, 13 } };
    for ( const auto& s : shapes )
        for ( GemmOp op : { GemmOp::bmm, GemmOp::linear } )
        {
            double sum_log = 0.0, fastest = 1e300;
            for ( int t = 0; t < kGemmNumTiles; ++t )
            {
                const double tm = gemmTileM( t ), tn = gemmTileN( t );
                const double tiles = s[0] * std::ceil( s[1] / tm ) * std::ceil( s[2] / tn );
                const double slots =
                    108.0 * gemmTilesPerSm( shippedGemmConstants(), int( tm ), int( tn ) );
                double best = 1e300;
                for ( double split : { 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0 } )
                {
                    const bool allowed = split == 1.0 || ( split * 32.0 <= s[3] && tiles < slots );
                    if ( !allowed )
                        continue;
                    best = std::min( best, gemmCandidate( shippedGemmConstants(), g, s[0], s[1],
                                                          s[2], s[3], DataType::fp32, t, split, op )
                                               .latency_ms );
                }
                sum_log += std::log( best );
                fastest = std::min( fastest, best );
            }
            const GemmPrediction p = predictGemm( g, s[0], s[1], s[2], s[3], DataType::fp32, op );
            EXPECT_NEAR( p.latency_ms, std::exp( sum_log / kGemmNumTiles ), 1e-12 * p.latency_ms )
                << s[0] << " " << s[1] << " " << s[2] << " " << s[3];
            EXPECT_GE( p.latency_ms, fastest * ( 1.0 - 1e-12 ) );
        }
    // linear costs more than bmm by exactly the extra launch overhead when nothing else differs.
    const double bmm = predictGemm( g, 1, 64, 64, 64, DataType::fp32 ).latency_ms;
    const double lin = predictGemm( g, 1, 64, 64, 64, DataType::fp32, GemmOp::linear ).latency_ms;
    EXPECT_GT( lin, bmm );
}

TEST( TEST_CATEGORY, gemm_tile_and_wave_counts )
{
    const GpuSpec g = a100();
    for ( int t = 0; t < kGemmNumTiles; ++t )
    {
        const int tm = gemmTileM( t ), tn = gemmTileN( t );
        // 3 batches of 1000 x 700 (K = 300): tiles = 3·ceil(1000/tm)·ceil(700/tn).
        const GemmPrediction c =
            gemmCandidate( shippedGemmConstants(), g, 3, 1000, 700, 300, DataType::fp32, t, 1.0 );
        const long tiles = 3L * ( ( 1000 + tm - 1 ) / tm ) * ( ( 700 + tn - 1 ) / tn );
        const double per_sm = gemmTilesPerSm( shippedGemmConstants(), tm, tn );
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
                        ASSERT_GE( p.latency_ms, roof + shippedGemmConstants().launch_ms - 1e-12 )
                            << b << " " << m << " " << n << " " << k;
                        ASSERT_TRUE( std::isfinite( p.latency_ms ) );
                    }
    // 8192³ FP32 on an A100: within a factor 1.6 of the roofline (efficiency ≥ 60 %).
    const double big = predictGemm( g, 1, 8192, 8192, 8192, DataType::fp32 ).latency_ms;
    EXPECT_LT( big, 1.6 * gemmRooflineMs( g, 1, 8192, 8192, 8192, DataType::fp32 ) );
    // Zero-sized GEMMs cost nothing.
    EXPECT_EQ( predictGemm( g, 1, 0, 10, 10, DataType::fp32 ).latency_ms, 0.0 );
}

//! The ceiling: the measured matmul maximum where the GPU has one, else the highest fraction of the
//! peak measured on any GPU (13.40/14.0 FP32, 271.2/312 on tensor cores).
TEST( TEST_CATEGORY, gemm_measured_matmul_ceiling )
{
    GpuSpec g = toyGpu();
    EXPECT_EQ( gemmMaxMatmulTFLOPs( g, DataType::fp32 ), 10.0 * 13.40 / 14.0 );
    g.max_matmul_fp32_TFLOPs = 1.0;
    EXPECT_EQ( gemmMaxMatmulTFLOPs( g, DataType::fp32 ), 1.0 );
    // A GPU without bf16 (and tf32) rates: those dtypes run at the FP32 rate, under its ceiling.
    EXPECT_EQ( gemmMaxMatmulTFLOPs( g, DataType::bf16 ), 1.0 );
    g.tf32_TFLOPs = 50.0;
    g.fp16_TFLOPs = 100.0;
    g.bf16_TFLOPs = 100.0;
    EXPECT_EQ( gemmMaxMatmulTFLOPs( g, DataType::bf16 ), 100.0 * ( 271.2 / 312.0 ) );
    g.max_matmul_bf16_TFLOPs = 80.0;
    EXPECT_EQ( gemmMaxMatmulTFLOPs( g, DataType::bf16 ), 80.0 );
    EXPECT_EQ( gemmMaxMatmulTFLOPs( g, DataType::fp16 ), 80.0 );
    EXPECT_EQ( gemmMaxMatmulTFLOPs( g, DataType::tf32 ), 40.0 );
    // It binds: at 1 TFLOP/s a 1024³ FP32 GEMM takes 2·2^30 / 1e12 s = 2.147483648 ms, although
    // the tile model alone (at most 4e11 FLOP/s per SM, 10 SMs) gives well under 1 ms.
    GpuSpec free = toyGpu();
    free.max_matmul_fp32_TFLOPs = 1000.0;
    EXPECT_LT( predictGemmWith( kToy, free, 1, 1024, 1024, 1024, DataType::fp32 ).latency_ms, 1.0 );
    EXPECT_DOUBLE_EQ( predictGemmWith( kToy, g, 1, 1024, 1024, 1024, DataType::fp32 ).latency_ms,
                      2.147483648 );
    EXPECT_DOUBLE_EQ( gemmMaxMatmulMs( g, 1, 1024, 1024, 1024, DataType::fp32 ), 2.147483648 );
}

//! The same function inside a Kokkos kernel on TEST_EXECSPACE gives the host's results
//! (sameAsHost: bit for bit on host backends, within 1e-12 relative on CUDA).
// The body is a free function: nvcc refuses a device lambda inside gtest's TestBody, a
// private member function.
void gemm_kernel_matches_host_body()
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
        EXPECT_TRUE( sameAsHost( hl( i ), p.latency_ms ) ) << i;
        EXPECT_TRUE( sameAsHost( hw( i ), p.waves ) ) << i;
        EXPECT_EQ( ht( i ), p.tile_m * 1000 + p.tile_n );
    }
}

TEST( TEST_CATEGORY, gemm_kernel_matches_host )
{
    gemm_kernel_matches_host_body();
}

} // namespace Test
