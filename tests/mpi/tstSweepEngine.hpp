// The sweep engine against a serial reference computed inside the test: every dataset of the
// results file equals the rows a plain loop produces (so 1- and 2-rank runs are bit-identical),
// a signal stops a run resumably, a resume (also after a torn journal tail) computes only what is
// missing and gives the same file, and a different configuration is refused. Issue 21: a rank whose
// journal is damaged under the run stops every rank in step (no deadlock, journals kept), a
// scenario journaled twice is kept once, and a run waits for the output's lock.
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <limits>
#include <memory>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/hdf5.hpp>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <shardsweep/sweep/journal.hpp>
#include <shardsweep/sweep/sweep_engine.hpp>
#include <sstream>
#include <sweep/output_lock.hpp>
#include <unistd.h>

namespace Test
{
using namespace shardsweep;

//! A synthetic problem: 7 workloads of 3..9 tables, 2 or 4 GPUs, three batch sizes; scenario
//! 50k+7 has no plan. Costs come from a closed-form double of the kernel.
struct EngineFixture
{
    std::vector<std::shared_ptr<const Workload>> workloads;
    SweepProblem problem;
    // The engine may evaluate a batch's tiles on several threads at once: counters are atomic.
    std::atomic<std::int64_t> evaluated{ 0 }; // scenarios this rank evaluated (all runs)
    int signal_at_call = -1; // raise SIGUSR1 during this evaluate call of this rank
    // During this evaluate call of this rank, overwrite 8 bytes inside the first record's rows of
    // `damage_path` (this rank's journal: its first record is on disk once the third batch is
    // computed), so that the results writer finds it damaged.
    int damage_at_call = -1;
    std::string damage_path;
    std::atomic<int> calls{ 0 };
    std::atomic<std::size_t> largest_call{ 0 }; // most scenarios in one evaluate call of this rank

    std::vector<std::int32_t> catalog_offset; // first /tables row of each workload's tables

    explicit EngineFixture( std::uint64_t n, std::uint64_t hash = 42 )
    {
        for ( int w = 0; w < 7; ++w )
        {
            catalog_offset.push_back( std::int32_t( problem.tables.size() ) );
            auto wl = std::make_shared<Workload>();
            wl->name = "w" + std::to_string( w );
            for ( int t = 0; t < 3 + w; ++t )
            {
                TableSpec s;
                s.rows = 1000 * ( t + 1 ) + 17 * w;
                s.dim = 16 << ( t % 3 );
                s.pooling_factor = 1.0 + 0.5 * t;
                s.zipf_alpha = 0.1 * w;
                s.reuse_histogram[t % kReuseBins] = 0.25;
                wl->tables.push_back( s );
                wl->table_names.push_back( "t" + std::to_string( t ) );
            }
            // The catalogue (/tables): the workloads' tables in order, as a ScenarioSpace's.
            for ( int t = 0; t < 3 + w; ++t )
            {
                problem.tables.push_back(
                    tableRow( { &wl->tables[t], wl->table_names[t], w, -1, t } ) );
                problem.table_names.push_back( wl->name + "." + wl->table_names[t] );
            }
            workloads.push_back( wl );
            problem.workload_names.push_back( wl->name );
        }
        problem.num_scenarios = n;
        problem.platform_names = { "p2", "p4" };
        problem.planner_names = { "round_robin" };
        problem.cost_model_names = { "native", "torchrec" };
        problem.protocol_names = { "none" };
        problem.config_text = "kind: sweep\n";
        problem.config_file = "test.yaml";
        problem.config_hash = hash;
        problem.materialize = [this]( std::uint64_t id ) { return spec( id ); };
        problem.lower_bound = []( const ScenarioSpec& s ) { return lowerBound( s.id ); };
    }

    //! runSweepEngine on this problem, its planner and its evaluator.
    SweepReport run( const SweepOptions& options, std::ostream& log )
    {
        return runSweepEngine( MPI_COMM_WORLD, problem, plan, evaluator(), options, log );
    }

