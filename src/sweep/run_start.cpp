// How a sweep run starts: the start decision, the scan of earlier runs' journals, the lock.
#include "run_start.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <shardsweep/parallel/stop_signal.hpp>
#include <shardsweep/sweep/journal_async.hpp>

namespace shardsweep::detail
{

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
std::optional<OutputLock> lockOutput( MPI_Comm comm, const SweepOptions& options, std::ostream& out,
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
                },
                launcherGone );
            if ( lock.abandoned() )
                verdict = "abandoned";
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
    if ( verdict == "abandoned" )
        return std::nullopt;
    if ( verdict != "ok" )
        throw UsageError( verdict );
    if ( mpi::rank( comm ) != 0 )
        lock = detail::OutputLock::shared( dir, options.lock_wait_s, launcherGone );
    // A rank whose launcher died after rank 0 took the lock takes nothing: then no rank goes on
    // (rank 0 lets its lock go), as when rank 0 itself gave up.
    if ( mpi::allreduceMax( std::int64_t( lock.abandoned() ), comm ) != 0 )
        return std::nullopt;
    return lock;
}

} // namespace shardsweep::detail
