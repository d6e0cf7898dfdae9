// A GPU calibrated from its own measurements (model/gpu_calibration.hpp).
#include <algorithm>
#include <cmath>
#include <shardsweep/model/gpu_calibration.hpp>
#include <utility>

namespace shardsweep
{

void NeighbourResiduals::add( const double* x, double residual )
{
    points.insert( points.end(), x, x + dims );
    residuals.push_back( residual );
}

double NeighbourResiduals::correction( const double* x, double radius ) const
{
    const std::size_t n = residuals.size();
    if ( n == 0 )
        return 0.0;
    // The k nearest by squared distance; ties keep the earlier point, so the answer does not
    // depend on anything but the file's order.
    std::pair<double, std::size_t> nearest[kCalibrationNeighbours];
    int found = 0;
    for ( std::size_t p = 0; p < n; ++p )
    {
        double d2 = 0.0;
        for ( int j = 0; j < dims; ++j )
        {
            const double d = points[p * dims + j] - x[j];
            d2 += d * d;
        }
        if ( found < kCalibrationNeighbours )
            nearest[found++] = { d2, p };
        else if ( d2 < nearest[found - 1].first )
            nearest[found - 1] = { d2, p };
        else
            continue;
        // Keep the list sorted by distance (insertion step of the new entry).
        for ( int i = found - 1; i > 0 && nearest[i].first < nearest[i - 1].first; --i )
            std::swap( nearest[i], nearest[i - 1] );
    }
    if ( nearest[0].first == 0.0 )
        return residuals[nearest[0].second];
    double sum = 0.0, weights = 0.0;
    for ( int i = 0; i < found && nearest[i].first <= radius * radius; ++i )
    {
        const double w = 1.0 / std::sqrt( nearest[i].first );
        sum += w * residuals[nearest[i].second];
        weights += w;
    }
    return weights > 0.0 ? sum / weights : 0.0;
}

const GemmCalibration* GpuCalibration::gemmFor( DataType dtype ) const
{
    for ( const GemmCalibration& c : gemm )
        if ( c.dtype == dtype )
            return &c;
    return nullptr;
}

const OperatorCalibration* GpuCalibration::opsFor( DataType dtype ) const
{
    for ( const OperatorCalibration& c : ops )
        if ( c.dtype == dtype )
            return &c;
    return nullptr;
}

void gemmCalibrationFeatures( double B, double M, double N, double K, GemmOp op, double* x )
{
    x[0] = std::log( B );
    x[1] = std::log( M );
    x[2] = std::log( N );
    x[3] = std::log( K );
    x[4] = op == GemmOp::linear ? kOpCoordinate : 0.0;
    x[5] = kFlopsCoordinate * std::log( 2.0 * B * M * N * K );
}

void operatorCalibrationFeatures( OperatorKind kind, double B, double H, double* x )
{
    x[0] = std::log( B );
    x[1] = std::log( H );
    // Ops never borrow each other's residuals: 1000 log units apart.
    x[2] = 1000.0 * static_cast<double>( kind );
}

double gemmTileMixtureLog( const GemmCalibration& c, const GpuSpec& gpu, double B, double M,
                           double N, double K, GemmOp op )
{
    return gemmTileMixtureLogWith( c.mixture, c.constants, gpu, B, M, N, K, c.dtype, op );
}

double calibratedGemmMs( const GemmCalibration& c, const GpuSpec& gpu, double B, double M, double N,
                         double K, GemmOp op )
{
    double x[kGemmCalibrationFeatures];
    gemmCalibrationFeatures( B, M, N, K, op, x );
    return std::max(
        std::exp( gemmTileMixtureLog( c, gpu, B, M, N, K, op ) + c.residuals.correction( x ) ),
        gemmCalibrationCeilingMs( c.mixture, B, M, N, K ) );
}

GpuSpec operatorDtypeGpu( const GpuSpec& gpu, DataType dtype )
{
    GpuSpec g = gpu;
    g.memory_bandwidth_GBps *= 4.0 / dataTypeBytes( dtype );
    return g;
}

double operatorRefitMs( const OperatorCalibration& c, const GpuSpec& gpu, OperatorKind kind,
                        double B, double H )
{
    return predictOperatorAnalyticWith( c.constants, operatorDtypeGpu( gpu, c.dtype ), kind, B, H );
}

double calibratedOperatorMs( const OperatorCalibration& c, const GpuSpec& gpu, OperatorKind kind,
                             double B, double H )
{
    double x[kOperatorCalibrationFeatures];
    operatorCalibrationFeatures( kind, B, H, x );
    return operatorRefitMs( c, gpu, kind, B, H ) *
           std::exp( c.residuals.correction( x, kOperatorNeighbourRadius ) );
}

GpuSpec calibratedGpuSpec( const GpuSpec& gpu, const GpuCalibration& calibration )
{
    GpuSpec g = gpu;
    // The tile mixtures, for the batched models (the residuals stay with predict gemm).
    for ( const GemmCalibration& c : calibration.gemm )
        if ( static_cast<int>( c.dtype ) < kCalibratedDataTypes )
            g.gemm_calibration[static_cast<int>( c.dtype )] = c.mixture;
    if ( const GemmCalibration* c = calibration.gemmFor( DataType::fp32 ) )
        if ( c->mixture.max_matmul_TFLOPs > 0.0 )
            g.max_matmul_fp32_TFLOPs = c->mixture.max_matmul_TFLOPs;
    const GemmCalibration* tensor = calibration.gemmFor( DataType::bf16 );
    if ( !tensor || !( tensor->mixture.max_matmul_TFLOPs > 0.0 ) )
        tensor = calibration.gemmFor( DataType::fp16 );
    // max_matmul_bf16_TFLOPs is read as a fraction of bf16_TFLOPs (gemmMaxMatmulTFLOPs); an fp16
    // measurement carries over as the same fraction of the fp16 peak.
    if ( tensor && tensor->mixture.max_matmul_TFLOPs > 0.0 && gpu.bf16_TFLOPs > 0.0 )
    {
        const double peak = gemmPeakTFLOPs( gpu, tensor->dtype );
        g.max_matmul_bf16_TFLOPs = tensor->mixture.max_matmul_TFLOPs / peak * gpu.bf16_TFLOPs;
    }
    // The bandwidth memory-bound kernels reach, relative to what the shipped constants assume.
    const OperatorCalibration* ops = calibration.opsFor( DataType::fp32 );
    if ( !ops && !calibration.ops.empty() )
        ops = &calibration.ops.front();
    if ( ops )
        g.memory_bandwidth_GBps *=
            ops->constants.bandwidth_efficiency / shippedOperatorConstants().bandwidth_efficiency;
    return g;
}

} // namespace shardsweep