    ScenarioSpec spec( std::uint64_t id ) const
    {
        ScenarioSpec s;
        s.id = id;
        s.workload_index = int( id % 7 );
        s.workload = workloads[s.workload_index];
        s.table_catalog_offset = catalog_offset[s.workload_index];
        s.platform_index = int( id / 7 % 2 );
        s.gpu_count = 2 << s.platform_index;
        s.platform.gpus_per_node = s.gpu_count;
        s.platform.num_nodes = 1;
        s.global_batch = 1024 * std::int64_t( 1 + id % 3 );
        s.cost_model = CostModel( id % 2 );
        s.planner_seed = id * 2654435761u;
        return s;
    }

    //! A closed-form stand-in for iterationLowerBoundMs: NaN for the torchrec scenarios (odd
    //! ids), as the sweep's bound.
    static double lowerBound( std::uint64_t id )
    {
        return id % 2 ? std::numeric_limits<double>::quiet_NaN() : 0.5 + 0.25 * double( id );
    }

    static PlanResult plan( const ScenarioSpec& s )
    {
        PlanResult r;
        r.feasible = s.id % 50 != 7;
        if ( r.feasible )
            r.plan = roundRobinTableWisePlan( *s.workload, s.gpu_count );
        return r;
    }

    static ScenarioResult evaluateOne( const ScenarioInput& in )
    {
        ScenarioResult r;
        r.num_gpus = in.platform->numGpus();
        r.gpu_phase_ms.assign( std::size_t( r.num_gpus ) * kNumPhases, 0.0 );
        r.gpu_memory_GiB.assign( std::size_t( r.num_gpus ), 0.0 );
        for ( const auto& sh : in.plan->shards )
        {
            const TableSpec& t = in.workload->tables[sh.table];
            const double fwd = double( sh.num_rows ) * sh.num_cols * 1e-7 *
                               double( in.global_batch ) / ( 1000.0 + t.pooling_factor );
            r.shard_fwd_ms.push_back( fwd );
            r.shard_bwd_ms.push_back( 2.0 * fwd + 0.1 * double( in.model ) );
            r.gpu_phase_ms[sh.gpu * kNumPhases + 1] += fwd;
            r.gpu_phase_ms[sh.gpu * kNumPhases + 8] += 2.0 * fwd;
            r.gpu_memory_GiB[sh.gpu] += double( sh.num_rows ) * sh.num_cols * 4.0 / 1073741824.0;
        }
        for ( int g = 0; g < r.num_gpus; ++g )
        {
            double sum = 0;
            for ( int p = 0; p < kNumPhases; ++p )
                sum += r.gpu_phase_ms[g * kNumPhases + p];
            r.iteration_ms = std::max( r.iteration_ms, sum );
            r.phase_ms[1] = std::max( r.phase_ms[1], r.gpu_phase_ms[g * kNumPhases + 1] );
        }
        r.exposed_comm_ms = 0.01 * r.iteration_ms;
        r.feasible = r.iteration_ms < 5.0;
        r.overflow_gpu = r.feasible ? -1 : 0;
        return r;
    }

    SweepEvaluateFunction evaluator()
    {
        return [this]( const std::vector<ScenarioInput>& inputs )
        {
            const int call = ++calls;
            if ( call == signal_at_call )
                std::raise( SIGUSR1 );
            if ( call == damage_at_call )
            {
                const std::uint64_t garbage = 0x5eed5eed5eed5eedull;
                std::FILE* f = std::fopen( damage_path.c_str(), "r+b" );
                EXPECT_NE( f, nullptr ) << damage_path;
                if ( f )
                {
                    std::fseek( f, 64 + 8, SEEK_SET ); // past the 64-byte record header
                    std::fwrite( &garbage, sizeof( garbage ), 1, f );
                    std::fclose( f );
                }
            }
            evaluated += std::int64_t( inputs.size() );
            for ( std::size_t seen = largest_call;
                  inputs.size() > seen &&
                  !largest_call.compare_exchange_weak( seen, inputs.size() ); )
                ;
            std::vector<ScenarioResult> out;
            for ( const auto& in : inputs )
                out.push_back( evaluateOne( in ) );
            return out;
        };
    }

