// `shardsweep export-et SCENARIO.yaml -o DIR` and `shardsweep inspect-et PREFIX`: a scenario's
// training step as Chakra execution traces that ASTRA-sim replays (docs/model/chakra.md).
#include "command_line.hpp"

#include <boost/program_options.hpp>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <ostream>
#include <shardsweep/cli/commands.hpp>
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

//! Parses `args` with one positional argument; returns false after printing --help.
bool parseArguments( const CommandContext& ctx, const std::string& command, const Arguments& args,
                     const po::options_description& options, const std::string& positional_name,
                     std::string& positional, const std::string& help )
{
    po::options_description hidden;
    hidden.add_options()( positional_name.c_str(), po::value( &positional ) );
    po::positional_options_description pos;
    pos.add( positional_name.c_str(), 1 );
    po::variables_map vm;
    return parseCommandLine( ctx, command, args, options, vm, CommandHelp{ help, "\n" }, hidden,
                             pos );
}

//! export-et's command line after parsing and checking.
struct ExportEtOptions
{
    std::string scenario_path;
    std::string out_dir;
    long long batch = 0; //!< 0: the scenario file's
    OutputFormat format = OutputFormat::table;
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
        "global-batch", po::value( &global_batch ), "the same as --batch (plan's name for it)" );
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
             "                      micro-batch in 1F1B or GPipe order, then the DP (ZeRO) and\n"
             "                      tied-embedding collectives and the optimizer)\n"
             "  network.yml, system.json  the platform's ASTRA-sim network and system blocks\n"
             "                      (roofline off: the traces carry the compute times)\n"
             "  remote_memory.json  no memory expansion\n"
             "  comm_groups.json    communicator groups (only when collectives run on sub-groups:\n"
             "                      a transformer's TP, DP and tied-embedding groups)\n"
             "  replay.sh           the ASTRA-sim command (binary from $ASTRA_SIM or PATH)\n"
             "It prints workload_prefix (DIR/et, ASTRA-sim's --workload-configuration), ranks,\n"
             "iteration_ms (shardsweep's prediction) and critical_path_ms (the written traces\n"
             "replayed with shardsweep's ASTRA-sim semantics; equal within the microsecond\n"
             "rounding). The native cost model is exported even when the scenario asks for\n"
             "cost_model: torchrec (TorchRec's estimator has no timeline).\n\n" ) )
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

//! Creates `dir` (root) and writes one et.<rank>.et per rank into it (root); sets the graph's
//! compute durations to the written ones.
void writeRankTraces( const CommandContext& ctx, StepGraph& graph, const fs::path& dir,
                      const std::string& out_dir )
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
    for ( int r = 0; r < graph.numRanks(); ++r )
    {
        const chakra::Trace trace = stepGraphRankToTrace( graph, r );
        if ( ctx.isRoot() )
            chakra::writeTraceFile( ( dir / fmt::format( "et.{}.et", r ) ).string(), trace );
        auto& nodes = graph.ranks[r];
        for ( std::size_t i = 0; i < nodes.size(); ++i )
            if ( nodes[i].kind == StepGraphNode::Kind::compute )
                nodes[i].duration_ns =
                    trace.nodes[i].duration_micros > 0
                        ? static_cast<double>( trace.nodes[i].duration_micros ) * 1000.0
                        : 1.0;
    }
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

//! inspect-et's command line after parsing; empty paths: the defaults next to the traces.
struct InspectEtOptions
{
    std::string prefix;
    std::string network_path;
    std::string system_path;
    std::string groups_path;
    OutputFormat format = OutputFormat::table;
};

