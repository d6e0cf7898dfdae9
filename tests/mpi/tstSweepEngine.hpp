// The sweep engine against a serial reference computed inside the test: every dataset of the
// results file equals the rows a plain loop produces (so 1- and 2-rank runs are bit-identical),
// a signal stops a run resumably, a resume (also after a torn journal tail) computes only what is
// missing and gives the same file, and a different configuration is refused.
#include "engine_fixture.hpp"

#include <cctype>
#include <unistd.h>

namespace Test
{
using namespace shardsweep;

TEST( TEST_CATEGORY, sweep_matches_serial_reference )
{
    EngineFixture fx( 300 );
    const std::string path = outputPath( "full" );
    std::ostringstream log;
    auto options = freshOptions( path );
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
    auto options = freshOptions( path );
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
    auto options = freshOptions( path );
    options.quiet = false; // rank 0's "stopped by" line is checked
    options.progress_interval_s = 0;
    // SIGUSR1 arrives at every rank during its 2nd batch (whichever rank gets at least two of
    // the 19 batches raises it): every rank finishes its batch and stops.
    fx.signal_at_call = 2;
    auto first = fx.run( options, log );
    EXPECT_EQ( first.exit_code, kExitResumable );
    EXPECT_LT( first.computed, 300u );
    EXPECT_GE( first.computed, 32u );
    EXPECT_FALSE( std::filesystem::exists( path ) );
    // The report keeps the signal of the ranks that got it, and rank 0's line names its own.
    EXPECT_TRUE( first.stop_signal == SIGUSR1 || first.stop_signal == 0 );
    EXPECT_EQ( mpi::allreduceMax( double( first.stop_signal ), MPI_COMM_WORLD ), SIGUSR1 );
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 )
    {
        EXPECT_NE( log.str().find( first.stop_signal == SIGUSR1 ? "stopped by SIGUSR1: "
                                                                : "stopped by a signal: " ),
                   std::string::npos )
            << log.str();
    }
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
    auto options = freshOptions( path );
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

TEST( TEST_CATEGORY, sweep_eta_waits_for_every_planner_ahead )
{
    // The progress lines' ETA weighs what is left by each planner's cost so far: while the
    // scenarios of a planner ahead (ids 160..319 here) have none done, it is only a lower bound
    // ('>'), and once one of them is done it is an estimate. Before this run's first batch is
    // done there is none ('-'). So the lines read '-'*, then '>'*, then estimates.
    EngineFixture fx( 320 );
    fx.planned_from = 160;
    const std::string path = outputPath( "eta" );
    auto options = freshOptions( path );
    options.quiet = false;
    options.progress_interval_s = 1e-9; // a line after every batch
    std::ostringstream progress;
    const auto report = fx.run( options, progress );
    EXPECT_EQ( report.exit_code, 0 );
    EXPECT_EQ( report.computed, 320u );
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 )
    {
        std::string kinds; // per progress line: u(nknown), l(ower bound), e(stimate)
        std::istringstream lines( progress.str() );
        for ( std::string line; std::getline( lines, line ); )
        {
            const std::size_t at = line.find( "| ETA " );
            if ( at == std::string::npos )
                continue;
            const char first = line[at + 6];
            kinds += first == '-' ? 'u' : first == '>' ? 'l' : 'e';
            if ( kinds.back() == 'e' )
            {
                EXPECT_TRUE( std::isdigit( static_cast<unsigned char>( first ) ) ) << line;
            }
        }
        const std::size_t l = kinds.find( 'l' ), e = kinds.find( 'e' );
        EXPECT_EQ( kinds.find_first_not_of( 'u' ), std::min( l, e ) ) << kinds;
        if ( e != std::string::npos )
        {
            EXPECT_EQ( kinds.find_first_not_of( 'e', e ), std::string::npos ) << kinds;
        }
        if ( mpi::size( MPI_COMM_WORLD ) == 1 )
        {
            // 20 batches of 16: lines 2..11 follow round-robin batches only (the 11th
            // acknowledges batch 10, the last of them), lines 12..20 a shardsweep one.
            EXPECT_EQ( kinds, "u" + std::string( 10, 'l' ) + std::string( 9, 'e' ) );
        }
        std::filesystem::remove( path );
    }
}

} // namespace Test
