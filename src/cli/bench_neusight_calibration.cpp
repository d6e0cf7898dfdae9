// NeuSight's GPUs calibrated from their own GEMM measurements (bench_neusight_calibration.hpp).
#include "bench_neusight_calibration.hpp"

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
                               const GemmConstants& constants, std::size_t shapes )
{
    const GpuEntry* entry = catalog.find( gpu_name );
    std::vector<const GemmMeasurement*> own;
    for ( const GemmMeasurement& m : data.rows )
        if ( entry && catalog.find( data.gpus[m.gpu] ) == entry )
            own.push_back( &m );
    if ( own.size() < kMinCalibrationRows || shapes == 0 )
        return gpu;
    const std::size_t step = ( own.size() + shapes - 1 ) / shapes;
    std::vector<GemmSample> samples;
    for ( std::size_t i = 0; i < own.size(); i += step )
    {
        samples.push_back( gemmSampleOf( *own[i] ) );
    }
    GpuCalibration calibration;
    calibration.gpu = gpu_name;
    calibration.gemm.push_back( fitGemmCalibration( gpu, DataType::fp32, samples, constants ) );
    return calibratedGpuSpec( gpu, calibration );
}

} // namespace shardsweep