//! Parses inspect-et's arguments; returns false after printing --help.
bool parseInspectEtArguments( const CommandContext& ctx, const Arguments& args,
                              InspectEtOptions& o )
{
    po::options_description options( "Options of 'shardsweep inspect-et'" );
    std::string format = "table", network_path, system_path, groups_path;
    options.add_options()( "help,h", "show this help" )(
        "network", po::value( &network_path ),
        "ASTRA-sim network .yml (default: network.yml next to the traces)" )(
        "system", po::value( &system_path ),
        "ASTRA-sim system .json (default: system.json next to the traces if present, else "
        "ASTRA-sim's regression defaults as in 'predict collective')" )(
        "comm-groups", po::value( &groups_path ),
        "ASTRA-sim --comm-group-configuration (default: comm_groups.json next to the traces if "
        "present)" )( "format,f", po::value( &format )->default_value( format ),
                      "output: table, csv or json" );
    std::string prefix;
    if ( !parseArguments(
             ctx, "inspect-et", args, options, "prefix", prefix,
             "Usage: shardsweep inspect-et PREFIX [options]\n\n"
             "Reads the Chakra traces PREFIX.0.et, PREFIX.1.et, ... (as ASTRA-sim's\n"
             "--workload-configuration=PREFIX does) and prints one row per rank and a\n"
             "last row 'critical_path': nodes by type (comp, coll, send, recv,\n"
             "other), compute_ms (sum of compute durations; last row: the largest),\n"
             "comm_size bytes per collective type and sent bytes (last row: all\n"
             "ranks), and finish_ms, when the rank's last node ends when the graph is\n"
             "replayed with ASTRA-sim's congestion-unaware semantics (collectives\n"
             "start when every member is ready; times from shardsweep's collective\n"
             "model on the network); the last row's finish_ms is the critical path\n"
             "length, the step time ASTRA-sim should report for the slowest rank.\n\n" ) )
        return false;
    if ( prefix.empty() )
        throw UsageError( "inspect-et: a trace prefix is required (see 'shardsweep inspect-et "
                          "--help')" );
    o.format = parseOutputFormat( format );
    o.prefix = prefix;
    o.network_path = network_path;
    o.system_path = system_path;
    o.groups_path = groups_path;
    return true;
}

//! The traces PREFIX.0.et, PREFIX.1.et, ... up to the first missing one, with their paths.
struct TraceFiles
{
    std::vector<chakra::Trace> traces;
    std::vector<std::string> sources;
};

TraceFiles readTraceFiles( const std::string& prefix )
{
    TraceFiles files;
    for ( int r = 0;; ++r )
    {
        const std::string path = fmt::format( "{}.{}.et", prefix, r );
        if ( !fs::exists( path ) )
            break;
        files.sources.push_back( path );
        files.traces.push_back( chakra::readTraceFile( path ) );
    }
    if ( files.traces.empty() )
        throw InputError( prefix + ".0.et",
                          "no trace file (expected PREFIX.0.et, PREFIX.1.et, ...)" );
    return files;
}

//! What the traces are replayed on: ASTRA-sim's network, system and communicator groups.
struct ReplaySetup
{
    Network network;
    SystemConfig system;
    std::map<int, std::vector<int>> groups;
};

//! Reads the network, system and comm-group files, defaulting empty paths in `o` to the files
//! next to the traces; the network must have one NPU per trace.
ReplaySetup readReplaySetup( InspectEtOptions& o, int ranks )
{
    const fs::path dir = fs::path( o.prefix ).parent_path();
    auto beside = [&]( const char* name ) { return ( dir / name ).string(); };
    if ( o.network_path.empty() )
    {
        o.network_path = beside( "network.yml" );
        if ( !fs::exists( o.network_path ) )
            throw UsageError( fmt::format( "inspect-et: no {} next to the traces: pass --network",
                                           o.network_path ) );
    }
    ReplaySetup setup;
    setup.network = readAstraNetworkFile( o.network_path );
    if ( o.system_path.empty() && fs::exists( beside( "system.json" ) ) )
        o.system_path = beside( "system.json" );
    setup.system = o.system_path.empty()
                       ? SystemConfig{}
                       : readAstraSystemFile( o.system_path, setup.network.num_dims );
    if ( o.groups_path.empty() && fs::exists( beside( "comm_groups.json" ) ) )
        o.groups_path = beside( "comm_groups.json" );
    setup.groups = o.groups_path.empty() ? std::map<int, std::vector<int>>{}
                                         : readAstraCommGroups( o.groups_path, ranks );
    long long npus = 1;
    for ( int d = 0; d < setup.network.num_dims; ++d )
        npus *= setup.network.dims[d].npus_count;
    if ( npus != ranks )
        throw InputError( o.network_path,
                          fmt::format( "the network has {} NPUs but there are {} traces {}.*.et",
                                       npus, ranks, o.prefix ) );
    return setup;
}

const int kStatisticsColumns = 12; //!< counts and sums between "rank" and "finish_ms"
const int kComputeColumn = 6;      //!< compute_ms, the one column that is not a whole number

//! One rank's node counts by type, compute_ms and byte sums (the columns after "rank").
std::vector<double> rankStatistics( const chakra::Trace& trace,
                                    const std::vector<StepGraphNode>& nodes )
{
    std::vector<double> v( kStatisticsColumns, 0.0 );
    v[0] = static_cast<double>( trace.nodes.size() );
    for ( std::size_t i = 0; i < trace.nodes.size(); ++i )
    {
        const chakra::Node& c = trace.nodes[i];
        const StepGraphNode& n = nodes[i];
        switch ( c.type )
        {
        case chakra::NodeType::comp:
            v[1] += 1;
            v[kComputeColumn] += n.duration_ns * 1e-6;
            break;
        case chakra::NodeType::comm_coll:
            // Byte columns in shardsweep's Collective order: all_reduce, all_gather,
            // reduce_scatter, all_to_all.
            v[2] += 1;
            v[7 + static_cast<int>( n.collective )] += static_cast<double>( n.comm_bytes );
            break;
        case chakra::NodeType::comm_send:
            v[3] += 1;
            v[11] += static_cast<double>( n.comm_bytes );
            break;
        case chakra::NodeType::comm_recv:
            v[4] += 1;
            break;
        default:
            v[5] += 1;
        }
    }
    return v;
}

