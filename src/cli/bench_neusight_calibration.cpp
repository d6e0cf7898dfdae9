// NeuSight's GPUs calibrated from their own GEMM measurements (bench_neusight_calibration.hpp).
#include "bench_neusight_calibration.hpp"

#include "bench_calibrate.hpp"

#include <algorithm>
#include <numeric>
#include <shardsweep/calibration/calibration_shapes.hpp>
#include <shardsweep/calibration/gemm_fit.hpp>
#include <shardsweep/calibration/gpu_calibration_fit.hpp>
#include <shardsweep/model/gpu_calibration.hpp>
#include <vector>

namespace shardsweep
{

//! The GEMM constants fitted on every 8th row of the other GPUs than `gpu` (leave-one-GPU-out).
GemmConstants gemmConstantsWithoutGpu( const GpuCatalog& catalog, const GemmDataset& gemm_data,
                                       const std::string& gpu )
{
    const GpuEntry* entry = catalog.find( gpu );
    std::vector<std::size_t> fit;
    std::size_t n = 0;
    for ( std::size_t i = 0; i < gemm_data.rows.size(); ++i )
    {
        const GpuEntry* e = catalog.find( gemm_data.gpus[gemm_data.rows[i].gpu] );
        if ( e != entry && n++ % 8 == 0 )
            fit.push_back( i );
    }
    return fitGemmConstants( kGemmFitStart, gemm_data, fit, 2500 ).constants;
}

GemmSample gemmSampleOf( const GemmMeasurement& m )
{
    const GemmShape shape = m.shape();
    GemmSample s;
    s.B = shape.B;
    s.M = shape.M;
    s.N = shape.N;
    s.K = shape.K;
    s.dtype = shape.dtype;
    s.op = shape.op;
    s.latency_ms = m.latency_ms;
    return s;
}

CalibratedMape neusightCalibratedMape(
    const std::vector<TransformerMeasurement>& rows, const std::string& gpu_name,
    const GpuCatalog& catalog, const GemmDataset& data, const GemmConstants& constants,
    const std::function<double( const std::vector<TransformerMeasurement>& )>& score )
{
    const GpuEntry* entry = catalog.find( gpu_name );
    std::vector<std::size_t> own;
    for ( std::size_t i = 0; i < data.rows.size(); ++i )
        if ( entry && catalog.find( data.gpus[data.rows[i].gpu] ) == entry )
            own.push_back( i );
    CalibratedMape c;
    if ( rows.empty() || own.size() < kMinCalibrationRows )
        return c;
    const auto scoreCalibrated = [&]( const std::vector<GemmSample>& samples )
    {
        GpuCalibration calibration;
        calibration.gpu = gpu_name;
        calibration.gemm.push_back(
            fitGemmCalibration( rows.front().platform.gpu, DataType::fp32, samples, constants ) );
        std::vector<TransformerMeasurement> calibrated = rows;
        for ( TransformerMeasurement& m : calibrated )
            m.platform.gpu = calibratedGpuSpec( m.platform.gpu, calibration );
        return score( calibrated );
    };
    std::vector<double> mapes;
    for ( int draw = 0; draw < kNeusightCalibrationDraws; ++draw )
    {
        const std::vector<std::size_t> order = shuffled( own, draw, 0 );
        std::vector<GemmSample> samples;
        for ( std::size_t i = 0; i < std::min( kNeusightCalibrationShapes, order.size() ); ++i )
            samples.push_back( gemmSampleOf( data.rows[order[i]] ) );
        mapes.push_back( scoreCalibrated( samples ) );
    }
    c.mean = std::accumulate( mapes.begin(), mapes.end(), 0.0 ) / mapes.size();
    c.least = *std::min_element( mapes.begin(), mapes.end() );
    c.largest = *std::max_element( mapes.begin(), mapes.end() );
    std::vector<GemmSample> pool;
    for ( std::size_t i : own )
        pool.push_back( gemmSampleOf( data.rows[i] ) );
    std::vector<TransformerOperatorCase> steps;
    for ( const TransformerMeasurement& m : rows )
        steps.push_back( transformerOperatorCase( m.platform.gpu, m.model, m.config ) );
    c.own_shapes = scoreCalibrated( nearestGemmSamples(
        pool, transformerGemmShapes( steps, constants ), kNeusightCalibrationShapes ) );
    return c;
}

} // namespace shardsweep
