// shardsweep run SWEEP.yaml -o OUT.h5: the MPI sweep into one resumable HDF5 file.
#include "command_line.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <fmt/format.h>
#include <iostream>
#include <ostream>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/cli/cost_model_option.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/sweep_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/kernel/case_cache.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/kernel/learned_cost_model.hpp>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <shardsweep/plan/planner.hpp>
#include <shardsweep/sweep/sweep_engine.hpp>
#include <shardsweep/sweep/sweep_problem.hpp>

namespace shardsweep
{

namespace po = boost::program_options;

namespace
{

//! Per-phase engine time, min/max over ranks, and the throughput (collective).
ResultTable summaryTable( MPI_Comm comm, const SweepReport& r )
{
    ResultTable table( { "phase", "min_s", "max_s" } );
    const SweepTimes& t = r.local;
    const std::pair<const char*, double> phases[] = {
        { "materialize", t.materialize },
        { "plan", t.plan },
        { "evaluate", t.evaluate },
        { "journal", t.journal },
        { "dispatch", t.dispatch },
        { "hdf5", t.hdf5 },
        { "busy", t.busy() },
    };
    for ( const auto& [name, seconds] : phases )
        table.addRow( { std::string( name ), mpi::allreduceMin( seconds, comm ),
                        mpi::allreduceMax( seconds, comm ) } );
    return table;
}

//! The command line of 'shardsweep run'.
struct RunArguments
{
    std::string sweep_file;
    std::vector<std::string> calibrations;
    OutputFormat format = OutputFormat::table;
    SweepOptions options;
};

//! Parses and checks run's arguments into `a`; returns false after printing --help.
bool parseRunArguments( const CommandContext& ctx, const Arguments& args, RunArguments& a )
{
    std::string sweep_file, output, format_text = "table", detail_text = "all", slice_text;
    std::string backend_text = nameOf( defaultBackend() );
    SweepOptions& options = a.options;
    po::options_description desc( "Usage: shardsweep run SWEEP.yaml -o OUT.h5 [options]\n\n"
                                  "Evaluates every scenario of a sweep over all MPI ranks "
                                  "(mpirun -np N shardsweep run ...) into one HDF5 file\n"
                                  "(layout: docs/HDF5_LAYOUT.md). Each rank journals every batch "
                                  "to OUT.h5.journal/; rerunning the same\ncommand resumes and "
                                  "computes only what is missing. SIGTERM, SIGINT (Ctrl-C; a "
                                  "second one ends it at once) or\nSIGUSR1: finish the batch, "
                                  "exit 3. Under Open MPI's mpirun send SIGUSR1, or start it "
                                  "with\njobs/mpirun_signals.sh (jobs/README.md).\n\nOptions" );
    // clang-format off
    desc.add_options()
        ( "help,h", "this text" )
        ( "sweep", po::value<std::string>( &sweep_file ), "the sweep file (kind: sweep, docs/SWEEPS.md)" )
        ( "output,o", po::value<std::string>( &output ), "the results file (HDF5); required" )
        ( "batch-size", po::value<std::uint64_t>( &options.batch_size )->default_value( 0 ),
          "scenarios per batch: one dynamic work unit and one fsynced journal record; the rank's "
          "threads take it in tiles of 256 scenarios on CPU backends, 1024 on a GPU (each "
          "materialised, planned, packed and evaluated by one thread; on a GPU the threads take "
          "turns on the device, so give it batches of at least threads x 1024) (0: automatic, "
          "about 32 batches per rank, between 16 and 2048)" )
        ( "progress-interval", po::value<double>( &options.progress_interval_s )->default_value( 10.0 ),
          "seconds between progress lines on rank 0 (0: none); their ETA weighs the scenarios "
          "left by what their planner has cost so far ('>' while a planner ahead has not been "
          "timed yet; docs/SWEEPS.md)" )
        ( "fresh", po::bool_switch( &options.fresh ), "delete OUT.h5 and its journals and start over" )
        ( "lock-wait", po::value<double>( &options.lock_wait_s )->default_value( 60.0 ),
          "seconds to wait while another run holds OUT.h5's lock (OUT.h5.journal/lock, held by "
          "every rank of a run, also by ranks that go on after their mpirun was killed) before "
          "refusing with exit 2" )
        ( "compress", po::bool_switch( &options.compress ),
          "gzip-4 + shuffle the finished file (a serial rewrite on rank 0)" )
        ( "max-scenarios", po::value<std::uint64_t>( &options.max_scenarios )->default_value( 0 ),
          "sweep only scenario ids [0, N) (0: all)" )
        ( "slice", po::value<std::string>( &slice_text ),
          "I/N: compute only part I (0 <= I < N) of N equal contiguous parts of the scenario ids, "
          "e.g. --slice $SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT in a job array (one output "
          "per part; the postprocess reader combines the parts' files)" )
        ( "detail", po::value<std::string>( &detail_text )->default_value( "all" ),
          "row groups to store: scenarios | gpus (+ /gpus) | all (+ /shards, the cost-model training rows)" )
        ( "format,f", po::value<std::string>( &format_text )->default_value( "table" ),
          ( "summary format: " + enumChoices<OutputFormat>() ).c_str() )
        ( "backend", po::value<std::string>( &backend_text )->default_value( backend_text ),
          backendOptionHelp().c_str() )
        ( "calibration", po::value( &a.calibrations )->multitoken(),
          ( std::string( kCalibrationOptionHelp ) + " (every platform of the sweep with that GPU; "
            "part of the sweep's identity: a resume with other calibrations is refused)" ).c_str() );
    // clang-format on
    po::positional_options_description positional;
    positional.add( "sweep", 1 );
    po::variables_map vm;
    const CommandHelp help{
        "",
        "\nExit status: 0 done, 2 bad input or a refused resume (other sweep, schema or damaged "
        "file: use --fresh; or another run still\nholds the output's lock after --lock-wait s), "
        "3 stopped by a signal or by the death of\nthe MPI launcher, resumable (rerun the same "
        "command).\n" };
    if ( !parseCommandLine( ctx, "run", args, desc, vm, help, po::options_description(),
                            positional ) )
        return false;
    if ( sweep_file.empty() || output.empty() )
        throw UsageError( "run: needs SWEEP.yaml and -o OUT.h5 (see 'shardsweep run --help')" );
    a.format = parseOutputFormat( format_text );
    if ( !( options.lock_wait_s >= 0 ) )
        throw UsageError( fmt::format( "run: --lock-wait: expected seconds >= 0, found {}",
                                       options.lock_wait_s ) );
    options.detail = parseSweepDetail( detail_text );
    options.backend = parseBackend( "run", backend_text );
    if ( !slice_text.empty() )
        parseSlice( slice_text, "run: --slice", options.slice_index, options.slice_count );
    options.output = output;
    options.quiet = !ctx.isRoot();
    options.command_line = "shardsweep run";
    for ( const auto& arg : args )
        options.command_line += " " + arg;
    a.sweep_file = sweep_file;
    return true;
}

//! On rank 0: platforms that the sweep's learned cost or GEMM model was not trained on.
void warnUntrainedPlatforms( const CommandContext& ctx, const ScenarioSpace& space )
{
    if ( const auto& learned = space.inputs().learned_cost_model; learned && ctx.isRoot() )
        for ( const std::string& name : space.platformNames() )
            if ( learned->platformCode( name ) < 0 )
                std::cerr << "warning: " << learned->source << " was not trained on platform '"
                          << name << "': its learned scenarios are priced with the native model\n";
    if ( space.inputs().learned_gemm_model && ctx.isRoot() )
        for ( std::size_t p = 0; p < space.inputs().platforms.size(); ++p )
            if ( !space.inputs().platform_learned_gemm[p] )
                std::cerr << "note: gemm_model learned: GPU "
                          << space.inputs().platforms[p].gpu_name << " of platform '"
                          << space.inputs().platforms[p].name
                          << "' is not among the model's trained GPUs: analytic GEMMs there\n";
}

//! --batch-size 0: about 32 batches per rank of this run's share of the scenarios.
std::uint64_t automaticBatchSize( const SweepOptions& options, const ScenarioSpace& space,
                                  int ranks )
{
    // Enough batches per rank for dynamic balancing, few enough to keep the kernel busy.
    const std::uint64_t total = options.max_scenarios > 0
                                    ? std::min<std::uint64_t>( options.max_scenarios, space.size() )
                                    : space.size();
    return std::clamp<std::uint64_t>(
        total / options.slice_count / ( 32u * static_cast<std::uint64_t>( ranks ) ), 16, 2048 );
}

//! On rank 0: throughput, busy time per rank and the per-phase engine times.
void printRunSummary( const CommandContext& ctx, const SweepReport& report,
                      const ResultTable& phases, OutputFormat format )
{
    const double rate = double( report.computed ) / std::max( report.wall_s, 1e-9 );
    if ( ctx.isRoot() )
    {
        ctx.print() << fmt::format(
            "\n{} scenarios computed in {:.2f} s on {} rank(s): {:.1f} scenarios/s, {:.1f} per "
            "rank; {} without a plan, {} failed; I/O {:.1f}% of the run\n",
            report.computed, report.wall_s, ctx.size, rate, rate / ctx.size, report.no_plan,
            report.failures, 100.0 * report.io_s_max / std::max( report.wall_s, 1e-9 ) );
        std::string busy = "busy s per rank:";
        for ( std::size_t r = 0; r < report.busy_s.size(); ++r )
            busy += fmt::format( " r{} {:.3f} ({:.0f} scen)", r, report.busy_s[r],
                                 report.computed_per_rank[r] );
        ctx.print() << busy << "\n";
        phases.print( ctx.print(), format );
        ctx.print() << std::flush;
    }
}

} // namespace

int runSweep( const CommandContext& ctx, const Arguments& args )
{
    RunArguments a;
    if ( !parseRunArguments( ctx, args, a ) )
        return 0;
    SweepOptions& options = a.options;

    // Every input validates before the output is touched.
    SweepConfig config = readSweep( a.sweep_file );
    config.calibrations = a.calibrations;
    const ScenarioSpace space = loadScenarioSpace( config );
    const SweepProblem problem = sweepProblemFromSpace( space );
    warnUntrainedPlatforms( ctx, space );
    if ( options.batch_size == 0 )
        options.batch_size = automaticBatchSize( options, space, ctx.size );
    // One cache per rank for the whole run: the pool's table cases, the dense parts and the
    // transformer operator cases recur in every batch.
    CaseCache cases;
    const SweepEvaluateFunction evaluate = [&]( const std::vector<ScenarioInput>& in )
    { return evaluateScenarios( options.backend, in, &cases ); };
    SweepReport report =
        runSweepEngine( ctx.comm, problem, planSweepScenario, evaluate, options, ctx.print() );
    if ( report.already_complete )
        return 0;
    ResultTable phases = summaryTable( ctx.comm, report );
    printRunSummary( ctx, report, phases, a.format );
    return report.exit_code;
}

} // namespace shardsweep
