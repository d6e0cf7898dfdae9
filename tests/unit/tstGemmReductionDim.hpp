// Which column of a GEMM file is the reduction (detectGemmReductionDim): shardsweep's K or
// NeuSight's N, told apart by the data; and the calibration file's record of it.
#include <gpu_calibration_test_support.hpp>
#include <shardsweep/calibration/gpu_calibration_fit.hpp>
#include <shardsweep/io/gpu_calibration_yaml.hpp>

namespace Test
{
using namespace shardsweep;

namespace
{
//! 150 shapes measured on a GPU that runs every GEMM at 1.25 times tile 0's (128x128) time, with
//! K the reduction.
std::vector<GemmSample> tileZeroMeasurements( const GpuSpec& gpu )
{
    GemmCalibration truth;
    truth.mixture.tile_weight[0] = 1.0;
    truth.mixture.offset = std::log( 1.25 );
    std::vector<GemmSample> rows = shapes( 150, 5 );
    for ( GemmSample& s : rows )
        s.latency_ms = std::exp( gemmTileMixtureLog( truth, gpu, s.B, s.M, s.N, s.K, s.op ) );
    return rows;
}

std::vector<GemmSample> swappedNK( std::vector<GemmSample> rows )
{
    for ( GemmSample& s : rows )
        std::swap( s.N, s.K );
    return rows;
}
} // namespace

// The file as measured reads K: the mixture holds the truth, so the held-out rows are exact (to
// the fit's tolerance); read the other way they are not. Its NeuSight-style copy (N and K
// swapped) reads N with the same two errors exchanged.
TEST( TEST_CATEGORY, reduction_dim_told_apart_by_the_data )
{
    const GpuSpec gpu = a100Spec();
    const std::vector<GemmSample> rows = tileZeroMeasurements( gpu );
    const GemmReductionDetection as_measured = detectGemmReductionDim( gpu, rows );
    EXPECT_EQ( as_measured.dim, GemmReductionDim::K );
    EXPECT_LT( as_measured.mape_as_k, 0.1 );
    EXPECT_GT( as_measured.mape_as_n, 5.0 );
    const GemmReductionDetection neusight = detectGemmReductionDim( gpu, swappedNK( rows ) );
    EXPECT_EQ( neusight.dim, GemmReductionDim::N );
    EXPECT_DOUBLE_EQ( neusight.mape_as_n, as_measured.mape_as_k );
    EXPECT_DOUBLE_EQ( neusight.mape_as_k, as_measured.mape_as_n );
}

// Where N = K on every row both readings are the same file: equal errors, and the margin keeps K.
// A dtype with fewer than kMinCalibrationRows rows is not fitted, so it cannot decide: K.
TEST( TEST_CATEGORY, reduction_dim_stays_k_when_the_data_cannot_tell )
{
    const GpuSpec gpu = a100Spec();
    std::vector<GemmSample> square = tileZeroMeasurements( gpu );
    for ( GemmSample& s : square )
        s.K = s.N;
    const GemmReductionDetection d = detectGemmReductionDim( gpu, square );
    EXPECT_EQ( d.mape_as_n, d.mape_as_k );
    EXPECT_EQ( d.dim, GemmReductionDim::K );

    const std::vector<GemmSample> few( square.begin(), square.begin() + kMinCalibrationRows - 1 );
    const GemmReductionDetection none = detectGemmReductionDim( gpu, swappedNK( few ) );
    EXPECT_EQ( none.dim, GemmReductionDim::K );
    EXPECT_EQ( none.mape_as_k, 0.0 );
}

// calibrateGpu reads a file with N as its reduction as shardsweep's: the NeuSight-style copy gives
// the original's calibration, residual for residual, and records N. The file keeps the reading
// (gemm_reduction_dim), a file without the key reads K, and a value other than K or N names the
// file, line and field.
TEST( TEST_CATEGORY, reduction_dim_in_the_calibration_file )
{
    const GpuSpec gpu = a100Spec();
    std::vector<std::string> notes;
    const std::vector<GemmSample> rows = tileZeroMeasurements( gpu );
    const GpuCalibration k = calibrateGpu( "A100-PCIe-40GB", gpu, rows, {}, notes );
    const GpuCalibration c =
        calibrateGpu( "A100-PCIe-40GB", gpu, swappedNK( rows ), {}, notes, GemmReductionDim::N );
    EXPECT_EQ( k.gemm_reduction_dim, GemmReductionDim::K );
    EXPECT_EQ( c.gemm_reduction_dim, GemmReductionDim::N );
    ASSERT_EQ( c.gemm.size(), 1u );
    EXPECT_EQ( c.gemm[0].residuals.points, k.gemm[0].residuals.points );
    EXPECT_EQ( c.gemm[0].residuals.residuals, k.gemm[0].residuals.residuals );
    const std::string path = tempPath( "reduction_dim.yaml" );
    const std::string text = gpuCalibrationYaml( c, {} );
    writeTextFileAtomically( path, text );
    EXPECT_EQ( readGpuCalibration( path ).gemm_reduction_dim, GemmReductionDim::N );

    const std::string key = "gemm_reduction_dim: N";
    const std::size_t at = text.find( key );
    ASSERT_NE( at, std::string::npos );
    std::string without = text;
    without.erase( at, text.find( '\n', at ) + 1 - at );
    writeTextFileAtomically( path, without );
    EXPECT_EQ( readGpuCalibration( path ).gemm_reduction_dim, GemmReductionDim::K );

    writeTextFileAtomically( path, "kind: gpu_calibration\ngpu: T4\ngemm_reduction_dim: rows\n" );
    expectInputError(
        [&] { readGpuCalibration( path ); },
        path + ":3:21: field 'gemm_reduction_dim': expected one of K or N, found 'rows'" );
    std::remove( path.c_str() );
}

} // namespace Test
