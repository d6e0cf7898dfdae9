// The sweep driver: dynamic batches over ranks, per-batch journals, signals, progress, finalize.
#include "batch_computer.hpp"
#include "cost_weighted_eta.hpp"
#include "output_lock.hpp"
#include "pending_ids.hpp"
#include "run_start.hpp"
#include "sweep_internal.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <optional>
#include <ostream>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <shardsweep/parallel/stop_signal.hpp>
#include <shardsweep/sweep/journal_async.hpp>

namespace shardsweep
{

namespace
{

enum Slot
{
    kNextBatch = 0,
    kDone = 1,
    kFailed = 2, //!< status error: materialising or planning threw
    kStop = 3,
    kNoPlan = 4, //!< status no_plan: the planner found no plan (not an error)
    // For the progress lines' ETA (only when they are printed): the work done so far.
    kEvaluateNanos = 5, //!< evaluation nanoseconds of the scenarios done
    kClassCount = 6,    //!< + cost class: scenarios done
    kClassNanos = kClassCount + detail::kNumCostClasses, //!< + class: their materialise + plan ns
    kNumSlots = kClassNanos + detail::kNumCostClasses,
};

std::string clock( double seconds )
{
    if ( !std::isfinite( seconds ) || seconds < 0 )
        return "--:--:--";
    const auto s = static_cast<long long>( seconds + 0.5 );
    return fmt::format( "{:02d}:{:02d}:{:02d}", s / 3600, s / 60 % 60, s % 60 );
}

} // namespace

SliceRange sliceRange( std::uint64_t n, std::uint64_t index, std::uint64_t count )
{
    // n * index / count without overflow for any n below 2^64 and count below 2^32.
    const auto at = [&]( std::uint64_t k ) { return n / count * k + n % count * k / count; };
    return { at( index ), at( index + 1 ) };
}

void parseSlice( const std::string& text, const std::string& option, std::uint64_t& index,
                 std::uint64_t& count )
{
    const auto slash = text.find( '/' );
    const auto number = [&]( const std::string& part, std::uint64_t& value )
    {
        if ( part.empty() || part.size() > 9 ||
             part.find_first_not_of( "0123456789" ) != std::string::npos )
            return false;
        value = std::stoull( part );
        return true;
    };
    if ( slash == std::string::npos || !number( text.substr( 0, slash ), index ) ||
         !number( text.substr( slash + 1 ), count ) || count < 1 || index >= count )
        throw UsageError( fmt::format( "{}: expected I/N with 0 <= I < N (part I of N, e.g. "
                                       "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT), found '{}'",
                                       option, text ) );
}

std::string journalDirectory( const std::string& output )
{
    return detail::journalDir( output );
}

Plan roundRobinTableWisePlan( const Workload& workload, int num_gpus )
{
    Plan plan;
    const int n = static_cast<int>( workload.tables.size() );
    plan.tables.assign( std::size_t( n ), TablePlan{} );
    for ( int t = 0; t < n; ++t )
    {
        ShardSpec s;
        s.table = t;
        s.gpu = num_gpus > 0 ? t % num_gpus : 0;
        s.row_offset = 0;
        s.num_rows = workload.tables[t].rows;
        s.col_offset = 0;
        s.num_cols = workload.tables[t].dim;
        plan.shards.push_back( s );
    }
    return plan;
}

namespace
{

//! The ETA of a progress line: "-" before anything of this run is done (a resumed run starts
//! with many done and no rate), ">HH:MM:SS" while a planner ahead has not been timed yet.
std::string etaText( const detail::CostWeightedEta::Estimate& eta )
{
    if ( !eta.known )
        return "-";
    return ( eta.lower_bound ? ">" : "" ) + clock( eta.seconds );
}

//! "[ 42.0%] 420/1000 scenarios | ... | ETA 00:01:05 | no plan 3 | failed 0".
std::string progressLine( std::uint64_t total_done, std::uint64_t total, std::uint64_t done_now,
                          double elapsed, int ranks, const std::string& eta, std::int64_t no_plan,
                          std::int64_t failed )
{
    const double rate = double( done_now ) / std::max( elapsed, 1e-9 );
    return fmt::format(
        "[{:5.1f}%] {}/{} scenarios | {:.1f} scen/s ({:.1f}/rank) | elapsed {} | ETA {} | no plan "
        "{} | failed {}\n",
        100.0 * double( total_done ) / double( std::max<std::uint64_t>( total, 1 ) ), total_done,
        total, rate, rate / ranks, clock( elapsed ), eta, no_plan, failed );
}

//! What the steps of one run share (this rank's view of it).
struct RunContext
{
    MPI_Comm comm;
    const SweepOptions& options;
    std::ostream& out;
    double t_start;
    int rank, size;
    bool talk;                //!< this rank prints (rank 0, not quiet)
    std::uint64_t slice_size; //!< scenarios of this run's slice
};

//! Step 3 on this rank: claims batches, computes them, journals them. Write-behind: batch k is
//! appended (and fsynced) in the background while batch k + 1 is computed. A batch is counted
//! (kDone, progress, the report) only once its append is acknowledged, so a stop or a crash never
//! counts rows that are not on disk.
class BatchLoop
{
  public:
    BatchLoop( const RunContext& run, const SweepProblem& problem, const SweepPlanFunction& plan_fn,
               const SweepEvaluateFunction& evaluate_fn, const std::string& journal_file,
               SweepReport& report )
        : _run( run ), _problem( problem ), _report( report ),
          _eta_wanted( !run.options.quiet && run.options.progress_interval_s > 0 ),
          _counters( run.comm, kNumSlots ),
          _computer( problem, plan_fn, evaluate_fn, run.options.detail, run.options.evaluate_tile,
                     run.options.backend, run.rank ),
          _journal( journal_file )
    {
    }

