// The sweep driver: dynamic batches over ranks, per-batch journals, signals, progress, finalize.
#include "batch_computer.hpp"
#include "output_lock.hpp"
#include "pending_ids.hpp"
#include "sweep_internal.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
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
    kNumSlots = 5,
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

//! Where a run starts (rank 0 decides from the output and its journals, every rank follows).
struct StartDecision
{
    bool complete = false;             //!< the file is finished, same sweep: nothing to do
    int session = 0;                   //!< number of this run's journal files
    std::vector<std::string> journals; //!< journals of earlier runs to resume from
};

//! Collective. Throws UsageError when the output refuses this run (other sweep, damaged file).
StartDecision decideStart( MPI_Comm comm, const detail::ExpectedIdentity& identity,
                           const SweepOptions& options )
{
    detail::StartState state;
    std::string verdict;
    if ( mpi::rank( comm ) == 0 )
    {
        try
        {
            state = detail::prepareOutput( identity, options.output, options.fresh );
            verdict = state.error.empty() ? "ok" : "refuse:" + state.error;
        }
        catch ( const std::exception& e )
        {
            verdict = std::string( "refuse:" ) + e.what();
        }
        if ( state.kind == detail::StartState::Kind::complete && verdict == "ok" )
            verdict = "complete";
    }
    verdict = mpi::broadcast( verdict, 0, comm );
    if ( verdict.rfind( "refuse:", 0 ) == 0 )
        throw UsageError( verdict.substr( 7 ) );
    StartDecision decision;
    if ( verdict == "complete" )
    {
        decision.complete = true;
        return decision;
    }
    std::string journal_list;
    for ( const auto& j : state.journals )
        journal_list += j + "\n";
    journal_list = mpi::broadcast( journal_list, 0, comm );
    decision.session = int( mpi::allreduceMax( std::int64_t( state.session ), comm ) );
    for ( std::size_t p = 0, q; ( q = journal_list.find( '\n', p ) ) != std::string::npos;
          p = q + 1 )
        decision.journals.push_back( journal_list.substr( p, q - p ) );
    return decision;
}

//! What earlier runs journaled: this rank's records and every rank's done ids.
struct JournaledWork
{
    std::vector<detail::RecordRef> records; //!< of the journals this rank scanned
    std::vector<std::uint8_t> done_bits;    //!< bit per id, all ranks' (empty: none done)
};

//! Collective: journal k is scanned by rank k mod size, the done-masks are OR-ed. Throws
//! UsageError when a journal is damaged or holds ids beyond the sweep.
JournaledWork scanJournals( MPI_Comm comm, const std::vector<std::string>& journals,
                            std::uint64_t n, const std::string& output )
{
    JournaledWork work;
    if ( journals.empty() )
        return work;
    const int rank = mpi::rank( comm ), size = mpi::size( comm );
    std::string scan_error;
    work.done_bits.assign( ( n + 7 ) / 8, 0 );
    for ( std::size_t k = rank; k < journals.size(); k += std::size_t( size ) )
    {
        try
        {
            auto scan = scanJournal( journals[k] );
            JournalBatch batch; // one buffer for every record of the journal
            for ( const auto& info : scan.records )
            {
                if ( info.num_scenarios > 0 && info.last_id >= n )
                    throw std::runtime_error( "journal " + journals[k] +
                                              " holds scenario ids beyond this sweep" );
                work.records.push_back( { journals[k], info, std::uint32_t( k ) } );
                // Ids of a record: read them (records are small next to the results).
                readJournalRecord( journals[k], info, batch );
                for ( const auto& row : batch.scenarios )
                    work.done_bits[row.id >> 3] |= std::uint8_t( 1u << ( row.id & 7 ) );
            }
        }
        catch ( const std::exception& e )
        {
            scan_error = e.what();
        }
    }
    const bool bad = mpi::allreduceMax( std::int64_t( scan_error.empty() ? 0 : 1 ), comm );
    if ( bad )
    {
        // Every rank throws the same kind of error; rank 0's message names a file when it saw
        // one, otherwise a generic one.
        throw UsageError( scan_error.empty()
                              ? "refusing to resume " + output +
                                    ": a journal is damaged (see the other ranks' messages)"
                              : "refusing to resume " + output + ": " + scan_error );
    }
    mpi::allreduceOr( work.done_bits.data(), work.done_bits.size(), comm );
    return work;
}

