// shardsweep shapes: the GEMMs the transformer model prices for a scenario or plan, as the GPU
// microbenchmark's --shapes input (README, "Calibrating to your cluster").
#include "command_line.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <shardsweep/calibration/calibration_shapes.hpp>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/scenario_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/model/transformer.hpp>

namespace shardsweep
{

namespace po = boost::program_options;

int listGemmShapes( const CommandContext& ctx, const Arguments& args )
{
    std::string scenario_path, output, format_text;
    po::options_description options( "Options" );
    options.add_options()( "help,h", "this text" )(
        "output,o", po::value( &output ),
        "write the shapes to this file (CSV unless --format) instead of standard output" )(
        "format,f", po::value( &format_text ),
        "table | csv | json (default: table on standard output, csv in --output)" );
    po::options_description hidden;
    hidden.add_options()( "scenario", po::value( &scenario_path ) );
    po::positional_options_description positional;
    positional.add( "scenario", 1 );
    po::variables_map vm;
    const CommandHelp help{
        "Usage: shardsweep shapes SCENARIO.yaml|PLAN.yaml [-o shapes.csv]\n\n"
        "Lists the distinct GEMMs the transformer model prices for the scenario's parallel\n"
        "configuration (a scenario file, or a plan that 'shardsweep plan -o' wrote): one layer, "
        "the\n"
        "embedding and the LM head, forward and backward, for one micro-batch on one tensor-"
        "parallel\n"
        "rank, in the model's dtype; flash attention's fused kernel is no GEMM. Columns "
        "B,M,N,K,dtype,op\n"
        "(C[B,M,N] = A[B,M,K]·W[B,K,N]; op bmm or linear): the --shapes input of\n"
        "scripts/microbench/microbench.py, so that a GPU calibration measures the GEMMs of your\n"
        "workload (README, \"Calibrating to your cluster\").\n\n",
        "" };
    if ( !parseCommandLine( ctx, "shapes", args, options, vm, help, hidden, positional ) )
        return 0;
    if ( scenario_path.empty() )
        throw UsageError( "shapes: a scenario or plan file is required (see 'shardsweep shapes "
                          "--help')" );
    const OutputFormat format = format_text.empty()
                                    ? ( output.empty() ? OutputFormat::table : OutputFormat::csv )
                                    : parseOutputFormat( format_text );
    const ScenarioFile scenario = readScenarioFile( scenario_path );
    if ( !scenario.workload.isTransformer() )
        throw UsageError( "shapes: " + scenario_path +
                          " is a DLRM scenario; shapes lists the GEMMs of transformer workloads" );
    ResultTable table( { "B", "M", "N", "K", "dtype", "op" } );
    for ( const GemmSample& g : transformerGemmShapes( { transformerOperatorCase(
              scenario.platform.platform.gpu, scenario.workload.transformer,
              scenario.plan.parallel ) } ) )
        table.addRow( { std::llround( g.B ), std::llround( g.M ), std::llround( g.N ),
                        std::llround( g.K ), std::string( nameOf( g.dtype ) ),
                        std::string( nameOf( g.op ) ) } );
    writeResultTable( ctx, table, format, output );
    return 0;
}

} // namespace shardsweep
