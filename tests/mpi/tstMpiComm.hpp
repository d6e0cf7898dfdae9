// The parallel runtime's waits that do not spin: allreduceSumYielding gives the sums of a blocking
// reduction, and a rank that waits for a late one uses a small part of a core while it waits.
#include <chrono>
#include <gtest/gtest.h>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <sys/resource.h>
#include <thread>
#include <vector>

namespace Test
{
using namespace shardsweep;

//! CPU seconds of the calling thread (user + system).
double threadCpuSeconds()
{
    struct rusage usage = {};
    getrusage( RUSAGE_THREAD, &usage );
    return double( usage.ru_utime.tv_sec + usage.ru_stime.tv_sec ) +
           1e-6 * double( usage.ru_utime.tv_usec + usage.ru_stime.tv_usec );
}

TEST( TEST_CATEGORY, allreduce_sum_yielding_sums_and_does_not_spin )
{
    const MPI_Comm comm = MPI_COMM_WORLD;
    const int rank = mpi::rank( comm ), size = mpi::size( comm );
    const std::size_t n = 1000;
    std::vector<std::int64_t> values( n );
    for ( std::size_t i = 0; i < n; ++i )
        values[i] = 1000 * std::int64_t( rank ) + std::int64_t( i );

    // Rank 0 arrives 200 ms late; the others wait in the reduction meanwhile.
    if ( rank == 0 )
        std::this_thread::sleep_for( std::chrono::milliseconds( 200 ) );
    const double wall0 = mpi::wtime(), cpu0 = threadCpuSeconds();
    mpi::allreduceSumYielding( values.data(), n, comm );
    const double wall = mpi::wtime() - wall0, cpu = threadCpuSeconds() - cpu0;

    // Σ_r (1000 r + i) = 1000 size (size - 1) / 2 + size i.
    for ( std::size_t i = 0; i < n; ++i )
        ASSERT_EQ( values[i], 500 * std::int64_t( size ) * ( size - 1 ) +
                                  std::int64_t( size ) * std::int64_t( i ) )
            << i;
    if ( rank != 0 )
    {
        // A blocking MPI_Allreduce busy-polls: its CPU time is its wait (measured: ~0.2 s here).
        // Polling with sleeps costs a few ms at most; 20 % leaves room for a loaded machine.
        EXPECT_GT( wall, 0.1 );
        EXPECT_LT( cpu, 0.2 * wall ) << "waited " << wall << " s";
    }

    // The barrier: the other ranks leave only after the last one arrived, 50 ms late.
    if ( rank == size - 1 )
        std::this_thread::sleep_for( std::chrono::milliseconds( 50 ) );
    const double t0 = mpi::wtime();
    mpi::barrierYielding( comm );
    if ( rank != size - 1 )
    {
        EXPECT_GT( mpi::wtime() - t0, 0.04 );
    }
}

} // namespace Test