    //! The expected rows, computed serially, laid out as docs/HDF5_LAYOUT.md says.
    void reference( std::vector<ScenarioRow>& scen, std::vector<GpuRow>& gpus,
                    std::vector<ShardRow>& shards ) const
    {
        for ( std::uint64_t id = 0; id < problem.num_scenarios; ++id )
        {
            ScenarioSpec s = spec( id );
            ScenarioRow row;
            row.id = id;
            row.workload = s.workload_index;
            row.platform = s.platform_index;
            row.planner = 0;
            row.cost_model = int( s.cost_model );
            row.task_protocol = 0;
            row.generator = -1;
            row.task_index = -1;
            row.planner_seed = s.planner_seed;
            row.global_batch = s.global_batch;
            row.gpu_count = s.gpu_count;
            row.gpu_row_offset = std::int64_t( gpus.size() );
            row.shard_row_offset = std::int64_t( shards.size() );
            // Every scenario's row holds its task's bound, with a plan or without.
            row.lower_bound_ms =
                id % 2 ? std::numeric_limits<double>::quiet_NaN() : 0.5 + 0.25 * double( id );
            PlanResult p = plan( s );
            if ( p.feasible )
            {
                ScenarioInput in{ s.workload.get(), &s.platform, &p.plan, s.global_batch,
                                  s.cost_model };
                ScenarioResult r = evaluateOne( in );
                fillResultRows( row, s, &p.plan, &r, SweepDetail::all, gpus, shards );
            }
            else
            {
                fillResultRows( row, s, nullptr, nullptr, SweepDetail::all, gpus, shards );
                row.status = 1;
            }
            scen.push_back( row );
        }
    }
};

std::string outputPath( const std::string& stem )
{
    // One name for all ranks (rank 0's pid), distinct between np1 and np2 runs.
    std::int64_t pid = mpi::rank( MPI_COMM_WORLD ) == 0 ? ::getpid() : 0;
    pid = mpi::allreduceMax( pid, MPI_COMM_WORLD );
    return "tstSweepEngine_" + stem + "_" + std::to_string( pid ) + ".h5";
}

template <class Row>
void expectColumns( const h5::Group& group, const std::vector<ColumnSpec>& columns,
                    const std::vector<Row>& rows )
{
    EXPECT_EQ( group.members().size(), columns.size() );
    for ( const auto& c : columns )
    {
        auto set = group.openDataset( c.name );
        ASSERT_EQ( set.size(), rows.size() ) << c.name;
        EXPECT_EQ( set.type(), c.type ) << c.name;
        auto values = set.readAll<double>();
        int mismatches = 0;
        for ( std::size_t i = 0; i < rows.size(); ++i )
        {
            const double want = columnValue( c, &rows[i] );
            const bool same = std::isnan( want ) ? std::isnan( values[i] ) : values[i] == want;
            if ( !same && mismatches++ < 3 )
                ADD_FAILURE() << c.name << "[" << i << "] = " << values[i] << ", expected " << want;
        }
    }
}

//! Rank 0 compares every dataset of `path` with the serial reference.
void expectFileMatchesReference( const EngineFixture& fx, const std::string& path )
{
    if ( mpi::rank( MPI_COMM_WORLD ) != 0 )
        return;
    std::vector<ScenarioRow> scen;
    std::vector<GpuRow> gpus;
    std::vector<ShardRow> shards;
    fx.reference( scen, gpus, shards );
    auto file = h5::File::openSerial( path );
    {
        auto root = file.root();
        EXPECT_EQ( h5::readIntAttribute( root.id(), "complete" ), 1 );
        EXPECT_EQ( h5::readIntAttribute( root.id(), "schema_version" ), kSweepSchemaVersion );
        EXPECT_EQ( h5::readStringAttribute( root.id(), "config_hash" ), "000000000000002a" );
        EXPECT_EQ( h5::readIntAttribute( root.id(), "num_ranks" ), mpi::size( MPI_COMM_WORLD ) );
        expectColumns( root.openGroup( "scenarios" ), scenarioColumns(), scen );
        expectColumns( root.openGroup( "gpus" ), gpuColumns(), gpus );
        expectColumns( root.openGroup( "shards" ), shardColumns(), shards );
        expectColumns( root.openGroup( "tables" ), tableColumns(), fx.problem.tables );
        // Workload w3's tables start at /tables row 3 + 4 + 5 = 12; its table 2 (rows
        // 1000·3 + 17·3, pooling 1 + 0.5·2, Zipf 0.1·3, bin_2 0.25) is row 14.
        const TableRow& t14 = fx.problem.tables.at( 14 );
        EXPECT_EQ( t14.rows, 3051 );
        EXPECT_EQ( t14.pooling_factor, 2.0 );
        EXPECT_EQ( t14.zipf_alpha, 0.1 * 3 );
        EXPECT_EQ( t14.bins[2], 0.25 );
        EXPECT_EQ( t14.workload, 3 );
        EXPECT_EQ( t14.index, 2 );
        EXPECT_EQ( root.openGroup( "names" ).readStringDataset( "tables" ).at( 14 ), "w3.t2" );
        for ( const ShardRow& r : shards )
        {
            if ( r.scenario_id % 7 == 3 )
            {
                ASSERT_EQ( r.table_row, 12 + r.table ) << r.scenario_id;
            }
        }
        EXPECT_EQ( root.openGroup( "names" ).readStringDataset( "workloads" )[3], "w3" );
        EXPECT_EQ( root.openGroup( "names" ).readStringDataset( "phases" )[9], "dense_allreduce" );
    }
    file.close();
}

SweepOptions smallOptions( const std::string& path )
{
    SweepOptions o;
    o.output = path;
    o.batch_size = 16;
    o.finalize_window = 50;
    o.quiet = true;
    return o;
}

TEST( TEST_CATEGORY, sweep_matches_serial_reference )
{
    EngineFixture fx( 300 );
    const std::string path = outputPath( "full" );
    std::ostringstream log;
    auto options = smallOptions( path );
    options.fresh = true;
    auto report = fx.run( options, log );
    EXPECT_EQ( report.exit_code, 0 );
    EXPECT_EQ( report.computed, 300u );
    EXPECT_EQ( report.no_plan, 6u );  // ids 7, 57, ..., 257 have no plan
    EXPECT_EQ( report.failures, 0u ); // a planner without a plan is not an error
    EXPECT_FALSE( std::filesystem::exists( journalDirectory( path ) ) );
    expectFileMatchesReference( fx, path );
    // Every scenario was evaluated exactly once over all ranks (the 6 without a plan never).
    EXPECT_EQ( mpi::allreduceSum( fx.evaluated.load(), MPI_COMM_WORLD ), 294 );

    // Rerunning the finished sweep does nothing.
    auto again = fx.run( smallOptions( path ), log );
    EXPECT_TRUE( again.already_complete );
    EXPECT_EQ( mpi::allreduceSum( fx.evaluated.load(), MPI_COMM_WORLD ), 294 );
    // Another sweep into the same file is refused.
    EngineFixture other( 300, 43 );
    EXPECT_THROW( other.run( smallOptions( path ), log ), UsageError );
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 )
        std::filesystem::remove( path );
}

