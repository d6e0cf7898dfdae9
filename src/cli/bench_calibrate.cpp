// shardsweep bench calibrate: how well `calibrate gpu|network` predicts what it was not given,
// on the development data (GPUs left out of the shipped constants, shapes and GPU counts left out
// of the calibration).
#include "bench_calibrate.hpp"

#include "bench_neusight_calibration.hpp"
#include "command_line.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <numeric>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/calibration/gemm_fit.hpp>
#include <shardsweep/calibration/gpu_calibration_fit.hpp>
#include <shardsweep/calibration/network_fit.hpp>
#include <shardsweep/calibration/operator_fit.hpp>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/calibration_csv.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/neusight_data.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/model/rng.hpp>

namespace shardsweep
{

namespace
{
namespace po = boost::program_options;

constexpr int kCalibrationSizes[] = { 25, 50, 100, 150, 300 };
constexpr int kLargestSplitShapes = 150;

struct BenchCalibrateOptions
{
    std::string table = "gemm", format = "table";
    std::string gemm_dir = std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/measured/gemm";
    std::string ops_dir = std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/measured/ops";
    std::string nccl_dir =
        std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/measured/transformer/nccl_tests_a100";
    std::string platform = std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/platforms/dgx-a100.yaml";
    // --table measured: one GPU's microbenchmark files, each timed twice.
    std::string gpu = "H100";
    std::string measured_dir = std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/measured/h100";
    std::string gemm_file = measured_dir + "/gemm_aligned_a.csv";
    std::string gemm_repeat = measured_dir + "/gemm_aligned_b.csv";
    std::string ops_file = measured_dir + "/ops_a.csv";
    std::string ops_repeat = measured_dir + "/ops_b.csv";
    int seeds = 3, stride = 8, max_evals = 2500;
};

//! Shapes measured at or above this latency are bound by the GPU, not by the host's launches:
//! on the H100 two runs of the microbenchmark agree within 2 % there, and by 12–35 % below
//! (docs/MODEL.md, "H100 calibration").
constexpr double kGpuBoundMs = 0.2;

} // namespace

Ape apeOf( std::vector<double> ape )
{
    Ape a;
    if ( ape.empty() )
        return a;
    a.mape = std::accumulate( ape.begin(), ape.end(), 0.0 ) / ape.size();
    std::nth_element( ape.begin(), ape.begin() + ape.size() / 2, ape.end() );
    a.median = ape[ape.size() / 2];
    return a;
}

std::vector<std::size_t> shuffled( std::vector<std::size_t> rows, std::uint64_t seed,
                                   std::uint64_t id )
{
    CounterRng rng( seed, id, kStreamUser + 1 );
    for ( std::size_t i = rows.size(); i > 1; --i )
        std::swap( rows[i - 1], rows[static_cast<std::size_t>( rng.uniform() * i ) % i] );
    return rows;
}

namespace
{

//! An unseen GPU has no measured matmul ceiling in its spec.
GpuSpec unmeasured( GpuSpec g )
{
    g.max_matmul_fp32_TFLOPs = 0.0;
    g.max_matmul_bf16_TFLOPs = 0.0;
    return g;
}

//! --table gemm: per GPU, the constants fitted without it; then calibrated with n of its shapes
//! (random; or from its smaller 80 % when the largest fifth is tested), tested on the others.
ResultTable gemmTable( const BenchCalibrateOptions& o )
{
    const GemmDataset d = loadNeuSightGemmDataset( o.gemm_dir );
    ResultTable t( { "gpu", "calibration_shapes", "tested_on", "rows", "uncalibrated_mape",
                     "calibrated_mape", "calibrated_median_ape" } );
    for ( std::size_t g = 0; g < d.gpus.size(); ++g )
    {
        std::vector<std::size_t> fit_rows, own;
        for ( std::size_t i = 0, n = 0; i < d.rows.size(); ++i )
            if ( d.rows[i].gpu != int( g ) )
            {
                if ( n++ % o.stride == 0 )
                    fit_rows.push_back( i );
            }
            else
                own.push_back( i );
        const GemmConstants logo =
            fitGemmConstants( kGemmFitStart, d, fit_rows, o.max_evals ).constants;
        const GpuSpec gpu = unmeasured( d.specs[g] );
        // The uncalibrated model's error per row: the same in every draw.
        std::vector<double> uncalibrated_ape( d.rows.size() );
        for ( std::size_t i : own )
        {
            const GemmSample s = gemmSampleOf( d.rows[i] );
            const double u =
                predictGemmWith( logo, gpu, s.B, s.M, s.N, s.K, DataType::fp32, s.op ).latency_ms;
            uncalibrated_ape[i] = 100.0 * std::fabs( u - s.latency_ms ) / s.latency_ms;
        }
        const auto run = [&]( const std::vector<std::size_t>& calib,
                              const std::vector<std::size_t>& test, std::vector<double>& cal,
                              std::vector<double>& uncal )
        {
            std::vector<GemmSample> samples;
            for ( std::size_t i : calib )
                samples.push_back( gemmSampleOf( d.rows[i] ) );
            const GemmCalibration c = fitGemmCalibration( gpu, DataType::fp32, samples, logo );
            for ( std::size_t i : test )
            {
                const GemmSample s = gemmSampleOf( d.rows[i] );
                const double p = calibratedGemmMs( c, gpu, s.B, s.M, s.N, s.K, s.op );
                cal.push_back( 100.0 * std::fabs( p - s.latency_ms ) / s.latency_ms );
                uncal.push_back( uncalibrated_ape[i] );
            }
        };
        const auto addRow = [&]( const std::string& shapes, const std::string& tested,
                                 const std::vector<double>& cal, const std::vector<double>& uncal,
                                 std::size_t rows )
        {
            const Ape a = apeOf( cal );
            t.addRow( { d.gpus[g], shapes, tested, static_cast<long long>( rows ),
                        apeOf( uncal ).mape, a.mape, a.median } );
        };
        for ( int n : kCalibrationSizes )
        {
            std::vector<double> cal, uncal;
            for ( int seed = 0; seed < o.seeds; ++seed )
            {
                const std::vector<std::size_t> order = shuffled( own, seed, g );
                run( { order.begin(), order.begin() + n }, { order.begin() + n, order.end() }, cal,
                     uncal );
            }
            addRow( std::to_string( n ) + " random", "the other shapes", cal, uncal,
                    own.size() - n );
        }
        // The largest fifth by B·M·N·K, calibrated with shapes from the rest.
        std::vector<std::size_t> by_size = own;
        std::stable_sort( by_size.begin(), by_size.end(),
                          [&]( std::size_t a, std::size_t b )
                          {
                              const GemmMeasurement &x = d.rows[a], &y = d.rows[b];
                              return x.B * x.M * x.N * x.K < y.B * y.M * y.N * y.K;
                          } );
        const std::size_t cut = by_size.size() * 4 / 5;
        const std::vector<std::size_t> smaller( by_size.begin(), by_size.begin() + cut );
        const std::vector<std::size_t> largest( by_size.begin() + cut, by_size.end() );
        std::vector<double> cal, uncal;
        for ( int seed = 0; seed < o.seeds; ++seed )
        {
            const std::vector<std::size_t> order = shuffled( smaller, seed, g );
            run( { order.begin(), order.begin() + kLargestSplitShapes }, largest, cal, uncal );
        }
        addRow( std::to_string( kLargestSplitShapes ) + " of the smaller 80 %", "largest 20 %", cal,
                uncal, largest.size() );
    }
    return t;
}

//! --table ops: per GPU, the operator constants fitted without it (the uncalibrated model), then
//! calibrated with n of its operators and tested on the others.
ResultTable opsTable( const BenchCalibrateOptions& o )
{
    const NeuSightOperatorData d = loadNeuSightOperatorData( o.ops_dir );
    ResultTable t( { "gpu", "calibration_shapes", "tested_on", "rows", "uncalibrated_mape",
                     "calibrated_mape", "calibrated_median_ape" } );
    for ( std::size_t g = 0; g < d.gpus.size(); ++g )
    {
        std::vector<OperatorSample> others;
        std::vector<std::size_t> own;
        for ( std::size_t i = 0; i < d.rows.size(); ++i )
        {
            const NeuSightOperatorRow& r = d.rows[i];
            if ( r.gpu != int( g ) )
                others.push_back(
                    { d.specs[r.gpu], r.shape.kind, r.shape.B, r.shape.H, r.latency_ms } );
            else
                own.push_back( i );
        }
        const OperatorConstants logo =
            fitOperatorConstants( kOperatorFitStart, others, o.max_evals ).constants;
        const GpuSpec& gpu = d.specs[g];
        for ( int n : kCalibrationSizes )
        {
            std::vector<double> cal, uncal;
            for ( int seed = 0; seed < o.seeds; ++seed )
            {
                const std::vector<std::size_t> order = shuffled( own, seed, g );
                std::vector<OperatorMeasurement> samples;
                for ( int k = 0; k < n; ++k )
                {
                    const NeuSightOperatorRow& r = d.rows[order[k]];
                    samples.push_back(
                        { r.shape.kind, r.shape.B, r.shape.H, DataType::fp32, r.latency_ms } );
                }
                const OperatorCalibration c =
                    fitOperatorCalibration( gpu, DataType::fp32, samples );
                for ( std::size_t k = n; k < order.size(); ++k )
                {
                    const NeuSightOperatorRow& r = d.rows[order[k]];
                    const double p =
                        calibratedOperatorMs( c, gpu, r.shape.kind, r.shape.B, r.shape.H );
                    const double u = predictOperatorAnalyticWith( logo, gpu, r.shape.kind,
                                                                  r.shape.B, r.shape.H );
                    cal.push_back( 100.0 * std::fabs( p - r.latency_ms ) / r.latency_ms );
                    uncal.push_back( 100.0 * std::fabs( u - r.latency_ms ) / r.latency_ms );
                }
            }
            const Ape a = apeOf( cal );
            t.addRow( { d.gpus[g], std::to_string( n ) + " random", std::string( "the others" ),
                        static_cast<long long>( own.size() - n ), apeOf( uncal ).mape, a.mape,
                        a.median } );
        }
    }
    return t;
}

//! --table nccl: the platform's network fitted on the all-reduces of 2, 4 and 8 GPUs, scored on
//! every GPU count (3, 5, 6, 7 held out).
ResultTable ncclTable( const BenchCalibrateOptions& o )
{
    const Platform base = readPlatformFile( o.platform ).platform;
    std::vector<NcclTestsLog> fit_logs, all_logs;
    for ( int n = 2; n <= 8; ++n )
    {
        all_logs.push_back(
            readNcclTestsLog( o.nccl_dir + "/all_reduce_" + std::to_string( n ) + "gpu.csv" ) );
        if ( n == 2 || n == 4 || n == 8 )
            fit_logs.push_back( all_logs.back() );
    }
    const NetworkFitResult fit = fitNetwork( base, fit_logs, 1048576.0, 1073741824.0 );
    // The baseline: the same fit of the links alone, without the call terms.
    const NetworkFitResult links = fitNetwork( base, fit_logs, 1048576.0, 1073741824.0, false );
    ResultTable t( { "gpus", "role", "rows", "base_mape", "links_only_mape", "calibrated_mape",
                     "rs_over_ar_busbw", "ag_over_ar_busbw" } );
    for ( const NcclTestsLog& log : all_logs )
    {
        std::size_t rows = 0;
        const double cal = ncclTestsMape( fit.platform, log, 1048576.0, 1073741824.0, &rows );
        const bool fitted = log.ranks == 2 || log.ranks == 4 || log.ranks == 8;
        // nccl-tests' bus bandwidth of a 1 GiB reduce-scatter and all-gather over the all-reduce's
        // (busbw = size / time times 2(p-1)/p for the all-reduce, (p-1)/p for the others): NCCL
        // runs the three at one bus bandwidth, so 1 is what a consistent model predicts.
        const LogNetwork net = logNetwork( fit.platform, log );
        const double GiB = 1073741824.0;
        const double ar_us = ncclTestPredictedUs( net, NcclTest::all_reduce, log.ranks, GiB );
        const auto overAllReduce = [&]( NcclTest test )
        { return ar_us / ( 2.0 * ncclTestPredictedUs( net, test, log.ranks, GiB ) ); };
        t.addRow(
            { static_cast<long long>( log.ranks ), std::string( fitted ? "fitted" : "held out" ),
              static_cast<long long>( rows ), ncclTestsMape( base, log, 1048576.0, 1073741824.0 ),
              ncclTestsMape( links.platform, log, 1048576.0, 1073741824.0 ), cal,
              overAllReduce( NcclTest::reduce_scatter ), overAllReduce( NcclTest::all_gather ) } );
    }
    return t;
}

//! The measurements of `again` (the same shapes timed again), row by row; fails naming the file
//! where a row is not the same shape.
template <class Sample, class SameShape>
std::vector<double> repeatedLatencies( const std::vector<Sample>& rows,
                                       const std::vector<Sample>& again, const std::string& path,
                                       const SameShape& same )
{
    if ( again.size() != rows.size() )
        throw InputError( path, "has " + std::to_string( again.size() ) + " rows, expected the " +
                                    std::to_string( rows.size() ) + " shapes timed again" );
    std::vector<double> ms;
    for ( std::size_t i = 0; i < rows.size(); ++i )
    {
        if ( !same( rows[i], again[i] ) )
            throw InputError( path, "data row " + std::to_string( i + 1 ) +
                                        " is not the shape of the first file's row" );
        ms.push_back( again[i].latency_ms );
    }
    return ms;
}

//! Rows of --table measured for one family and dtype: calibrated with n random rows (--seeds
//! draws), tested on the others, all of them and those at or above kGpuBoundMs; next to the
//! uncalibrated model and the measurement's own repeatability on the same rows.
template <class Sample, class Fit, class Predict, class Uncalibrated>
void addMeasuredRows( ResultTable& t, const char* family, DataType dtype,
                      const std::vector<Sample>& rows, const std::vector<double>& again, int seeds,
                      const Fit& fit, const Predict& predict, const Uncalibrated& uncalibrated )
{
    std::vector<std::size_t> all( rows.size() );
    std::iota( all.begin(), all.end(), std::size_t( 0 ) );
    for ( int n : kCalibrationSizes )
    {
        if ( static_cast<std::size_t>( n ) + 20 > rows.size() )
            continue;
        std::vector<double> cal[2], uncal[2], repeat[2]; // [0] all tested rows, [1] GPU-bound
        for ( int seed = 0; seed < seeds; ++seed )
        {
            const std::vector<std::size_t> order =
                shuffled( all, seed, static_cast<std::uint64_t>( dtype ) );
            std::vector<Sample> calib;
            for ( int k = 0; k < n; ++k )
                calib.push_back( rows[order[k]] );
            const auto c = fit( calib );
            for ( std::size_t k = n; k < order.size(); ++k )
            {
                const Sample& s = rows[order[k]];
                const auto ape = [&]( double x )
                { return 100.0 * std::fabs( x - s.latency_ms ) / s.latency_ms; };
                for ( int band = 0; band < 2; ++band )
                    if ( band == 0 || s.latency_ms >= kGpuBoundMs )
                    {
                        cal[band].push_back( ape( predict( c, s ) ) );
                        uncal[band].push_back( ape( uncalibrated( s ) ) );
                        repeat[band].push_back( ape( again[order[k]] ) );
                    }
            }
        }
        for ( int band = 0; band < 2; ++band )
        {
            if ( cal[band].empty() )
                continue;
            const Ape a = apeOf( cal[band] );
            t.addRow( { std::string( family ), std::string( nameOf( dtype ) ),
                        static_cast<long long>( n ),
                        std::string( band == 0 ? "all others" : "others >= 0.2 ms" ),
                        static_cast<long long>( cal[band].size() / seeds ),
                        apeOf( uncal[band] ).mape, a.mape, a.median, apeOf( repeat[band] ).mape } );
        }
    }
}

//! --table measured: one GPU's microbenchmark (scripts/microbench), each file timed twice.
ResultTable measuredTable( const BenchCalibrateOptions& o )
{
    const GpuSpec& gpu = findGpu( o.gpu ).spec;
    ResultTable t( { "family", "dtype", "calibration_shapes", "tested_on", "rows",
                     "uncalibrated_mape", "calibrated_mape", "calibrated_median_ape",
                     "repeat_mape" } );
    const std::vector<GemmSample> gemms = readGemmMeasurements( o.gemm_file, gpu ).rows;
    const std::vector<double> gemms_again =
        repeatedLatencies( gemms, readGemmMeasurements( o.gemm_repeat, gpu ).rows, o.gemm_repeat,
                           []( const GemmSample& a, const GemmSample& b )
                           {
                               return a.B == b.B && a.M == b.M && a.N == b.N && a.K == b.K &&
                                      a.dtype == b.dtype && a.op == b.op;
                           } );
    const OperatorMeasurements ops = readOperatorMeasurements( o.ops_file );
    const std::vector<double> ops_again = repeatedLatencies(
        ops.rows, readOperatorMeasurements( o.ops_repeat ).rows, o.ops_repeat,
        []( const OperatorMeasurement& a, const OperatorMeasurement& b )
        { return a.kind == b.kind && a.B == b.B && a.H == b.H && a.dtype == b.dtype; } );
    for ( const DataType d :
          { DataType::fp32, DataType::tf32, DataType::fp16, DataType::bf16, DataType::fp8 } )
    {
        std::vector<GemmSample> rows;
        std::vector<double> again;
        for ( std::size_t i = 0; i < gemms.size(); ++i )
            if ( gemms[i].dtype == d )
            {
                rows.push_back( gemms[i] );
                again.push_back( gemms_again[i] );
            }
        addMeasuredRows(
            t, "gemm", d, rows, again, o.seeds,
            [&]( const std::vector<GemmSample>& r ) { return fitGemmCalibration( gpu, d, r ); },
            [&]( const GemmCalibration& c, const GemmSample& s )
            { return calibratedGemmMs( c, gpu, s.B, s.M, s.N, s.K, s.op ); },
            [&]( const GemmSample& s )
            { return predictGemm( gpu, s.B, s.M, s.N, s.K, d, s.op ).latency_ms; } );
    }
    for ( const DataType d : { DataType::fp32, DataType::fp16, DataType::bf16 } )
    {
        std::vector<OperatorMeasurement> rows;
        std::vector<double> again;
        for ( std::size_t i = 0; i < ops.rows.size(); ++i )
            if ( ops.rows[i].dtype == d )
            {
                rows.push_back( ops.rows[i] );
                again.push_back( ops_again[i] );
            }
        addMeasuredRows(
            t, "ops", d, rows, again, o.seeds,
            [&]( const std::vector<OperatorMeasurement>& r )
            { return fitOperatorCalibration( gpu, d, r ); },
            [&]( const OperatorCalibration& c, const OperatorMeasurement& m )
            { return calibratedOperatorMs( c, gpu, m.kind, m.B, m.H ); },
            [&]( const OperatorMeasurement& m )
            { return predictOperatorAnalytic( operatorDtypeGpu( gpu, d ), m.kind, m.B, m.H ); } );
    }
    return t;
}

} // namespace

int benchCalibrate( const CommandContext& ctx, const Arguments& args )
{
    BenchCalibrateOptions o;
    po::options_description opts(
        "Usage: shardsweep bench calibrate [--table gemm|ops|nccl|measured|reduction] "
        "[options]\n\n"
        "How well `calibrate gpu` and `calibrate network` predict what they were not given, on "
        "the\n"
        "development data (docs/MODEL.md, \"Calibrating to your cluster\"):\n"
        "  gemm: per GPU of NeuSight's FP32 GEMMs, the tile model's constants fitted without it\n"
        "    (every --fit-stride-th row of the other GPUs) and its spec without a measured matmul\n"
        "    ceiling (a GPU the shipped model never saw); calibrated with 25..300 random shapes "
        "of\n"
        "    it and tested on all its other shapes, and with 150 shapes of its smaller 80 % and "
        "tested\n"
        "    on its largest fifth (by B*M*N*K). MAPE and median APE over --seeds draws, next to "
        "the\n"
        "    uncalibrated model on the same rows.\n"
        "  ops: the same for softmax, layer norm and element-wise operators (the uncalibrated "
        "model:\n"
        "    the operator constants fitted without the GPU).\n"
        "  nccl: --platform's network fitted on nccl-tests all-reduces of 2, 4 and 8 A100s, "
        "scored\n"
        "    on 2..8 (3, 5, 6, 7 held out), 1 MiB to 1 GiB; links_only_mape: the same fit "
        "without\n"
        "    the call terms (a collective call's fixed time and pass over its bytes).\n"
        "  measured: one GPU's microbenchmark (scripts/microbench; default the H100 of\n"
        "    inputs/measured/h100), per dtype calibrated with 25..300 random shapes and tested on\n"
        "    the others (all, and those measured at >= 0.2 ms, bound by the GPU rather than by "
        "the\n"
        "    host's launches); repeat_mape is the files' own repeatability on the same rows: the\n"
        "    second file (the same shapes timed again) against the first.\n"
        "  reduction: whether calibrate gpu reads a GEMM file whose reduction dimension is N\n"
        "    (NeuSight's convention) as such and one whose reduction is K as K: NeuSight's GPUs\n"
        "    (constants fitted without the GPU) and --gemm-file, each presented both ways, 150\n"
        "    random rows per draw (--seeds draws, 10 unless given); worst_error_ratio is the\n"
        "    smallest ratio of the wrong reading's cross-validated error to the right one's;\n"
        "    mape_read_as_K and mape_detected score the calibration on the other "
        "rows.\n\nOptions" );
    const char* tables = "gemm (default) | ops | nccl | measured | reduction";
    opts.add_options()( "help,h", "this text" )( "table", po::value( &o.table ), tables )(
        "format,f", po::value( &o.format ), "table | csv | json" )(
        "gemm-dir", po::value( &o.gemm_dir ), "NeuSight GEMM data (default inputs/measured/gemm)" )(
        "ops-dir", po::value( &o.ops_dir ),
        "NeuSight operator data (default inputs/measured/ops)" )(
        "nccl-dir", po::value( &o.nccl_dir ),
        "nccl-tests all_reduce_<N>gpu.csv tables (default "
        "inputs/measured/transformer/nccl_tests_a100)" )(
        "platform", po::value( &o.platform ),
        "base platform of --table nccl (default inputs/platforms/dgx-a100.yaml)" )(
        "seeds", po::value( &o.seeds ),
        "random draws of calibration shapes (default 3; --table reduction 10)" )(
        "fit-stride", po::value( &o.stride ),
        "leave-one-GPU-out fit on every n-th row (default 8)" )(
        "max-evaluations", po::value( &o.max_evals ),
        "objective evaluations per constants fit (default 2500)" )(
        "gpu", po::value( &o.gpu ), "GPU of --table measured (default H100)" )(
        "gemm-file", po::value( &o.gemm_file ),
        "GEMMs of --table measured (default inputs/measured/h100/gemm_aligned_a.csv)" )(
        "gemm-repeat", po::value( &o.gemm_repeat ),
        "the same GEMMs timed again (default inputs/measured/h100/gemm_aligned_b.csv)" )(
        "ops-file", po::value( &o.ops_file ),
        "operators of --table measured (default inputs/measured/h100/ops_a.csv)" )(
        "ops-repeat", po::value( &o.ops_repeat ),
        "the same operators timed again (default inputs/measured/h100/ops_b.csv)" );
    po::variables_map vm;
    if ( !parseCommandLine( ctx, "bench calibrate", args, opts, vm ) )
        return 0;
    if ( o.seeds < 1 || o.stride < 1 || o.max_evals < 1 )
        throw UsageError( "bench calibrate: --seeds, --fit-stride and --max-evaluations must be "
                          ">= 1" );
    const OutputFormat format = parseOutputFormat( o.format );
    if ( o.table != "gemm" && o.table != "ops" && o.table != "nccl" && o.table != "measured" &&
         o.table != "reduction" )
        throw UsageError( "bench calibrate: --table must be gemm, ops, nccl, measured or "
                          "reduction, found '" +
                          o.table + "'" );
    const ResultTable t = o.table == "gemm"       ? gemmTable( o )
                          : o.table == "ops"      ? opsTable( o )
                          : o.table == "measured" ? measuredTable( o )
                          : o.table == "reduction"
                              ? reductionDimTable( o.gemm_dir, o.gpu, o.gemm_file,
                                                   vm.count( "seeds" ) ? o.seeds : 10 )
                              : ncclTable( o );
    if ( ctx.isRoot() )
        t.print( ctx.print(), format );
    return 0;
}

} // namespace shardsweep
