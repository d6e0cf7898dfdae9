// The output's lock (issue 21): a run's rank 0 gets it exclusive only while no other holder is
// alive, shared holders (a run's ranks) coexist, it is free again when the holders go, and a
// lock file removed under its holders (a finishing run removes its journal directory) is not
// mistaken for the lock of the next run; a wait abandoned (the launcher died) creates nothing.
#include <cstdio>
#include <filesystem>
#include <gtest/gtest.h>
#include <stdexcept>
#include <string>
#include <sweep/output_lock.hpp>
#include <unistd.h>

namespace Test
{
using shardsweep::detail::OutputLock;

TEST( TEST_CATEGORY, output_lock_excludes_other_runs )
{
    const std::string dir = "tstOutputLock_" + std::to_string( ::getpid() ) + ".journal";
    std::filesystem::remove_all( dir );
    {
        OutputLock run = OutputLock::exclusiveThenShared( dir, 1.0, {} );
        ASSERT_TRUE( run.held() ) << run.warning();
        EXPECT_TRUE( std::filesystem::exists( OutputLock::path( dir ) ) );
        // The run's other ranks share it.
        OutputLock rank1 = OutputLock::shared( dir, 1.0 );
        EXPECT_TRUE( rank1.held() );

        // A second run waits, reports that it waits, then gives up.
        int reports = 0;
        double first_report = -1;
        EXPECT_THROW( OutputLock::exclusiveThenShared( dir, 0.3,
                                                       [&]( double waited )
                                                       {
                                                           if ( reports++ == 0 )
                                                               first_report = waited;
                                                       } ),
                      OutputLock::Busy );
        EXPECT_EQ( reports, 1 ); // at once, then every 10 s
        EXPECT_LT( first_report, 0.3 );

        // An orphaned rank of the first run is enough to keep the second one out.
        run = OutputLock();
        EXPECT_THROW( OutputLock::exclusiveThenShared( dir, 0.1, {} ), OutputLock::Busy );
        rank1 = OutputLock();
        OutputLock second = OutputLock::exclusiveThenShared( dir, 0.1, {} );
        EXPECT_TRUE( second.held() );

        // The holder's directory removed (its run finished): a new run locks a new file.
        std::filesystem::remove_all( dir );
        OutputLock third = OutputLock::exclusiveThenShared( dir, 0.1, {} );
        EXPECT_TRUE( third.held() );
        EXPECT_THROW( OutputLock::exclusiveThenShared( dir, 0.1, {} ), OutputLock::Busy );
        // A lock file that cannot be made is an error of its own, not a busy output.
        const std::string blocked = dir + "/third-holder-file";
        std::fclose( std::fopen( blocked.c_str(), "w" ) );
        try
        {
            OutputLock::exclusiveThenShared( blocked + "/x.journal", 0.1, {} );
            ADD_FAILURE() << "no error";
        }
        catch ( const OutputLock::Busy& e )
        {
            ADD_FAILURE() << "reported as busy: " << e.what();
        }
        catch ( const std::runtime_error& e )
        {
            EXPECT_NE( std::string( e.what() ).find( "cannot create the lock file" ),
                       std::string::npos )
                << e.what();
        }
    }
    std::filesystem::remove_all( dir );
}

TEST( TEST_CATEGORY, output_lock_wait_abandoned_creates_nothing )
{
    const std::string dir = "tstOutputLock_abandon_" + std::to_string( ::getpid() ) + ".journal";
    std::filesystem::remove_all( dir );
    // Abandoned before the first attempt (a launcher dead before the run reached its lock): the
    // journal directory is not even created.
    OutputLock early = OutputLock::exclusiveThenShared( dir, 1.0, {}, [] { return true; } );
    EXPECT_TRUE( early.abandoned() );
    EXPECT_FALSE( early.held() );
    EXPECT_FALSE( std::filesystem::exists( dir ) );

    // Abandoned while waiting: the run it waited for finishes (its lock released, its journal
    // directory removed) and the launcher is gone by the next attempt, which must not create the
    // directory again next to the finished file.
    OutputLock holder = OutputLock::exclusiveThenShared( dir, 1.0, {} );
    ASSERT_TRUE( holder.held() );
    int asked = 0;
    OutputLock late = OutputLock::exclusiveThenShared( dir, 5.0, {},
                                                       [&]
                                                       {
                                                           if ( ++asked < 3 )
                                                               return false;
                                                           holder = OutputLock();
                                                           std::filesystem::remove_all( dir );
                                                           return true;
                                                       } );
    EXPECT_EQ( asked, 3 ); // asked before each attempt, and two attempts failed
    EXPECT_TRUE( late.abandoned() );
    EXPECT_FALSE( late.held() );
    EXPECT_FALSE( std::filesystem::exists( dir ) );

    // The other ranks' shared lock asks too: abandoned before its first attempt it creates
    // nothing (the run it joined may have been replaced by one that finished and cleaned up).
    OutputLock shared_late = OutputLock::shared( dir, 1.0, [] { return true; } );
    EXPECT_TRUE( shared_late.abandoned() );
    EXPECT_FALSE( shared_late.held() );
    EXPECT_FALSE( std::filesystem::exists( dir ) );

    // Never abandoned: an ordinary lock.
    OutputLock normal = OutputLock::exclusiveThenShared( dir, 1.0, {}, [] { return false; } );
    EXPECT_TRUE( normal.held() );
    EXPECT_FALSE( normal.abandoned() );
    std::filesystem::remove_all( dir );
}

} // namespace Test
