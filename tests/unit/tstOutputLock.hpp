// The output's lock (issue 21): a run's rank 0 gets it exclusive only while no other holder is
// alive, shared holders (a run's ranks) coexist, it is free again when the holders go, and a
// lock file removed under its holders (a finishing run removes its journal directory) is not
// mistaken for the lock of the next run.
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

} // namespace Test
