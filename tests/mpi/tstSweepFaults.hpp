// Issue 21, the sweep engine under failures: a rank whose journal is damaged under the run stops
// every rank in step (no deadlock, journals kept, the next run names the damage), a scenario
// journaled twice is kept once, and a run waits for the output's lock, then refuses.
#include "engine_fixture.hpp"

#include <cstdio>
#include <sweep/output_lock.hpp>

namespace Test
{
using namespace shardsweep;

TEST( TEST_CATEGORY, sweep_failure_of_one_rank_in_the_file_build_stops_every_rank )
{
    // The last rank's journal is damaged under the run (its first record, while its third batch
    // is computed): the results writer on that rank fails inside the window loop. Before issue
    // 21 that rank closed the file (a collective call) while the others waited in the window's
    // reduction: a deadlock.
    EngineFixture fx( 300 );
    const std::string path = outputPath( "fault" );
    std::ostringstream log;
    auto options = freshOptions( path );
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
    auto options = freshOptions( path );
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
    auto options = freshOptions( path );
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
