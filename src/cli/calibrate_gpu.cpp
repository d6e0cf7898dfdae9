// shardsweep calibrate gpu: fits the GEMM and operator models to one GPU's own measurements
// (calibration/gpu_calibration_fit.hpp) and writes the calibration file.
#include <fmt/format.h>
#include <iostream>
#include <shardsweep/calibration/gpu_calibration_fit.hpp>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/calibration_csv.hpp>
#include <shardsweep/io/gpu_calibration_yaml.hpp>
#include <shardsweep/version.hpp>

namespace shardsweep
{

namespace po = boost::program_options;

namespace
{

void addStatsRow( ResultTable& table, const char* family, DataType dtype,
                  const CalibrationFitStats& s )
{
    table.addRow( { std::string( family ), std::string( nameOf( dtype ) ),
                    static_cast<long long>( s.rows ), s.uncalibrated_mape, s.fit_mape,
                    s.cv_mape } );
}

//! "GEMM.csv (N rows) and OPS.csv (M rows)", naming the files given.
std::string fittedOn( const std::string& gemm_path, std::size_t gemm_rows,
                      const std::string& ops_path, std::size_t ops_rows )
{
    const std::string gemm = fmt::format( "{} ({} rows)", gemm_path, gemm_rows );
    const std::string ops = fmt::format( "{} ({} rows)", ops_path, ops_rows );
    if ( gemm_path.empty() )
        return ops;
    return ops_path.empty() ? gemm : gemm + " and " + ops;
}

} // namespace

int calibrateGpu( const CommandContext& ctx, const Arguments& args )
{
    PredictCli cli(
        "calibrate gpu",
        "Usage: shardsweep calibrate gpu --gpu NAME [--gemm GEMM.csv] [--ops OPS.csv] -o "
        "CALIB.yaml\n\n"
        "Fits the GEMM and operator models to measurements of one GPU (scripts/microbench writes\n"
        "them in a few minutes; README, \"Calibrating to your cluster\") and writes a calibration\n"
        "file that --calibration (predict gemm|op|transformer, evaluate, plan, run) and a "
        "platform's\n"
        "`calibration:` key read.\n"
        "  GEMM (per dtype): the analytic tile/wave model's tiles mixed with weights fitted to "
        "the\n"
        "    GPU (which tiles its cuBLAS picks), plus the residual of the nearest measured "
        "shapes;\n"
        "    never faster than the fastest rate measured (docs/model/calibration.md).\n"
        "  Operators (per dtype): the analytic operator model's constants refitted, plus the\n"
        "    residual of the nearest measured shapes of the same op.\n"
        "Input columns: GEMM B,M,N,K,dtype,latency_ms[,op] (C[B,M,N] = A[B,M,K]·W[B,K,N], op\n"
        "bmm|mm|matmul|linear|addmm); operators op,B,H,dtype,latency_ms (op: softmax, ln, add, "
        "mul, ...).\n"
        "NeuSight's GEMM files (and files copied from them) have N as the reduction instead\n"
        "([B,M,N]x[B,N,K]). A header cannot say which, so by default the tile model is fitted\n"
        "both ways and N is taken where it prices held-out rows clearly better (a note says so;\n"
        "read the wrong way, NeuSight's files calibrate 1.15-2.4 times less accurately). The\n"
        "file records it, and predict gemm --calibration reads its --input the same way.\n"
        "dtype (no column: fp32) fp32|tf32|fp16|bf16|fp8 (fp8: GEMMs on a GPU with FP8 tensor\n"
        "cores; operator rows in fp8 are skipped: FP8 training keeps them in 16 bits), or\n"
        "PyTorch's name of one (float32, torch.bfloat16, half, float8_e4m3fn, ...). Columns of\n"
        "other tools (kernel, device) are named as unused; a column a typo away from a known one\n"
        "fails. A dtype with fewer than 10 rows is not calibrated. Prints per family and dtype "
        "the\n"
        "rows and the MAPE (%) of the uncalibrated model, of the calibration on its own rows and\n"
        "5-fold cross-validated (rows i mod 5 held out): the last one is what to expect on shapes\n"
        "that were not measured.\n",
        PredictCli::kGpu );
    std::string gemm_path, ops_path, output, reduction_text;
    cli.options().add_options()( "gemm", po::value( &gemm_path ),
                                 "measured GEMMs (CSV, columns above; this, --ops or both)" )(
        "ops", po::value( &ops_path ),
        "measured operators (CSV, columns above; without --gemm the GEMMs stay uncalibrated)" )(
        "output,o", po::value( &output ), "calibration file to write (YAML; required)" )(
        "reduction-dim", po::value( &reduction_text ),
        "which column of --gemm is the reduction: K (C[B,M,N] = A[B,M,K]·W[B,K,N]), N "
        "(NeuSight's [B,M,N]x[B,N,K]), or auto (default): the one the data fits better" );
    if ( !cli.parse( ctx, args ) )
        return 0;
    if ( ( gemm_path.empty() && ops_path.empty() ) || output.empty() )
        throw UsageError( "calibrate gpu: -o and --gemm, --ops or both are required (see --help)" );

    const std::optional<GemmReductionDim> reduction_given =
        parseReductionDim( cli.command(), reduction_text );
    GemmMeasurements gemm_file;
    if ( !gemm_path.empty() )
        gemm_file = readGemmMeasurements( gemm_path, cli.gpu() );
    const std::vector<GemmSample>& gemms = gemm_file.rows;
    OperatorMeasurements ops;
    if ( !ops_path.empty() )
        ops = readOperatorMeasurements( ops_path );
    std::vector<std::string> notes;
    GemmReductionDim reduction = reduction_given.value_or( GemmReductionDim::K );
    if ( !reduction_given && !gemms.empty() )
    {
        const GemmReductionDetection d = detectGemmReductionDim( cli.gpu(), gemms );
        reduction = d.dim;
        if ( reduction == GemmReductionDim::N )
            notes.push_back( fmt::format(
                "{}: read with N as the reduction dimension (NeuSight's [B,M,N]x[B,N,K]): the "
                "tile model prices held-out rows with {:.1f} % MAPE that way, {:.1f} % with K "
                "(--reduction-dim K reads it as K)",
                gemm_path, d.mape_as_n, d.mape_as_k ) );
    }
    for ( const std::string& note : { unusedColumnsNote( gemm_path, gemm_file.unused_columns ),
                                      unusedColumnsNote( ops_path, ops.unused_columns ) } )
        if ( !note.empty() )
            notes.push_back( note );
    if ( ops.skipped_fp8 > 0 )
        notes.push_back( fmt::format( "{} operator rows in fp8 skipped: FP8 training keeps "
                                      "softmax, norms and element-wise ops in 16 bits",
                                      ops.skipped_fp8 ) );
    const GpuCalibration calibration =
        calibrateGpu( cli.gpuName(), cli.gpu(), gemms, ops.rows, notes, reduction );
    if ( calibration.gemm.empty() && calibration.ops.empty() )
        throw InputError( gemm_path.empty() ? ops_path : gemm_path,
                          fmt::format( "no dtype has {} or more measured rows: nothing to "
                                       "calibrate",
                                       kMinCalibrationRows ) );

    std::vector<std::string> comments = {
        fmt::format( "GPU calibration of {} written by shardsweep {} (git {})", cli.gpuName(),
                     versionString(), gitHash() ),
        "fitted on " + fittedOn( gemm_path, gemms.size(), ops_path, ops.rows.size() ),
        "stats: MAPE % of the uncalibrated model, of this calibration on its rows and 5-fold "
        "cross-validated" };
    for ( const std::string& n : notes )
        comments.push_back( "note: " + n );
    if ( ctx.isRoot() )
        writeTextFileAtomically( output, gpuCalibrationYaml( calibration, comments ) );

    ResultTable table( { "family", "dtype", "rows", "uncalibrated_mape", "fit_mape", "cv_mape" } );
    for ( const GemmCalibration& c : calibration.gemm )
        addStatsRow( table, "gemm", c.dtype, c.stats );
    for ( const OperatorCalibration& c : calibration.ops )
        addStatsRow( table, "ops", c.dtype, c.stats );
    if ( ctx.isRoot() )
    {
        table.print( ctx.print(), cli.format() );
        for ( const std::string& n : notes )
            std::cerr << "note: " << n << '\n';
        std::cerr << "wrote " << output << '\n';
    }
    return 0;
}

} // namespace shardsweep
