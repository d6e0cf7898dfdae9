// calibrate network: reading nccl-tests' output as users save it, and fitting a network that
// recovers known bandwidths and latencies from logs the model itself generated.
#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <input_test_support.hpp>
#include <shardsweep/calibration/network_fit.hpp>
#include <shardsweep/io/nccl_tests_log.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/model/collectives.hpp>
#include <unistd.h>

namespace Test
{
using namespace shardsweep;

namespace
{
std::string writeTemp( const std::string& name, const std::string& text )
{
    const std::string path =
        ::testing::TempDir() + "/shardsweep_" + std::to_string( getpid() ) + "_" + name;
    std::ofstream( path ) << text;
    return path;
}

std::string rankLines( int ranks, int per_host, const std::string& prefix = "" )
{
    std::string s = prefix + "# Using devices\n";
    for ( int r = 0; r < ranks; ++r )
        s += prefix + "#  Rank " + std::to_string( r ) + " Group  0 Pid  1234 on   node" +
             std::to_string( r / per_host ) + " device  " + std::to_string( r % per_host ) +
             " [0x07] NVIDIA A100-SXM4-80GB\n";
    return s;
}

//! nccl-tests all-reduce logs of `ranks` GPUs on one host, one row per power of two from 1 MiB
//! to 1 GiB, timed by the model on `truth`.
std::vector<NcclTestsLog> modelAllReduceLogs( const Platform& truth, std::vector<int> ranks )
{
    std::vector<NcclTestsLog> logs;
    for ( int r : ranks )
    {
        NcclTestsLog log;
        log.path = "all_reduce_" + std::to_string( r );
        log.ranks = r;
        log.hosts = 1;
        const LogNetwork net = logNetwork( truth, log );
        for ( double bytes = 1 << 20; bytes <= double( 1 << 30 ); bytes *= 2.0 )
            log.rows.push_back(
                { bytes, ncclTestPredictedUs( net, NcclTest::all_reduce, r, bytes ), 0 } );
        logs.push_back( log );
    }
    return logs;
}

const char* kHeader =
    "#                                                              out-of-place                "
    "       in-place\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "
    "(us)  (GB/s)  (GB/s)\n";
} // namespace

// One node, 8 ranks, NCCL INFO lines between the rows, in-place columns and a trailer: the rows
// keep the out-of-place time (first 'time' column).
TEST( TEST_CATEGORY, nccl_tests_log_single_node )
{
    const std::string text =
        "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 "
        "iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n" +
        rankLines( 8, 8 ) + "#\nNCCL version 2.18.1+cuda12.1\n" + kHeader +
        "     1048576        262144     float     sum      -1    44.21   23.72   41.51      0    "
        "45.10   23.25   40.69      0\n"
        "node0:123:456 [0] NCCL INFO comm 0x5 rank 0 nranks 8 - Init COMPLETE\n"
        "     2097152        524288     float     sum      -1    53.43   39.25   68.69    N/A    "
        "51.13   41.01   71.77    N/A\n"
        "     4194304       1048576     float     sum      -1    61.18   68.55  119.96      0    "
        "60.26   69.61  121.81      0\n"
        "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 76.0\n#\n";
    const std::string path = writeTemp( "all_reduce_perf_1node.log", text );
    const NcclTestsLog log = readNcclTestsLog( path );
    EXPECT_EQ( log.test, NcclTest::all_reduce );
    EXPECT_EQ( log.ranks, 8 );
    EXPECT_EQ( log.hosts, 1 );
    EXPECT_EQ( log.ranks_line, 4 );
    ASSERT_EQ( log.rows.size(), 3u );
    EXPECT_EQ( log.rows[0].bytes, 1048576.0 );
    EXPECT_EQ( log.rows[0].time_us, 44.21 );
    EXPECT_EQ( log.rows[1].time_us, 53.43 );
    EXPECT_EQ( log.rows[2].bytes, 4194304.0 );
    EXPECT_EQ( log.rows[2].line, 20 );
    std::remove( path.c_str() );
}

// Two nodes under `srun --label` with CRLF line ends, named by KIND=PATH; a header without
// redop/root (older nccl-tests) puts the time in the fourth column.
TEST( TEST_CATEGORY, nccl_tests_log_multi_node_and_old_header )
{
    std::string text =
        rankLines( 16, 8, "0: " ) +
        "0: #       size         count      type   redop     time   algbw   busbw  "
        "#wrong     time   algbw   busbw  #wrong\r\n"
        "0:      1048576        262144     float     sum    120.5   8.70   16.31      "
        "0    121.0   8.67   16.25      0\r\n";
    const std::string path = writeTemp( "run7.log", text );
    const NcclTestsLog log = readNcclTestsLog( "alltoall=" + path );
    EXPECT_EQ( log.test, NcclTest::all_to_all );
    EXPECT_EQ( log.ranks, 16 );
    EXPECT_EQ( log.hosts, 2 );
    ASSERT_EQ( log.rows.size(), 1u );
    EXPECT_EQ( log.rows[0].time_us, 120.5 );
    std::remove( path.c_str() );
}

// A log cut short, one without its rank lines, and one whose name does not say the collective.
TEST( TEST_CATEGORY, nccl_tests_log_errors )
{
    const std::string truncated = writeTemp(
        "reduce_scatter_perf.log", rankLines( 2, 2 ) + kHeader +
                                       "     1048576        262144     float     sum      -1    "
                                       "44.21   23.72   41.51      0    45.10\n" );
    expectInputError( [&] { readNcclTestsLog( truncated ); },
                      truncated + ":7: expected a row of 13 columns as the header says (a "
                                  "truncated log?), found '     1048576        262144     float  "
                                  "   sum      -1    44.21   23.72   41.51      0    45.10'" );
    const std::string no_ranks =
        writeTemp( "sendrecv_perf.log", std::string( kHeader ) + "  8  2  float  sum  -1  "
                                                                 "10.0  0  0  0  10.0  0  0 "
                                                                 " 0\n" );
    expectInputError( [&] { readNcclTestsLog( no_ranks ); },
                      no_ranks + ": no '#  Rank N ... on HOST device D' lines: the log's header "
                                 "is missing (save nccl-tests' whole standard output)" );
    const std::string unnamed = writeTemp( "run.log", rankLines( 2, 2 ) );
    expectInputError( [&] { readNcclTestsLog( unnamed ); },
                      unnamed + ": cannot tell which collective this nccl-tests log measured from "
                                "its name: name the file after the test (e.g. "
                                "all_reduce_perf_2node.log) or pass KIND=PATH" );
    for ( const std::string& p : { truncated, no_ranks, unnamed } )
        std::remove( p.c_str() );
}

// 16 ranks on two hosts need a second network dimension; DGX-A100's network has one.
TEST( TEST_CATEGORY, nccl_tests_log_that_the_platform_cannot_hold )
{
    const Platform dgx = readPlatformFile( kInputs + "/platforms/dgx-a100.yaml" ).platform;
    NcclTestsLog log;
    log.path = "all_reduce_2node.log";
    log.ranks = 16;
    log.hosts = 2;
    log.ranks_line = 3;
    expectInputError( [&] { logNetwork( dgx, log ); },
                      "all_reduce_2node.log:3: expected ranks on one host: the base platform's "
                      "network has one dimension (8 NPUs), so a log across hosts has no dimension "
                      "to calibrate, found '16 ranks on 2 host(s)'" );
}

// Logs generated by the model with known link parameters (NVSwitch 300 GB/s, 1500 ns; the
// inter-node ring 40 GB/s, 3000 ns) are fitted back from the shipped H100 platform's values
// (400 GB/s, 936.25 ns; 50 GB/s, 1000 ns): within 1 %, with the base's ring algorithm kept.
TEST( TEST_CATEGORY, network_fit_recovers_known_links )
{
    const Platform base = readPlatformFile( kInputs + "/platforms/h100-2node-ib.yaml" ).platform;
    Platform truth = base;
    truth.network.dims[0].bandwidth_GBps = 300.0;
    truth.network.dims[0].latency_ns = 1500.0;
    truth.network.dims[1].bandwidth_GBps = 40.0;
    truth.network.dims[1].latency_ns = 3000.0;
    truth.system.call_latency_ns = 25000.0;
    truth.system.call_bw_GBps = 800.0;
    std::vector<NcclTestsLog> logs;
    const struct
    {
        NcclTest test;
        int ranks, hosts;
    } runs[] = { { NcclTest::all_reduce, 8, 1 },
                 { NcclTest::all_reduce, 16, 2 },
                 { NcclTest::all_gather, 16, 2 },
                 { NcclTest::sendrecv, 16, 2 } };
    for ( const auto& r : runs )
    {
        NcclTestsLog log;
        log.path = ncclTestName( r.test );
        log.test = r.test;
        log.ranks = r.ranks;
        log.hosts = r.hosts;
        const LogNetwork net = logNetwork( truth, log );
        for ( double bytes = 1 << 20; bytes <= double( 1 << 30 ); bytes *= 2.0 )
            log.rows.push_back( { bytes, ncclTestPredictedUs( net, r.test, r.ranks, bytes ), 0 } );
        logs.push_back( log );
    }
    const NetworkFitResult fit = fitNetwork( base, logs, 1 << 20, 1e300 );
    EXPECT_EQ( fit.fitted_dims, ( std::vector<int>{ 0, 1 } ) );
    EXPECT_NEAR( fit.platform.network.dims[0].bandwidth_GBps / 300.0, 1.0, 0.01 );
    EXPECT_NEAR( fit.platform.network.dims[1].bandwidth_GBps / 40.0, 1.0, 0.01 );
    EXPECT_NEAR( fit.platform.network.dims[1].latency_ns / 3000.0, 1.0, 0.01 );
    // Every kind of call pays them, the all-gather half a pass over its output (callPassBytes).
    EXPECT_TRUE( fit.fits_call_terms );
    EXPECT_NEAR( fit.platform.system.call_latency_ns / 25000.0, 1.0, 0.01 );
    EXPECT_NEAR( fit.platform.system.call_bw_GBps / 800.0, 1.0, 0.01 );
    for ( int d = 0; d < 2; ++d )
        EXPECT_EQ( fit.platform.system.algorithm[static_cast<int>( Collective::all_reduce )][d],
                   CollectiveAlgorithm::ring );
    for ( const NetworkFitLogError& e : fit.logs )
    {
        EXPECT_EQ( e.rows, 11u );
        EXPECT_LT( e.mape, 0.5 ) << e.path;
        EXPECT_GT( e.uncalibrated_mape, 5.0 ) << e.path;
    }
}

// A base platform whose all-reduce algorithm is no candidate (halvingDoubling) is still fitted,
// and keeps its algorithm: the base's algorithms are always the first combination tried (once the
// fit returned the base unchanged: no combination matched it).
TEST( TEST_CATEGORY, network_fit_keeps_a_base_algorithm_it_does_not_try )
{
    Platform base = readPlatformFile( kInputs + "/platforms/dgx-a100.yaml" ).platform;
    constexpr int ar = static_cast<int>( Collective::all_reduce );
    base.system.algorithm[ar][0] = CollectiveAlgorithm::halving_doubling;
    Platform truth = base;
    truth.network.dims[0].bandwidth_GBps = 120.0;
    truth.network.dims[0].latency_ns = 2000.0;
    const std::vector<NcclTestsLog> logs = modelAllReduceLogs( truth, { 2, 4, 8 } );
    const NetworkFitResult fit = fitNetwork( base, logs, 1 << 20, 1e300 );
    EXPECT_EQ( fit.platform.system.algorithm[ar][0], CollectiveAlgorithm::halving_doubling );
    EXPECT_NEAR( fit.platform.network.dims[0].bandwidth_GBps / 120.0, 1.0, 0.01 );
    for ( const NetworkFitLogError& e : fit.logs )
        EXPECT_LT( e.mape, 0.5 ) << e.path;
}

// The call terms add a fixed time and a pass over the bytes to every kind of call, on top of
// ASTRA-sim's steps: hand values on Ring_8npus (50 GB/s, 500 ns, one chunk; the ASTRA-sim times
// are collectives_worked_examples'). 40 µs + 1 MiB at 500 GB/s = 40000 + 2097.152 ns; a
// reduce-scatter and an all-gather, the two halves of a ring all-reduce, pass over half of their
// input (1/2 MiB) and output (8 · 1/2 MiB).
TEST( TEST_CATEGORY, call_terms_add_a_fixed_time_and_a_pass_over_the_bytes )
{
    Network ring8;
    ring8.num_dims = 1;
    ring8.dims[0] = { Topology::Ring, 8, 50.0, 500.0 };
    SystemConfig sys;
    sys.local_mem_bw_GBps = 3350;
    sys.call_latency_ns = 40000.0;
    sys.call_bw_GBps = 500.0;
    const double MiB = 1048576.0;
    EXPECT_DOUBLE_EQ( collectiveTimeNs( ring8, sys, Collective::all_reduce, MiB ), 84240.152 );
    EXPECT_DOUBLE_EQ( collectiveTimeNs( ring8, sys, Collective::all_to_all, MiB ), 124735.152 );
    // One message: ⌊500 + 2^20 / (50 · 2^30 / 1e9)⌋ + 2 δ = 20031 + 20.
    EXPECT_DOUBLE_EQ( pointToPointNs( ring8, sys, MiB ), 20051.0 + 42097.152 );
    // Equal volumes v = 7/8 MiB: the all-to-all-v is the all-to-all of comm_size v · 8/7.
    const double v[8] = { 917504, 917504, 917504, 917504, 917504, 917504, 917504, 917504 };
    EXPECT_DOUBLE_EQ( allToAllvTimeNs( ring8, sys, v, v, 8 ), 124735.152 );
    const auto callNs = [&]( Collective c )
    {
        return collectiveTimeNs( ring8, sys, c, MiB ) -
               collectiveTimeNs( ring8, astraSystem( sys ), c, MiB );
    };
    EXPECT_DOUBLE_EQ( callNs( Collective::all_reduce ), 40000.0 + 2097.152 );
    EXPECT_DOUBLE_EQ( callNs( Collective::reduce_scatter ), 40000.0 + 1048.576 );
    EXPECT_DOUBLE_EQ( callNs( Collective::all_gather ), 40000.0 + 8388.608 );
    // ASTRA-sim's view has none of them.
    EXPECT_EQ( collectiveTimeNs( ring8, astraSystem( sys ), Collective::all_reduce, MiB ),
               42143.0 );
}

// All-reduces of 2, 4 and 8 GPUs generated by the model with known links and call terms: the fit
// recovers all four. One log cannot tell the call terms from the links: they stay the base's.
TEST( TEST_CATEGORY, network_fit_recovers_known_call_terms )
{
    const Platform base = readPlatformFile( kInputs + "/platforms/dgx-a100.yaml" ).platform;
    Platform truth = base;
    truth.network.dims[0].bandwidth_GBps = 120.0;
    truth.network.dims[0].latency_ns = 2000.0;
    truth.system.call_latency_ns = 40000.0;
    truth.system.call_bw_GBps = 500.0;
    const std::vector<NcclTestsLog> logs = modelAllReduceLogs( truth, { 2, 4, 8 } );
    const NetworkFitResult fit = fitNetwork( base, logs, 1 << 20, 1e300 );
    EXPECT_TRUE( fit.fits_call_terms );
    EXPECT_NEAR( fit.platform.network.dims[0].bandwidth_GBps / 120.0, 1.0, 0.01 );
    EXPECT_NEAR( fit.platform.network.dims[0].latency_ns / 2000.0, 1.0, 0.05 );
    EXPECT_NEAR( fit.platform.system.call_latency_ns / 40000.0, 1.0, 0.01 );
    EXPECT_NEAR( fit.platform.system.call_bw_GBps / 500.0, 1.0, 0.01 );
    for ( const NetworkFitLogError& e : fit.logs )
        EXPECT_LT( e.mape, 0.1 ) << e.path;

    const NetworkFitResult links = fitNetwork( base, logs, 1 << 20, 1e300, false );
    EXPECT_FALSE( links.fits_call_terms );
    EXPECT_EQ( links.platform.system.call_latency_ns, 0.0 );
    EXPECT_GT( links.logs[0].mape, 5.0 ); // the 2-GPU log: what the links alone cannot fit
    const NetworkFitResult one = fitNetwork( base, { logs[2] }, 1 << 20, 1e300 );
    EXPECT_FALSE( one.fits_call_terms );
    EXPECT_EQ( one.platform.system.call_latency_ns, 0.0 );
    EXPECT_EQ( one.platform.system.call_bw_GBps, 0.0 );
}

} // namespace Test
