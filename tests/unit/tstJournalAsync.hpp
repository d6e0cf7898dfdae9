// The journal's write-behind: records submitted through AsyncJournalWriter read back byte for
// byte, in order, at the offsets it reports; a failed background append surfaces as the same
// error as a direct one, at the next wait; the caller never gets the rows in flight back.
#include "journal_test_batch.hpp"

#include <cstdio>
#include <cstring>
#include <gtest/gtest.h>
#include <shardsweep/sweep/journal_async.hpp>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace Test
{
using namespace shardsweep;

//! n scenarios of 1 GPU row and `shards_per_scenario` shard rows each.
JournalBatch asyncBatch( std::uint64_t first, int n, int shards_per_scenario )
{
    return journalTestBatch( first, n, 1, [=]( int ) { return shards_per_scenario; } );
}

template <class Row>
bool sameBytes( const std::vector<Row>& a, const std::vector<Row>& b )
{
    return a.size() == b.size() && std::memcmp( a.data(), b.data(), a.size() * sizeof( Row ) ) == 0;
}

TEST( TEST_CATEGORY, journal_async_records_read_back_byte_for_byte )
{
    const std::string path = "tstJournalAsync_" + std::to_string( ::getpid() ) + ".jnl";
    std::remove( path.c_str() );
    std::vector<JournalBatch> expected;
    std::vector<JournalRecordInfo> records;
    {
        AsyncJournalWriter w( path );
        EXPECT_FALSE( w.wait() ); // nothing in flight yet
        JournalBatch batch;
        for ( int k = 0; k < 5; ++k )
        {
            batch.clear();
            const JournalBatch rows = asyncBatch( 100 * std::uint64_t( k ), 3 + k, 1 + k % 3 );
            batch = rows;
            expected.push_back( rows );
            w.submit( batch );
            EXPECT_TRUE( w.pending() );
            // The caller's batch never holds the rows in flight: it gets the spare buffer back
            // (empty at first, then the batch before last).
            if ( k >= 1 )
                EXPECT_TRUE( sameBytes( batch.scenarios, expected[k - 1].scenarios ) ) << k;
            else
                EXPECT_TRUE( batch.scenarios.empty() );
        }
        EXPECT_EQ( w.records().size(), 4u ); // the last append is not acknowledged yet
        EXPECT_TRUE( w.wait() );
        EXPECT_FALSE( w.pending() );
        records = w.records();
        EXPECT_GE( w.backgroundWallSeconds(), 0.0 );
        EXPECT_GE( w.backgroundCpuSeconds(), 0.0 );
    }
    const JournalScan scan = scanJournal( path );
    ASSERT_EQ( scan.records.size(), 5u );
    ASSERT_EQ( records.size(), 5u );
    for ( std::size_t k = 0; k < 5; ++k )
    {
        EXPECT_EQ( records[k].offset, scan.records[k].offset ) << k;
        EXPECT_EQ( records[k].first_id, 100 * k ) << k;
        EXPECT_EQ( records[k].last_id, 100 * k + 2 + k ) << k;
        EXPECT_EQ( records[k].num_shards, scan.records[k].num_shards ) << k;
        const JournalBatch back = readJournalRecord( path, records[k] );
        EXPECT_TRUE( sameBytes( back.scenarios, expected[k].scenarios ) ) << k;
        EXPECT_TRUE( sameBytes( back.gpus, expected[k].gpus ) ) << k;
        EXPECT_TRUE( sameBytes( back.shards, expected[k].shards ) ) << k;
    }
    std::remove( path.c_str() );
}

TEST( TEST_CATEGORY, journal_async_error_surfaces_at_the_next_wait )
{
    // A file that refuses every write: the direct writer's error is the reference.
    struct stat st;
    if ( ::stat( "/dev/full", &st ) != 0 || ::access( "/dev/full", W_OK ) != 0 )
        GTEST_SKIP() << "no writable /dev/full";
    std::string direct;
    try
    {
        JournalWriter w( "/dev/full" );
        w.append( asyncBatch( 0, 2, 2 ) );
    }
    catch ( const std::runtime_error& e )
    {
        direct = e.what();
    }
    ASSERT_FALSE( direct.empty() );

    AsyncJournalWriter w( "/dev/full" );
    JournalBatch batch = asyncBatch( 0, 2, 2 );
    w.submit( batch ); // starts the append; its failure is not known yet
    std::string background;
    try
    {
        w.wait();
    }
    catch ( const std::runtime_error& e )
    {
        background = e.what();
    }
    EXPECT_EQ( background, direct );
    EXPECT_TRUE( w.records().empty() ); // a failed batch is never acknowledged
    EXPECT_FALSE( w.pending() );
    EXPECT_FALSE( w.wait() ); // reported once

    // Through submit too: the next batch is not started before the error is reported.
    JournalBatch next = asyncBatch( 10, 1, 1 );
    w.submit( next );
    EXPECT_THROW( w.submit( next ), std::runtime_error );
    EXPECT_TRUE( w.records().empty() );

    // A journal that cannot be created fails at the first submit, as the direct writer does.
    AsyncJournalWriter nowhere( "no/such/dir/x.jnl" );
    JournalBatch one = asyncBatch( 0, 1, 1 );
    EXPECT_THROW( nowhere.submit( one ), std::runtime_error );
}

} // namespace Test