    //! Claims and computes batches of `pending` until none is left or a rank stops the run.
    //! Returns this rank's failure (a journal that cannot be written, a batch that threw; empty:
    //! none): it stops every rank as a signal does, and the ranks agree on it in finish().
    std::string computeBatches( const detail::PendingIds& pending )
    {
        const std::uint64_t batch_size = std::max<std::uint64_t>( _run.options.batch_size, 1 );
        const std::uint64_t num_batches = ( pending.count() + batch_size - 1 ) / batch_size;
        JournalBatch batch;
        std::vector<std::uint64_t> ids;
        std::optional<detail::CostWeightedEta> eta;
        if ( _run.talk && _eta_wanted )
            eta = sampleCostClasses( pending );
        const double t_loop = mpi::wtime();
        double last_print = t_loop;
        std::string failure;
        for ( ;; )
        {
            // Claim (or stop: a signal on any rank stops every rank after its batch; so does
            // the death of the launcher, which leaves the ranks running unwatched).
            double t = mpi::wtime();
            if ( pendingStopSignal() || launcherGone() )
                _counters.max( kStop, 1 );
            if ( _counters.read( kStop ) )
                break;
            const std::uint64_t k = std::uint64_t( _counters.fetchAdd( kNextBatch, 1 ) );
            _report.local.dispatch += mpi::wtime() - t;
            if ( k >= num_batches )
                break;
            pending.ids( k * batch_size, std::min( pending.count(), ( k + 1 ) * batch_size ), ids );

            try
            {
                _computer.compute( ids, batch, _report.local );
                // The previous batch is safe once its append returns: count it, journal this one.
                acknowledge();
                t = mpi::wtime();
                _journal.submit( batch );
                _report.local.journal += mpi::wtime() - t;
                _in_flight = { ids.size(), _computer.failed(), _computer.noPlan(),
                               _computer.work() };
            }
            catch ( const std::exception& e )
            {
                failure = e.what();
                _counters.max( kStop, 1 );
                break;
            }

            if ( _run.talk && _run.options.progress_interval_s > 0 &&
                 mpi::wtime() - last_print >= _run.options.progress_interval_s )
            {
                last_print = mpi::wtime();
                const std::uint64_t done_now = std::uint64_t( _counters.read( kDone ) );
                const std::string eta_text =
                    etaText( eta->estimate( workDone(), last_print - t_loop ) );
                _run.out << progressLine( _report.done_before + done_now, _run.slice_size, done_now,
                                          last_print - _run.t_start, _run.size, eta_text,
                                          _counters.read( kNoPlan ), _counters.read( kFailed ) )
                         << std::flush;
            }
        }
        return failure;
    }

