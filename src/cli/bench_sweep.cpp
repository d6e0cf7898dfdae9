// `shardsweep bench sweep`: the sweep engine (runSweepEngine with the real planner and cost
// kernel) on 50-table / 4-GPU round-robin scenarios: throughput per core, the share of I/O, the
// 1 -> N rank parallel efficiency and the peak RSS as the scenario count grows.
#include "bench_probes.hpp"
#include "command_line.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <boost/program_options.hpp>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/sweep_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/kernel/case_cache.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <shardsweep/sweep/sweep_engine.hpp>
#include <shardsweep/sweep/sweep_problem.hpp>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace shardsweep
{
namespace
{
namespace po = boost::program_options;
using bench::cpuSeconds;
using bench::diskWriteMBps;
using bench::peakRssMiB;
using bench::resetPeakRss;
using bench::writtenBytes;

//! One engine run, reduced over the ranks that took part.
struct Measurement
{
    int ranks = 0;
    std::uint64_t scenarios = 0;
    std::uint64_t failures = 0;
    double wall_s = 0;
    double rate = 0;           //!< scenarios per second, all ranks
    double io_fraction = 0;    //!< max over ranks of (journal + hdf5) / wall
    double hdf5_fraction = 0;  //!< max over ranks of hdf5 / wall
    double busy_imbalance = 0; //!< max busy / mean busy - 1
    SweepTimes sum;            //!< phase seconds summed over ranks
    double peak_rss_MiB = 0;   //!< max over ranks
    double cpu_s = 0;          //!< CPU seconds, summed over ranks
    double written_MB = 0;     //!< passed to write calls (journals and file), summed over ranks
};

//! What every engine run of the bench shares.
struct BenchSetup
{
    const SweepProblem& problem;
    std::string base; //!< prefix of the temporary results files, the same on all ranks
    std::uint64_t batch_size = 0;
    std::uint64_t evaluate_tile = 0;
    Backend backend = defaultBackend();
};

//! Runs the engine on `comm` (fresh output, quiet); collective over `comm`.
Measurement runOnce( MPI_Comm comm, const BenchSetup& setup, const std::string& output,
                     std::uint64_t scenarios, SweepDetail detail, bool cache_cases = true )
{
    SweepOptions options;
    options.output = output;
    options.fresh = true;
    options.quiet = true;
    options.progress_interval_s = 0;
    options.max_scenarios = scenarios;
    options.detail = detail;
    options.batch_size = setup.batch_size;
    options.evaluate_tile = setup.evaluate_tile;
    options.backend = setup.backend;
    options.command_line = "shardsweep bench sweep";
    std::ostringstream sink;
    resetPeakRss();
    const double cpu0 = cpuSeconds();
    const double written0 = writtenBytes();
    // A fresh per-rank cache per run (as `shardsweep run`): its filling is part of the timing.
    CaseCache cases;
    const SweepEvaluateFunction evaluate = [&]( const std::vector<ScenarioInput>& in )
    { return evaluateScenarios( setup.backend, in, cache_cases ? &cases : nullptr ); };
    const SweepReport r =
        runSweepEngine( comm, setup.problem, planSweepScenario, evaluate, options, sink );
    const double cpu = cpuSeconds() - cpu0;
    const double written = writtenBytes() - written0;
    Measurement m;
    m.cpu_s = mpi::allreduceSum( cpu, comm );
    m.written_MB = mpi::allreduceSum( written, comm ) / 1e6;
    m.ranks = mpi::size( comm );
    m.scenarios = r.computed;
    m.failures = r.failures;
    m.wall_s = r.wall_s;
    m.rate = double( r.computed ) / std::max( r.wall_s, 1e-12 );
    m.io_fraction = r.io_s_max / std::max( r.wall_s, 1e-12 );
    m.hdf5_fraction = mpi::allreduceMax( r.local.hdf5, comm ) / std::max( r.wall_s, 1e-12 );
    double busy_sum = 0, busy_max = 0;
    for ( double b : r.busy_s )
    {
        busy_sum += b;
        busy_max = std::max( busy_max, b );
    }
    m.busy_imbalance = busy_max / std::max( busy_sum / double( r.busy_s.size() ), 1e-12 ) - 1.0;
    m.sum.materialize = mpi::allreduceSum( r.local.materialize, comm );
    m.sum.plan = mpi::allreduceSum( r.local.plan, comm );
    m.sum.evaluate = mpi::allreduceSum( r.local.evaluate, comm );
    m.sum.journal = mpi::allreduceSum( r.local.journal, comm );
    m.sum.hdf5 = mpi::allreduceSum( r.local.hdf5, comm );
    m.sum.journal_thread_cpu = mpi::allreduceSum( r.local.journal_thread_cpu, comm );
    m.peak_rss_MiB = mpi::allreduceMax( peakRssMiB(), comm );
    if ( mpi::rank( comm ) == 0 )
        std::filesystem::remove( output );
    mpi::barrier( comm );
    return m;
}

//! Broadcasts a measurement of rank 0 (the 1-rank case) to every rank of `comm`.
Measurement broadcastMeasurement( Measurement m, MPI_Comm comm )
{
    MPI_Bcast( &m, sizeof( Measurement ), MPI_BYTE, 0, comm );
    return m;
}

std::vector<std::uint64_t> parseCounts( const std::string& text, const char* option )
{
    std::vector<std::uint64_t> counts;
    std::stringstream s( text );
    std::string item;
    while ( std::getline( s, item, ',' ) )
    {
        try
        {
            std::size_t used = 0;
            const double v = std::stod( item, &used );
            if ( used != item.size() || !( v >= 1 ) || v > 1e12 || v != std::floor( v ) )
                throw std::invalid_argument( item );
            counts.push_back( std::uint64_t( v ) );
        }
        catch ( const std::exception& )
        {
            throw UsageError( fmt::format( "--{}: expected a comma-separated list of scenario "
                                           "counts >= 1 (e.g. 1e5,1e6), found '{}'",
                                           option, item ) );
        }
    }
    return counts;
}

//! The options of `bench sweep`.
struct BenchOptions
{
    std::string format_text = "table", sweep_file, dir, rss_text = "1e5,1e6", detail_text;
    std::string backend_text = nameOf( defaultBackend() );
    std::uint64_t scenarios = 20000, batch_size = 2048, evaluate_tile = 0;
    int repeats = 2;
    bool uncached_baseline = false;
    // Derived from the above by parseOptions:
    OutputFormat format = OutputFormat::table;
    Backend backend = defaultBackend();
    std::vector<std::uint64_t> rss_counts; //!< increasing
    std::vector<SweepDetail> details;
};

//! The head of `bench sweep --help`.
const char* const kUsage =
    "Usage: [mpirun -np 2] shardsweep bench sweep [options]\n\n"
    "Runs the sweep engine (real planner, cost kernel, journals and parallel HDF5 file) on "
    "the\n"
    "first scenarios of a sweep of 50-table / 4-GPU DreamShard tasks with round-robin\n"
    "placement, into temporary files that are deleted afterwards. Cases:\n"
    "  throughput_<detail>  N scenarios on 1 rank (a sub-communicator of rank 0) and on all\n"
    "                       ranks, best of --repeats, for --detail all and scenarios;\n"
    "                       parallel_efficiency = (rate_all / ranks) / rate_1;\n"
    "  throughput_<detail>_uncached  (--uncached-baseline) the same without the per-rank\n"
    "                       case cache (table statistics, dense parts, transformer\n"
    "                       operator cases: every batch recomputes them), run\n"
    "                       alternately with the cached case: the before/after ratio;\n"
    "  rss                  every --rss-scenarios count on all ranks (detail scenarios), in\n"
    "                       increasing order. peak_rss_MiB of every row is the peak resident\n"
    "                       set of that run alone (VmHWM after resetting it through\n"
    "                       /proc/self/clear_refs; max over ranks).\n"
    "Launch with `mpirun -np 2` for the efficiency column (1 rank: NaN).\n"
    "scenarios_per_s_per_core = scenarios / wall s / (ranks x Kokkos threads); io_fraction =\n"
    "max over ranks of (journal + hdf5 s) / wall s; hdf5_fraction = hdf5 s / wall s; *_us =\n"
    "rank-seconds per scenario in each engine phase (journal_us: the time the engine waits "
    "for\n"
    "its write-behind journal; journal_thread_cpu_us: the CPU time of the journal's\n"
    "background thread, off the critical path); scenarios_per_cpu_s and cpu_efficiency "
    "use\n"
    "getrusage CPU time instead of wall time (meaningful on a shared machine).\n"
    "written_MB_per_s = bytes the ranks passed to write calls (journals and results file,\n"
    "/proc/self/io wchar) / wall s; disk_MB_per_s = the baseline measured at the start in\n"
    "--dir (256 MiB of 4 MiB writes, then fdatasync); disk_share = their ratio (near 1: the\n"
    "run writes as fast as the disk takes data, and I/O can only shrink with fewer "
    "bytes).\n\nOptions";

//! Reads and checks the options into `o`; false after --help (the command then returns 0).
bool parseOptions( const CommandContext& ctx, const Arguments& args, BenchOptions& o )
{
    po::options_description desc( kUsage );
    // clang-format off
    desc.add_options()
        ( "help,h", "this text" )
        ( "sweep", po::value( &o.sweep_file ),
          "sweep file (default inputs/sweeps/bench_50x4.yaml of the source tree)" )
        ( "scenarios", po::value( &o.scenarios )->default_value( o.scenarios ),
          "scenarios per throughput run" )
        ( "repeats", po::value( &o.repeats )->default_value( o.repeats ),
          "throughput runs per rank count (the fastest counts: the machine may be shared)" )
        ( "rss-scenarios", po::value( &o.rss_text )->default_value( o.rss_text ),
          "scenario counts of the memory case, comma-separated (e.g. 1e5,1e6,1e7; empty: none)" )
        ( "uncached-baseline", po::bool_switch( &o.uncached_baseline ),
          "also run every throughput case without the per-rank case cache" )
        ( "batch-size", po::value( &o.batch_size )->default_value( o.batch_size ),
          "scenarios per engine batch (as `run --batch-size`)" )
        ( "evaluate-tile", po::value( &o.evaluate_tile )->default_value( o.evaluate_tile ),
          "scenarios materialised, planned and evaluated together within a batch (0: what `run` "
          "uses, the kernel's preferred call size: 256 on host backends, 1024 on a GPU; set it "
          "to --batch-size for whole-batch calls)" )
        ( "detail", po::value( &o.detail_text ),
          ( "only this detail level in the throughput case (" + enumChoices<SweepDetail>() +
            "; default: all and scenarios)" ).c_str() )
        ( "dir", po::value( &o.dir ),
          "where the temporary results files go (default: $TMPDIR or /tmp)" )
        ( "format,f", po::value( &o.format_text )->default_value( o.format_text ),
          enumChoices<OutputFormat>().c_str() )
        ( "backend", po::value( &o.backend_text )->default_value( o.backend_text ),
          ( backendOptionHelp() + "; the engine materialises and plans on the host threads "
            "whichever it is" ).c_str() );
    // clang-format on
    po::variables_map vm;
    if ( !parseCommandLine( ctx, "bench sweep", args, desc, vm ) )
        return false;
    o.format = parseOutputFormat( o.format_text );
    o.backend = parseBackend( "bench sweep", o.backend_text );
    if ( o.scenarios < 1 || o.repeats < 1 || o.batch_size < 1 )
        throw UsageError( "bench sweep: --scenarios, --repeats and --batch-size must be >= 1" );
    o.rss_counts = o.rss_text.empty() ? std::vector<std::uint64_t>{}
                                      : parseCounts( o.rss_text, "rss-scenarios" );
    std::sort( o.rss_counts.begin(), o.rss_counts.end() );
    o.details = { SweepDetail::all, SweepDetail::scenarios };
    if ( !o.detail_text.empty() )
        o.details = { parseSweepDetail( o.detail_text ) };
    if ( o.sweep_file.empty() )
        o.sweep_file = std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/sweeps/bench_50x4.yaml";
    if ( o.dir.empty() )
    {
        const char* tmp = std::getenv( "TMPDIR" );
        o.dir = tmp && *tmp ? tmp : "/tmp";
    }
    if ( !std::filesystem::is_directory( o.dir ) )
        throw UsageError( "bench sweep: --dir " + o.dir + " is not a directory" );
    return true;
}

//! Throws a UsageError where a scenario count of the options exceeds the sweep's.
void checkScenarioCounts( const BenchOptions& o, const ScenarioSpace& space )
{
    for ( std::uint64_t n : o.rss_counts )
        if ( n > space.size() )
            throw UsageError( fmt::format( "bench sweep: {} scenarios asked, the sweep has {}", n,
                                           space.size() ) );
    if ( o.scenarios > space.size() )
        throw UsageError( fmt::format( "bench sweep: --scenarios {} > the sweep's {}", o.scenarios,
                                       space.size() ) );
}

//! The results table: one row per measurement, with its per-core, per-scenario and disk columns.
class BenchTable
{
  public:
    BenchTable( int threads, double disk_MBps ) : _threads( threads ), _disk_MBps( disk_MBps ) {}

    void add( const std::string& name, const Measurement& m, double efficiency,
              double cpu_efficiency )
    {
        const double per = 1e6 / double( std::max<std::uint64_t>( m.scenarios, 1 ) );
        _table.addRow( { name,
                         (long long)m.ranks,
                         (long long)_threads,
                         (long long)m.scenarios,
                         (long long)m.failures,
                         m.wall_s,
                         m.rate,
                         m.rate / double( m.ranks * _threads ),
                         double( m.scenarios ) / std::max( m.cpu_s, 1e-12 ),
                         m.io_fraction,
                         m.hdf5_fraction,
                         efficiency,
                         cpu_efficiency,
                         m.busy_imbalance,
                         m.sum.materialize * per,
                         m.sum.plan * per,
                         m.sum.evaluate * per,
                         m.sum.journal * per,
                         m.sum.hdf5 * per,
                         m.peak_rss_MiB,
                         m.sum.journal_thread_cpu * per,
                         m.written_MB / std::max( m.wall_s, 1e-12 ),
                         _disk_MBps,
                         m.written_MB / std::max( m.wall_s, 1e-12 ) / _disk_MBps } );
    }

    void print( std::ostream& out, OutputFormat format ) const { _table.print( out, format ); }

  private:
    ResultTable _table{ { "case",
                          "ranks",
                          "threads",
                          "scenarios",
                          "failed",
                          "wall_s",
                          "scenarios_per_s",
                          "scenarios_per_s_per_core",
                          "scenarios_per_cpu_s",
                          "io_fraction",
                          "hdf5_fraction",
                          "parallel_efficiency",
                          "cpu_efficiency",
                          "busy_imbalance",
                          "materialize_us",
                          "plan_us",
                          "evaluate_us",
                          "journal_us",
                          "hdf5_us",
                          "peak_rss_MiB",
                          "journal_thread_cpu_us",
                          "written_MB_per_s",
                          "disk_MB_per_s",
                          "disk_share" } };
    int _threads;
    double _disk_MBps;
};

const double kNaN = std::numeric_limits<double>::quiet_NaN();

//! The throughput case of one detail level: the fastest of --repeats runs on 1 rank (`solo`)
//! and on all ranks, per variant (0: with the per-rank case cache, as `shardsweep
//! run`; 1: without, only with --uncached-baseline), added to `table`.
void runThroughputCase( const CommandContext& ctx, const BenchSetup& setup, MPI_Comm solo,
                        const BenchOptions& o, SweepDetail detail, BenchTable& table )
{
    const int variants = o.uncached_baseline ? 2 : 1;
    Measurement best1[2], bestN[2];
    // Alternate 1 rank and all ranks, cached and uncached, so that a change of the machine's
    // load hits every case.
    for ( int rep = 0; rep < o.repeats; ++rep )
        for ( int v = 0; v < variants; ++v )
        {
            const bool cached = v == 0;
            Measurement m1;
            if ( solo != MPI_COMM_NULL )
                m1 = runOnce( solo, setup, setup.base + "-1.h5", o.scenarios, detail, cached );
            // Ranks outside the 1-rank case wait without taking CPU from it.
            if ( ctx.size > 1 )
                mpi::barrierYielding( ctx.comm, 2000 );
            m1 = broadcastMeasurement( m1, ctx.comm );
            if ( m1.rate > best1[v].rate )
                best1[v] = m1;
            if ( ctx.size > 1 )
            {
                const Measurement mN =
                    runOnce( ctx.comm, setup, setup.base + "-n.h5", o.scenarios, detail, cached );
                if ( mN.rate > bestN[v].rate )
                    bestN[v] = mN;
            }
        }
    for ( int v = 0; v < variants; ++v )
    {
        const std::string name =
            std::string( "throughput_" ) + nameOf( detail ) + ( v == 0 ? "" : "_uncached" );
        table.add( name, best1[v], kNaN, kNaN );
        if ( ctx.size > 1 )
            table.add( name, bestN[v],
                       ( bestN[v].rate / ctx.size ) / std::max( best1[v].rate, 1e-12 ),
                       ( double( bestN[v].scenarios ) / bestN[v].cpu_s ) /
                           ( double( best1[v].scenarios ) / std::max( best1[v].cpu_s, 1e-12 ) ) );
    }
}

//! Rank 0 prints the table, after a header line in table format.
void printReport( const CommandContext& ctx, const BenchOptions& o, const ScenarioSpace& space,
                  int threads, const BenchTable& table )
{
    if ( !ctx.isRoot() )
        return;
    if ( o.format == OutputFormat::table )
    {
        std::ifstream load( "/proc/loadavg" );
        std::string load_avg;
        std::getline( load, load_avg );
        ctx.print() << fmt::format( "sweep engine on {} ({} scenarios in the space), {} "
                                    "rank(s) x {} Kokkos host thread(s), kernel in {}; load "
                                    "average at the end: {}\n",
                                    o.sweep_file, space.size(), ctx.size, threads,
                                    executionSpaceName( o.backend ), load_avg );
    }
    table.print( ctx.print(), o.format );
}

} // namespace

int benchSweep( const CommandContext& ctx, const Arguments& args )
{
    BenchOptions o;
    if ( !parseOptions( ctx, args, o ) )
        return 0;

    const ScenarioSpace space = loadScenarioSpace( o.sweep_file );
    const SweepProblem problem = sweepProblemFromSpace( space );
    checkScenarioCounts( o, space );
    // The engine's host threads (its tiles, planning and materialising run there on any backend).
    const int threads = Kokkos::DefaultHostExecutionSpace().concurrency();
    // One name per launch (rank 0's pid), shared by all ranks.
    const BenchSetup setup{
        problem,
        mpi::broadcast( fmt::format( "{}/shardsweep-bench-sweep-{}", o.dir, ::getpid() ), 0,
                        ctx.comm ),
        o.batch_size, o.evaluate_tile, o.backend };

    MPI_Comm solo = MPI_COMM_NULL;
    MPI_Comm_split( ctx.comm, ctx.rank == 0 ? 0 : MPI_UNDEFINED, 0, &solo );

    // The disk's own speed, rank 0 alone, before any case: the baseline of written_MB_per_s.
    double disk_MBps = ctx.isRoot() ? diskWriteMBps( o.dir ) : 0.0;
    disk_MBps = mpi::allreduceMax( disk_MBps, ctx.comm );
    BenchTable table( threads, disk_MBps );

    // Memory cases first: freed memory that the allocator keeps from the bigger throughput runs
    // would otherwise set the floor of their peak.
    for ( std::uint64_t n : o.rss_counts )
        table.add( "rss",
                   runOnce( ctx.comm, setup, setup.base + "-rss.h5", n, SweepDetail::scenarios ),
                   kNaN, kNaN );
    for ( SweepDetail detail : o.details )
        runThroughputCase( ctx, setup, solo, o, detail, table );
    if ( solo != MPI_COMM_NULL )
        MPI_Comm_free( &solo );

    printReport( ctx, o, space, threads, table );
    return 0;
}

} // namespace shardsweep
