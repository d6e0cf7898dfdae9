// shardsweep validate: checks input files without running anything.
#include "command_line.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <optional>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/mlp_file.hpp>
#include <shardsweep/io/operator_models.hpp>
#include <shardsweep/io/plan_yaml.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/scenario_yaml.hpp>
#include <shardsweep/io/sweep_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/io/workload_yaml.hpp>
#include <shardsweep/io/yaml_util.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <sstream>

namespace shardsweep
{

namespace
{
namespace po = boost::program_options;

struct Checked
{
    std::string kind;
    std::string name;
    std::string summary;
};

std::string platformSummary( const NamedPlatform& p )
{
    std::string dims;
    for ( int d = 0; d < p.platform.network.num_dims; ++d )
        dims += ( d ? " x " : "" ) + std::string( nameOf( p.platform.network.dims[d].topology ) ) +
                "(" + std::to_string( p.platform.network.dims[d].npus_count ) + ")";
    return std::to_string( p.platform.numGpus() ) + " x " + p.gpu_name + " (" +
           std::to_string( p.platform.num_nodes ) +
           ( p.platform.num_nodes == 1 ? " node" : " nodes" ) + "), network " +
           ( dims.empty() ? "none" : dims );
}

std::string workloadSummary( const Workload& w )
{
    if ( w.isTransformer() )
    {
        const TransformerSpec& m = w.transformer;
        return fmt::format( "{} transformer, {} layers x {} hidden, {} heads, seq {}, {:.3g} B "
                            "parameters, batch {}",
                            nameOf( m.arch ), m.layers, m.hidden, m.heads, m.seq_len,
                            transformerParameters( m ) / 1e9, w.global_batch );
    }
    double bytes = 0.0;
    for ( const auto& t : w.tables )
        bytes += double( t.rows ) * t.dim * dataTypeBytes( t.dtype );
    std::ostringstream s;
    s << w.tables.size() << " tables, "
      << formatNumber( std::round( bytes / 1073741824.0 * 10 ) / 10 )
      << " GiB of embeddings, batch " << w.global_batch;
    return s.str();
}

// Checks one file; throws InputError on the first problem.
Checked checkFile( const std::string& path, const std::optional<Workload>& workload,
                   const std::optional<NamedPlatform>& platform )
{
    // Learned models (shardsweep-mlp text, io/mlp_file.hpp): format, shapes and check records.
    if ( path.size() > 4 && path.compare( path.size() - 4, 4, ".mlp" ) == 0 )
    {
        const MlpFile m = readMlpFile( path );
        std::string layers;
        for ( const MlpFileLayer& l : m.layers )
            layers += ( layers.empty() ? "" : "-" ) + std::to_string( l.outputs );
        return { "model", m.family,
                 std::to_string( m.names.size() ) + " inputs, layers " + layers + ", " +
                     std::to_string( m.check_inputs.size() ) + " check records verified" };
    }
    YamlView root = loadYamlFile( path );
    // Unchanged ASTRA-sim files carry no `kind:`; recognise them by their keys.
    if ( root.isMap() && !root.has( "kind" ) && root.has( "topology" ) )
    {
        Network n = parseAstraNetwork( root );
        return { "astra-sim network", "", std::to_string( n.num_dims ) + " dimensions" };
    }
    if ( root.isMap() && !root.has( "kind" ) &&
         ( root.has( "endpoint-delay" ) || root.has( "all-reduce-implementation" ) ) )
    {
        parseAstraSystem( root, kMaxNetworkDims );
        return { "astra-sim system", "", "ok" };
    }
    const std::string kind = fileKind( root );
    if ( kind == "gpu" )
    {
        GpuEntry g = parseGpu( root );
        return { kind, g.name,
                 std::to_string( g.spec.sm_count ) + " SMs, " + formatNumber( g.spec.memory_GiB ) +
                     " GiB, " + formatNumber( g.spec.memory_bandwidth_GBps ) + " GB/s" };
    }
    if ( kind == "platform" )
    {
        NamedPlatform p = parsePlatform( root, defaultGpuCatalog() );
        return { kind, p.name, platformSummary( p ) };
    }
    if ( kind == "workload" || kind == "transformer" )
    {
        Workload w = parseWorkload( root );
        return { kind, w.name, workloadSummary( w ) };
    }
    if ( kind == "plan" )
    {
        Plan p = parsePlan( root, workload ? &*workload : nullptr,
                            platform ? &platform->platform : nullptr );
        if ( p.tables.empty() && ( !workload || workload->isTransformer() ) )
            return { kind, "",
                     parallelConfigSummary( p.parallel ) +
                         ( workload ? "" : " (checked without a workload: --workload)" ) };
        return { kind, "",
                 std::to_string( p.tables.size() ) + " tables, " +
                     std::to_string( p.shards.size() ) + " shards" +
                     ( workload ? "" : " (checked without a workload: --workload)" ) };
    }
    if ( kind == "scenario" )
    {
        ScenarioFile s = parseScenario( root, defaultGpuCatalog() );
        if ( !s.cost_model_file.empty() )
        {
            try
            {
                loadLearnedCostModel( s.cost_model_file );
            }
            catch ( const InputError& e )
            {
                throw InputError( path + ": field 'cost_model_file'", e.what() );
            }
        }
        if ( s.workload.isTransformer() )
            return { kind, s.name,
                     s.workload.name + " on " + s.platform.name + " (" +
                         std::to_string( s.platform.platform.numGpus() ) + " GPUs), batch " +
                         std::to_string( s.global_batch ) + ", " +
                         parallelConfigSummary( s.plan.parallel ) };
        return { kind, s.name,
                 s.workload.name + " on " + s.platform.name + ", batch " +
                     std::to_string( s.global_batch ) + ", " + s.cost_model };
    }
    if ( kind == "sweep" )
    {
        validateSweepFile( path );
        return { kind, "", "ok" };
    }
    root.at( "kind" ).fail(
        "one of gpu, platform, workload, transformer, plan, scenario or sweep" );
}
} // namespace

int validate( const CommandContext& ctx, const Arguments& args )
{
    std::vector<std::string> files;
    std::string format = "table", workload_file, platform_file;
    po::options_description opts(
        "Usage: shardsweep validate [options] FILE...\n\n"
        "Checks input files without running anything: YAML syntax, unknown keys, types, physical\n"
        "ranges and cross-references, dispatching on each file's top-level 'kind:' (gpu,\n"
        "platform, workload, transformer, plan, scenario, sweep; ASTRA-sim network .yml and system "
        ".json files\n"
        "are recognised by their keys). Every file is checked; each problem is reported as\n"
        "'file:line:col: field ...: expected ..., found ...' on standard error. Exit status 0 "
        "when\n"
        "all files are valid, 2 otherwise. docs/INPUTS.md describes the fields.\n\nOptions" );
    opts.add_options()( "help,h", "this text" )(
        "format,f", po::value( &format ),
        ( enumChoices<OutputFormat>() + " (default table)" ).c_str() )(
        "workload", po::value( &workload_file ),
        "workload file to check plan files against (table names, shard bounds)" )(
        "platform", po::value( &platform_file ),
        "platform file to check plan files against (GPU numbers, nodes)" )(
        "file", po::value( &files ), "input files" );
    po::positional_options_description positional;
    positional.add( "file", -1 );
    po::variables_map vm;
    if ( !parseCommandLine( ctx, "validate", args, opts, vm, CommandHelp{},
                            po::options_description(), positional ) )
        return 0;
    const OutputFormat fmt = parseOutputFormat( format );
    if ( files.empty() )
        throw UsageError( "validate: no input files (see 'shardsweep validate --help')" );

    std::optional<Workload> workload;
    std::optional<NamedPlatform> platform;
    if ( !workload_file.empty() )
        workload = readWorkloadFile( workload_file );
    if ( !platform_file.empty() )
        platform = readPlatformFile( platform_file );

    ResultTable table( { "file", "kind", "name", "status", "summary" } );
    int failed = 0;
    for ( const auto& f : files )
    {
        try
        {
            Checked c = checkFile( f, workload, platform );
            table.addRow( { f, c.kind, c.name, std::string( "ok" ), c.summary } );
        }
        catch ( const InputError& e )
        {
            ++failed;
            if ( ctx.isRoot() )
                std::cerr << "shardsweep: input error: " << e.what() << '\n';
            table.addRow( { f, std::string( "" ), std::string( "" ), std::string( "invalid" ),
                            std::string( e.what() ) } );
        }
    }
    table.print( ctx.print(), fmt );
    return failed ? kExitBadInput : 0;
}

} // namespace shardsweep
