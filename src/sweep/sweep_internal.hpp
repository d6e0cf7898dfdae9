#pragma once
// Pieces of the sweep engine shared by its source files (not installed).
#include <mpi.h>
#include <shardsweep/sweep/journal.hpp>
#include <shardsweep/sweep/sweep_engine.hpp>
#include <string>
#include <vector>

namespace shardsweep
{
namespace detail
{

//! What a resumed run must match.
struct ExpectedIdentity
{
    std::uint64_t config_hash = 0;
    std::uint64_t num_scenarios = 0;
    SweepDetail detail = SweepDetail::all;
    std::string slice = "0/1"; //!< "I/N" of `run --slice`
};

struct StartState
{
    enum class Kind
    {
        fresh,
        resume,
        complete,
    };
    Kind kind = Kind::fresh;
    int session = 0;                   //!< number of this run's journal files
    std::vector<std::string> journals; //!< existing journal files, sorted
    std::string error;                 //!< non-empty: refuse with this message
};

std::string journalDir( const std::string& output );
//! Rank 0: applies --fresh, checks journals and an existing file, writes the manifest.
StartState prepareOutput( const ExpectedIdentity& id, const std::string& output, bool fresh );
void removeJournals( const std::string& output );

//! A valid journal record and its file.
struct RecordRef
{
    std::string path;
    JournalRecordInfo info;
};

//! Builds OUT.h5 collectively from the records each rank holds (every scenario id in [0, N)
//! exactly once over all ranks). Returns the seconds this rank spent.
double writeResultsFile( MPI_Comm comm, const SweepProblem& problem, const SweepOptions& options,
                         std::uint64_t num_scenarios, std::vector<RecordRef> records );

//! Rank 0: rewrites a finished file with gzip + shuffle (serial), replacing it atomically.
void compressResultsFile( const std::string& path );

} // namespace detail
} // namespace shardsweep