// A batch is evaluated in tiles (SweepOptions::evaluate_tile): the file is the same, each tile
// is one evaluate call, and tiles never mix batches. 300 ids in batches of 40 (the last of 20)
// and tiles of 7: 7 batches of tiles 7,7,7,7,7,5 and one of 7,7,6, i.e. 45 calls, each with a
// planned scenario (the no-plan ids 7, 57, ..., 257 are 50 apart).
TEST( TEST_CATEGORY, sweep_evaluates_batches_in_tiles )
{
    EngineFixture fx( 300 );
    const std::string path = outputPath( "tiles" );
    std::ostringstream log;
    auto options = smallOptions( path );
    options.fresh = true;
    options.batch_size = 40;
    options.evaluate_tile = 7;
    const auto report = fx.run( options, log );
    EXPECT_EQ( report.exit_code, 0 );
    EXPECT_EQ( report.no_plan, 6u );
    expectFileMatchesReference( fx, path );
    EXPECT_EQ( mpi::allreduceSum( std::int64_t( fx.calls.load() ), MPI_COMM_WORLD ), 45 );
    EXPECT_EQ( mpi::allreduceSum( fx.evaluated.load(), MPI_COMM_WORLD ), 294 );
    EXPECT_LE( fx.largest_call, 7u );
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 )
        std::filesystem::remove( path );
}

