// shardsweep predict op: learned (or analytic) latency of softmax, layer norm and element-wise
// operators on a [B,H] fp32 tensor (model/learned_operator.hpp) for the rows of a CSV file.
#include <filesystem>
#include <memory>
#include <optional>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/calibration_csv.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/operator_models.hpp>
#include <shardsweep/io/table_output.hpp>

namespace shardsweep
{

int predictOp( const CommandContext& ctx, const Arguments& args )
{
    PredictCli cli(
        "predict op",
        "Usage: shardsweep predict op --gpu NAME --input ops.csv [--output pred.csv]\n"
        "                             [--model auto|learned|analytic] [--model-file F] "
        "[--force-learned]\n\n"
        "Predicts the latency of non-GEMM operators on a [B,H] fp32 tensor for every row of a "
        "CSV\n"
        "file with the columns op,B,H. op is one of NeuSight's names: softmax (over H), ln (layer\n"
        "norm over H; also layer_norm, layernorm), add, mul, div, pow (two tensors), addu, mulu,\n"
        "divu, powu (tensor and scalar), "
        "gelu, relu, tanh.\nModels: 'learned' is the roofline (bytes / bandwidth, FLOPs / peak)\n"
        "times exp of an MLP's non-negative output, trained on NeuSight's measured kernels\n"
        "(model/learned_operator.hpp, docs/model/learned_operators.md), with its inputs clamped "
        "into\n"
        "the range of its training shapes; 'analytic' is a fixed kernel time plus the roofline at\n"
        "75 % of the bandwidth, softmax 1.26x and layer norm 1.51x slower (bench ops --table "
        "constants).\n"
        "'auto' (default) uses the learned model only on the GPUs its file lists in default_for\n"
        "(where, trained without their largest shapes, it beat the analytic model on them: bench "
        "ops);\n"
        "'learned' uses it on every GPU it was trained on; other GPUs get 'analytic' unless\n"
        "--force-learned. The output repeats the input columns and adds latency_ms, bound_ms (the\n"
        "roofline) and model (the one that priced the row). An unknown op fails (exit 2) naming "
        "the\n"
        "row. --input: CSV with columns op,B,H[,dtype] (dtype fp32 default, or fp16/bf16/fp8: "
        "the bytes\n"
        "moved scale with the element size); NeuSight's operator files read as they are (their\n"
        "OPName and Latency columns as op and latency_ms).\n"
        "--calibration CALIB.yaml (from `shardsweep calibrate gpu --ops` on this GPU) prices the "
        "rows\n"
        "of every dtype it calibrated with it (model 'calibrated').\n" +
            std::string( MeasuredLatencies::kHelp ),
        PredictCli::kGpu | PredictCli::kInput | PredictCli::kOutput );
    const LearnedModelOptions model_options(
        cli, "learned operator model (shardsweep-mlp file; default <models>/ops.mlp, models = "
             "$SHARDSWEEP_MODEL_DIR or inputs/models)" );
    const CalibrationOption calibration_option( cli );
    if ( !cli.parse( ctx, args ) )
        return 0;
    const GpuSpec& gpu = cli.gpu();
    const std::unique_ptr<LearnedOperatorModel> learned =
        model_options.load( cli, defaultOperatorModelPath(), loadLearnedOperatorModel );
    const std::optional<GpuCalibration> calibration = calibration_option.load( cli );

    const CsvTable t =
        cli.readKernelInput( ctx, { "op", "B", "H" }, { "dtype" }, neusightOperatorColumns() );
    MeasuredLatencies measured( t );
    std::vector<OperatorShape> shapes( t.numRows() );
    std::vector<DataType> dtypes( t.numRows() );
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        OperatorShape& s = shapes[r];
        s.kind = operatorKindCell( t, r, "op" );
        s.B = positiveIntegerCell( t, r, "B" );
        s.H = positiveIntegerCell( t, r, "H" );
        dtypes[r] = computeDtypeCell( t, r, gpu );
    }
    const std::vector<double> latency = predictOperatorsHost( learned.get(), gpu, shapes );
    // The dtype column is echoed when the input has one (older inputs keep their output).
    const bool echo_dtype = t.hasColumn( "dtype" );
    ResultTable result( measured.columns(
        echo_dtype
            ? std::vector<std::string>{ "op", "B", "H", "dtype", "latency_ms", "bound_ms", "model" }
            : std::vector<std::string>{ "op", "B", "H", "latency_ms", "bound_ms", "model" } ) );
    for ( std::size_t r = 0; r < shapes.size(); ++r )
    {
        const OperatorShape& s = shapes[r];
        const DataType dtype = dtypes[r];
        const OperatorCalibration* c = calibration ? calibration->opsFor( dtype ) : nullptr;
        // Without a calibration of the dtype: the models were trained on fp32 tensors, so a
        // 16-bit tensor is priced by the analytic model at its bytes.
        const GpuSpec dtype_gpu = operatorDtypeGpu( gpu, dtype );
        const bool fp32 = dtype == DataType::fp32 || dtype == DataType::tf32;
        const double ms = c      ? calibratedOperatorMs( *c, gpu, s.kind, s.B, s.H )
                          : fp32 ? latency[r]
                                 : predictOperatorAnalytic( dtype_gpu, s.kind, s.B, s.H );
        const std::string model = c ? "calibrated" : learned && fp32 ? "learned" : "analytic";
        std::vector<ResultTable::Cell> row = { std::string( nameOf( s.kind ) ),
                                               static_cast<long long>( s.B ),
                                               static_cast<long long>( s.H ) };
        if ( echo_dtype )
            row.push_back( std::string( nameOf( dtype ) ) );
        row.insert( row.end(), { ms, operatorBoundMs( dtype_gpu, s.kind, s.B, s.H ), model } );
        measured.append( row, r, ms );
        result.addRow( row );
    }
    cli.write( ctx, result );
    measured.report( ctx, cli.command() );
    return 0;
}

} // namespace shardsweep
