// shardsweep calibrate network: a platform's network fitted to nccl-tests logs
// (calibration/network_fit.hpp), written as a new platform file.
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <shardsweep/calibration/network_fit.hpp>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/gpu_calibration_yaml.hpp>
#include <shardsweep/io/platform_writer.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/version.hpp>

namespace shardsweep
{

namespace po = boost::program_options;

int calibrateNetwork( const CommandContext& ctx, const Arguments& args )
{
    PredictCli cli(
        "calibrate network",
        "Usage: shardsweep calibrate network --platform BASE.yaml --nccl-tests LOG... -o "
        "PLATFORM.yaml\n"
        "                                  [--check LOG...]\n\n"
        "Fits the network of a platform to nccl-tests measurements of your cluster and writes a\n"
        "platform file with the fitted network and system inline (the other fields as in BASE).\n"
        "LOG: the standard output of nccl-tests' all_reduce_perf, all_gather_perf,\n"
        "reduce_scatter_perf, alltoall_perf or sendrecv_perf (the whole output: its '# Rank ... "
        "on\n"
        "HOST' lines say how many ranks ran on how many hosts), named after the test (e.g.\n"
        "all_reduce_perf_2node.log) or given as KIND=LOG. A log on one host calibrates dimension "
        "0\n"
        "of BASE's network, a log across hosts also dimension 1 (ranks per host on dimension 0).\n"
        "Fitted: bandwidth and latency of each dimension the logs span and, with an all-reduce "
        "log,\n"
        "the all-reduce algorithm per dimension (ring, direct or doubleBinaryTree, the base's "
        "unless\n"
        "another is clearly better) and, with logs of two or more tests or rank counts, the call\n"
        "terms every collective pays besides its network steps (system keys call-latency-ns and\n"
        "call-bw: a fixed time and a pass over its bytes). Least squares on log time over "
        "the\n"
        "rows with --min-bytes <= size <= --max-bytes (docs/model/calibration.md). Prints per "
        "log\n"
        "the rows and the MAPE (%) of BASE and of the fitted network, role 'fitted'; --check\n"
        "LOG... adds logs that are scored but not fitted, role 'held out' (other collectives or\n"
        "GPU counts: how the fitted network predicts what it was not given). A log the base "
        "platform\n"
        "cannot hold (e.g. 16 ranks on 8-GPU nodes without a second dimension) exits 2 naming "
        "the\n"
        "file and line.\n",
        0 );
    std::string platform_path, output;
    std::vector<std::string> logs_given, logs_checked;
    double min_bytes = 1048576.0, max_bytes = 1.0e300;
    cli.options().add_options()( "platform", po::value( &platform_path ),
                                 "base platform file (required)" )(
        "nccl-tests", po::value( &logs_given )->multitoken(),
        "nccl-tests logs, LOG or KIND=LOG (one or more; required)" )(
        "check", po::value( &logs_checked )->multitoken(),
        "nccl-tests logs to score the fitted network on without fitting them" )(
        "output,o", po::value( &output ), "platform file to write (required)" )(
        "min-bytes", po::value( &min_bytes ),
        "smallest size fitted and scored, bytes (default 1048576: below 1 MiB NCCL's low-latency "
        "protocols run, which the model does not describe)" )(
        "max-bytes", po::value( &max_bytes ), "largest size fitted and scored (default: all)" );
    if ( !cli.parse( ctx, args ) )
        return 0;
    if ( platform_path.empty() || logs_given.empty() || output.empty() )
        throw UsageError( "calibrate network: --platform, --nccl-tests and -o are required (see "
                          "--help)" );
    if ( !( min_bytes >= 0.0 ) || !( max_bytes >= min_bytes ) )
        throw UsageError( "calibrate network: need 0 <= --min-bytes <= --max-bytes" );

    const NamedPlatform base = readPlatformFile( platform_path );
    std::vector<NcclTestsLog> logs;
    for ( const std::string& spec : logs_given )
        logs.push_back( readNcclTestsLog( spec ) );
    const NetworkFitResult fit = fitNetwork( base.platform, logs, min_bytes, max_bytes );
    std::vector<NetworkFitLogError> checked;
    for ( const std::string& spec : logs_checked )
        checked.push_back( scoreNcclTestsLog( fit.platform, base.platform, readNcclTestsLog( spec ),
                                              min_bytes, max_bytes ) );

    ResultTable table(
        { "log", "test", "ranks", "hosts", "rows", "base_mape", "calibrated_mape", "role" } );
    std::vector<std::string> comments = {
        fmt::format( "{} calibrated by shardsweep {} (git {}) calibrate network", base.name,
                     versionString(), gitHash() ),
        fmt::format( "base platform: {}; fitted on sizes {} to {} bytes of the logs marked fitted:",
                     platform_path, min_bytes, max_bytes ) };
    const auto addLog = [&]( const NetworkFitLogError& e, const char* role )
    {
        table.addRow( { std::filesystem::path( e.path ).filename().string(),
                        std::string( ncclTestName( e.test ) ), static_cast<long long>( e.ranks ),
                        static_cast<long long>( e.hosts ), static_cast<long long>( e.rows ),
                        e.uncalibrated_mape, e.mape, std::string( role ) } );
        comments.push_back( fmt::format( "  {} ({}, {} ranks on {} host(s), {} rows, {}): MAPE "
                                         "{:.2f} % (base {:.2f} %)",
                                         e.path, ncclTestName( e.test ), e.ranks, e.hosts, e.rows,
                                         role, e.mape, e.uncalibrated_mape ) );
    };
    for ( const NetworkFitLogError& e : fit.logs )
        addLog( e, "fitted" );
    for ( const NetworkFitLogError& e : checked )
        addLog( e, "held out" );
    std::string dims;
    for ( int d : fit.fitted_dims )
    {
        const NetworkDim& n = fit.platform.network.dims[d];
        dims += fmt::format(
            "{}dimension {}: {:.4g} GB/s, {:.4g} ns, all-reduce {}", dims.empty() ? "" : "; ", d,
            n.bandwidth_GBps, n.latency_ns,
            nameOf(
                fit.platform.system.algorithm[static_cast<int>( Collective::all_reduce )][d] ) );
    }
    if ( fit.fits_call_terms )
        dims +=
            fmt::format( "; per call: {:.4g} ns and its bytes at {:.4g} GB/s",
                         fit.platform.system.call_latency_ns, fit.platform.system.call_bw_GBps );
    comments.push_back( "fitted " + dims );
    if ( ctx.isRoot() )
    {
        writeTextFileAtomically( output, platformYamlWithNetwork( platform_path,
                                                                  base.name + " (calibrated)",
                                                                  fit.platform, comments ) );
        table.print( ctx.print(), cli.format() );
        std::cerr << "fitted " << dims << "\nwrote " << output << '\n';
    }
    return 0;
}

} // namespace shardsweep
