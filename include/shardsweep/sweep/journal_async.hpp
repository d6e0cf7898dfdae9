#pragma once
//! \file journal_async.hpp
//! \brief Write-behind for the sweep's journal: the append (write + fdatasync) of one batch runs
//! on a background thread while the engine computes the next batch. At most one append is in
//! flight; a batch is safe (and may be counted as done) only once wait() has returned after it.

#include <future>
#include <memory>
#include <shardsweep/sweep/journal.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

class AsyncJournalWriter
{
  public:
    //! The journal file is created (or opened for append) by the first submit().
    explicit AsyncJournalWriter( std::string path );
    //! Waits for an append still in flight (its error, if any, is dropped: the caller is already
    //! unwinding from another one, and an unacknowledged batch is simply not counted as done).
    ~AsyncJournalWriter();
    AsyncJournalWriter( const AsyncJournalWriter& ) = delete;
    AsyncJournalWriter& operator=( const AsyncJournalWriter& ) = delete;

    //! Waits for the previous append (rethrowing its error), then starts appending `batch` in the
    //! background. `batch` is swapped with the writer's spare buffer: it comes back holding the
    //! rows of an earlier batch (capacity to reuse, content to be cleared), never the rows in
    //! flight. Throws what JournalWriter throws (creating the file here, appending at the next
    //! wait()).
    void submit( JournalBatch& batch );
    //! Returns once no append is in flight; rethrows the error of the append that was, unchanged
    //! (the same exception JournalWriter::append threw). True if an append was in flight.
    bool wait();
    bool pending() const { return _pending.valid(); }

    //! The records appended so far (acknowledged by wait()), in file order.
    const std::vector<JournalRecordInfo>& records() const { return _records; }
    const std::string& path() const { return _path; }
    //! Seconds the background thread spent in appends: elapsed and its own CPU time (user +
    //! system, e.g. the checksum and the kernel's page-cache copy). Neither is on the engine's
    //! critical path; what the engine waits for is the caller's to time around wait().
    double backgroundWallSeconds() const { return _background_wall; }
    double backgroundCpuSeconds() const { return _background_cpu; }

  private:
    std::string _path;
    std::unique_ptr<JournalWriter> _writer;
    JournalBatch _in_flight;
    std::future<void> _pending;
    std::vector<JournalRecordInfo> _records;
    JournalRecordInfo _last{};
    double _background_wall = 0.0, _background_cpu = 0.0;
    double _last_wall = 0.0, _last_cpu = 0.0; //!< of the append in flight
};

} // namespace shardsweep
