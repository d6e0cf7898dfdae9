// The sweep driver: dynamic batches over ranks, per-batch journals, signals, progress, finalize.
#include "sweep_internal.hpp"

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <limits>
#include <ostream>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <shardsweep/parallel/stop_signal.hpp>

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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string clock( double seconds )
{
    if ( !std::isfinite( seconds ) || seconds < 0 )
        return "--:--:--";
    const auto s = static_cast<long long>( seconds + 0.5 );
    return fmt::format( "{:02d}:{:02d}:{:02d}", s / 3600, s / 60 % 60, s % 60 );
}

//! Maps positions in the list of pending ids to ids (pending ids as sorted ranges).
class PendingIds
{
  public:
    PendingIds( const std::vector<std::uint8_t>& done_bits, std::uint64_t n )
    {
        std::uint64_t i = 0;
        while ( i < n )
        {
            while ( i < n && isDone( done_bits, i ) )
                ++i;
            const std::uint64_t begin = i;
            while ( i < n && !isDone( done_bits, i ) )
                ++i;
            if ( i > begin )
            {
                _begin.push_back( begin );
                _position.push_back( _count );
                _count += i - begin;
            }
        }
    }
    static bool isDone( const std::vector<std::uint8_t>& bits, std::uint64_t i )
    {
        return !bits.empty() && ( bits[i >> 3] >> ( i & 7 ) ) & 1;
    }
    std::uint64_t count() const { return _count; }
    //! Ids at positions [from, to).
    void ids( std::uint64_t from, std::uint64_t to, std::vector<std::uint64_t>& out ) const
    {
        out.clear();
        auto it = std::upper_bound( _position.begin(), _position.end(), from );
        std::size_t r = std::size_t( it - _position.begin() ) - 1;
        for ( std::uint64_t p = from; p < to; ++p )
        {
            while ( r + 1 < _position.size() && _position[r + 1] <= p )
                ++r;
            out.push_back( _begin[r] + ( p - _position[r] ) );
        }
    }

  private:
    std::vector<std::uint64_t> _begin, _position;
    std::uint64_t _count = 0;
};