TEST( TEST_CATEGORY, sweep_signal_then_resume_after_torn_journal )
{
    EngineFixture fx( 300 );
    const std::string path = outputPath( "resume" );
    std::ostringstream log;
    auto options = smallOptions( path );
    options.fresh = true;
    // SIGUSR1 arrives at every rank during its 2nd batch (whichever rank gets at least two of
    // the 19 batches raises it): every rank finishes its batch and stops.
    fx.signal_at_call = 2;
    auto first = fx.run( options, log );
    EXPECT_EQ( first.exit_code, kExitResumable );
    EXPECT_LT( first.computed, 300u );
    EXPECT_GE( first.computed, 32u );
    EXPECT_FALSE( std::filesystem::exists( path ) );
    mpi::barrier( MPI_COMM_WORLD );

    // A kill in the middle of an append: cut the journal with the most records inside its last
    // record (rank 0 does it; no early return may skip the collective calls below).
    std::uint64_t torn = 0;
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 && first.exit_code == kExitResumable )
    {
        std::string longest;
        std::size_t most = 0;
        for ( const auto& e : std::filesystem::directory_iterator( journalDirectory( path ) ) )
        {
            if ( e.path().extension() != ".jnl" )
                continue;
            auto scan = scanJournal( e.path().string() );
            if ( scan.records.size() > most )
            {
                most = scan.records.size();
                longest = e.path().string();
            }
        }
        EXPECT_GE( most, 2u );
        if ( most >= 2 )
        {
            auto scan = scanJournal( longest );
            torn = scan.records.back().num_scenarios;
            EXPECT_EQ( ::truncate( longest.c_str(), off_t( scan.records.back().offset + 100 ) ),
                       0 );
        }
    }
    torn = std::uint64_t( mpi::allreduceSum( std::int64_t( torn ), MPI_COMM_WORLD ) );

    // A different configuration is refused while the journals exist.
    EngineFixture other( 300, 99 );
    EXPECT_THROW( other.run( smallOptions( path ), log ), UsageError );

    fx.signal_at_call = -1;
    const std::int64_t before = mpi::allreduceSum( fx.evaluated.load(), MPI_COMM_WORLD );
    // With a progress line after every batch: a line before this run has a rate (on one rank
    // the first: its first batch is journaled in the background) says so instead of an ETA
    // made up from a zero rate.
    auto resume_options = smallOptions( path );
    resume_options.quiet = false;
    resume_options.progress_interval_s = 1e-9;
    std::ostringstream progress;
    auto second = fx.run( resume_options, progress );
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 )
    {
        std::istringstream lines( progress.str() );
        int without_rate = 0;
        for ( std::string line; std::getline( lines, line ); )
            if ( line.find( " 0.0 scen/s" ) != std::string::npos )
            {
                ++without_rate;
                EXPECT_NE( line.find( "ETA - " ), std::string::npos ) << line;
            }
        if ( mpi::size( MPI_COMM_WORLD ) == 1 )
        {
            EXPECT_GE( without_rate, 1 ) << progress.str();
        }
    }
    EXPECT_EQ( second.exit_code, 0 );
    EXPECT_EQ( second.done_before, first.computed - torn );
    EXPECT_EQ( second.computed, 300u - second.done_before );
    // Only the missing scenarios were evaluated again.
    const std::int64_t after = mpi::allreduceSum( fx.evaluated.load(), MPI_COMM_WORLD );
    EXPECT_LE( after - before, std::int64_t( second.computed ) );
    expectFileMatchesReference( fx, path );
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 )
        std::filesystem::remove( path );
}

