// bench calibrate --table reduction (bench_calibrate.hpp): does `calibrate gpu` read a GEMM file
// whose reduction is N (NeuSight's convention) as such, and one whose reduction is K as K?
#include "bench_calibrate.hpp"
#include "bench_neusight_calibration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <shardsweep/calibration/gpu_calibration_fit.hpp>
#include <shardsweep/io/calibration_csv.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/neusight_data.hpp>

namespace shardsweep
{

namespace
{

constexpr std::size_t kDrawShapes = 150;

//! MAPE on `test` (held in shardsweep's convention) of the calibration fitted on `file_rows` read
//! with `read_as` as the reduction, `test` read the same way (a file and its test shapes come in
//! one convention).
double calibratedMape( const GpuSpec& gpu, const GemmConstants& constants,
                       const std::vector<GemmSample>& file_rows, GemmReductionDim file_dim,
                       GemmReductionDim read_as, const std::vector<GemmSample>& test )
{
    const std::vector<GemmSample> read = withReductionK( file_rows, read_as );
    double sum = 0.0;
    std::size_t n = 0;
    for ( const DataType dtype :
          { DataType::fp32, DataType::tf32, DataType::fp16, DataType::bf16, DataType::fp8 } )
    {
        std::vector<GemmSample> rows;
        for ( const GemmSample& s : read )
            if ( s.dtype == dtype )
                rows.push_back( s );
        if ( rows.size() < kMinCalibrationRows )
            continue;
        const GemmCalibration c = fitGemmCalibration( gpu, dtype, rows, constants );
        for ( GemmSample s : test )
        {
            if ( s.dtype != dtype )
                continue;
            if ( file_dim != read_as ) // as the file has it, then as it is read
                std::swap( s.N, s.K );
            sum += 100.0 *
                   std::fabs( calibratedGemmMs( c, gpu, s.B, s.M, s.N, s.K, s.op ) / s.latency_ms -
                              1.0 );
            ++n;
        }
    }
    return n ? sum / n : 0.0;
}

//! One row per file convention: `rows` (shardsweep's convention) drawn `seeds` times.
void addGpuRows( ResultTable& t, const std::string& name, const GpuSpec& gpu,
                 const GemmConstants& constants, const std::vector<GemmSample>& rows, int seeds,
                 std::uint64_t id )
{
    std::vector<std::size_t> all( rows.size() );
    std::iota( all.begin(), all.end(), std::size_t( 0 ) );
    for ( const GemmReductionDim file_dim : { GemmReductionDim::K, GemmReductionDim::N } )
    {
        int right = 0;
        double worst_ratio = std::numeric_limits<double>::infinity();
        std::vector<double> as_k, detected;
        for ( int seed = 0; seed < seeds; ++seed )
        {
            const std::vector<std::size_t> order = shuffled( all, seed, id );
            std::vector<GemmSample> calib, test;
            for ( std::size_t k = 0; k < order.size(); ++k )
                ( k < kDrawShapes ? calib : test ).push_back( rows[order[k]] );
            // As a file with file_dim as its reduction holds them (the swap is its own inverse).
            const std::vector<GemmSample> file = withReductionK( calib, file_dim );
            const GemmReductionDetection d = detectGemmReductionDim( gpu, file, constants );
            right += d.dim == file_dim;
            worst_ratio = std::min( worst_ratio, file_dim == GemmReductionDim::K
                                                     ? d.mape_as_n / d.mape_as_k
                                                     : d.mape_as_k / d.mape_as_n );
            as_k.push_back(
                calibratedMape( gpu, constants, file, file_dim, GemmReductionDim::K, test ) );
            detected.push_back( calibratedMape( gpu, constants, file, file_dim, d.dim, test ) );
        }
        t.addRow( { name, std::string( nameOf( file_dim ) ), static_cast<long long>( seeds ),
                    static_cast<long long>( right ), worst_ratio, apeOf( as_k ).mape,
                    apeOf( detected ).mape } );
    }
}

} // namespace

ResultTable reductionDimTable( const std::string& gemm_dir, const std::string& measured_gpu,
                               const std::string& measured_file, int seeds )
{
    ResultTable t( { "gpu", "file_reduction", "draws", "detected_right", "worst_error_ratio",
                     "mape_read_as_K", "mape_detected" } );
    const GemmDataset d = loadNeuSightGemmDataset( gemm_dir );
    const GpuCatalog& catalog = defaultGpuCatalog();
    for ( std::size_t g = 0; g < d.gpus.size(); ++g )
    {
        std::vector<GemmSample> rows;
        for ( const GemmMeasurement& m : d.rows )
            if ( m.gpu == int( g ) )
                rows.push_back( gemmSampleOf( m ) );
        GpuSpec gpu = d.specs[g];
        gpu.max_matmul_fp32_TFLOPs = gpu.max_matmul_bf16_TFLOPs = 0.0; // a GPU never seen
        addGpuRows( t, d.gpus[g], gpu, gemmConstantsWithoutGpu( catalog, d, d.gpus[g] ), rows,
                    seeds, g );
    }
    const GpuEntry& measured = findGpu( measured_gpu );
    addGpuRows( t, measured.name, measured.spec, shippedGemmConstants(),
                readGemmMeasurements( measured_file, measured.spec ).rows, seeds, d.gpus.size() );
    return t;
}

} // namespace shardsweep
