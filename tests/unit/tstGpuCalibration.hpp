// calibrate gpu: the neighbour residual, the GEMM fits (recovering known behaviour from synthetic
// measurements), the calibration file's round trip, the GpuSpec it implies, and the measured shapes
// that stand in for a workload's own. The operator fits: tstOperatorCalibration.
#include <cmath>
#include <gpu_calibration_test_support.hpp>
#include <gtest/gtest.h>
#include <input_test_support.hpp>
#include <shardsweep/calibration/gpu_calibration_fit.hpp>
#include <shardsweep/calibration/calibration_shapes.hpp>
#include <shardsweep/calibration/operator_fit.hpp>
#include <shardsweep/io/gpu_calibration_yaml.hpp>
#include <shardsweep/model/dense.hpp>
#include <shardsweep/model/gpu_calibration.hpp>
#include <shardsweep/model/rng.hpp>
#include <shardsweep/model/transformer.hpp>
#include <unistd.h>

namespace Test
{
using namespace shardsweep;

namespace
{
//! `gpu` carrying a bf16 GEMM calibration that prices every GEMM at `factor` times tile `tile`'s
//! time (one-hot weights, offset ln factor).
GpuSpec oneTileBf16Calibration( GpuSpec gpu, int tile, double factor )
{
    GemmTileCalibration& m = gpu.gemm_calibration[int( DataType::bf16 )];
    m.valid = true;
    m.tile_weight[tile] = 1.0;
    m.offset = std::log( factor );
    return gpu;
}

} // namespace

// Hand-computed: points (0,0) → 1 and (3,4) → 2. At (0,4) the distances are 4 and 3, so the
// correction is (1/4·1 + 1/3·2) / (1/4 + 1/3) = 11/7; at a measured point it is that point's; a
// radius leaves out the points beyond it.
TEST( TEST_CATEGORY, calibration_neighbour_residual_by_hand )
{
    NeighbourResiduals r;
    r.dims = 2;
    const double p0[2] = { 0.0, 0.0 }, p1[2] = { 3.0, 4.0 };
    r.add( p0, 1.0 );
    r.add( p1, 2.0 );
    const double x[2] = { 0.0, 4.0 };
    EXPECT_NEAR( r.correction( x ), 11.0 / 7.0, 1e-15 );
    EXPECT_EQ( r.correction( p1 ), 2.0 );
    // Within a radius of 3.5 only (3,4) is left; within 2, nothing.
    EXPECT_EQ( r.correction( x, 3.5 ), 2.0 );
    EXPECT_EQ( r.correction( x, 2.0 ), 0.0 );
    NeighbourResiduals empty;
    empty.dims = 2;
    EXPECT_EQ( empty.correction( x ), 0.0 );
}

// Only the kCalibrationNeighbours = 7 nearest count: 7 points at distance 1 with residual 1 and
// one at distance 1.5 with residual 100 give exactly 1.
TEST( TEST_CATEGORY, calibration_neighbour_residual_uses_the_nearest_seven )
{
    NeighbourResiduals r;
    r.dims = 1;
    const double far[1] = { 1.5 };
    r.add( far, 100.0 );
    for ( int i = 0; i < 7; ++i )
    {
        const double p[1] = { i % 2 ? 1.0 : -1.0 };
        r.add( p, 1.0 );
    }
    const double x[1] = { 0.0 };
    EXPECT_DOUBLE_EQ( r.correction( x ), 1.0 );
}

// ln(FLOPs) is a coordinate of the GEMM neighbour search (weight kFlopsCoordinate = 1): from
// (1, 1024, 1024, 1024), A = (M·4, N/4) does the same work at distance √2·ln 4, B = (M·4, N·4)
// sixteen times it at √(2·ln²4 + ln²16) = √6·ln 4. With residuals 0 at A and 1 at B the
// correction is (1/dB) / (1/dA + 1/dB) = 1 / (1 + √3); without the coordinate it would be 1/2.
TEST( TEST_CATEGORY, calibration_neighbours_weigh_the_work )
{
    double x[kGemmCalibrationFeatures];
    gemmCalibrationFeatures( 3, 5, 7, 11, GemmOp::linear, x );
    EXPECT_EQ( x[4], kOpCoordinate );
    EXPECT_DOUBLE_EQ( x[5], std::log( 2.0 * 3 * 5 * 7 * 11 ) );
    NeighbourResiduals r;
    r.dims = kGemmCalibrationFeatures;
    gemmCalibrationFeatures( 1, 4096, 256, 1024, GemmOp::bmm, x );
    r.add( x, 0.0 );
    gemmCalibrationFeatures( 1, 4096, 4096, 1024, GemmOp::bmm, x );
    r.add( x, 1.0 );
    gemmCalibrationFeatures( 1, 1024, 1024, 1024, GemmOp::bmm, x );
    EXPECT_NEAR( r.correction( x ), 1.0 / ( 1.0 + std::sqrt( 3.0 ) ), 1e-14 );
}

// A GPU that runs every GEMM with the 128x128 tile at 1.25x the model's time (e.g. a lower clock):
// the fit puts the weight on tile 0 and recovers log(1.25), and shapes it never saw are priced
// to within 1e-3 of the truth.
TEST( TEST_CATEGORY, calibration_recovers_a_known_gemm_behaviour )
{
    const GpuSpec gpu = a100Spec();
    GemmCalibration truth;
    truth.mixture.tile_weight[0] = 1.0;
    truth.mixture.offset = std::log( 1.25 );
    truth.mixture.linear_offset = 0.0;
    std::vector<GemmSample> measured = shapes( 120, 7 );
    for ( GemmSample& s : measured )
        s.latency_ms = std::exp( gemmTileMixtureLog( truth, gpu, s.B, s.M, s.N, s.K, s.op ) );
    const GemmCalibration c = fitGemmCalibration( gpu, DataType::fp32, measured );
    EXPECT_GT( c.mixture.tile_weight[0], 0.995 );
    EXPECT_NEAR( c.mixture.offset, std::log( 1.25 ), 0.01 );
    for ( const GemmSample& s : shapes( 40, 99 ) )
    {
        const double want = std::exp( gemmTileMixtureLog( truth, gpu, s.B, s.M, s.N, s.K, s.op ) );
        EXPECT_NEAR( calibratedGemmMs( c, gpu, s.B, s.M, s.N, s.K, s.op ) / want, 1.0, 1e-3 )
            << s.B << "x" << s.M << "x" << s.N << "x" << s.K;
    }
    // The ceiling is the fastest measured rate: 2·B·M·N·K / latency at its best row.
    double best = 0.0;
    for ( const GemmSample& s : measured )
        best = std::max( best, 2.0 * s.B * s.M * s.N * s.K / s.latency_ms * 1e-9 );
    EXPECT_DOUBLE_EQ( c.mixture.max_matmul_TFLOPs, best );
}

// The same GPU, but one plain matmul and one linear layer in ten run 3x slower than their tile
// counts say (as cuBLAS runs the P100's linear layers with a reduction of 32,768 or more at 0.4 of
// its rate). The mixture is fitted to the GPU-bound rows (10x the fastest or more) with Huber's
// loss (quadratic up to a log error of δ = 0.05, linear beyond). With the true weights the
// residuals of a plain matmul are 0 on its n_in usual rows and log 3 on its n_out slow ones, and
// the offset is their Huber location, m with n_in·m = n_out·δ: the slow rows move it by
// δ·n_out/n_in and no more, where squared errors would move it by their mean, log(3)·n_out/(n_in +
// n_out).
TEST( TEST_CATEGORY, calibration_mixture_is_not_pulled_by_a_few_slow_shapes )
{
    const GpuSpec gpu = a100Spec();
    GemmCalibration truth;
    truth.mixture.tile_weight[0] = 1.0;
    truth.mixture.offset = std::log( 1.25 );
    std::vector<GemmSample> measured = shapes( 120, 7 );
    const auto slow = []( std::size_t i ) { return i % 20 == 0 || i % 20 == 5; };
    double fastest = 1e300;
    for ( std::size_t i = 0; i < measured.size(); ++i )
    {
        GemmSample& s = measured[i];
        s.latency_ms = std::exp( gemmTileMixtureLog( truth, gpu, s.B, s.M, s.N, s.K, s.op ) ) *
                       ( slow( i ) ? 3.0 : 1.0 );
        fastest = std::min( fastest, s.latency_ms );
    }
    double n_in = 0.0, n_out = 0.0;
    for ( std::size_t i = 0; i < measured.size(); ++i )
        if ( measured[i].op == GemmOp::bmm && measured[i].latency_ms >= 10.0 * fastest )
            ( slow( i ) ? n_out : n_in ) += 1.0;
    ASSERT_GT( n_out, 0.0 );
    ASSERT_LT( 0.05 * n_out / n_in, 0.05 ); // the location stays within δ of the usual rows
    const double shift = 0.05 * n_out / n_in;
    const GemmCalibration c = fitGemmCalibration( gpu, DataType::fp32, measured );
    EXPECT_GT( c.mixture.tile_weight[0], 0.999 );
    EXPECT_NEAR( c.mixture.offset, std::log( 1.25 ) + shift, 1e-4 );
    EXPECT_GT( std::log( 3.0 ) * n_out / ( n_in + n_out ), 10.0 * shift );
    for ( const GemmSample& s : shapes( 40, 99 ) )
        if ( s.op == GemmOp::bmm )
        {
            const double want =
                std::exp( gemmTileMixtureLog( truth, gpu, s.B, s.M, s.N, s.K, s.op ) + shift );
            EXPECT_NEAR( std::exp( gemmTileMixtureLog( c, gpu, s.B, s.M, s.N, s.K, s.op ) ) / want,
                         1.0, 1e-4 )
                << s.B << "x" << s.M << "x" << s.N << "x" << s.K;
        }
}

// A GPU that runs plain matmuls with the 128x128 tile at 1.25x the model's time and linear layers
// with the 32x128 tile at 1.5x: the fit gives each op its own mixture (one shared mixture cannot
// hold both, and the held-out folds say so), recovers both, prices unseen shapes to 1e-3, and the
// file keeps the linear weights. With 9 linear rows, fewer than kMinCalibrationRows, they share
// the plain matmuls' weights.
TEST( TEST_CATEGORY, calibration_fits_linear_gemms_their_own_tiles )
{
    const GpuSpec gpu = a100Spec();
    GemmCalibration truth;
    truth.mixture.tile_weight[0] = 1.0;
    truth.mixture.linear_tiles = true;
    truth.mixture.linear_tile_weight[4] = 1.0;
    truth.mixture.offset = std::log( 1.25 );
    truth.mixture.linear_offset = std::log( 1.5 / 1.25 );
    const auto priced = [&]( std::vector<GemmSample> rows )
    {
        for ( GemmSample& s : rows )
            s.latency_ms = std::exp( gemmTileMixtureLog( truth, gpu, s.B, s.M, s.N, s.K, s.op ) );
        return rows;
    };
    const std::vector<GemmSample> measured = priced( shapes( 120, 7 ) );
    const GemmCalibration c = fitGemmCalibration( gpu, DataType::fp32, measured );
    ASSERT_TRUE( c.mixture.linear_tiles );
    EXPECT_GT( c.mixture.tile_weight[0], 0.995 );
    EXPECT_GT( c.mixture.linear_tile_weight[4], 0.995 );
    EXPECT_NEAR( c.mixture.offset, std::log( 1.25 ), 0.01 );
    EXPECT_NEAR( c.mixture.linear_offset, std::log( 1.5 / 1.25 ), 0.01 );
    GpuCalibration file;
    file.gpu = "A100-PCIe-40GB";
    file.gemm.push_back( c );
    const std::string path = tempPath( "linear_tiles.yaml" );
    writeTextFileAtomically( path, gpuCalibrationYaml( file, {} ) );
    const GemmCalibration back = *readGpuCalibration( path ).gemmFor( DataType::fp32 );
    std::remove( path.c_str() );
    for ( const GemmSample& s : priced( shapes( 40, 99 ) ) )
    {
        // Nothing runs faster than the fastest rate measured (one unseen shape would).
        const double ceiling_ms =
            2.0 * s.B * s.M * s.N * s.K / ( c.mixture.max_matmul_TFLOPs * 1e9 );
        const double ms = calibratedGemmMs( c, gpu, s.B, s.M, s.N, s.K, s.op );
        EXPECT_NEAR( ms / std::max( s.latency_ms, ceiling_ms ), 1.0, 1e-3 )
            << s.B << "x" << s.M << "x" << s.N << "x" << s.K;
        EXPECT_EQ( calibratedGemmMs( back, gpu, s.B, s.M, s.N, s.K, s.op ), ms );
    }

    std::vector<GemmSample> few_linear;
    int linear = 0;
    for ( const GemmSample& s : measured )
        if ( s.op == GemmOp::bmm || ++linear <= 9 )
            few_linear.push_back( s );
    ASSERT_EQ( few_linear.size(), 69u ); // shapes() alternates bmm and linear
    EXPECT_FALSE( fitGemmCalibration( gpu, DataType::fp32, few_linear ).mixture.linear_tiles );
}

// The measured ceiling bounds the mixture's time; the offsets do not scale it. A GPU measured at
// 1.2x tile 0's time with its ceiling at 1.1 t0 (below tile 0's raw rate): a large GEMM costs 1.2
// t0 (the old order, offsets over ceiling-floored tile times, gave 1.2 · 1.1 t0 and held the P100's
// linear layers at 5.2 of its measured 7.3 TFLOP/s); with an offset of 0.5 it runs at the
// ceiling, 1.1 t0.
TEST( TEST_CATEGORY, calibration_ceiling_bounds_the_mixture_not_its_tiles )
{
    const double B = 1, M = 8192, N = 4096, K = 4096, flops = 2.0 * B * M * N * K;
    GpuSpec gpu = a100Spec();
    const double t0 =
        gemmBestSplit( shippedGemmConstants(), gpu, B, M, N, K, DataType::fp32, 0, GemmOp::bmm )
            .latency_ms;
    const double ceiling_TFLOPs = flops / ( 1.1 * t0 ) * 1e-9;
    gpu.max_matmul_fp32_TFLOPs = ceiling_TFLOPs;
    GemmTileCalibration m;
    m.valid = true;
    m.tile_weight[0] = 1.0;
    m.max_matmul_TFLOPs = ceiling_TFLOPs;
    m.offset = std::log( 1.2 );
    EXPECT_NEAR( calibratedTileGemmMs( m, shippedGemmConstants(), gpu, B, M, N, K, DataType::fp32,
                                       GemmOp::bmm ) /
                     t0,
                 1.2, 1e-12 );
    m.offset = std::log( 0.5 );
    EXPECT_NEAR( calibratedTileGemmMs( m, shippedGemmConstants(), gpu, B, M, N, K, DataType::fp32,
                                       GemmOp::bmm ) /
                     t0,
                 1.1, 1e-12 );
}

// calibrateGpu groups by dtype, skips a dtype with fewer than 10 rows (a note says so) and reports
// the in-sample, cross-validated and uncalibrated errors; the file reads back to the same
// predictions, bit for bit.
TEST( TEST_CATEGORY, calibration_file_round_trip )
{
    const GpuSpec gpu = a100Spec();
    std::vector<GemmSample> measured = shapes( 40, 3 );
    for ( std::size_t i = 0; i < measured.size(); ++i )
    {
        GemmSample& s = measured[i];
        s.latency_ms = predictGemm( gpu, s.B, s.M, s.N, s.K, DataType::fp32, s.op ).latency_ms *
                       ( 1.0 + 0.1 * std::sin( double( i ) ) );
    }
    GemmSample half = measured[0];
    half.dtype = DataType::fp16;
    measured.push_back( half );
    std::vector<std::string> notes;
    const GpuCalibration c = calibrateGpu( "A100-PCIe-40GB", gpu, measured, {}, notes );
    ASSERT_EQ( c.gemm.size(), 1u );
    EXPECT_EQ( c.gemm[0].dtype, DataType::fp32 );
    EXPECT_EQ( c.gemm[0].stats.rows, 40u );
    EXPECT_EQ( c.gemm[0].stats.fit_mape, 0.0 ); // every row is its own nearest neighbour
    EXPECT_GT( c.gemm[0].stats.cv_mape, 0.0 );
    ASSERT_EQ( notes.size(), 1u );
    EXPECT_EQ( notes[0], "GEMM fp16: 1 rows, fewer than 10: not calibrated (the shipped model "
                         "prices it)" );

    const std::string path = tempPath( "calibration.yaml" );
    writeTextFileAtomically( path, gpuCalibrationYaml( c, { "a test" } ) );
    const GpuCalibration back = readGpuCalibration( path );
    EXPECT_EQ( back.gpu, "A100-PCIe-40GB" );
    ASSERT_NE( back.gemmFor( DataType::fp32 ), nullptr );
    EXPECT_EQ( back.gemmFor( DataType::fp16 ), nullptr );
    for ( const GemmSample& s : shapes( 20, 11 ) )
        EXPECT_EQ(
            calibratedGemmMs( *back.gemmFor( DataType::fp32 ), gpu, s.B, s.M, s.N, s.K, s.op ),
            calibratedGemmMs( c.gemm[0], gpu, s.B, s.M, s.N, s.K, s.op ) );
    std::remove( path.c_str() );
}

// A damaged file names the file, line and field.
TEST( TEST_CATEGORY, calibration_file_errors )
{
    const std::string path = tempPath( "bad_calibration.yaml" );
    writeTextFileAtomically( path, "kind: gpu_calibration\ngpu: T4\ngemm:\n  - dtype: fp32\n"
                                   "    tile_weights: [0.5, 0.5, 0, 0, 0, 0, 0, 0.5]\n"
                                   "    offset: 0\n    linear_offset: 0\n"
                                   "    max_matmul_TFLOPs: 1\n"
                                   "    stats: {rows: 1, fit_mape: 0, cv_mape: 0, "
                                   "uncalibrated_mape: 0}\n    points: []\n" );
    expectInputError( [&] { readGpuCalibration( path ); },
                      path + ":5:19: field 'gemm[0].tile_weights': expected tile weights that sum "
                             "to 1, found a sum of 1.5" );
    writeTextFileAtomically( path, "kind: gpu_calibration\ngpu: T4\ngemm:\n  - dtype: fp32\n"
                                   "    tile_weights: [1, 0, 0, 0, 0, 0, 0, 0]\n"
                                   "    linear_tile_weights: [0.5, 0.5, 0, 0, 0, 0, 0, 0.5]\n"
                                   "    offset: 0\n    linear_offset: 0\n"
                                   "    max_matmul_TFLOPs: 1\n"
                                   "    stats: {rows: 1, fit_mape: 0, cv_mape: 0, "
                                   "uncalibrated_mape: 0}\n    points: []\n" );
    expectInputError( [&] { readGpuCalibration( path ); },
                      path + ":6:26: field 'gemm[0].linear_tile_weights': expected tile weights "
                             "that sum to 1, found a sum of 1.5" );
    writeTextFileAtomically( path, "kind: platform\ngpu: T4\n" );
    expectInputError( [&] { readGpuCalibration( path ); },
                      path + ":1:7: field 'kind': expected kind 'gpu_calibration' (a file written "
                             "by shardsweep calibrate gpu), found 'platform'" );
    std::remove( path.c_str() );
}

// The batched models see a calibration as measured ceilings and an effective bandwidth: fp32
// 15 TFLOP/s measured; fp16 200 of the A100's 312 TFLOP/s fp16 peak → the bf16 ceiling at the
// same fraction of its bf16 peak; operators at 0.6 of the bandwidth where the shipped constants
// assume 0.7508 → bandwidth × 0.6/0.7508.
TEST( TEST_CATEGORY, calibration_gpu_spec )
{
    const GpuSpec gpu = a100Spec();
    GpuCalibration c;
    c.gemm.resize( 2 );
    c.gemm[0].dtype = DataType::fp32;
    c.gemm[0].mixture.max_matmul_TFLOPs = 15.0;
    c.gemm[1].dtype = DataType::fp16;
    c.gemm[1].mixture.max_matmul_TFLOPs = 200.0;
    c.ops.resize( 1 );
    c.ops[0].constants.bandwidth_efficiency = 0.6;
    const GpuSpec g = calibratedGpuSpec( gpu, c );
    EXPECT_EQ( g.max_matmul_fp32_TFLOPs, 15.0 );
    EXPECT_DOUBLE_EQ( g.max_matmul_bf16_TFLOPs, 200.0 / gpu.fp16_TFLOPs * gpu.bf16_TFLOPs );
    EXPECT_DOUBLE_EQ( g.memory_bandwidth_GBps,
                      gpu.memory_bandwidth_GBps * 0.6 /
                          shippedOperatorConstants().bandwidth_efficiency );
    EXPECT_EQ( g.fp32_TFLOPs, gpu.fp32_TFLOPs );
    // The tile mixtures travel by dtype code: fp32 and fp16 here, bf16 not calibrated.
    EXPECT_EQ( gemmCalibrationOf( g, DataType::fp32 ), nullptr ); // a mixture not marked valid
    c.gemm[1].mixture.valid = true;
    c.gemm[1].mixture.offset = 0.25;
    const GpuSpec h = calibratedGpuSpec( gpu, c );
    EXPECT_EQ( gemmCalibrationOf( h, DataType::fp16 ), &h.gemm_calibration[2] );
    EXPECT_EQ( gemmCalibrationOf( h, DataType::fp16 )->offset, 0.25 );
    EXPECT_EQ( gemmCalibrationOf( h, DataType::bf16 ), nullptr );
    EXPECT_EQ( gemmCalibrationOf( gpu, DataType::fp16 ), nullptr );
}

// The transformer model prices a calibrated dtype's GEMMs with the tile mixture (one tile here,
// 1.5 times its time: offset ln 1.5) on the GPU as listed, at the framework's kernel gap, without
// tensor_core_eff; another dtype keeps the model; the GPU's ceiling bounds the mixture's time.
TEST( TEST_CATEGORY, calibration_reaches_the_transformer_gemms )
{
    const GpuSpec gpu = a100Spec();
    GpuSpec calibrated = oneTileBf16Calibration( gpu, 0, 1.5 );
    GemmTileCalibration& m = calibrated.gemm_calibration[int( DataType::bf16 )];
    const TransformerConstants tc = shippedTransformerConstants();
    const GemmConstants framework =
        transformer_detail::frameworkGemmConstants( tc, shippedGemmConstants() );
    TransformerOperatorCase oc;
    oc.gpu = calibrated;
    oc.model.dtype = DataType::bf16;
    const auto x = transformer_detail::operatorContext( tc, oc, shippedGemmConstants() );
    const double B = 1, M = 4096, N = 3072, K = 12288;
    const double tile0 =
        gemmBestSplit( framework, calibrated, B, M, N, K, DataType::bf16, 0, GemmOp::linear )
            .latency_ms;
    const double floor_ms = gemmMaxMatmulMs( calibrated, B, M, N, K, DataType::bf16 );
    const double want = std::max( 1.5 * tile0, floor_ms );
    EXPECT_DOUBLE_EQ( x.gemm( B, M, N, K, GemmOp::linear ),
                      transformer_detail::issuedMs( tc, want, 1.0 ) );
    // fp16 is not calibrated: the model, on the tensor-core GPU, as without a calibration.
    oc.model.dtype = DataType::fp16;
    const auto y = transformer_detail::operatorContext( tc, oc, shippedGemmConstants() );
    TransformerOperatorCase plain = oc;
    plain.gpu = gpu;
    const auto z = transformer_detail::operatorContext( tc, plain, shippedGemmConstants() );
    EXPECT_EQ( y.gemm( B, M, N, K ), z.gemm( B, M, N, K ) );
    // A ceiling of 1 TFLOP/s measured: 2·M·N·K / 1e12 s.
    m.max_matmul_TFLOPs = 1.0;
    oc.gpu = calibrated;
    oc.model.dtype = DataType::bf16;
    const auto w = transformer_detail::operatorContext( tc, oc, shippedGemmConstants() );
    EXPECT_DOUBLE_EQ( w.gemm( B, M, N, K, GemmOp::linear ),
                      transformer_detail::issuedMs( tc, 2.0 * M * N * K / 1.0e12 * 1.0e3, 1.0 ) );
}

// The DLRM model's GEMMs (GemmPricer, the dense layers) take a calibration of their dtype too:
// one linear layer forward is its tile mixture with the shipped constants; an fp32 layer on a GPU
// calibrated only in bf16 keeps the analytic model.
TEST( TEST_CATEGORY, calibration_reaches_the_dlrm_gemms )
{
    const GpuSpec gpu = a100Spec();
    const GpuSpec calibrated = oneTileBf16Calibration( gpu, 5, 2.0 );
    const double batch = 2048, in = 1024, out = 512;
    double fwd = 0.0, bwd = 0.0;
    linearLayerMs( calibrated, batch, in, out, DataType::bf16, fwd, bwd );
    const double tile5 = gemmBestSplit( shippedGemmConstants(), calibrated, 1.0, batch, out, in,
                                        DataType::bf16, 5, GemmOp::linear )
                             .latency_ms;
    EXPECT_DOUBLE_EQ( fwd, 2.0 * std::max( tile5, gemmMaxMatmulMs( calibrated, 1.0, batch, out, in,
                                                                   DataType::bf16 ) ) );
    double fwd32 = 0.0, bwd32 = 0.0, plain32 = 0.0, plain_bwd32 = 0.0;
    linearLayerMs( calibrated, batch, in, out, DataType::fp32, fwd32, bwd32 );
    linearLayerMs( gpu, batch, in, out, DataType::fp32, plain32, plain_bwd32 );
    EXPECT_EQ( fwd32, plain32 );
    EXPECT_EQ( bwd32, plain_bwd32 );
}

// Hand-computed: a pool of bmm shapes 1x{M}x64x64 with M = 1, 2, 4, ..., 128, and a linear one at
// M = 3. Along M the squared distance is 2·(ln M/M')² (ln M and ln FLOPs both move); the linear
// row is 3 away in the op coordinate. Target M = 3 ranks 4, 2, 8, 1 (|ln(M/3)| = 0.29, 0.41, 0.98,
// 1.10), target M = 100 ranks 128, 64, 32 (0.25, 0.45, 1.14): round by round 4, 128, 2, 64, 8.
// A second target at M = 3.5 ranks 4, 2, 8 too, so it adds nothing until those are taken.
TEST( TEST_CATEGORY, calibration_nearest_measured_shapes_by_hand )
{
    const auto shape = []( double m, GemmOp op = GemmOp::bmm )
    {
        GemmSample s;
        s.B = 1.0;
        s.M = m;
        s.N = s.K = 64.0;
        s.op = op;
        s.latency_ms = 1.0;
        return s;
    };
    std::vector<GemmSample> pool;
    for ( double m = 1.0; m <= 128.0; m *= 2.0 )
        pool.push_back( shape( m ) );
    pool.push_back( shape( 3.0, GemmOp::linear ) );
    const auto ms = []( const std::vector<GemmSample>& samples )
    {
        std::vector<double> m;
        for ( const GemmSample& s : samples )
            m.push_back( s.op == GemmOp::linear ? -s.M : s.M );
        return m;
    };
    const GemmSample at3 = shape( 3.0 ), at100 = shape( 100.0 ), at3_5 = shape( 3.5 );
    EXPECT_EQ( ms( nearestGemmSamples( pool, { at3, at100 }, 5 ) ),
               ( std::vector<double>{ 4, 128, 2, 64, 8 } ) );
    EXPECT_EQ( ms( nearestGemmSamples( pool, { at3, at3_5 }, 3 ) ),
               ( std::vector<double>{ 4, 2, 8 } ) );
    // The linear row (squared distance 9) comes between M = 16 (2·ln(16/3)² = 5.6) and M = 32
    // (2·ln(32/3)² = 11.2).
    EXPECT_EQ( ms( nearestGemmSamples( pool, { at3 }, 7 ) ),
               ( std::vector<double>{ 4, 2, 8, 1, 16, -3, 32 } ) );
    EXPECT_EQ( nearestGemmSamples( pool, { at3 }, 100 ).size(), pool.size() );
}

} // namespace Test
