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
    //! The journal's place in the run's order of journals (the same on every rank): earlier
    //! sessions' journals as sorted at the start, then this run's, by rank. Of two copies of a
    //! scenario the one in the first journal is kept.
    std::uint32_t journal = 0;
};

struct ResultsFileReport
{
    double seconds = 0;           //!< this rank's time building the file
    std::uint64_t duplicates = 0; //!< scenarios found in more than one record (one copy kept)
};

//! Builds OUT.h5 collectively from the records each rank holds (every scenario id of the slice at
//! least once over all ranks; a scenario found twice keeps the copy of the first journal). A
//! failure on any rank ends it on every rank in step: a CollectiveError thrown by all at the
//! next window (the file closed, incomplete); a failure outside the window loop that only one
//! rank sees ends the job (MPI_Abort). The journals are left as they are either way.
ResultsFileReport writeResultsFile( MPI_Comm comm, const SweepProblem& problem,
                                    const SweepOptions& options, std::uint64_t num_scenarios,
                                    std::vector<RecordRef> records );

//! Rank 0: rewrites a finished file with gzip + shuffle (serial), replacing it atomically.
void compressResultsFile( const std::string& path );

} // namespace detail
} // namespace shardsweep