//! A row of the inspect-et table: `label`, the statistics `v` and the finish time.
std::vector<ResultTable::Cell> statisticsRow( const std::string& label,
                                              const std::vector<double>& v, double finish_ms )
{
    std::vector<ResultTable::Cell> row = { label };
    for ( int k = 0; k < kStatisticsColumns; ++k )
    {
        if ( k == kComputeColumn )
            row.emplace_back( v[k] );
        else
            row.emplace_back( static_cast<long long>( v[k] ) );
    }
    row.push_back( finish_ms );
    return row;
}

//! One row per rank and a last row 'critical_path' (largest compute, summed counts and bytes);
//! returns the largest compute_ms.
double addStatisticsRows( ResultTable& table, const TraceFiles& files, const StepGraph& graph,
                          const StepGraphReplay& replay )
{
    std::vector<double> total( kStatisticsColumns, 0.0 );
    double max_compute = 0.0;
    for ( int r = 0; r < static_cast<int>( files.traces.size() ); ++r )
    {
        const std::vector<double> v = rankStatistics( files.traces[r], graph.ranks[r] );
        max_compute = std::max( max_compute, v[kComputeColumn] );
        for ( int k = 0; k < kStatisticsColumns; ++k )
            total[k] += v[k];
        table.addRow( statisticsRow( std::to_string( r ), v, replay.rank_finish_ns[r] * 1e-6 ) );
    }
    total[kComputeColumn] = max_compute;
    table.addRow( statisticsRow( "critical_path", total, replay.finish_ns * 1e-6 ) );
    return max_compute;
}

} // namespace

int exportEt( const CommandContext& ctx, const Arguments& args )
{
    ExportEtOptions o;
    if ( !parseExportEtArguments( ctx, args, o ) )
        return 0;

    const ScenarioFile scenario = readScenarioFile( o.scenario_path );
    const Platform& platform = scenario.platform.platform;
    StepGraph graph = buildExportStepGraph( scenario, o.scenario_path, o.batch );
    const fs::path dir( o.out_dir );
    writeRankTraces( ctx, graph, dir, o.out_dir );
    const StepGraphReplay replay = replayStepGraph( graph, platform.network, platform.system );
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

int inspectEt( const CommandContext& ctx, const Arguments& args )
{
    InspectEtOptions o;
    if ( !parseInspectEtArguments( ctx, args, o ) )
        return 0;

    const TraceFiles files = readTraceFiles( o.prefix );
    const int ranks = static_cast<int>( files.traces.size() );
    const ReplaySetup setup = readReplaySetup( o, ranks );

    const StepGraph graph = tracesToStepGraph( files.traces, setup.groups, files.sources );
    StepGraphReplay replay;
    try
    {
        replay = replayStepGraph( graph, setup.network, setup.system );
    }
    catch ( const std::invalid_argument& e )
    {
        throw InputError( o.prefix, e.what() );
    }

    ResultTable table( { "rank", "nodes", "comp_nodes", "coll_nodes", "send_nodes", "recv_nodes",
                         "other_nodes", "compute_ms", "all_reduce_bytes", "all_gather_bytes",
                         "reduce_scatter_bytes", "all_to_all_bytes", "send_bytes", "finish_ms" } );
    const double max_compute = addStatisticsRows( table, files, graph, replay );

    if ( o.format == OutputFormat::table )
    {
        int slowest = 0;
        for ( int r = 0; r < ranks; ++r )
            if ( replay.rank_finish_ns[r] > replay.rank_finish_ns[slowest] )
                slowest = r;
        ctx.print() << fmt::format( "traces {}.*.et: {} ranks, version {}; network {}{}\n"
                                    "critical path {:.6f} ms (slowest rank {}), largest compute "
                                    "{:.6f} ms\n\n",
                                    o.prefix, ranks, files.traces[0].version, o.network_path,
                                    o.system_path.empty() ? "" : ", system " + o.system_path,
                                    replay.finish_ns * 1e-6, slowest, max_compute );
    }
    table.print( ctx.print(), o.format );
    return 0;
}

} // namespace shardsweep
