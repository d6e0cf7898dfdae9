// shardsweep predict gemm: the GEMM model (model/gemm.hpp) for the shapes of a CSV file.
#include <filesystem>
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
        "The output repeats the input columns and adds latency_ms, tile (rows x columns of C per\n"
        "thread block), waves and bound (compute | memory) of the analytic model, and model (the\n"
        "one that priced the row).\n" +
            std::string( MeasuredLatencies::kHelp ),
        PredictCli::kGpu | PredictCli::kInput | PredictCli::kOutput );
    const LearnedModelOptions model_options(
        cli, "learned GEMM model (shardsweep-mlp file; default <models>/gemm.mlp, models = "
             "$SHARDSWEEP_MODEL_DIR or inputs/models)" );
    const CalibrationOption calibration_option( cli );
    if ( !cli.parse( ctx, args ) )
        return 0;
    const GpuSpec& gpu = cli.gpu();
    const std::unique_ptr<LearnedOperatorModel> learned =
        model_options.load( cli, defaultGemmModelPath(), loadLearnedGemmModel );
    const std::optional<GpuCalibration> calibration = calibration_option.load( cli );

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
        std::vector<ResultTable::Cell> row = { static_cast<long long>( s.B ),
                                               static_cast<long long>( s.M ),
                                               static_cast<long long>( s.N ),
                                               static_cast<long long>( s.K ),
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