//! Collective: every rank takes the output's lock for the run, rank 0 exclusively first, which
//! it can only once no process of another run on this output is alive (an earlier run's ranks
//! go on as orphans when their mpirun is killed). Rank 0 waits up to --lock-wait seconds, the
//! others without spinning. Throws UsageError on every rank when the lock stays held.
detail::OutputLock lockOutput( MPI_Comm comm, const SweepOptions& options, std::ostream& out,
                               bool talk )
{
    const std::string dir = detail::journalDir( options.output );
    const std::string file = detail::OutputLock::path( dir );
    detail::OutputLock lock;
    std::string verdict = "ok";
    if ( mpi::rank( comm ) == 0 )
    {
        try
        {
            lock = detail::OutputLock::exclusiveThenShared(
                dir, options.lock_wait_s,
                [&]( double waited )
                {
                    if ( talk )
                        out << fmt::format(
                                   "{} is in use by another run, or by ranks of an earlier run "
                                   "that go on after their mpirun was killed: waiting for them to "
                                   "end ({:.0f} of at most {:.0f} s; `fuser -v {}` lists them)\n",
                                   options.output, waited, options.lock_wait_s, file )
                            << std::flush;
                } );
            if ( !lock.warning().empty() )
                std::cerr << "shardsweep: warning: " << lock.warning() << std::endl;
        }
        catch ( const detail::OutputLock::Busy& e )
        {
            verdict = fmt::format( "refusing to run on {}: another run still works on it: its "
                                   "lock {} is {} ({} lists its processes); wait for it to end or "
                                   "stop it, then rerun (--lock-wait S waits longer)",
                                   options.output, file, e.what(), "`fuser -v " + file + "`" );
        }
        catch ( const std::exception& e )
        {
            verdict = fmt::format( "cannot run on {}: {}", options.output, e.what() );
        }
    }
    mpi::barrierYielding( comm ); // the other ranks wait here while rank 0 waits for the lock
    verdict = mpi::broadcast( verdict, 0, comm );
    if ( verdict != "ok" )
        throw UsageError( verdict );
    if ( mpi::rank( comm ) != 0 )
        lock = detail::OutputLock::shared( dir, options.lock_wait_s );
    return lock;
}