TEST( TEST_CATEGORY, sweep_detail_scenarios_and_compress )
{
    EngineFixture fx( 120 );
    const std::string path = outputPath( "small" );
    std::ostringstream log;
    auto options = smallOptions( path );
    options.fresh = true;
    options.detail = SweepDetail::scenarios;
    options.compress = true;
    options.max_scenarios = 100;
    auto report = fx.run( options, log );
    EXPECT_EQ( report.computed, 100u );
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 )
    {
        fx.problem.num_scenarios = 100;
        std::vector<ScenarioRow> scen;
        std::vector<GpuRow> gpus;
        std::vector<ShardRow> shards;
        fx.reference( scen, gpus, shards );
        for ( auto& r : scen )
        {
            // Without /gpus and /shards rows every offset stays 0 and no GPU rows are counted.
            r.gpu_row_offset = 0;
            r.shard_row_offset = 0;
            r.num_gpus_rows = 0;
        }
        auto file = h5::File::openSerial( path );
        {
            auto root = file.root();
            EXPECT_FALSE( root.has( "gpus" ) );
            EXPECT_FALSE( root.has( "shards" ) );
            auto group = root.openGroup( "scenarios" );
            EXPECT_EQ( group.openDataset( "iteration_ms" ).gzipLevel(), 4 );
            expectColumns( group, scenarioColumns(), scen );
            EXPECT_EQ( h5::readStringAttribute( root.id(), "detail" ), "scenarios" );
        }
        file.close();
        std::filesystem::remove( path );
    }
}

//! The ranks' paths of one journal file of `path`'s run (session 0).
std::string journalOf( const std::string& path, int rank )
{
    return journalDirectory( path ) + "/s0-r" + std::to_string( rank ) + ".jnl";
}

TEST( TEST_CATEGORY, sweep_failure_of_one_rank_in_the_file_build_stops_every_rank )
{
    // The last rank's journal is damaged under the run (its first record, while its third batch
    // is computed): the results writer on that rank fails inside the window loop. Before issue
    // 21 that rank closed the file (a collective call) while the others waited in the window's
    // reduction: a deadlock.
    EngineFixture fx( 300 );
    const std::string path = outputPath( "fault" );
    std::ostringstream log;
    auto options = smallOptions( path );
    options.fresh = true;
    const int rank = mpi::rank( MPI_COMM_WORLD ), victim = mpi::size( MPI_COMM_WORLD ) - 1;
    if ( rank == victim )
    {
        fx.damage_at_call = 3;
        fx.damage_path = journalOf( path, victim );
    }
    const double t0 = mpi::wtime();
    bool thrown = false, origin = false;
    std::string message;
    try
    {
        fx.run( options, log );
    }
    catch ( const CollectiveError& e )
    {
        thrown = true;
        origin = e.origin();
        message = e.what();
    }
    const double seconds = mpi::wtime() - t0;
    EXPECT_TRUE( thrown );
    EXPECT_LT( seconds, 30.0 );
    EXPECT_EQ( origin, rank == victim );
    if ( rank == victim )
    {
        EXPECT_NE( message.find( "is damaged at byte 0" ), std::string::npos ) << message;
    }
    else
    {
        EXPECT_NE( message.find( "rank " + std::to_string( victim ) + " failed" ),
                   std::string::npos )
            << message;
    }
    mpi::barrier( MPI_COMM_WORLD );
    // The journals are kept and the file is not complete; the next run names the damage.
    if ( rank == 0 )
    {
        for ( int r = 0; r < mpi::size( MPI_COMM_WORLD ); ++r )
            EXPECT_TRUE( std::filesystem::exists( journalOf( path, r ) ) ) << r;
        auto file = h5::File::openSerial( path );
        {
            auto root = file.root();
            EXPECT_FALSE( h5::hasAttribute( root.id(), "complete" ) );
        }
        file.close();
    }
    try
    {
        fx.run( smallOptions( path ), log );
        ADD_FAILURE() << "a run on a damaged journal was not refused";
    }
    catch ( const UsageError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "damaged" ), std::string::npos ) << e.what();
    }
    mpi::barrier( MPI_COMM_WORLD );
    if ( rank == 0 )
    {
        std::filesystem::remove_all( journalDirectory( path ) );
        std::filesystem::remove( path );
    }
}