    //! Collective, after computeBatches: counts the last batch, throws on every rank if any rank
    //! failed, and fills the report's totals.
    void finish( std::string failure )
    {
        try
        {
            acknowledge(); // the last batch (or the one in flight at a stop)
        }
        catch ( const std::exception& e )
        {
            if ( failure.empty() )
                failure = e.what();
        }
        _report.local.journal_thread_cpu = _journal.backgroundCpuSeconds();
        // A rank out of batches waits here for the last ones of the others: without spinning,
        // so that their journal threads keep a core on a node with more threads than cores.
        mpi::barrierYielding( _run.comm );
        mpi::throwIfAnyFailed( failure.empty() ? failure
                                               : failure + " (the journals are kept: rerun the "
                                                           "same command to resume)",
                               _run.comm );
        _report.computed = std::uint64_t( _counters.read( kDone ) );
        _report.failures = std::uint64_t( _counters.read( kFailed ) );
        _report.no_plan = std::uint64_t( _counters.read( kNoPlan ) );
        if ( _counters.read( kStop ) != 0 )
        {
            _report.stop_signal = pendingStopSignal();
            clearStopSignal(); // acted on: a later run in this process starts clean
        }
        mpi::barrier( _run.comm );
    }

    //! The records this run appended (acknowledged ones), in file order.
    const std::vector<JournalRecordInfo>& records() const { return _journal.records(); }

  private:
    //! The cost classes of up to 1024 pending scenarios, evenly spaced (rank 0, once:
    //! materialising a scenario costs far less than planning it).
    detail::CostWeightedEta sampleCostClasses( const detail::PendingIds& pending ) const
    {
        const std::uint64_t n = pending.count(), samples = std::min<std::uint64_t>( n, 1024 );
        std::vector<int> classes( samples );
        std::vector<std::uint64_t> id;
        for ( std::uint64_t j = 0; j < samples; ++j )
        {
            const std::uint64_t position = j * n / samples;
            pending.ids( position, position + 1, id );
            ScenarioSpec spec;
            try
            {
                spec = _problem.materialize( id.at( 0 ) );
            }
            catch ( const std::exception& )
            {
                // Counted as the default spec's class, as the batch computer counts it.
            }
            classes[j] = detail::costClass( spec.planner );
        }
        return detail::CostWeightedEta( std::move( classes ), n );
    }

    //! The work every rank has done so far in this run (the counters the batches add to).
    detail::ClassWork workDone()
    {
        detail::ClassWork work;
        for ( int c = 0; c < detail::kNumCostClasses; ++c )
        {
            work.count[c] = _counters.read( kClassCount + c );
            work.seconds[c] = 1e-9 * double( _counters.read( kClassNanos + c ) );
        }
        work.evaluate_seconds = 1e-9 * double( _counters.read( kEvaluateNanos ) );
        return work;
    }

    //! Waits for the append in flight and counts its batch; the wait is journal time (what
    //! the engine loses to the journal), the background thread's own time is reported apart.
    void acknowledge()
    {
        const double t0 = mpi::wtime();
        const bool had = _journal.wait();
        const double t1 = mpi::wtime();
        _report.local.journal += t1 - t0;
        if ( !had )
            return;
        _report.local_computed += _in_flight.computed;
        _counters.fetchAdd( kDone, std::int64_t( _in_flight.computed ) );
        if ( _in_flight.failed )
            _counters.fetchAdd( kFailed, _in_flight.failed );
        if ( _in_flight.no_plan )
            _counters.fetchAdd( kNoPlan, _in_flight.no_plan );
        if ( _eta_wanted )
        {
            const detail::ClassWork& work = _in_flight.work;
            for ( int c = 0; c < detail::kNumCostClasses; ++c )
                if ( work.count[c] > 0 )
                {
                    _counters.fetchAdd( kClassCount + c, work.count[c] );
                    _counters.fetchAdd( kClassNanos + c, std::llround( 1e9 * work.seconds[c] ) );
                }
            _counters.fetchAdd( kEvaluateNanos, std::llround( 1e9 * work.evaluate_seconds ) );
        }
        _report.local.dispatch += mpi::wtime() - t1;
    }

