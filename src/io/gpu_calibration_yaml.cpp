// The GPU calibration file (gpu_calibration_yaml.hpp).
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/gpu_calibration_yaml.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/yaml_util.hpp>

namespace shardsweep
{

namespace
{

//! A point must have exactly these many entries.
void checkPointSize( const YamlView& p, std::size_t n, const char* what )
{
    p.requireSequence();
    if ( p.size() != n )
        p.fail( fmt::format( "a list of {} entries [{}]", n, what ) );
}

CalibrationFitStats readStats( const YamlView& v )
{
    v.checkKeys( { "rows", "fit_mape", "cv_mape", "uncalibrated_mape" } );
    CalibrationFitStats s;
    s.rows = static_cast<std::size_t>( v.getInt( "rows", Range::nonNegative() ) );
    s.fit_mape = v.getDouble( "fit_mape", Range::nonNegative() );
    s.cv_mape = v.getDouble( "cv_mape", Range::nonNegative() );
    s.uncalibrated_mape = v.getDouble( "uncalibrated_mape", Range::nonNegative() );
    return s;
}

void readTileWeights( const YamlView& w, double* weight )
{
    const std::vector<double> weights = w.asDoubleList( Range::fraction() );
    if ( weights.size() != static_cast<std::size_t>( kGemmNumTiles ) )
        w.fail( fmt::format( "a list of {} tile weights", kGemmNumTiles ) );
    double sum = 0.0;
    for ( int t = 0; t < kGemmNumTiles; ++t )
        sum += weight[t] = weights[t];
    if ( std::fabs( sum - 1.0 ) > 1e-9 )
        w.fail( "tile weights that sum to 1", fmt::format( "a sum of {}", sum ) );
}

GemmCalibration readGemm( const YamlView& v )
{
    v.checkKeys( { "dtype", "tile_weights", "offset", "linear_offset", "max_matmul_TFLOPs", "stats",
                   "points" },
                 { "linear_tile_weights" } );
    GemmCalibration c;
    c.dtype = v.getEnum( "dtype", computeDataTypeNames() );
    c.mixture.valid = true;
    readTileWeights( v.at( "tile_weights" ), c.mixture.tile_weight );
    if ( const std::optional<YamlView> linear = v.find( "linear_tile_weights" ) )
    {
        c.mixture.linear_tiles = true;
        readTileWeights( *linear, c.mixture.linear_tile_weight );
    }
    c.mixture.offset = v.getDouble( "offset" );
    c.mixture.linear_offset = v.getDouble( "linear_offset" );
    c.mixture.max_matmul_TFLOPs = v.getDouble( "max_matmul_TFLOPs", Range::nonNegative() );
    c.stats = readStats( v.at( "stats" ) );
    const YamlView points = v.at( "points" );
    points.requireSequence();
    c.residuals.dims = kGemmCalibrationFeatures;
    for ( std::size_t i = 0; i < points.size(); ++i )
    {
        const YamlView p = points.element( i );
        checkPointSize( p, 6, "B, M, N, K, op, residual" );
        double shape[4];
        for ( int j = 0; j < 4; ++j )
            shape[j] = p.element( j ).asDouble( Range::positive() );
        const GemmOp op = p.element( 4 ).asEnum( enumPairs<GemmOp>() );
        double x[kGemmCalibrationFeatures];
        gemmCalibrationFeatures( shape[0], shape[1], shape[2], shape[3], op, x );
        c.residuals.add( x, p.element( 5 ).asDouble() );
    }
    return c;
}

OperatorCalibration readOps( const YamlView& v )
{
    v.checkKeys( { "dtype", "constants", "stats", "points" } );
    OperatorCalibration c;
    c.dtype = v.getEnum( "dtype", computeDataTypeNames() );
    const YamlView k = v.at( "constants" );
    k.checkKeys( { "launch_ms", "bandwidth_efficiency", "softmax_factor", "ln_factor" } );
    c.constants.launch_ms = k.getDouble( "launch_ms", Range::nonNegative() );
    c.constants.bandwidth_efficiency = k.getDouble( "bandwidth_efficiency", Range::positive() );
    c.constants.softmax_factor = k.getDouble( "softmax_factor", Range::positive() );
    c.constants.ln_factor = k.getDouble( "ln_factor", Range::positive() );
    c.stats = readStats( v.at( "stats" ) );
    const YamlView points = v.at( "points" );
    points.requireSequence();
    c.residuals.dims = kOperatorCalibrationFeatures;
    for ( std::size_t i = 0; i < points.size(); ++i )
    {
        const YamlView p = points.element( i );
        checkPointSize( p, 4, "op, B, H, residual" );
        const OperatorKind kind = p.element( 0 ).asEnum( enumPairs<OperatorKind>() );
        double x[kOperatorCalibrationFeatures];
        operatorCalibrationFeatures( kind, p.element( 1 ).asDouble( Range::positive() ),
                                     p.element( 2 ).asDouble( Range::positive() ), x );
        c.residuals.add( x, p.element( 3 ).asDouble() );
    }
    return c;
}

std::string statsYaml( const CalibrationFitStats& s )
{
    return fmt::format( "{{rows: {}, fit_mape: {}, cv_mape: {}, uncalibrated_mape: {}}}", s.rows,
                        s.fit_mape, s.cv_mape, s.uncalibrated_mape );
}

std::string tileWeightsYaml( const char* key, const double* weight )
{
    std::string out = fmt::format( "    {}: [", key );
    for ( int t = 0; t < kGemmNumTiles; ++t )
        out += fmt::format( "{}{}", t ? ", " : "", weight[t] );
    return out + "]   # tiles 128x128 128x64 64x128 128x32 32x128 64x64 64x32 32x32\n";
}

} // namespace

GpuCalibration readGpuCalibration( const std::string& path )
{
    const YamlView root = loadYamlFile( path );
    if ( fileKind( root ) != "gpu_calibration" )
        root.at( "kind" ).fail( "kind 'gpu_calibration' (a file written by shardsweep calibrate "
                                "gpu)" );
    root.checkKeys( { "kind", "gpu" }, { "gemm_reduction_dim", "gemm", "ops" } );
    GpuCalibration c;
    c.gpu = root.at( "gpu" ).asName();
    c.gemm_reduction_dim =
        root.getEnumOr( "gemm_reduction_dim", GemmReductionDim::K, enumPairs<GemmReductionDim>() );
    for ( const char* section : { "gemm", "ops" } )
    {
        const std::optional<YamlView> list = root.find( section );
        if ( !list )
            continue;
        list->requireSequence();
        for ( std::size_t i = 0; i < list->size(); ++i )
        {
            const YamlView e = list->element( i );
            const DataType dtype = e.getEnum( "dtype", computeDataTypeNames() );
            const bool gemm = section[0] == 'g';
            if ( gemm ? c.gemmFor( dtype ) != nullptr : c.opsFor( dtype ) != nullptr )
                e.at( "dtype" ).fail( "each dtype once per section",
                                      fmt::format( "'{}' again", nameOf( dtype ) ) );
            if ( gemm )
                c.gemm.push_back( readGemm( e ) );
            else
                c.ops.push_back( readOps( e ) );
        }
    }
    return c;
}

std::string gpuCalibrationYaml( const GpuCalibration& calibration,
                                const std::vector<std::string>& comments )
{
    std::string out;
    for ( const std::string& c : comments )
        out += "# " + c + "\n";
    out += fmt::format( "kind: gpu_calibration\ngpu: {}\n", calibration.gpu );
    if ( !calibration.gemm.empty() )
        out += fmt::format( "gemm_reduction_dim: {}   # of the measured GEMM file; the points "
                            "below have K as the reduction\ngemm:\n",
                            nameOf( calibration.gemm_reduction_dim ) );
    for ( const GemmCalibration& c : calibration.gemm )
    {
        out += fmt::format( "  - dtype: {}\n", nameOf( c.dtype ) );
        out += tileWeightsYaml( "tile_weights", c.mixture.tile_weight );
        if ( c.mixture.linear_tiles )
            out += tileWeightsYaml( "linear_tile_weights", c.mixture.linear_tile_weight );
        out +=
            fmt::format( "    offset: {}\n    linear_offset: {}\n    max_matmul_TFLOPs: {}\n",
                         c.mixture.offset, c.mixture.linear_offset, c.mixture.max_matmul_TFLOPs );
        out += fmt::format( "    stats: {}\n    points:   # B, M, N, K, op, log(measured / tile "
                            "mixture)\n",
                            statsYaml( c.stats ) );
        const NeighbourResiduals& r = c.residuals;
        for ( std::size_t p = 0; p < r.size(); ++p )
        {
            const double* x = &r.points[p * r.dims];
            out +=
                fmt::format( "      - [{}, {}, {}, {}, {}, {}]\n", std::round( std::exp( x[0] ) ),
                             std::round( std::exp( x[1] ) ), std::round( std::exp( x[2] ) ),
                             std::round( std::exp( x[3] ) ),
                             nameOf( x[4] != 0.0 ? GemmOp::linear : GemmOp::bmm ), r.residuals[p] );
        }
    }
    if ( !calibration.ops.empty() )
        out += "ops:\n";
    for ( const OperatorCalibration& c : calibration.ops )
    {
        const OperatorConstants& k = c.constants;
        out += fmt::format( "  - dtype: {}\n    constants: {{launch_ms: {}, bandwidth_efficiency: "
                            "{}, softmax_factor: {}, ln_factor: {}}}\n",
                            nameOf( c.dtype ), k.launch_ms, k.bandwidth_efficiency,
                            k.softmax_factor, k.ln_factor );
        out += fmt::format( "    stats: {}\n    points:   # op, B, H, log(measured / refitted "
                            "model)\n",
                            statsYaml( c.stats ) );
        const NeighbourResiduals& r = c.residuals;
        for ( std::size_t p = 0; p < r.size(); ++p )
        {
            const double* x = &r.points[p * r.dims];
            out += fmt::format( "      - [{}, {}, {}, {}]\n",
                                nameOf( static_cast<OperatorKind>( std::lround( x[2] / 1000.0 ) ) ),
                                std::round( std::exp( x[0] ) ), std::round( std::exp( x[1] ) ),
                                r.residuals[p] );
        }
    }
    return out;
}

bool calibratesGpu( const GpuCalibration& calibration, const std::string& gpu_name )
{
    const GpuEntry* gpu = defaultGpuCatalog().find( calibration.gpu );
    return gpu && gpu->name == gpu_name;
}

bool applyGpuCalibration( NamedPlatform& platform, const CalibrationFile& file )
{
    if ( !calibratesGpu( file.calibration, platform.gpu_name ) )
        return false;
    if ( platform.calibration == file.path )
        return true;
    if ( !platform.calibration.empty() )
        throw UsageError( "platform '" + platform.name + "' is calibrated with " +
                          platform.calibration + " already (its calibration: key); " + file.path +
                          " would calibrate its GPU twice" );
    platform.platform.gpu = calibratedGpuSpec( platform.platform.gpu, file.calibration );
    platform.calibration = file.path;
    return true;
}

} // namespace shardsweep
