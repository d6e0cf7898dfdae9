// Reductions, broadcast and one-sided counters over MPI (raw MPI calls stay in parallel/).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <stdexcept>
#include <thread>

namespace shardsweep
{
namespace mpi
{

namespace
{
constexpr std::size_t kPiece = std::size_t( 1 ) << 28;

void check( int status, const char* what )
{
    if ( status != MPI_SUCCESS )
        throw std::runtime_error( std::string( "MPI: " ) + what + " failed" );
}

//! Completes `request`, polling it; between polls the thread yields (the first ~50 µs of waiting),
//! then sleeps 20 µs, doubling up to `max_sleep_us`.
void waitYielding( MPI_Request& request, int max_sleep_us, const char* what )
{
    const auto start = std::chrono::steady_clock::now();
    int sleep_us = 20;
    for ( ;; )
    {
        int done = 0;
        check( MPI_Test( &request, &done, MPI_STATUS_IGNORE ), what );
        if ( done )
            return;
        if ( std::chrono::steady_clock::now() - start < std::chrono::microseconds( 50 ) )
            std::this_thread::yield();
        else
        {
            std::this_thread::sleep_for( std::chrono::microseconds( sleep_us ) );
            sleep_us = std::min( 2 * sleep_us, std::max( max_sleep_us, 1 ) );
        }
    }
}
} // namespace

double wtime()
{
    return MPI_Wtime();
}

void barrier( MPI_Comm comm )
{
    check( MPI_Barrier( comm ), "MPI_Barrier" );
}

int rank( MPI_Comm comm )
{
    int r = 0;
    MPI_Comm_rank( comm, &r );
    return r;
}

int size( MPI_Comm comm )
{
    int s = 1;
    MPI_Comm_size( comm, &s );
    return s;
}

std::int64_t allreduceSum( std::int64_t value, MPI_Comm comm )
{
    std::int64_t out = 0;
    check( MPI_Allreduce( &value, &out, 1, MPI_INT64_T, MPI_SUM, comm ), "MPI_Allreduce" );
    return out;
}

std::int64_t allreduceMax( std::int64_t value, MPI_Comm comm )
{
    std::int64_t out = 0;
    check( MPI_Allreduce( &value, &out, 1, MPI_INT64_T, MPI_MAX, comm ), "MPI_Allreduce" );
    return out;
}

double allreduceMin( double value, MPI_Comm comm )
{
    double out = 0;
    check( MPI_Allreduce( &value, &out, 1, MPI_DOUBLE, MPI_MIN, comm ), "MPI_Allreduce" );
    return out;
}

double allreduceMax( double value, MPI_Comm comm )
{
    double out = 0;
    check( MPI_Allreduce( &value, &out, 1, MPI_DOUBLE, MPI_MAX, comm ), "MPI_Allreduce" );
    return out;
}

double allreduceSum( double value, MPI_Comm comm )
{
    double out = 0;
    check( MPI_Allreduce( &value, &out, 1, MPI_DOUBLE, MPI_SUM, comm ), "MPI_Allreduce" );
    return out;
}

void allreduceSum( std::int64_t* data, std::size_t n, MPI_Comm comm )
{
    for ( std::size_t i = 0; i < n; i += kPiece )
    {
        int count = static_cast<int>( std::min( kPiece, n - i ) );
        check( MPI_Allreduce( MPI_IN_PLACE, data + i, count, MPI_INT64_T, MPI_SUM, comm ),
               "MPI_Allreduce" );
    }
}

// Each request is completed by MPI_Test in waitYielding; the analyzer looks for an MPI_Wait.
// NOLINTBEGIN(clang-analyzer-optin.mpi.MPI-Checker)
void allreduceSumYielding( std::int64_t* data, std::size_t n, MPI_Comm comm, int max_sleep_us )
{
    for ( std::size_t i = 0; i < n; i += kPiece )
    {
        int count = static_cast<int>( std::min( kPiece, n - i ) );
        MPI_Request request;
        check(
            MPI_Iallreduce( MPI_IN_PLACE, data + i, count, MPI_INT64_T, MPI_SUM, comm, &request ),
            "MPI_Iallreduce" );
        waitYielding( request, max_sleep_us, "MPI_Iallreduce" );
    }
}
// NOLINTEND(clang-analyzer-optin.mpi.MPI-Checker)

void barrierYielding( MPI_Comm comm, int max_sleep_us )
{
    MPI_Request request;
    check( MPI_Ibarrier( comm, &request ), "MPI_Ibarrier" );
    waitYielding( request, max_sleep_us, "MPI_Ibarrier" );
}

void allreduceMin( std::int64_t* data, std::size_t n, MPI_Comm comm )
{
    for ( std::size_t i = 0; i < n; i += kPiece )
    {
        int count = static_cast<int>( std::min( kPiece, n - i ) );
        check( MPI_Allreduce( MPI_IN_PLACE, data + i, count, MPI_INT64_T, MPI_MIN, comm ),
               "MPI_Allreduce" );
    }
}

void throwIfAnyFailed( const std::string& failure, MPI_Comm comm )
{
    std::int64_t first = failure.empty() ? std::numeric_limits<std::int64_t>::max() : rank( comm );
    allreduceMin( &first, 1, comm );
    if ( first == std::numeric_limits<std::int64_t>::max() )
        return;
    if ( !failure.empty() )
        throw CollectiveError( failure, true );
    throw CollectiveError( "stopped because rank " + std::to_string( first ) +
                               " failed (its message says why)",
                           false );
}

void abortJob( const std::string& message, int code, MPI_Comm comm )
{
    std::cerr << errorPrefix( rank( comm ), size( comm ) ) << message << std::endl;
    MPI_Abort( comm, code );
    std::abort(); // MPI_Abort does not return
}

void allreduceOr( std::uint8_t* data, std::size_t n, MPI_Comm comm )
{
    for ( std::size_t i = 0; i < n; i += kPiece )
    {
        int count = static_cast<int>( std::min( kPiece, n - i ) );
        check( MPI_Allreduce( MPI_IN_PLACE, data + i, count, MPI_UINT8_T, MPI_BOR, comm ),
               "MPI_Allreduce" );
    }
}

std::vector<double> allgather( double value, MPI_Comm comm )
{
    std::vector<double> out( static_cast<std::size_t>( size( comm ) ) );
    check( MPI_Allgather( &value, 1, MPI_DOUBLE, out.data(), 1, MPI_DOUBLE, comm ),
           "MPI_Allgather" );
    return out;
}

std::string broadcast( const std::string& text, int root, MPI_Comm comm )
{
    std::int64_t length = static_cast<std::int64_t>( text.size() );
    check( MPI_Bcast( &length, 1, MPI_INT64_T, root, comm ), "MPI_Bcast" );
    std::string out = rank( comm ) == root ? text : std::string( length, '\0' );
    if ( length > 0 )
        check( MPI_Bcast( out.data(), static_cast<int>( length ), MPI_CHAR, root, comm ),
               "MPI_Bcast" );
    return out;
}

//---------------------------------------------------------------------------------------------//
SharedCounters::SharedCounters( MPI_Comm comm, int n )
{
    const MPI_Aint bytes =
        rank( comm ) == 0 ? MPI_Aint( n ) * MPI_Aint( sizeof( std::int64_t ) ) : 0;
    check( MPI_Win_allocate( bytes, sizeof( std::int64_t ), MPI_INFO_NULL, comm, &_base, &_win ),
           "MPI_Win_allocate" );
    if ( rank( comm ) == 0 )
        std::fill( _base, _base + n, std::int64_t( 0 ) );
    // Everyone must see the zeroed counters before the first update.
    check( MPI_Barrier( comm ), "MPI_Barrier" );
    check( MPI_Win_lock_all( MPI_MODE_NOCHECK, _win ), "MPI_Win_lock_all" );
}

SharedCounters::~SharedCounters()
{
    if ( _win != MPI_WIN_NULL )
    {
        MPI_Win_unlock_all( _win );
        MPI_Win_free( &_win );
    }
}

std::int64_t SharedCounters::fetchAdd( int slot, std::int64_t delta )
{
    std::int64_t previous = 0;
    check( MPI_Fetch_and_op( &delta, &previous, MPI_INT64_T, 0, slot, MPI_SUM, _win ),
           "MPI_Fetch_and_op" );
    check( MPI_Win_flush( 0, _win ), "MPI_Win_flush" );
    return previous;
}

std::int64_t SharedCounters::read( int slot )
{
    std::int64_t value = 0, unused = 0;
    check( MPI_Fetch_and_op( &unused, &value, MPI_INT64_T, 0, slot, MPI_NO_OP, _win ),
           "MPI_Fetch_and_op" );
    check( MPI_Win_flush( 0, _win ), "MPI_Win_flush" );
    return value;
}

void SharedCounters::max( int slot, std::int64_t value )
{
    std::int64_t previous = 0;
    check( MPI_Fetch_and_op( &value, &previous, MPI_INT64_T, 0, slot, MPI_MAX, _win ),
           "MPI_Fetch_and_op" );
    check( MPI_Win_flush( 0, _win ), "MPI_Win_flush" );
}

} // namespace mpi
} // namespace shardsweep
