#pragma once
//! \file mpi_comm.hpp
//! \brief The few MPI operations the sweep needs, so that raw MPI calls stay in parallel/:
//! reductions, a broadcast, wall time, and SharedCounters (one-sided atomic counters on rank 0 that
//! hand out batches dynamically without a dispatcher thread).

#include <cstdint>
#include <mpi.h>
#include <string>
#include <vector>

namespace shardsweep
{
namespace mpi
{

double wtime();
void barrier( MPI_Comm comm );
int rank( MPI_Comm comm );
int size( MPI_Comm comm );

std::int64_t allreduceSum( std::int64_t value, MPI_Comm comm );
std::int64_t allreduceMax( std::int64_t value, MPI_Comm comm );
double allreduceMin( double value, MPI_Comm comm );
double allreduceMax( double value, MPI_Comm comm );
double allreduceSum( double value, MPI_Comm comm );
//! Element-wise sum in place (any length; sent in pieces below 2^31 elements).
void allreduceSum( std::int64_t* data, std::size_t n, MPI_Comm comm );
//! The sum of allreduceSum, waited for without spinning: the reduction runs non-blocking and this
//! thread yields, then sleeps (growing to `max_sleep_us`) between polls. A rank that waits thus
//! gives its core to the threads that work: with more threads than cores (ranks plus their I/O
//! threads), MPI's busy-polling took the core a writer needed. Adds up to `max_sleep_us` of
//! latency.
void allreduceSumYielding( std::int64_t* data, std::size_t n, MPI_Comm comm,
                           int max_sleep_us = 200 );
//! A barrier waited for the same way.
void barrierYielding( MPI_Comm comm, int max_sleep_us = 200 );
//! Element-wise minimum in place.
void allreduceMin( std::int64_t* data, std::size_t n, MPI_Comm comm );
//! Collective, an agreement point: when `failure` (this rank's error message, empty if none) is
//! set on any rank, every rank throws CollectiveError, the failing ranks with their message and
//! the others naming the first failing rank; otherwise returns on every rank.
void throwIfAnyFailed( const std::string& failure, MPI_Comm comm );
//! Prints `message` for this rank to stderr and ends every process of `comm` (MPI_Abort): for a
//! failure that only this rank knows of, in the middle of collective calls that the other ranks
//! would wait in forever.
[[noreturn]] void abortJob( const std::string& message, int code, MPI_Comm comm );
//! Element-wise bitwise OR in place.
void allreduceOr( std::uint8_t* data, std::size_t n, MPI_Comm comm );
//! Every rank's value, on every rank.
std::vector<double> allgather( double value, MPI_Comm comm );
//! `text` of rank `root` on every rank.
std::string broadcast( const std::string& text, int root, MPI_Comm comm );

//! `n` int64 counters in a window on rank 0, updated with MPI_Fetch_and_op under a passive-target
//! lock_all epoch (atomic with respect to each other). Construction and destruction are
//! collective.
class SharedCounters
{
  public:
    SharedCounters( MPI_Comm comm, int n );
    ~SharedCounters();
    SharedCounters( const SharedCounters& ) = delete;
    SharedCounters& operator=( const SharedCounters& ) = delete;

    //! Atomically adds `delta` to counter `slot` and returns its previous value.
    std::int64_t fetchAdd( int slot, std::int64_t delta );
    //! The counter's current value (an atomic read).
    std::int64_t read( int slot );
    //! Atomically raises counter `slot` to at least `value`.
    void max( int slot, std::int64_t value );

  private:
    MPI_Win _win = MPI_WIN_NULL;
    std::int64_t* _base = nullptr;
};

} // namespace mpi
} // namespace shardsweep