//! "[ 42.0%] 420/1000 scenarios | ... | no plan 3 | failed 0".
std::string progressLine( std::uint64_t total_done, std::uint64_t total, std::uint64_t done_now,
                          double elapsed, int ranks, std::int64_t no_plan, std::int64_t failed )
{
    const double rate = double( done_now ) / std::max( elapsed, 1e-9 );
    // No rate before this run's first journaled batch (a resumed run starts with many done).
    const std::string eta =
        done_now > 0 ? clock( double( total - total_done ) / rate ) : std::string( "-" );
    return fmt::format(
        "[{:5.1f}%] {}/{} scenarios | {:.1f} scen/s ({:.1f}/rank) | elapsed {} | ETA {} | no plan "
        "{} | failed {}\n",
        100.0 * double( total_done ) / double( std::max<std::uint64_t>( total, 1 ) ), total_done,
        total, rate, rate / ranks, clock( elapsed ), eta, no_plan, failed );
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
    const detail::ExpectedIdentity identity{
        problem.config_hash, n, options.detail,
        fmt::format( "{}/{}", options.slice_index, options.slice_count ) };
    // Held until the end: while any rank of this run lives, no other run works on the output.
    const detail::OutputLock lock = lockOutput( comm, options, out, talk );
    const StartDecision start = decideStart( comm, identity, options );
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
    JournaledWork journaled = scanJournals( comm, start.journals, n, options.output );
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
    const std::uint64_t batch_size = std::max<std::uint64_t>( options.batch_size, 1 );
    const std::uint64_t num_batches = ( pending.count() + batch_size - 1 ) / batch_size;
    const std::string my_journal =
        fmt::format( "{}/s{}-r{}.jnl", detail::journalDir( options.output ), start.session, rank );
    {
        mpi::SharedCounters counters( comm, kNumSlots );
        detail::BatchComputer computer( problem, plan_fn, evaluate_fn, options.detail,
                                        options.evaluate_tile, rank );
        // Write-behind: batch k is appended (and fsynced) in the background while batch k + 1 is
        // computed. A batch is counted (kDone, progress, the report) only once its append is
        // acknowledged, so a stop or a crash never counts rows that are not on disk.
        AsyncJournalWriter journal( my_journal );
        struct Unacknowledged
        {
            std::uint64_t computed = 0;
            std::int64_t failed = 0, no_plan = 0;
        } in_flight;
        // Waits for the append in flight and counts its batch; the wait is journal time (what
        // the engine loses to the journal), the background thread's own time is reported apart.
        const auto acknowledge = [&]
        {
            const double t0 = mpi::wtime();
            const bool had = journal.wait();
            const double t1 = mpi::wtime();
            report.local.journal += t1 - t0;
            if ( !had )
                return;
            report.local_computed += in_flight.computed;
            counters.fetchAdd( kDone, std::int64_t( in_flight.computed ) );
            if ( in_flight.failed )
                counters.fetchAdd( kFailed, in_flight.failed );
            if ( in_flight.no_plan )
                counters.fetchAdd( kNoPlan, in_flight.no_plan );
            report.local.dispatch += mpi::wtime() - t1;
        };
        JournalBatch batch;
        std::vector<std::uint64_t> ids;
        double last_print = mpi::wtime();
        // This rank's failure (a journal that cannot be written, a batch that threw): it stops
        // every rank as a signal does, and the ranks agree on it after the loop.
        std::string failure;
        for ( ;; )
        {
            // Claim (or stop: a signal on any rank stops every rank after its batch; so does
            // the death of the launcher, which leaves the ranks running unwatched).
            double t = mpi::wtime();
            if ( pendingStopSignal() || launcherGone() )
                counters.max( kStop, 1 );
            if ( counters.read( kStop ) )
                break;
            const std::uint64_t k = std::uint64_t( counters.fetchAdd( kNextBatch, 1 ) );
            report.local.dispatch += mpi::wtime() - t;
            if ( k >= num_batches )
                break;
            pending.ids( k * batch_size, std::min( pending.count(), ( k + 1 ) * batch_size ), ids );

            try
            {
                computer.compute( ids, batch, report.local );
                // The previous batch is safe once its append returns: count it, journal this one.
                acknowledge();
                t = mpi::wtime();
                journal.submit( batch );
                report.local.journal += mpi::wtime() - t;
                in_flight = { ids.size(), computer.failed(), computer.noPlan() };
            }
            catch ( const std::exception& e )
            {
                failure = e.what();
                counters.max( kStop, 1 );
                break;
            }

            if ( talk && options.progress_interval_s > 0 &&
                 mpi::wtime() - last_print >= options.progress_interval_s )
            {
                last_print = mpi::wtime();
                const std::uint64_t done_now = std::uint64_t( counters.read( kDone ) );
                out << progressLine( report.done_before + done_now, slice_size, done_now,
                                     last_print - t_start, size, counters.read( kNoPlan ),
                                     counters.read( kFailed ) )
                    << std::flush;
            }
        }
        try
        {
            acknowledge(); // the last batch (or the one in flight at a stop)
        }
        catch ( const std::exception& e )
        {
            if ( failure.empty() )
                failure = e.what();
        }
        report.local.journal_thread_cpu = journal.backgroundCpuSeconds();
        // A rank out of batches waits here for the last ones of the others: without spinning,
        // so that their journal threads keep a core on a node with more threads than cores.
        mpi::barrierYielding( comm );
        mpi::throwIfAnyFailed( failure.empty() ? failure
                                               : failure + " (the journals are kept: rerun the "
                                                           "same command to resume)",
                               comm );
        report.computed = std::uint64_t( counters.read( kDone ) );
        report.failures = std::uint64_t( counters.read( kFailed ) );
        report.no_plan = std::uint64_t( counters.read( kNoPlan ) );
        if ( counters.read( kStop ) != 0 )
            clearStopSignal(); // acted on: a later run in this process starts clean
        mpi::barrier( comm );
        // This run's own records join the ones found at start (as the writer appended them: no
        // need to read the journal again).
        for ( const auto& info : journal.records() )
            journaled.records.push_back(
                { my_journal, info,
                  std::uint32_t( start.journals.size() ) + std::uint32_t( rank ) } );
    }
    report.busy_s = mpi::allgather( report.local.busy(), comm );
    report.computed_per_rank = mpi::allgather( double( report.local_computed ), comm );

    // ---- 4. stopped: everything is journaled, a rerun resumes ---------------------------------
    if ( report.done_before + report.computed < slice_size )
    {
        report.exit_code = kExitResumable;
        report.wall_s = mpi::wtime() - t_start;
        report.io_s_max = mpi::allreduceMax( report.local.journal, comm );
        if ( talk )
            out << fmt::format( "stopped by {}: {}/{} scenarios done and journaled in {}; rerun "
                                "the same command to resume (exit status {})\n",
                                launcherGone() ? "the death of the MPI launcher" : "a signal",
                                report.done_before + report.computed, slice_size,
                                detail::journalDir( options.output ), kExitResumable )
                << std::flush;
        return report;
    }

    // ---- 5. finalise: the HDF5 file from the journals, then the journals go -------------------
    const detail::ResultsFileReport written =
        detail::writeResultsFile( comm, problem, options, n, std::move( journaled.records ) );
    report.local.hdf5 = written.seconds;
    report.duplicates = written.duplicates;
    if ( talk && written.duplicates > 0 )
        out << fmt::format( "note: {} scenarios were journaled twice (two runs on this output at "
                            "once, where its lock could not be taken); the copy of the first "
                            "journal was kept (copies of a scenario hold the same rows)\n",
                            written.duplicates )
            << std::flush;
    mpi::barrier( comm );
    if ( rank == 0 )
    {
        if ( options.compress )
        {
            const double t = mpi::wtime();
            detail::compressResultsFile( options.output );
            report.local.hdf5 += mpi::wtime() - t;
        }
        detail::removeJournals( options.output );
    }
    mpi::barrier( comm );
    report.wall_s = mpi::wtime() - t_start;
    report.io_s_max = mpi::allreduceMax( report.local.journal + report.local.hdf5, comm );
    return report;
}

} // namespace shardsweep
