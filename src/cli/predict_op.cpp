// shardsweep predict op: learned (or analytic) latency of softmax, layer norm and element-wise
// operators on a [B,H] fp32 tensor (model/learned_operator.hpp) for the rows of a CSV file.
#include <filesystem>
#include <memory>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/operator_models.hpp>
#include <shardsweep/io/table_output.hpp>

namespace shardsweep
{

namespace
{
namespace po = boost::program_options;

double positiveInteger( const CsvTable& t, std::size_t row, const char* column )
{
    const double x = t.getDouble( row, column );
    if ( !( x >= 1.0 ) || x != static_cast<double>( static_cast<long long>( x ) ) )
        t.fail( row, column, "an integer >= 1" );
    return x;
}
} // namespace

int predictOp( const CommandContext& ctx, const Arguments& args )
{
    PredictCli cli(
        "predict op",
        "Usage: shardsweep predict op --gpu NAME --input ops.csv [--output pred.csv]\n"
        "                             [--model learned|analytic] [--model-file F] "
        "[--force-learned]\n\n"
        "Predicts the latency of non-GEMM operators on a [B,H] fp32 tensor for every row of a "
        "CSV\n"
        "file with the columns op,B,H. op is one of NeuSight's names: softmax (over H), ln (layer\n"
        "norm over H), add, mul, div, pow (two tensors), addu, mulu, divu, powu (tensor and "
        "scalar),\n"
        "gelu, relu, tanh. Models: 'learned' (default) is the roofline (bytes / bandwidth, FLOPs "
        "/\n"
        "peak) times exp of an MLP's non-negative output, trained on NeuSight's measured kernels\n"
        "(model/learned_operator.hpp, docs/model/learned_operators.md); it is used for the GPUs "
        "it\n"
        "was trained on, other GPUs get 'analytic' (the roofline at 73 % of the bandwidth) "
        "unless\n"
        "--force-learned. The output repeats the input columns and adds latency_ms, bound_ms (the\n"
        "roofline) and model (the one that priced the row). An unknown op fails (exit 2) naming "
        "the\n"
        "row. --input: CSV with columns op,B,H.\n",
        PredictCli::kGpu | PredictCli::kInput | PredictCli::kOutput );
    std::string model_name = "learned", model_file;
    bool force_learned = false;
    cli.options().add_options()( "model", po::value( &model_name ),
                                 "learned (default) | analytic" )(
        "model-file", po::value( &model_file ),
        "learned operator model (shardsweep-mlp file; default <models>/ops.mlp, models = "
        "$SHARDSWEEP_MODEL_DIR or inputs/models)" )(
        "force-learned", po::bool_switch( &force_learned ),
        "use the learned model also on GPUs it was not trained on" );
    if ( !cli.parse( ctx, args ) )
        return 0;
    if ( model_name != "learned" && model_name != "analytic" )
        throw UsageError( "predict op: --model must be 'learned' or 'analytic', found '" +
                          model_name + "'" );
    const GpuSpec& gpu = cli.gpu();
    std::unique_ptr<LearnedOperatorModel> learned;
    if ( model_name == "learned" )
    {
        const std::string path = model_file.empty() ? defaultOperatorModelPath() : model_file;
        if ( !model_file.empty() || std::filesystem::exists( path ) )
        {
            learned = std::make_unique<LearnedOperatorModel>( loadLearnedOperatorModel( path ) );
            if ( !force_learned && !learned->trainedOn( cli.gpuName() ) )
                learned.reset();
        }
    }

    const CsvTable t = cli.readInput( { "op", "B", "H" }, {} );
    std::vector<OperatorShape> shapes( t.numRows() );
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        OperatorShape& s = shapes[r];
        if ( !parseOperatorKind( t.text( r, "op" ), s.kind ) )
            t.fail( r, "op", "one of " + operatorKindList() );
        s.B = positiveInteger( t, r, "B" );
        s.H = positiveInteger( t, r, "H" );
    }
    const std::vector<double> latency = predictOperatorsHost( learned.get(), gpu, shapes );
    ResultTable result( { "op", "B", "H", "latency_ms", "bound_ms", "model" } );
    for ( std::size_t r = 0; r < shapes.size(); ++r )
    {
        const OperatorShape& s = shapes[r];
        result.addRow( { std::string( operatorKindName( s.kind ) ), static_cast<long long>( s.B ),
                         static_cast<long long>( s.H ), latency[r],
                         operatorBoundMs( gpu, s.kind, s.B, s.H ),
                         std::string( learned ? "learned" : "analytic" ) } );
    }
    cli.write( ctx, result );
    return 0;
}

} // namespace shardsweep
