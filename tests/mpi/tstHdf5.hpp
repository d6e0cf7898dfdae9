// The HDF5 wrappers: collective writes of interleaved runs from every rank (and a rank with
// nothing to write), attributes, string tables, and a serial gzip copy, all read back and
// compared element by element with values computed here.
#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>
#include <shardsweep/io/hdf5.hpp>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <string>
#include <vector>

namespace Test
{
using namespace shardsweep;

std::string scratchFile( const std::string& stem )
{
    // The backend is in the name: ctest runs the SERIAL and OPENMP executables concurrently in
    // the same directory.
    return std::string( "tstHdf5_" ) + stem + "_" + TEST_EXECSPACE::name() + "_np" +
           std::to_string( mpi::size( MPI_COMM_WORLD ) ) + ".h5";
}

TEST( TEST_CATEGORY, hdf5_parallel_runs_roundtrip )
{
    const MPI_Comm comm = MPI_COMM_WORLD;
    const int rank = mpi::rank( comm ), size = mpi::size( comm );
    const std::string path = scratchFile( "runs" );
    const std::uint64_t n = 1000;
    {
        auto file = h5::File::createParallel( path, comm );
        {
            auto root = file.root();
            auto group = root.createGroup( "scenarios" );
            auto values = group.createDataset<double>( "value", n, 128, std::nan( "" ) );
            auto ids = group.createDataset<std::int64_t>( "id", n, 128, -1 );
            // Runs of 37 elements dealt round-robin over ranks; the last rank writes nothing when
            // there are two ranks (it still takes part in the collective writes).
            std::vector<h5::Run> runs;
            std::vector<double> v;
            std::vector<std::int64_t> id;
            const int writers = size > 1 ? size - 1 : 1;
            for ( std::uint64_t start = 0, k = 0; start < n; start += 37, ++k )
            {
                if ( rank < writers && int( k % writers ) == rank )
                {
                    std::uint64_t count = std::min<std::uint64_t>( 37, n - start );
                    runs.push_back( { start, count } );
                    for ( std::uint64_t i = start; i < start + count; ++i )
                    {
                        v.push_back( 0.5 * double( i ) );
                        id.push_back( std::int64_t( i ) );
                    }
                }
            }
            values.write( runs, v.data() );
            ids.write( runs, id.data() );
            h5::writeAttribute( root.id(), "schema_version", std::int64_t( 7 ) );
            h5::writeAttribute( root.id(), "config", std::string( "a: 1\nb: [2, 3]\n" ) );
            h5::writeAttribute( values.id(), "units", std::string( "ms" ) );
            h5::writeAttribute( root.id(), "ratio", 0.25 );
            auto names = root.createGroup( "names" );
            names.createStringDataset( "planners", { "round_robin", "random", "x" } );
        }
        file.close();
    }
    mpi::barrier( comm );
    if ( rank == 0 )
    {
        auto file = h5::File::openSerial( path );
        std::vector<double> v;
        {
            auto root = file.root();
            EXPECT_EQ( h5::readIntAttribute( root.id(), "schema_version" ), 7 );
            EXPECT_EQ( h5::readStringAttribute( root.id(), "config" ), "a: 1\nb: [2, 3]\n" );
            EXPECT_TRUE( h5::hasAttribute( root.id(), "ratio" ) );
            EXPECT_FALSE( h5::hasAttribute( root.id(), "nope" ) );
            auto group = root.openGroup( "scenarios" );
            EXPECT_EQ( group.members(), ( std::vector<std::string>{ "id", "value" } ) );
            auto values = group.openDataset( "value" );
            EXPECT_EQ( h5::readStringAttribute( values.id(), "units" ), "ms" );
            EXPECT_EQ( values.type(), h5::Type::f64 );
            EXPECT_EQ( values.chunk(), 128u );
            v = values.readAll<double>();
            auto id = group.openDataset( "id" ).readAll<std::int64_t>();
            ASSERT_EQ( v.size(), n );
            for ( std::uint64_t i = 0; i < n; ++i )
            {
                EXPECT_EQ( v[i], 0.5 * double( i ) ) << i;
                EXPECT_EQ( id[i], std::int64_t( i ) ) << i;
            }
            // A partial read of two runs.
            std::vector<double> part( 5 );
            values.read( { { 10, 2 }, { 500, 3 } }, part.data() );
            EXPECT_EQ( part, ( std::vector<double>{ 5.0, 5.5, 250.0, 250.5, 251.0 } ) );
            EXPECT_EQ( root.openGroup( "names" ).readStringDataset( "planners" ),
                       ( std::vector<std::string>{ "round_robin", "random", "x" } ) );
        }
        file.close();

        // Serial gzip copy (what --compress does).
        const std::string packed = scratchFile( "packed" );
        auto out = h5::File::createSerial( packed );
        {
            auto set = out.root().createDataset<double>( "value", n, 256, 0.0, 4 );
            set.write( { { 0, n } }, v.data(), false );
            EXPECT_EQ( set.gzipLevel(), 4 );
        }
        out.close();
        auto back = h5::File::openSerial( packed ).root().openDataset( "value" ).readAll<double>();
        for ( std::uint64_t i = 0; i < n; ++i )
            EXPECT_EQ( back[i], v[i] );
        std::remove( packed.c_str() );
        std::remove( path.c_str() );
    }
    mpi::barrier( comm );
}

TEST( TEST_CATEGORY, hdf5_damaged_file_is_not_readable )
{
    if ( mpi::rank( MPI_COMM_WORLD ) == 0 )
    {
        const std::string path = scratchFile( "damaged" );
        std::FILE* f = std::fopen( path.c_str(), "wb" );
        std::fputs( "\x89HDF\r\n\x1a\n garbage", f );
        std::fclose( f );
        EXPECT_FALSE( h5::File::isReadable( path ) );
        EXPECT_FALSE( h5::File::isReadable( path + ".missing" ) );
        EXPECT_THROW( h5::File::openSerial( path ), std::runtime_error );
        std::remove( path.c_str() );
    }
}

TEST( TEST_CATEGORY, shared_counters_hand_out_each_value_once )
{
    const MPI_Comm comm = MPI_COMM_WORLD;
    std::vector<std::int64_t> seen( 200, 0 );
    {
        mpi::SharedCounters counters( comm, 2 );
        for ( ;; )
        {
            std::int64_t k = counters.fetchAdd( 0, 1 );
            if ( k >= 200 )
                break;
            seen[k] += 1;
            counters.fetchAdd( 1, k );
        }
        mpi::barrier( comm );
        // Σ k over 0..199 = 19900 whatever rank took which value.
        EXPECT_EQ( counters.read( 1 ), 19900 );
        mpi::barrier( comm );
    }
    mpi::allreduceSum( seen.data(), seen.size(), comm );
    for ( auto s : seen )
        EXPECT_EQ( s, 1 );
}

} // namespace Test
