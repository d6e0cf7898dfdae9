// `shardsweep inspect-et PREFIX|DIR`: statistics of Chakra traces and their critical path when
// replayed with ASTRA-sim's congestion-unaware semantics (docs/model/chakra.md).
#include "trace_cli.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/chakra_export.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/scenario/step_graph.hpp>
#include <utility>

namespace shardsweep
{
namespace
{
namespace po = boost::program_options;
namespace fs = std::filesystem;
using trace_cli::kProgressHelp;
using trace_cli::parseArguments;
using trace_cli::RankProgress;

//! inspect-et's command line after parsing; empty paths: the defaults next to the traces.
struct InspectEtOptions
{
    std::string prefix;
    std::string network_path;
    std::string system_path;
    std::string groups_path;
    OutputFormat format = OutputFormat::table;
    bool summary = false; //!< only the slowest and fastest ranks and the critical path
    double progress_interval = 10.0;
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
                      "output: table, csv or json" )(
        "summary", po::bool_switch( &o.summary ),
        "print three rows instead of one per rank: the slowest rank ('slowest:R'), the fastest "
        "('fastest:R') and the critical path" )( "progress-interval",
                                                 po::value( &o.progress_interval ), kProgressHelp );
    std::string prefix;
    if ( !parseArguments(
             ctx, "inspect-et", args, options, "prefix", prefix,
             "Usage: shardsweep inspect-et PREFIX|DIR [options]\n\n"
             "Reads the Chakra traces PREFIX.0.et, PREFIX.1.et, ... (as ASTRA-sim's\n"
             "--workload-configuration=PREFIX does; a directory DIR means DIR/et, what\n"
             "'export-et -o DIR' writes) and prints one row per rank and a\n"
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
    if ( !( o.progress_interval >= 0.0 ) )
        throw UsageError( "inspect-et: --progress-interval must be >= 0" );
    o.format = parseOutputFormat( format );
    std::error_code ec;
    o.prefix = fs::is_directory( prefix, ec ) ? ( fs::path( prefix ) / "et" ).string() : prefix;
    o.network_path = network_path;
    o.system_path = system_path;
    o.groups_path = groups_path;
    return true;
}

//! How many traces PREFIX.0.et, PREFIX.1.et, ... there are (up to the first missing one); an
//! input error when there is none.
int countTraceFiles( const std::string& prefix )
{
    int count = 0;
    while ( fs::exists( fmt::format( "{}.{}.et", prefix, count ) ) )
        ++count;
    if ( count == 0 )
        throw InputError( prefix + ".0.et",
                          "no trace file (expected PREFIX.0.et, PREFIX.1.et, ...)" );
    return count;
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

//! Rank r's node counts by type, compute_ms and byte sums (the columns after "rank"): its trace
//! and its nodes in `graph`.
std::vector<double> rankStatistics( const chakra::Trace& trace, const PackedStepGraph& graph,
                                    int r )
{
    std::vector<double> v( kStatisticsColumns, 0.0 );
    v[0] = static_cast<double>( trace.nodes.size() );
    for ( std::size_t i = 0; i < trace.nodes.size(); ++i )
    {
        const PackedStepGraph::Node& n = graph.node( r, i );
        switch ( trace.nodes[i].type )
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

//! The traces read into one step graph, one at a time (a decoded trace takes several times the
//! memory of its graph nodes, so only the graph is held), and each rank's statistics, taken while
//! its trace is in memory.
struct ReadTraces
{
    PackedStepGraph graph;
    std::vector<std::vector<double>> statistics; //!< rankStatistics per rank
    std::string version;                         //!< GlobalMetadata.version of rank 0's trace
};

ReadTraces readTraces( const CommandContext& ctx, const std::string& prefix, int count,
                       const std::map<int, std::vector<int>>& groups, double progress_interval )
{
    ReadTraces read;
    TraceGraphReader reader( groups );
    RankProgress progress( ctx, "inspect-et", "traces read", count, progress_interval );
    for ( int r = 0; r < count; ++r )
    {
        const std::string path = fmt::format( "{}.{}.et", prefix, r );
        const chakra::Trace trace = chakra::readTraceFile( path );
        reader.addRank( trace, path );
        read.statistics.push_back( rankStatistics( trace, reader.graph(), r ) );
        if ( r == 0 )
            read.version = trace.version;
        progress.done( r + 1 );
    }
    read.graph = reader.take();
    return read;
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

//! One row per rank (with `summary`: only the slowest rank's, 'slowest:R', and the fastest's,
//! 'fastest:R'; the first of equals) and a last row 'critical_path' (largest compute, summed
//! counts and bytes); returns the largest compute_ms.
double addStatisticsRows( ResultTable& table, const std::vector<std::vector<double>>& statistics,
                          const StepGraphReplay& replay, bool summary )
{
    std::vector<double> total( kStatisticsColumns, 0.0 );
    double max_compute = 0.0;
    const int ranks = static_cast<int>( statistics.size() );
    int slowest = 0, fastest = 0;
    for ( int r = 0; r < ranks; ++r )
    {
        slowest = replay.rank_finish_ns[r] > replay.rank_finish_ns[slowest] ? r : slowest;
        fastest = replay.rank_finish_ns[r] < replay.rank_finish_ns[fastest] ? r : fastest;
    }
    for ( int r = 0; r < ranks; ++r )
    {
        const std::vector<double>& v = statistics[r];
        max_compute = std::max( max_compute, v[kComputeColumn] );
        for ( int k = 0; k < kStatisticsColumns; ++k )
            total[k] += v[k];
        if ( !summary )
            table.addRow(
                statisticsRow( std::to_string( r ), v, replay.rank_finish_ns[r] * 1e-6 ) );
    }
    if ( summary )
    {
        const std::pair<const char*, int> picks[] = { { "slowest:", slowest },
                                                      { "fastest:", fastest } };
        for ( const auto& [label, r] : picks )
            table.addRow( statisticsRow( label + std::to_string( r ), statistics[r],
                                         replay.rank_finish_ns[r] * 1e-6 ) );
    }
    total[kComputeColumn] = max_compute;
    table.addRow( statisticsRow( "critical_path", total, replay.finish_ns * 1e-6 ) );
    return max_compute;
}

} // namespace

int inspectEt( const CommandContext& ctx, const Arguments& args )
{
    InspectEtOptions o;
    if ( !parseInspectEtArguments( ctx, args, o ) )
        return 0;

    const int ranks = countTraceFiles( o.prefix );
    const ReplaySetup setup = readReplaySetup( o, ranks );
    const ReadTraces read = readTraces( ctx, o.prefix, ranks, setup.groups, o.progress_interval );
    StepGraphReplay replay;
    try
    {
        replay = replayStepGraph( read.graph, setup.network, setup.system );
    }
    catch ( const std::invalid_argument& e )
    {
        throw InputError( o.prefix, e.what() );
    }

    ResultTable table( { "rank", "nodes", "comp_nodes", "coll_nodes", "send_nodes", "recv_nodes",
                         "other_nodes", "compute_ms", "all_reduce_bytes", "all_gather_bytes",
                         "reduce_scatter_bytes", "all_to_all_bytes", "send_bytes", "finish_ms" } );
    const double max_compute = addStatisticsRows( table, read.statistics, replay, o.summary );

    if ( o.format == OutputFormat::table )
    {
        int slowest = 0;
        for ( int r = 0; r < ranks; ++r )
            if ( replay.rank_finish_ns[r] > replay.rank_finish_ns[slowest] )
                slowest = r;
        ctx.print() << fmt::format( "traces {}.*.et: {} ranks, version {}; network {}{}\n"
                                    "critical path {:.6f} ms (slowest rank {}), largest compute "
                                    "{:.6f} ms\n\n",
                                    o.prefix, ranks, read.version, o.network_path,
                                    o.system_path.empty() ? "" : ", system " + o.system_path,
                                    replay.finish_ns * 1e-6, slowest, max_compute );
    }
    table.print( ctx.print(), o.format );
    return 0;
}

} // namespace shardsweep