    const RunContext& _run;
    const SweepProblem& _problem;
    SweepReport& _report;
    const bool _eta_wanted; //!< rank 0 prints progress lines with an ETA
    mpi::SharedCounters _counters;
    detail::BatchComputer _computer;
    AsyncJournalWriter _journal;
    //! The batch whose append is in flight (counted once acknowledged).
    struct Unacknowledged
    {
        std::uint64_t computed = 0;
        std::int64_t failed = 0, no_plan = 0;
        detail::ClassWork work;
    } _in_flight;
};

//! Step 4, collective: the report and message of a run stopped before its slice was done.
void reportStopped( const RunContext& run, SweepReport& report )
{
    report.exit_code = kExitResumable;
    report.wall_s = mpi::wtime() - run.t_start;
    report.io_s_max = mpi::allreduceMax( report.local.journal, run.comm );
    if ( !run.talk )
        return;
    // Rank 0 names its own signal ("a signal" when another rank got it). Open MPI's mpirun
    // answers a SIGTERM/SIGINT sent to it by terminating the ranks and exiting 1, whatever the
    // ranks exit with: say so, so that the status a user sees matches this line.
    const int signal = report.stop_signal;
    const bool mpirun_exits_1 = ( signal == SIGTERM || signal == SIGINT ) && underOpenMpiLauncher();
    run.out << fmt::format( "stopped by {}: {}/{} scenarios done and journaled in {}; rerun the "
                            "same command to resume (exit status {}{})\n",
                            launcherGone() ? "the death of the MPI launcher"
                                           : stopSignalName( signal ),
                            report.done_before + report.computed, run.slice_size,
                            detail::journalDir( run.options.output ), kExitResumable,
                            mpirun_exits_1 ? "; an Open MPI mpirun that got the signal itself "
                                             "exits 1: jobs/mpirun_signals.sh avoids that"
                                           : "" )
            << std::flush;
}

//! Step 5, collective: the HDF5 file from the journals' `records`, then the journals go.
void finaliseResults( const RunContext& run, const SweepProblem& problem, std::uint64_t n,
                      std::vector<detail::RecordRef> records, SweepReport& report )
{
    const detail::ResultsFileReport written =
        detail::writeResultsFile( run.comm, problem, run.options, n, std::move( records ) );
    report.local.hdf5 = written.seconds;
    report.duplicates = written.duplicates;
    if ( run.talk && written.duplicates > 0 )
        run.out << fmt::format(
                       "note: {} scenarios were journaled twice (two runs on this output at "
                       "once, where its lock could not be taken); the copy of the first "
                       "journal was kept (copies of a scenario hold the same rows)\n",
                       written.duplicates )
                << std::flush;
    mpi::barrier( run.comm );
    if ( run.rank == 0 )
    {
        if ( run.options.compress )
        {
            const double t = mpi::wtime();
            detail::compressResultsFile( run.options.output );
            report.local.hdf5 += mpi::wtime() - t;
        }
        detail::removeJournals( run.options.output );
    }
    mpi::barrier( run.comm );
    report.wall_s = mpi::wtime() - run.t_start;
    report.io_s_max = mpi::allreduceMax( report.local.journal + report.local.hdf5, run.comm );
}

} // namespace

SweepReport runSweepEngine( MPI_Comm comm, const SweepProblem& problem,
                            const SweepPlanFunction& plan_fn,
                            const SweepEvaluateFunction& evaluate_fn, const SweepOptions& options,
                            std::ostream& out )
{
    const double t_start = mpi::wtime();
    // Usually installed by main already (a signal received since then is kept, not dropped);
    // here for callers such as tests that run the engine directly.
    installStopSignalHandlers();
    const int rank = mpi::rank( comm ), size = mpi::size( comm );
    SweepReport report;
    const std::uint64_t n = options.max_scenarios > 0
                                ? std::min( options.max_scenarios, problem.num_scenarios )
                                : problem.num_scenarios;
    report.num_scenarios = n;
    const bool talk = rank == 0 && !options.quiet;

    // ---- 1. where do we start? ----------------------------------------------------------------
    const SliceRange slice = sliceRange( n, options.slice_index, options.slice_count );
    const std::uint64_t slice_size = slice.end - slice.first;
    const RunContext run{ comm, options, out, t_start, rank, size, talk, slice_size };
    const detail::ExpectedIdentity identity{
        problem.config_hash, n, options.detail,
        fmt::format( "{}/{}", options.slice_index, options.slice_count ) };
    // Held until the end: while any rank of this run lives, no other run works on the output.
    const std::optional<detail::OutputLock> lock = detail::lockOutput( comm, options, out, talk );
    if ( !lock )
    {
        report.exit_code = kExitResumable;
        report.wall_s = mpi::wtime() - t_start;
        if ( talk )
            out << fmt::format( "stopped by the death of the MPI launcher before this run took "
                                "the lock of {}: nothing done (exit status {})\n",
                                options.output, kExitResumable )
                << std::flush;
        return report;
    }
    const detail::StartDecision start = detail::decideStart( comm, identity, options );
    if ( start.complete )
    {
        report.already_complete = true;
        report.wall_s = mpi::wtime() - t_start;
        if ( talk )
            out << fmt::format(
                       "{} is already complete ({} scenarios, same sweep): nothing to do\n",
                       options.output, slice_size )
                << std::flush;
        return report;
    }

    // ---- 2. what is done already (the journals) -----------------------------------------------
    detail::JournaledWork journaled =
        detail::scanJournals( comm, start.journals, n, options.output );
    const detail::PendingIds pending( journaled.done_bits, slice.first, slice.end );
    report.done_before = slice_size - pending.count();
    if ( talk && options.slice_count > 1 )
        out << fmt::format( "slice {}/{}: scenario ids [{}, {}) of {}\n", options.slice_index,
                            options.slice_count, slice.first, slice.end, n );
    if ( talk )
        out << fmt::format( "shardsweep run: {} scenarios, {} already done, {} to compute on {} "
                            "rank(s), batches of {}\n",
                            slice_size, report.done_before, pending.count(), size,
                            options.batch_size )
            << std::flush;

    // ---- 3. the dynamic loop: claim a batch, compute it, journal it, count it -----------------
    const std::string my_journal =
        fmt::format( "{}/s{}-r{}.jnl", detail::journalDir( options.output ), start.session, rank );
    {
        BatchLoop loop( run, problem, plan_fn, evaluate_fn, my_journal, report );
        loop.finish( loop.computeBatches( pending ) );
        // This run's own records join the ones found at start (as the writer appended them: no
        // need to read the journal again).
        for ( const auto& info : loop.records() )
            journaled.records.push_back(
                { my_journal, info,
                  std::uint32_t( start.journals.size() ) + std::uint32_t( rank ) } );
    }
    report.busy_s = mpi::allgather( report.local.busy(), comm );
    report.computed_per_rank = mpi::allgather( double( report.local_computed ), comm );

    // ---- 4. stopped: everything is journaled, a rerun resumes ---------------------------------
    if ( report.done_before + report.computed < slice_size )
    {
        reportStopped( run, report );
        return report;
    }

    // ---- 5. finalise: the HDF5 file from the journals, then the journals go -------------------
    finaliseResults( run, problem, n, std::move( journaled.records ), report );
    return report;
}

} // namespace shardsweep
