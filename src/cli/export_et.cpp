// `shardsweep export-et SCENARIO.yaml -o DIR`: a scenario's training step as Chakra execution
// traces that ASTRA-sim replays (docs/model/chakra.md); inspect_et.cpp reads them back.
#include "trace_cli.hpp"

#include <boost/program_options.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <ostream>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/cli/cost_model_option.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/chakra_export.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/scenario_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/scenario/step_graph.hpp>

namespace shardsweep
{
namespace
{
namespace po = boost::program_options;
namespace fs = std::filesystem;
using trace_cli::kProgressHelp;
using trace_cli::parseArguments;
using trace_cli::RankProgress;

void writeText( const fs::path& path, const std::string& text )
{
    std::ofstream out( path, std::ios::binary | std::ios::trunc );
    out << text;
    if ( !out )
        throw std::runtime_error( "cannot write " + path.string() );
}

std::string replayScript( bool with_groups )
{
    return std::string(
               "#!/bin/sh\n"
               "# Replays this step with ASTRA-sim's congestion-unaware analytical "
               "backend\n"
               "# (written by shardsweep export-et; docs/model/chakra.md). ASTRA_SIM: the\n"
               "# simulator binary (default: AstraSim_Analytical_Congestion_Unaware on "
               "PATH).\n"
               "# Each rank prints 'sys[R] finished, T cycles' (1 cycle = 1 ns).\n"
               "cd \"$(dirname \"$0\")\" || exit 1\n"
               "exec \"${ASTRA_SIM:-AstraSim_Analytical_Congestion_Unaware}\" \\\n"
               "    --workload-configuration=./et \\\n"
               "    --system-configuration=./system.json \\\n"
               "    --remote-memory-configuration=./remote_memory.json \\\n"
               "    --network-configuration=./network.yml" ) +
           ( with_groups ? " \\\n    --comm-group-configuration=./comm_groups.json" : "" ) +
           " \"$@\"\n";
}

//! export-et's command line after parsing and checking.
struct ExportEtOptions
{
    std::string scenario_path;
    std::string out_dir;
    long long batch = 0; //!< 0: the scenario file's
    OutputFormat format = OutputFormat::table;
    double progress_interval = 10.0;
    std::vector<std::string> calibrations; //!< --calibration files (calibrate gpu)
};

//! Parses and checks export-et's arguments; returns false after printing --help.
bool parseExportEtArguments( const CommandContext& ctx, const Arguments& args, ExportEtOptions& o )
{
    po::options_description options( "Options of 'shardsweep export-et'" );
    std::string format = "table", out_dir;
    long long batch = 0, global_batch = 0;
    options.add_options()( "help,h", "show this help" )(
        "output,o", po::value( &out_dir ),
        "directory to write into (created if missing; files of the same names are replaced)" )(
        "format,f", po::value( &format )->default_value( format ),
        "output: table, csv (one header line, one row) or json" )(
        "batch", po::value( &batch ), "global batch size: overrides the scenario file's" )(
        "global-batch", po::value( &global_batch ), "the same as --batch (plan's name for it)" )(
        "progress-interval", po::value( &o.progress_interval ), kProgressHelp )(
        "calibration", po::value( &o.calibrations )->multitoken(), kCalibrationOptionHelp );
    std::string scenario_path;
    if ( !parseArguments(
             ctx, "export-et", args, options, "scenario", scenario_path,
             "Usage: shardsweep export-et SCENARIO.yaml -o DIR [options]\n\n"
             "Writes the training step of the scenario (anything 'shardsweep evaluate' accepts:\n"
             "a scenario file of a DLRM or transformer workload, platform and plan, or a plan\n"
             "file written by 'shardsweep plan -o') as Chakra execution traces that ASTRA-sim\n"
             "replays\n"
             "(docs/model/chakra.md). In DIR:\n"
             "  et.<rank>.et        one Chakra ET per GPU (compute nodes with the native model's\n"
             "                      times in whole microseconds, collective and send nodes\n"
             "                      whose comm_size gives the model's network time in\n"
             "                      ASTRA-sim (framework costs as compute nodes),\n"
             "                      dependencies = the model's critical path; DLRM: a GPU with\n"
             "                      less lookup work idles in an explicit wait node before the\n"
             "                      pooled all-to-all; transformer: per rank a serial chain of\n"
             "                      per-layer compute, TP collectives and pipeline send/recv per\n"
             "                      micro-batch in 1F1B or GPipe order (interleaved: per model\n"
             "                      chunk in Megatron's order), then the DP (ZeRO) and\n"
             "                      tied-embedding collectives and the optimizer; overlapped\n"
             "                      communication as the part the model leaves exposed)\n"
             "  network.yml, system.json  the platform's ASTRA-sim network and system blocks\n"
             "                      (roofline off: the traces carry the compute times)\n"
             "  remote_memory.json  no memory expansion\n"
             "  comm_groups.json    communicator groups (only when collectives run on sub-groups:\n"
             "                      a transformer's TP, DP, tied-embedding, CP and MoE groups)\n"
             "  replay.sh           the ASTRA-sim command (binary from $ASTRA_SIM or PATH)\n"
             "It prints workload_prefix (DIR/et, ASTRA-sim's --workload-configuration), ranks,\n"
             "iteration_ms (shardsweep's prediction) and critical_path_ms (the written traces\n"
             "replayed with shardsweep's ASTRA-sim semantics; equal within the microsecond\n"
             "rounding, and within 0.1-2 % for interleaved schedules, whose fill and drain\n"
             "the model prices in closed form). The native cost model is exported even when\n"
             "the scenario asks for cost_model: torchrec (TorchRec's estimator has no\n"
             "timeline).\n\n" ) )
        return false;
    if ( scenario_path.empty() )
        throw UsageError( "export-et: a scenario file is required (see 'shardsweep export-et "
                          "--help')" );
    if ( out_dir.empty() )
        throw UsageError( "export-et: -o DIR is required" );
    if ( batch != 0 && global_batch != 0 && batch != global_batch )
        throw UsageError( "export-et: --batch and --global-batch name the same setting: give one" );
    if ( batch == 0 )
        batch = global_batch;
    if ( !( o.progress_interval >= 0.0 ) )
        throw UsageError( "export-et: --progress-interval must be >= 0" );
    o.format = parseOutputFormat( format );
    o.scenario_path = scenario_path;
    o.out_dir = out_dir;
    o.batch = batch;
    return true;
}

//! The scenario's training step (native cost model) for `batch` (0: the scenario file's).
StepGraph buildExportStepGraph( const ScenarioFile& scenario, const std::string& scenario_path,
                                long long batch )
{
    const Platform& platform = scenario.platform.platform;
    const int gpus = platform.numGpus();
    if ( gpus < 2 )
        throw InputError( scenario_path,
                          fmt::format( "platform '{}' has one GPU: ASTRA-sim needs a network of at "
                                       "least 2 NPUs",
                                       scenario.platform.name ) );
    ScenarioInput input;
    input.workload = &scenario.workload;
    input.platform = &platform;
    input.plan = &scenario.plan;
    input.global_batch = batch != 0 ? batch : scenario.global_batch;
    input.model = CostModel::native;
    checkScenarioFileInput( "export-et", input );
    return scenario.workload.isTransformer() ? buildTransformerStepGraph( input )
                                             : buildDlrmStepGraph( input );
}

//! Creates `dir` (root) and writes one et.<rank>.et per rank into it (root); returns the graph
//! packed for the replay with the written compute durations, and empties each rank of `graph`
//! once it is packed (the graph and its packed copy are never both whole in memory).
PackedStepGraph writeRankTraces( const CommandContext& ctx, StepGraph& graph, const fs::path& dir,
                                 const std::string& out_dir, double progress_interval )
{
    // One trace at a time (a 1024-GPU transformer step has millions of nodes). The graph takes
    // the written durations (ASTRA-sim's: duration_micros · 1000 ns, 0 → 1 ns), so that its
    // replay is the written traces' critical path, what ASTRA-sim should reproduce.
    if ( ctx.isRoot() )
    {
        std::error_code ec;
        fs::create_directories( dir, ec );
        if ( ec || !fs::is_directory( dir ) )
            throw std::runtime_error( "cannot create directory " + out_dir );
    }
    RankProgress progress( ctx, "export-et", "traces written", graph.numRanks(),
                           progress_interval );
    PackedStepGraph packed;
    packed.groups = graph.groups;
    for ( int r = 0; r < graph.numRanks(); ++r )
    {
        const chakra::Trace trace = stepGraphRankToTrace( graph, r );
        if ( ctx.isRoot() )
            chakra::writeTraceFile( ( dir / fmt::format( "et.{}.et", r ) ).string(), trace );
        auto& nodes = graph.ranks[r];
        packed.addRank();
        for ( std::size_t i = 0; i < nodes.size(); ++i )
        {
            if ( nodes[i].kind == StepGraphNode::Kind::compute )
                nodes[i].duration_ns =
                    trace.nodes[i].duration_micros > 0
                        ? static_cast<double>( trace.nodes[i].duration_micros ) * 1000.0
                        : 1.0;
            packed.append( nodes[i] );
        }
        std::vector<StepGraphNode>().swap( nodes );
        progress.done( r + 1 );
    }
    return packed;
}

//! Writes the ASTRA-sim network, system, memory and comm-group files and replay.sh into `dir`.
void writeAstraConfigs( const fs::path& dir, const Platform& platform, const StepGraph& graph )
{
    std::error_code ec;
    writeText( dir / "network.yml", astraNetworkYaml( platform.network ) );
    writeText( dir / "system.json", astraSystemJson( platform.system, platform.network.num_dims ) );
    writeText( dir / "remote_memory.json", astraRemoteMemoryJson() );
    if ( !graph.groups.empty() )
        writeText( dir / "comm_groups.json", astraCommGroupsJson( graph.groups ) );
    writeText( dir / "replay.sh", replayScript( !graph.groups.empty() ) );
    fs::permissions( dir / "replay.sh",
                     fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                     fs::perm_options::add, ec );
}

} // namespace

int exportEt( const CommandContext& ctx, const Arguments& args )
{
    ExportEtOptions o;
    if ( !parseExportEtArguments( ctx, args, o ) )
        return 0;

    ScenarioFile scenario = readScenarioFile( o.scenario_path );
    calibratePlatform( scenario.platform, readCalibrationFiles( o.calibrations ), "export-et" );
    const Platform& platform = scenario.platform.platform;
    StepGraph graph = buildExportStepGraph( scenario, o.scenario_path, o.batch );
    const fs::path dir( o.out_dir );
    const StepGraphReplay replay =
        replayStepGraph( writeRankTraces( ctx, graph, dir, o.out_dir, o.progress_interval ),
                         platform.network, platform.system );
    if ( ctx.isRoot() )
        writeAstraConfigs( dir, platform, graph );

    ResultTable table( { "workload_prefix", "ranks", "iteration_ms", "critical_path_ms" } );
    table.addRow( { ( dir / "et" ).string(), static_cast<long long>( graph.numRanks() ),
                    graph.iteration_ms, replay.finish_ns * 1e-6 } );
    if ( o.format == OutputFormat::table )
        ctx.print() << fmt::format( "scenario {}: {} ranks, {} step written to {}/\n",
                                    o.scenario_path, graph.numRanks(), graph.workload_kind,
                                    o.out_dir );
    table.print( ctx.print(), o.format );
    return 0;
}

} // namespace shardsweep
