// shardsweep predict gemm: the GEMM model (model/gemm.hpp) for the shapes of a CSV file.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/calibration_csv.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/operator_models.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/model/gemm.hpp>

namespace shardsweep
{

namespace po = boost::program_options;

int predictGemm( const CommandContext& ctx, const Arguments& args )
{
    PredictCli cli(
        "predict gemm",
        "Usage: shardsweep predict gemm --gpu NAME --input shapes.csv [--output pred.csv]\n"
        "                               [--model auto|learned|analytic] [--model-file F] "
        "[--force-learned]\n\n"
        "Predicts the latency of C[B,M,N] = A[B,M,K]·W[B,K,N] (K is the reduction) for every\n"
        "row of --input, a CSV file with the columns B,M,N,K[,dtype][,op]:\n"
        "  dtype  fp32 (default), tf32, fp16, bf16, or fp8 on a GPU that lists fp8_TFLOPs;\n"
        "  op     bmm (default): a plain (batched) matmul, also 'mm' and 'matmul'; linear: addmm\n"
        "         with a bias, also 'addmm', whose call costs more host time.\n\n"
        "Models: 'analytic' is the tile/wave model of model/gemm.hpp (docs/model/gemm.md);\n"
        "'learned' multiplies it by an MLP correction and keeps it above the roofline with the\n"
        "wave count (model/learned_operator.hpp, docs/model/learned_operators.md); its inputs are\n"
        "clamped into the range of its training shapes. 'auto' (default) uses the learned model\n"
        "only on the GPUs its file lists in default_for: those where, trained without their\n"
        "largest shapes, it beat the analytic model on them (bench gemm --table learned,\n"
        "docs/MODEL.md). 'learned' uses it on every GPU it was trained on; on other GPUs it is\n"
        "less accurate than the analytic model (leave-one-GPU-out), so they get the analytic "
        "model\n"
        "unless --force-learned. --calibration CALIB.yaml (from `shardsweep calibrate gpu` on\n"
        "this GPU) prices the rows of every dtype it calibrated with it (model 'calibrated').\n\n"
        "--reduction-dim N reads the input as NeuSight's GEMM files have it ([B,M,N]x[B,N,K], N\n"
        "the reduction); by default the input is read as the calibration's GEMM file was (its\n"
        "gemm_reduction_dim), else with K the reduction. The output repeats the columns as "
        "given.\n\n"
        "The output repeats the input columns and adds latency_ms, tile (rows x columns of C per\n"
        "thread block), waves and bound (compute | memory) of the analytic model, and model (the\n"
        "one that priced the row).\n" +
            std::string( MeasuredLatencies::kHelp ),
        PredictCli::kGpu | PredictCli::kInput | PredictCli::kOutput );
    const LearnedModelOptions model_options(
        cli, "learned GEMM model (shardsweep-mlp file; default <models>/gemm.mlp, models = "
             "$SHARDSWEEP_MODEL_DIR or inputs/models)" );
    const CalibrationOption calibration_option( cli );
    std::string reduction_text;
    cli.options().add_options()(
        "reduction-dim", po::value( &reduction_text ),
        "which column of --input is the reduction: K, N (NeuSight's files), or auto (default): "
        "as the --calibration file's GEMM measurements were read, else K" );
    if ( !cli.parse( ctx, args ) )
        return 0;
    const std::optional<GemmReductionDim> reduction_given =
        parseReductionDim( cli.command(), reduction_text );
    const GpuSpec& gpu = cli.gpu();
    const std::unique_ptr<LearnedOperatorModel> learned =
        model_options.load( cli, defaultGemmModelPath(), loadLearnedGemmModel );
    const std::optional<GpuCalibration> calibration = calibration_option.load( cli );
    const GemmReductionDim reduction = reduction_given.value_or(
        calibration ? calibration->gemm_reduction_dim : GemmReductionDim::K );
    if ( !reduction_given && reduction == GemmReductionDim::N && ctx.isRoot() )
        std::cerr << "note: " << cli.command() << ": --input read with N as the reduction "
                  << "dimension, as the GEMM file of " << calibration_option.path()
                  << " (gemm_reduction_dim; --reduction-dim K reads K)\n";

    const CsvTable t = cli.readKernelInput( ctx, { "B", "M", "N", "K" }, { "dtype", "op" } );
    MeasuredLatencies measured( t );
    std::vector<GemmShape> shapes( t.numRows() );
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        GemmShape& s = shapes[r];
        s.B = positiveIntegerCell( t, r, "B" );
        s.M = positiveIntegerCell( t, r, "M" );
        s.N = positiveIntegerCell( t, r, "N" );
        s.K = positiveIntegerCell( t, r, "K" );
        toReductionK( reduction, s.N, s.K );
        s.dtype = computeDtypeCell( t, r, gpu );
        s.op = gemmOpCell( t, r );
    }
    const std::vector<GemmPrediction> pred = predictGemmsHost( learned.get(), gpu, shapes );
    ResultTable result( measured.columns(
        { "B", "M", "N", "K", "dtype", "op", "latency_ms", "tile", "waves", "bound", "model" } ) );
    for ( std::size_t r = 0; r < shapes.size(); ++r )
    {
        const GemmShape& s = shapes[r];
        const GemmPrediction& p = pred[r];
        const GemmCalibration* c = calibration ? calibration->gemmFor( s.dtype ) : nullptr;
        const double ms = c ? calibratedGemmMs( *c, gpu, s.B, s.M, s.N, s.K, s.op ) : p.latency_ms;
        double given_n = s.N, given_k = s.K;
        toReductionK( reduction, given_n, given_k ); // back to the input's columns
        std::vector<ResultTable::Cell> row = { static_cast<long long>( s.B ),
                                               static_cast<long long>( s.M ),
                                               static_cast<long long>( given_n ),
                                               static_cast<long long>( given_k ),
                                               std::string( nameOf( s.dtype ) ),
                                               std::string( nameOf( s.op ) ),
                                               ms,
                                               std::to_string( p.tile_m ) + "x" +
                                                   std::to_string( p.tile_n ),
                                               p.waves,
                                               std::string( p.memory_bound ? "memory" : "compute" ),
                                               std::string( c         ? "calibrated"
                                                            : learned ? "learned"
                                                                      : "analytic" ) };
        measured.append( row, r, ms );
        result.addRow( row );
    }
    cli.write( ctx, result );
    measured.report( ctx, cli.command() );
    return 0;
}

} // namespace shardsweep
