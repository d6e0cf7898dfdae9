// The results writer's prefetcher: a window scattered on the background thread holds exactly the
// journal's rows, column by column, in the order the window asks for (segments of two records,
// out of record order); a damaged record surfaces at wait() as the same error a direct read
// throws, and the prefetcher goes on working after it.
#include "journal_test_batch.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <shardsweep/sweep/journal.hpp>
#include <stdexcept>
#include <string>
#include <sweep/window_prefetcher.hpp>
#include <unistd.h>
#include <vector>

namespace Test
{
using namespace shardsweep;
using detail::RecordRef;
using detail::WindowPrefetcher;
using detail::WindowRows;

//! n scenarios of 2 GPU rows and 3 to 6 shard rows each (rows of different lengths).
JournalBatch prefetchBatch( std::uint64_t first, int n )
{
    return journalTestBatch( first, n, 2, []( int i ) { return 3 + i % 4; } );
}

//! Row `i` of column `k` of `buffers` holds the field of `row`, byte for byte.
template <class Row>
void expectRow( detail::ColumnBuffers& buffers, const std::vector<ColumnSpec>& columns,
                std::size_t i, const Row& row, const char* what )
{
    for ( std::size_t k = 0; k < columns.size(); ++k )
    {
        const std::size_t bytes = typeBytes( columns[k].type );
        EXPECT_EQ( 0,
                   std::memcmp( buffers.column( k ) + i * bytes,
                                reinterpret_cast<const char*>( &row ) + columns[k].offset, bytes ) )
            << what << " row " << i << " column " << columns[k].name;
    }
}

TEST( TEST_CATEGORY, window_prefetcher_scatters_exactly_the_journal_rows )
{
    const std::string path = "tstWindowPrefetcher_" + std::to_string( ::getpid() ) + ".jnl";
    std::remove( path.c_str() );
    const std::vector<JournalBatch> batches = { prefetchBatch( 0, 600 ), prefetchBatch( 600, 5 ) };
    std::vector<RecordRef> records;
    {
        JournalWriter writer( path );
        for ( const auto& b : batches )
            records.push_back( { path, writer.append( b ) } );
    }

    // The window: record 1 first, then record 0 (as a window ordered by scenario id may need
    // them), every scenario of both; shard rows of record 0 in two segments whose order in the
    // columns is the reverse of the file's (the prefetcher must follow `dest`).
    WindowRows w;
    w.with_gpus = w.with_shards = true;
    w.record_of = { 1, 0 };
    w.num_loaded = 2;
    w.loaded.resize( 2 );
    readJournalRecordHead( path, records[1].info, w.loaded[0] );
    readJournalRecordHead( path, records[0].info, w.loaded[1] );
    std::vector<ShardRow> expected_shards;
    std::vector<GpuRow> expected_gpus;
    for ( std::size_t b = 0; b < 2; ++b )
    {
        const JournalBatch& head = w.loaded[b];
        for ( const auto& r : head.scenarios )
            w.scen_rows.push_back( r );
        w.gpu_out.push_back( { head.gpus.data(), head.gpus.size() } );
        expected_gpus.insert( expected_gpus.end(), head.gpus.begin(), head.gpus.end() );
    }
    const std::vector<ShardRow>& s1 = batches[1].shards;
    const std::vector<ShardRow>& s0 = batches[0].shards;
    const std::size_t split = 1001; // not on a 512-row block boundary of the stream
    w.shard_out.push_back( { 0, 0, s1.size(), 0 } );
    w.shard_out.push_back( { 1, split, s0.size() - split, s1.size() } );
    w.shard_out.push_back( { 1, 0, split, s1.size() + s0.size() - split } );
    expected_shards.insert( expected_shards.end(), s1.begin(), s1.end() );
    expected_shards.insert( expected_shards.end(), s0.begin() + split, s0.end() );
    expected_shards.insert( expected_shards.end(), s0.begin(), s0.begin() + split );
    w.local_gpus = expected_gpus.size();
    w.local_shards = expected_shards.size();

    WindowPrefetcher prefetcher( records );
    prefetcher.start( w );
    prefetcher.wait();
    ASSERT_EQ( w.scen_rows.size(), 605u );
    for ( std::size_t i = 0; i < w.scen_rows.size(); ++i )
        expectRow( w.scen_columns, scenarioColumns(), i, w.scen_rows[i], "scenario" );
    for ( std::size_t i = 0; i < expected_gpus.size(); ++i )
        expectRow( w.gpu_columns, gpuColumns(), i, expected_gpus[i], "gpu" );
    for ( std::size_t i = 0; i < expected_shards.size(); ++i )
        expectRow( w.shard_columns, shardColumns(), i, expected_shards[i], "shard" );
    // Spot check against values, not only against the rows themselves.
    EXPECT_EQ( reinterpret_cast<const std::uint64_t*>( w.shard_columns.column( 0 ) )[0], 600u );
    std::size_t iteration = 0;
    while ( scenarioColumns()[iteration].name != "iteration_ms" )
        ++iteration;
    // Row 5 is the first scenario of record 0 (id 0), after record 1's five.
    EXPECT_EQ( reinterpret_cast<const double*>( w.scen_columns.column( iteration ) )[5], 0.75 );

    // Damage a shard row of record 0 after its head was read: the same error as a direct read,
    // at wait(), from the background thread.
    {
        std::fstream f( path, std::ios::in | std::ios::out | std::ios::binary );
        f.seekp( std::streamoff( records[0].info.offset + 64 +
                                 600 * ( sizeof( ScenarioRow ) + 2 * sizeof( GpuRow ) ) +
                                 700 * sizeof( ShardRow ) + 8 ) );
        f.put( '\x5a' );
    }
    std::string direct;
    try
    {
        readJournalRecord( path, records[0].info );
    }
    catch ( const std::runtime_error& e )
    {
        direct = e.what();
    }
    EXPECT_EQ( direct, "journal " + path + " is damaged at byte 0" );
    prefetcher.start( w );
    try
    {
        prefetcher.wait();
        ADD_FAILURE() << "a damaged record was scattered";
    }
    catch ( const std::runtime_error& e )
    {
        EXPECT_EQ( std::string( e.what() ), direct );
    }
    // The error was reported once; a window without the damaged record still goes through.
    w.record_of = { 1 };
    w.num_loaded = 1;
    w.scen_rows.resize( 5 );
    w.gpu_out.resize( 1 );
    w.shard_out.resize( 1 );
    w.local_gpus = 10;
    w.local_shards = s1.size();
    prefetcher.start( w );
    EXPECT_NO_THROW( prefetcher.wait() );
    for ( std::size_t i = 0; i < s1.size(); ++i )
        expectRow( w.shard_columns, shardColumns(), i, s1[i], "shard after error" );
    std::remove( path.c_str() );
}

} // namespace Test
