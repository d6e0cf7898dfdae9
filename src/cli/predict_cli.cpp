// The shared --gpu/--input/--output/--format plumbing of the predict subcommands (predict_cli.hpp).
#include <fstream>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <sstream>

namespace shardsweep
{

namespace po = boost::program_options;

PredictCli::PredictCli( std::string command, const std::string& usage, unsigned options )
    : _command( std::move( command ) ), _taken( options ), _options( usage + "\nOptions" )
{
    _options.add_options()( "help,h", "this text" );
    if ( _taken & kGpu )
        _options.add_options()(
            "gpu", po::value( &_gpu_name ),
            "GPU catalog name or alias, e.g. A100-PCIe-40GB or \"NVIDIA A100-PCIE-40GB\" "
            "(required)" );
    if ( _taken & kInput )
        _options.add_options()( "input,i", po::value( &_input ), "input CSV (required)" );
    if ( _taken & kOutput )
        _options.add_options()( "output,o", po::value( &_output ),
                                "write the result to this file instead of standard output" );
    _options.add_options()( "format,f", po::value( &_format_text ),
                            ( _taken & kOutput )
                                ? "table | csv | json (default: table on standard output, csv in "
                                  "--output)"
                                : "table (default) | csv | json" );
}

bool PredictCli::parse( const CommandContext& ctx, const Arguments& args )
{
    try
    {
        po::store( po::command_line_parser( args ).options( _options ).run(), _given );
        po::notify( _given );
    }
    catch ( const po::error& e )
    {
        throw UsageError( _command + ": " + e.what() );
    }
    if ( _given.count( "help" ) )
    {
        std::ostringstream text;
        text << _options;
        ctx.print() << text.str();
        return false;
    }
    const bool need_gpu = ( _taken & kGpu ) && _gpu_name.empty();
    const bool need_input = ( _taken & kInput ) && _input.empty();
    if ( need_gpu || need_input )
        throw UsageError( _command + ": " +
                          ( need_gpu && need_input
                                ? "--gpu and --input are required"
                                : ( need_gpu ? "--gpu is required" : "--input is required" ) ) +
                          " (see --help)" );
    try
    {
        _format = parseOutputFormat( _format_text.empty() ? ( _output.empty() ? "table" : "csv" )
                                                          : _format_text );
    }
    catch ( const UsageError& e )
    {
        throw UsageError( _command + ": " + e.what() );
    }
    if ( _taken & kGpu )
    {
        const GpuEntry& entry = findGpu( _gpu_name );
        _gpu = entry.spec;
        _gpu_catalog_name = entry.name;
    }
    return true;
}

CsvTable PredictCli::readInput( const std::vector<std::string>& required,
                                const std::vector<std::string>& optional ) const
{
    CsvTable table = CsvTable::read( _input );
    table.checkColumns( required, optional );
    return table;
}

void PredictCli::write( const CommandContext& ctx, const ResultTable& result ) const
{
    if ( !ctx.isRoot() )
        return;
    if ( _output.empty() )
    {
        result.print( ctx.print(), _format );
        return;
    }
    std::ofstream file( _output );
    if ( !file )
        throw InputError( _output, "cannot open for writing" );
    result.print( file, _format );
    file.flush();
    if ( !file )
        throw InputError( _output, "write failed" );
}

} // namespace shardsweep
