// MPI unit-test main: MPI and Kokkos initialised once; only rank 0 prints GoogleTest's progress,
// and the result is the logical OR of every rank's failures so one failing rank fails the test.
#include <Kokkos_Core.hpp>
#include <gtest/gtest.h>
#include <mpi.h>

int main( int argc, char* argv[] )
{
    int provided = MPI_THREAD_SINGLE; // as the program: threads, MPI from the main one only
    MPI_Init_thread( &argc, &argv, MPI_THREAD_FUNNELED, &provided );
    int rank = 0;
    MPI_Comm_rank( MPI_COMM_WORLD, &rank );
    Kokkos::initialize( argc, argv );
    ::testing::InitGoogleTest( &argc, argv );
    if ( rank != 0 )
    {
        auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
        delete listeners.Release( listeners.default_result_printer() );
    }
    int local = RUN_ALL_TESTS();
    int global = 0;
    MPI_Allreduce( &local, &global, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD );
    Kokkos::finalize();
    MPI_Finalize();
    return global;
}
