#pragma once
// The results writer's double buffering (not installed): while the main thread writes the HDF5
// columns of one window of scenario ids, a second thread reads the next window's shard rows from
// the journals (pread + checksum) and scatters every row kind into that window's column buffers.
// The thread touches only files it reads and plain buffers: HDF5 and MPI calls stay on the main
// thread (HDF5 is not thread-safe; MPI is initialised without thread support).
#include "column_scatter.hpp"
#include "sweep_internal.hpp"

#include <future>
#include <shardsweep/io/hdf5.hpp>
#include <vector>

namespace shardsweep
{
namespace detail
{

//! Where the shard rows of one held scenario go: rows [source, source + count) of its journal
//! batch, to row `dest` of this rank's shard columns in the window.
struct ShardSegment
{
    std::size_t batch, source, count, dest;
};

//! One window of this rank's rows: what the main thread worked out (the journal records'
//! scenario and GPU rows, where each row goes, the file runs) and the column buffers the scatter
//! fills. Two of them alternate; their vectors keep their memory across windows.
struct WindowRows
{
    // Filled by the main thread before the scatter.
    std::vector<JournalBatch> loaded;   //!< scenario and GPU rows of the window's records
    std::size_t num_loaded = 0;         //!< batches of `loaded` in use
    std::vector<std::size_t> record_of; //!< record index of each loaded batch
    std::vector<ScenarioRow> scen_rows; //!< in file order, offsets set
    std::vector<RowSpan<GpuRow>> gpu_out;
    std::vector<ShardSegment> shard_out;
    std::size_t local_gpus = 0, local_shards = 0;
    bool with_gpus = false, with_shards = false;
    std::vector<h5::Run> scen_runs, gpu_runs, shard_runs;
    // Filled by scatterWindow.
    ColumnBuffers scen_columns, gpu_columns, shard_columns;
};

//! Streams the shard rows of every loaded record (checking each record's checksum, as
//! readJournalShards does, even when the window has no shard rows) and scatters the window's
//! scenario, GPU and shard rows into its column buffers. `block` is scratch (kept to reuse it).
void scatterWindow( const std::vector<RecordRef>& records, WindowRows& window,
                    std::vector<ShardRow>& block );

//! Runs scatterWindow on a background thread, one window at a time.
class WindowPrefetcher
{
  public:
    //! `records` must outlive the prefetcher and not change while a window is in flight.
    explicit WindowPrefetcher( const std::vector<RecordRef>& records ) : _records( records ) {}
    //! Waits for a window still in flight (its error is dropped: the caller is already unwinding
    //! from another one), so that the window's buffers may be freed after this.
    ~WindowPrefetcher();
    WindowPrefetcher( const WindowPrefetcher& ) = delete;
    WindowPrefetcher& operator=( const WindowPrefetcher& ) = delete;

    //! Waits for the previous window (rethrowing its error), then starts scattering `window` in
    //! the background. The caller must not touch `window` until wait() has returned.
    void start( WindowRows& window );
    //! Returns once no window is in flight; rethrows the error of the one that was, unchanged
    //! (what readJournalShards threw, e.g. "journal ... is damaged at byte N").
    void wait();

  private:
    const std::vector<RecordRef>& _records;
    std::vector<ShardRow> _block; //!< only the thread touches it while a window is in flight
    std::future<void> _pending;
};

} // namespace detail
} // namespace shardsweep
