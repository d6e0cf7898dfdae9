// NeuSight's GPUs calibrated from their own GEMM measurements (bench_neusight_calibration.hpp).
#include "bench_neusight_calibration.hpp"

#include "bench_calibrate.hpp"

#include <algorithm>
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

GpuSpec neusightCalibratedGpu( const GpuSpec& gpu, const std::string& gpu_name,
                               const GpuCatalog& catalog, const GemmDataset& data,
                               const GemmConstants& constants, std::size_t shapes,
                               std::uint64_t draw )
{
    const GpuEntry* entry = catalog.find( gpu_name );
    std::vector<std::size_t> own;
    for ( std::size_t i = 0; i < data.rows.size(); ++i )
        if ( entry && catalog.find( data.gpus[data.rows[i].gpu] ) == entry )
            own.push_back( i );
    if ( own.size() < kMinCalibrationRows || shapes == 0 )
        return gpu;
    const std::vector<std::size_t> order = shuffled( own, draw, 0 );
    std::vector<GemmSample> samples;
    for ( std::size_t i = 0; i < std::min( shapes, order.size() ); ++i )
        samples.push_back( gemmSampleOf( data.rows[order[i]] ) );
    GpuCalibration calibration;
    calibration.gpu = gpu_name;
    calibration.gemm.push_back( fitGemmCalibration( gpu, DataType::fp32, samples, constants ) );
    return calibratedGpuSpec( gpu, calibration );
}

CalibratedMape neusightCalibratedMape(
    const std::vector<TransformerMeasurement>& rows, const std::string& gpu_name,
    const GpuCatalog& catalog, const GemmDataset& data, const GemmConstants& constants,
    const std::function<double( const std::vector<TransformerMeasurement>& )>& score )
{
    CalibratedMape c;
    if ( rows.empty() )
        return c;
    for ( int draw = 0; draw < kNeusightCalibrationDraws; ++draw )
    {
        std::vector<TransformerMeasurement> calibrated = rows;
        const GpuSpec spec = neusightCalibratedGpu( rows.front().platform.gpu, gpu_name, catalog,
                                                    data, constants, 150, draw );
        for ( TransformerMeasurement& m : calibrated )
            m.platform.gpu = spec;
        const double mape = score( calibrated );
        c.mean = ( draw ? c.mean : 0.0 ) + mape / kNeusightCalibrationDraws;
        c.least = draw ? std::min( c.least, mape ) : mape;
        c.largest = draw ? std::max( c.largest, mape ) : mape;
    }
    return c;
}

} // namespace shardsweep