TEST( TEST_CATEGORY, sweep_keeps_one_copy_of_a_scenario_journaled_twice )
{
    // Two runs at once (where the output's lock cannot be taken) journal the same scenarios: a
    // copy of rank 0's journal under a later session's name holds every one of its scenarios a
    // second time. The resumed run keeps the first journal's copy and gives the reference file,
    // datasets of the right size included.
    EngineFixture fx( 300 );
    const std::string path = outputPath( "twice" );
    std::ostringstream log;
    auto options = smallOptions( path );
    options.fresh = true;
    fx.signal_at_call = 2;
    auto first = fx.run( options, log );
    EXPECT_EQ( first.exit_code, kExitResumable );
    mpi::barrier( MPI_COMM_WORLD );
    std::int64_t copied = 0;
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 )
    {
        for ( const auto& record : scanJournal( journalOf( path, 0 ) ).records )
            copied += record.num_scenarios;
        std::filesystem::copy_file( journalOf( path, 0 ), journalDirectory( path ) + "/s7-r0.jnl" );
    }
    copied = mpi::allreduceSum( copied, MPI_COMM_WORLD );
    EXPECT_GT( copied, 0 );
    fx.signal_at_call = -1;
    auto second = fx.run( smallOptions( path ), log );
    EXPECT_EQ( second.exit_code, 0 );
    EXPECT_EQ( second.duplicates, std::uint64_t( copied ) );
    EXPECT_EQ( second.done_before + second.computed, 300u );
    expectFileMatchesReference( fx, path );
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 )
        std::filesystem::remove( path );
}

TEST( TEST_CATEGORY, sweep_waits_for_the_output_lock_then_refuses )
{
    // A process of another run holds the output's lock (as ranks that go on after their mpirun
    // was killed do): the run waits --lock-wait seconds, then every rank refuses; once the lock
    // is free the same run goes through.
    EngineFixture fx( 60 );
    const std::string path = outputPath( "locked" );
    std::ostringstream log;
    auto options = smallOptions( path );
    options.fresh = true;
    options.lock_wait_s = 0.4;
    detail::OutputLock other;
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 )
        other = detail::OutputLock::shared( journalDirectory( path ), 1.0 );
    mpi::barrier( MPI_COMM_WORLD );
    const double t0 = mpi::wtime();
    try
    {
        fx.run( options, log );
        ADD_FAILURE() << "the run did not wait for the lock";
    }
    catch ( const UsageError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "another run still works on it" ),
                   std::string::npos )
            << e.what();
    }
    const double waited = mpi::wtime() - t0;
    EXPECT_GE( waited, 0.4 );
    EXPECT_LT( waited, 10.0 );
    EXPECT_FALSE( std::filesystem::exists( path ) );
    other = detail::OutputLock();
    auto report = fx.run( options, log );
    EXPECT_EQ( report.exit_code, 0 );
    EXPECT_EQ( report.computed, 60u );
    mpi::barrier( MPI_COMM_WORLD );
    EXPECT_FALSE( std::filesystem::exists( journalDirectory( path ) ) );
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 )
        std::filesystem::remove( path );
}

} // namespace Test
