#pragma once
// How a sweep run starts (internal to src/sweep): where it resumes from, what earlier runs
// journaled, and the output's lock. Each function is collective over the run's communicator.
#include "output_lock.hpp"
#include "sweep_internal.hpp"

#include <cstdint>
#include <mpi.h>
#include <optional>
#include <ostream>
#include <shardsweep/sweep/sweep_engine.hpp>
#include <string>
#include <vector>

namespace shardsweep::detail
{

//! Where a run starts (rank 0 decides from the output and its journals, every rank follows).
struct StartDecision
{
    bool complete = false;             //!< the file is finished, same sweep: nothing to do
    int session = 0;                   //!< number of this run's journal files
    std::vector<std::string> journals; //!< journals of earlier runs to resume from
};

//! What earlier runs journaled: this rank's records and every rank's done ids.
struct JournaledWork
{
    std::vector<detail::RecordRef> records; //!< of the journals this rank scanned
    std::vector<std::uint8_t> done_bits;    //!< bit per id, all ranks' (empty: none done)
};

//! Collective. Throws UsageError when the output refuses this run (other sweep, damaged file).
StartDecision decideStart( MPI_Comm comm, const ExpectedIdentity& identity,
                           const SweepOptions& options );

//! Collective: journal k is scanned by rank k mod size, the done-masks are OR-ed. Throws
//! UsageError when a journal is damaged or holds ids beyond the sweep.
JournaledWork scanJournals( MPI_Comm comm, const std::vector<std::string>& journals,
                            std::uint64_t n, const std::string& output );

//! Collective: every rank takes the output's lock for the run, rank 0 exclusively first, which
//! it can only once no process of another run on this output is alive (an earlier run's ranks
//! go on as orphans when their mpirun is killed). Rank 0 waits up to --lock-wait seconds, the
//! others without spinning. Throws UsageError on every rank when the lock stays held. Empty on
//! every rank when rank 0's launcher died before it had the lock (orphaned ranks of a killed
//! run leave the output alone: the run they waited for may be done with it).
std::optional<OutputLock> lockOutput( MPI_Comm comm, const SweepOptions& options, std::ostream& out,
                                      bool talk );

} // namespace shardsweep::detail
