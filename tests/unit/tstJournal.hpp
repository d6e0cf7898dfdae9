// Journals: records round-trip byte for byte; a record cut short at the end (a kill mid-append)
// is dropped; a corrupted record with data after it is refused.
#include "journal_test_batch.hpp"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <gtest/gtest.h>
#include <shardsweep/sweep/journal.hpp>
#include <string>
#include <unistd.h>
#include <vector>

namespace Test
{
using namespace shardsweep;

//! n scenarios of 2 GPU rows and 1 shard row each.
JournalBatch makeBatch( std::uint64_t first, int n )
{
    return journalTestBatch( first, n, 2, []( int ) { return 1; } );
}

std::string journalPath( const std::string& stem )
{
    return "tstJournal_" + stem + "_" + std::to_string( ::getpid() ) + ".jnl";
}

TEST( TEST_CATEGORY, journal_roundtrip_and_torn_tail )
{
    const std::string path = journalPath( "torn" );
    std::remove( path.c_str() );
    std::vector<JournalRecordInfo> appended;
    {
        JournalWriter w( path );
        appended.push_back( w.append( makeBatch( 0, 3 ) ) );
        appended.push_back( w.append( makeBatch( 10, 5 ) ) );
        appended.push_back( w.append( makeBatch( 20, 4 ) ) );
    }
    auto scan = scanJournal( path );
    ASSERT_EQ( scan.records.size(), 3u );
    // What append returns is what a scan finds (the engine lists its records from it).
    for ( std::size_t k = 0; k < 3; ++k )
    {
        EXPECT_EQ( appended[k].offset, scan.records[k].offset ) << k;
        EXPECT_EQ( appended[k].first_id, scan.records[k].first_id ) << k;
        EXPECT_EQ( appended[k].last_id, scan.records[k].last_id ) << k;
        EXPECT_EQ( appended[k].num_scenarios, scan.records[k].num_scenarios ) << k;
        EXPECT_EQ( appended[k].num_gpus, scan.records[k].num_gpus ) << k;
        EXPECT_EQ( appended[k].num_shards, scan.records[k].num_shards ) << k;
    }
    {
        // A writer reopening the file continues after the records already there.
        JournalWriter w( path );
        const auto info = w.append( makeBatch( 30, 2 ) );
        EXPECT_EQ( info.offset, scan.valid_bytes );
        auto again = scanJournal( path );
        ASSERT_EQ( again.records.size(), 4u );
        EXPECT_EQ( again.records[3].offset, info.offset );
        ASSERT_EQ( ::truncate( path.c_str(), off_t( scan.valid_bytes ) ), 0 );
    }
    EXPECT_FALSE( scan.torn_tail );
    EXPECT_EQ( scan.records[1].first_id, 10u );
    EXPECT_EQ( scan.records[1].last_id, 14u );
    EXPECT_EQ( scan.records[1].num_gpus, 10u );
    auto b = readJournalRecord( path, scan.records[1] );
    auto expected = makeBatch( 10, 5 );
    ASSERT_EQ( b.scenarios.size(), 5u );
    EXPECT_EQ(
        std::memcmp( b.scenarios.data(), expected.scenarios.data(), 5 * sizeof( ScenarioRow ) ),
        0 );
    EXPECT_EQ( std::memcmp( b.gpus.data(), expected.gpus.data(), 10 * sizeof( GpuRow ) ), 0 );
    EXPECT_EQ( b.shards[4].bwd_ms, 0.5 );

    // Cut the last record at every kind of place: inside its header, inside its payload.
    const std::uint64_t full = scan.valid_bytes;
    const std::uint64_t third = scan.records[2].offset;
    for ( std::uint64_t cut : { full - 1, third + 64, third + 10 } ) // shrinking only
    {
        ASSERT_EQ( ::truncate( path.c_str(), off_t( cut ) ), 0 );
        auto torn = scanJournal( path );
        EXPECT_EQ( torn.records.size(), 2u ) << cut;
        EXPECT_TRUE( torn.torn_tail ) << cut;
        EXPECT_EQ( torn.valid_bytes, third ) << cut;
    }
    std::remove( path.c_str() );
}

TEST( TEST_CATEGORY, journal_damage_in_the_middle_is_refused )
{
    const std::string path = journalPath( "damaged" );
    std::remove( path.c_str() );
    {
        JournalWriter w( path );
        w.append( makeBatch( 0, 3 ) );
        w.append( makeBatch( 3, 3 ) );
    }
    auto scan = scanJournal( path );
    {
        // Flip one payload byte of the first record.
        std::fstream f( path, std::ios::in | std::ios::out | std::ios::binary );
        f.seekp( std::streamoff( scan.records[0].offset + 64 + 100 ) );
        f.put( char( 0x5a ) );
    }
    EXPECT_THROW( scanJournal( path ), std::runtime_error );
    std::remove( path.c_str() );
}

//! JournalChecksum's definition evaluated one word at a time (the class does four at a time).
std::uint64_t checksumByDefinition( const unsigned char* p, std::size_t bytes )
{
    const std::uint64_t offset = 0xcbf29ce484222325ull, prime = 0x100000001b3ull;
    std::uint64_t lane[4] = { offset, offset + 1, offset + 2, offset + 3 };
    std::uint64_t words = 0;
    for ( std::size_t at = 0; at < bytes; at += 8, ++words )
    {
        std::uint64_t w = 0;
        const std::size_t n = std::min<std::size_t>( 8, bytes - at );
        for ( std::size_t k = 0; k < n; ++k ) // little-endian, as the journal's own bytes
            w |= std::uint64_t( p[at + k] ) << ( 8 * k );
        if ( n < 8 )
            w ^= std::uint64_t( n ) << 56;
        lane[words % 4] = ( lane[words % 4] ^ w ) * prime;
    }
    std::uint64_t h = offset;
    for ( std::uint64_t l : lane )
        h = ( h ^ l ) * prime;
    return ( h ^ words ) * prime;
}

TEST( TEST_CATEGORY, journal_checksum_matches_its_definition_in_any_split )
{
    std::vector<unsigned char> data( 1000 );
    std::uint64_t x = 88172645463325252ull;
    for ( auto& byte : data )
    {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        byte = static_cast<unsigned char>( x );
    }
    for ( std::size_t n : { 0, 8, 24, 32, 40, 997, 1000 } )
        EXPECT_EQ( journalChecksum( data.data(), n ), checksumByDefinition( data.data(), n ) ) << n;
    // Pieces at 8-byte boundaries, in any grouping, give the checksum of the whole.
    const std::uint64_t whole = journalChecksum( data.data(), 1000 );
    for ( std::size_t first : { 8, 16, 24, 32, 104, 992 } )
        for ( std::size_t second : { 0, 8, 40, 256 } )
        {
            JournalChecksum pieces;
            const std::size_t b = std::min<std::size_t>( first + second, 1000 );
            pieces.add( data.data(), first );
            pieces.add( data.data() + first, b - first );
            pieces.add( data.data() + b, 1000 - b );
            EXPECT_EQ( pieces.value(), whole ) << first << " + " << second;
        }
}

TEST( TEST_CATEGORY, journal_checksum_sees_every_byte )
{
    char data[19] = {};
    const auto base = journalChecksum( data, sizeof( data ) );
    for ( std::size_t i = 0; i < sizeof( data ); ++i )
    {
        data[i] = 1;
        EXPECT_NE( journalChecksum( data, sizeof( data ) ), base ) << i;
        data[i] = 0;
    }
}

} // namespace Test