void fillInputs( ScenarioRow& row, const ScenarioSpec& spec )
{
    row.workload = spec.workload_index;
    row.platform = spec.platform_index;
    row.planner = static_cast<std::int32_t>( spec.planner );
    row.cost_model = static_cast<std::int32_t>( spec.cost_model );
    row.task_protocol = static_cast<std::int32_t>( spec.protocol );
    row.generator = spec.generator_index;
    row.task_index = spec.task_index;
    row.task_seed = spec.task_seed;
    row.planner_seed = spec.planner_seed;
    row.global_batch = spec.global_batch;
    row.gpu_count = spec.gpu_count;
    row.memory_cap_GiB = spec.memory_cap_GiB;
    row.num_tables = spec.workload ? static_cast<std::int32_t>( spec.workload->tables.size() ) : 0;
}

} // namespace

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

    // ---- where do we start? (rank 0 decides, everyone follows) ------------------------------
    detail::ExpectedIdentity identity{ problem.config_hash, n, options.detail };
    detail::StartState state;
    std::string verdict;
    if ( rank == 0 )
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
    if ( verdict == "complete" )
    {
        report.already_complete = true;
        report.wall_s = mpi::wtime() - t_start;
        if ( talk )
            out << fmt::format(
                       "{} is already complete ({} scenarios, same sweep): nothing to do\n",
                       options.output, n )
                << std::flush;
        return report;
    }
    std::string journal_list;
    for ( const auto& j : state.journals )
        journal_list += j + "\n";
    journal_list = mpi::broadcast( journal_list, 0, comm );
    const int session = int( mpi::allreduceMax( std::int64_t( state.session ), comm ) );
    std::vector<std::string> journals;
    for ( std::size_t p = 0, q; ( q = journal_list.find( '\n', p ) ) != std::string::npos;
          p = q + 1 )
        journals.push_back( journal_list.substr( p, q - p ) );

    // ---- done-mask from the journals (file k scanned by rank k mod size) ----------------------
    std::vector<detail::RecordRef> records;
    std::vector<std::uint8_t> done_bits;
    std::string scan_error;
    if ( !journals.empty() )
    {
        done_bits.assign( ( n + 7 ) / 8, 0 );
        for ( std::size_t k = rank; k < journals.size(); k += std::size_t( size ) )
        {
            try
            {
                auto scan = scanJournal( journals[k] );
                for ( const auto& info : scan.records )
                {
                    if ( info.num_scenarios > 0 && info.last_id >= n )
                        throw std::runtime_error( "journal " + journals[k] +
                                                  " holds scenario ids beyond this sweep" );
                    records.push_back( { journals[k], info } );
                    // Ids of a record: read them (records are small next to the results).
                    auto batch = readJournalRecord( journals[k], info );
                    for ( const auto& row : batch.scenarios )
                        done_bits[row.id >> 3] |= std::uint8_t( 1u << ( row.id & 7 ) );
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
                                  ? "refusing to resume " + options.output +
                                        ": a journal is damaged (see the other ranks' messages)"
                                  : "refusing to resume " + options.output + ": " + scan_error );
        }
        mpi::allreduceOr( done_bits.data(), done_bits.size(), comm );
    }
    const PendingIds pending( done_bits, n );
    report.done_before = n - pending.count();
    if ( talk )
        out << fmt::format( "shardsweep run: {} scenarios, {} already done, {} to compute on {} "
                            "rank(s), batches of {}\n",
                            n, report.done_before, pending.count(), size, options.batch_size )
            << std::flush;

    // ---- the dynamic loop --------------------------------------------------------------------
    const std::uint64_t batch_size = std::max<std::uint64_t>( options.batch_size, 1 );
    const std::uint64_t num_batches = ( pending.count() + batch_size - 1 ) / batch_size;
    const std::string my_journal =
        fmt::format( "{}/s{}-r{}.jnl", detail::journalDir( options.output ), session, rank );
    bool stopped = false;
    {
        mpi::SharedCounters counters( comm, kNumSlots );
        std::unique_ptr<JournalWriter> writer;
        JournalBatch batch;
        std::vector<std::uint64_t> ids;
        std::vector<ScenarioSpec> specs;
        std::vector<PlanResult> plans;
        std::vector<ScenarioInput> inputs;
        std::vector<std::size_t> input_row;
        std::vector<ScenarioStatus> status;
        double last_print = mpi::wtime();
        int errors_logged = 0;
        for ( ;; )
        {
            double t = mpi::wtime();
            if ( pendingStopSignal() )
                counters.max( kStop, 1 );
            if ( counters.read( kStop ) )
                break;
            const std::uint64_t k = std::uint64_t( counters.fetchAdd( kNextBatch, 1 ) );
            report.local.dispatch += mpi::wtime() - t;
            if ( k >= num_batches )
                break;
            pending.ids( k * batch_size, std::min( pending.count(), ( k + 1 ) * batch_size ), ids );

            // Materialise and plan.
            batch.clear();
            specs.clear();
            plans.clear();
            status.assign( ids.size(), ScenarioStatus::evaluated );
            specs.resize( ids.size() );
            plans.resize( ids.size() );
            batch.scenarios.resize( ids.size() );
            for ( auto& row : batch.scenarios )
                row.lower_bound_ms = kNaN; // kept when materialising fails
            for ( std::size_t i = 0; i < ids.size(); ++i )
            {
                batch.scenarios[i].id = ids[i];
                try
                {
                    t = mpi::wtime();
                    specs[i] = problem.materialize( ids[i] );
                    fillInputs( batch.scenarios[i], specs[i] );
                    const double t1 = mpi::wtime();
                    report.local.materialize += t1 - t;
                    batch.scenarios[i].lower_bound_ms =
                        problem.lower_bound ? problem.lower_bound( specs[i] ) : kNaN;
                    plans[i] = plan_fn( specs[i] );
                    report.local.plan += mpi::wtime() - t1;
                    if ( !plans[i].feasible )
                        status[i] = ScenarioStatus::no_plan;
                }
                catch ( const std::exception& e )
                {
                    status[i] = ScenarioStatus::error;
                    if ( errors_logged++ < 3 )
                        std::cerr << fmt::format( "rank {}: scenario {}: {}\n", rank, ids[i],
                                                  e.what() );
                }
            }
            // Evaluate every planned scenario of the batch in one kernel call.
            t = mpi::wtime();
            inputs.clear();
            input_row.clear();
            for ( std::size_t i = 0; i < ids.size(); ++i )
            {
                if ( status[i] != ScenarioStatus::evaluated )
                    continue;
                ScenarioInput in;
                in.workload = specs[i].workload.get();
                in.platform = &specs[i].platform;
                in.plan = &plans[i].plan;
                in.global_batch = specs[i].global_batch;
                in.model = specs[i].cost_model;
                inputs.push_back( in );
                input_row.push_back( i );
            }
            std::vector<ScenarioResult> results;
            if ( !inputs.empty() )
                results = evaluate_fn( inputs );
            std::int64_t failed = 0, no_plan = 0;
            for ( std::size_t i = 0, r = 0; i < ids.size(); ++i )
            {
                ScenarioRow& row = batch.scenarios[i];
                const bool evaluated = r < input_row.size() && input_row[r] == i;
                if ( evaluated )
                {
                    fillResultRows( row, *specs[i].workload, &plans[i].plan, &results[r],
                                    options.detail, batch.gpus, batch.shards );
                    ++r;
                }
                else
                {
                    static const Workload empty;
                    fillResultRows( row, specs[i].workload ? *specs[i].workload : empty, nullptr,
                                    nullptr, options.detail, batch.gpus, batch.shards );
                    row.status = static_cast<std::int8_t>( status[i] );
                    ++( status[i] == ScenarioStatus::no_plan ? no_plan : failed );
                }
            }
            report.local.evaluate += mpi::wtime() - t;

            // Journal (the batch is safe once append returns), then count it.
            t = mpi::wtime();
            if ( !writer )
                writer = std::make_unique<JournalWriter>( my_journal );
            writer->append( batch );
            report.local.journal += mpi::wtime() - t;
            report.local_computed += ids.size();

            t = mpi::wtime();
            counters.fetchAdd( kDone, std::int64_t( ids.size() ) );
            if ( failed )
                counters.fetchAdd( kFailed, failed );
            if ( no_plan )
                counters.fetchAdd( kNoPlan, no_plan );
            report.local.dispatch += mpi::wtime() - t;

            if ( talk && options.progress_interval_s > 0 &&
                 mpi::wtime() - last_print >= options.progress_interval_s )
            {
                last_print = mpi::wtime();
                const double elapsed = last_print - t_start;
                const std::uint64_t done_now = std::uint64_t( counters.read( kDone ) );
                const std::uint64_t total_done = report.done_before + done_now;
                const double rate = done_now / std::max( elapsed, 1e-9 );
                out << fmt::format( "[{:5.1f}%] {}/{} scenarios | {:.1f} scen/s ({:.1f}/rank) | "
                                    "elapsed {} | ETA {} | no plan {} | failed {}\n",
                                    100.0 * double( total_done ) /
                                        double( std::max<std::uint64_t>( n, 1 ) ),
                                    total_done, n, rate, rate / size, clock( elapsed ),
                                    clock( double( n - total_done ) / std::max( rate, 1e-9 ) ),
                                    counters.read( kNoPlan ), counters.read( kFailed ) )
                    << std::flush;
            }
        }
        mpi::barrier( comm );
        report.computed = std::uint64_t( counters.read( kDone ) );
        report.failures = std::uint64_t( counters.read( kFailed ) );
        report.no_plan = std::uint64_t( counters.read( kNoPlan ) );
        stopped = counters.read( kStop ) != 0;
        if ( stopped )
            clearStopSignal(); // acted on: a later run in this process starts clean
        mpi::barrier( comm );
        if ( writer )
        {
            // This run's own records join the ones found at start.
            auto scan = scanJournal( my_journal );
            for ( const auto& info : scan.records )
                records.push_back( { my_journal, info } );
        }
    }
    const bool all_done = report.done_before + report.computed >= n;
    report.busy_s = mpi::allgather( report.local.busy(), comm );
    report.computed_per_rank = mpi::allgather( double( report.local_computed ), comm );

    if ( !all_done )
    {
        report.exit_code = kExitResumable;
        report.wall_s = mpi::wtime() - t_start;
        report.io_s_max = mpi::allreduceMax( report.local.journal, comm );
        if ( talk )
            out << fmt::format( "stopped by a signal: {}/{} scenarios done and journaled in {}; "
                                "rerun the same command to resume (exit status {})\n",
                                report.done_before + report.computed, n,
                                detail::journalDir( options.output ), kExitResumable )
                << std::flush;
        return report;
    }
    (void)stopped;

    // ---- finalize: the HDF5 file from the journals --------------------------------------------
    report.local.hdf5 = detail::writeResultsFile( comm, problem, options, n, records );
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
