// The subcommands' option parsing (command_line.hpp).
#include "command_line.hpp"

#include <fmt/format.h>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <sstream>

namespace shardsweep
{

namespace po = boost::program_options;

bool parseCommandLine( const CommandContext& ctx, const std::string& command, const Arguments& args,
                       const po::options_description& options, po::variables_map& values,
                       const CommandHelp& help, const po::options_description& hidden,
                       const po::positional_options_description& positional )
{
    po::options_description all;
    all.add( options ).add( hidden );
    try
    {
        po::store( po::command_line_parser( args ).options( all ).positional( positional ).run(),
                   values );
        if ( values.count( "help" ) )
        {
            std::ostringstream text;
            text << help.usage << options << help.epilog;
            ctx.print() << text.str();
            return false;
        }
        po::notify( values );
    }
    catch ( const po::error& e )
    {
        throw UsageError( command + ": " + e.what() + " (see 'shardsweep " + command +
                          " --help')" );
    }
    return true;
}

void checkScenarioFileInput( const std::string& command, const ScenarioInput& input )
{
    if ( input.workload->isTransformer() )
    {
        const std::string error = scenarioInputError( input );
        if ( !error.empty() )
            throw UsageError( command + ": " + error );
        return;
    }
    const int gpus = input.platform->numGpus();
    if ( input.global_batch <= 0 || input.global_batch % gpus != 0 )
        throw UsageError(
            fmt::format( "--batch: expected a positive multiple of the {} GPUs, found {}", gpus,
                         input.global_batch ) );
}

std::string compiledBackendList()
{
    std::vector<std::string> names;
    for ( const Backend b : compiledBackends() )
        names.push_back( nameOf( b ) );
    return joinChoices( names, ", ", " and " );
}

std::string backendOptionHelp()
{
    return fmt::format( "Kokkos backend of the cost kernel: {} (this build has {}; default: {})",
                        enumChoices<Backend>(), compiledBackendList(), nameOf( defaultBackend() ) );
}

Backend parseBackend( const std::string& command, const std::string& text )
{
    const std::optional<Backend> b = enumFromName<Backend>( text );
    if ( !b || !isCompiled( *b ) )
        throw UsageError( fmt::format( "{}: --backend: {} '{}'; this build has {}", command,
                                       b ? "not compiled:" : "unknown backend", text,
                                       compiledBackendList() ) );
    return *b;
}

} // namespace shardsweep
