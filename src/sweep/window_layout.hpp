#pragma once
// The results writer's layout of rows (not installed): which journal rows of this rank go where in
// OUT.h5, window after window of scenario ids, with one reduction of row counts per window.
#include "window_prefetcher.hpp"

#include <mpi.h>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <string>
#include <vector>

namespace shardsweep
{
namespace detail
{

//! Appends [offset, offset + count) to `runs`, merged with the last run when they touch.
inline void addRun( std::vector<h5::Run>& runs, std::uint64_t offset, std::uint64_t count )
{
    if ( count == 0 )
        return;
    if ( !runs.empty() && runs.back().offset + runs.back().count == offset )
        runs.back().count += count;
    else
        runs.push_back( { offset, count } );
}

//! One scenario held by this rank during a window: where its rows are in the loaded batches.
//! Small, so that sorting a window's scenarios by id moves 48 bytes each, not the row.
struct Held
{
    std::uint64_t id = 0;
    std::uint32_t batch = 0; //!< index into the loaded batches
    std::uint32_t row = 0;   //!< index into that batch's scenario rows
    std::int32_t gpus = 0, shards = 0;
    std::size_t gpu_begin = 0, shard_begin = 0;
    //! Which copy of the scenario: journal index << 40 | record offset (journals below 1 TiB).
    std::int64_t copy = 0;
};

//! Runs `step` unless this rank already failed since the last agreement; an exception becomes
//! this rank's `failure`, which the next agreement point reduces over the ranks.
template <class Step>
void guarded( std::string& failure, Step&& step )
{
    if ( !failure.empty() )
        return;
    try
    {
        step();
    }
    catch ( const std::exception& e )
    {
        failure = e.what();
    }
}

//! Where every row of this rank goes, window after window of scenario ids. Windows start at the
//! slice's first id (a fresh run's batches start there: one window per record) and come every
//! `size` ids from there; ids before it are in windows of their own.
class WindowLayout
{
  public:
    WindowLayout( MPI_Comm comm, const std::vector<RecordRef>& records, const SweepOptions& options,
                  std::uint64_t num_scenarios )
        : _comm( comm ), _records( records ), _num_scenarios( num_scenarios ),
          _slice( sliceRange( num_scenarios, options.slice_index, options.slice_count ) ),
          _with_gpus( options.detail >= SweepDetail::gpus ),
          _with_shards( options.detail >= SweepDetail::all ),
          _writes_outside( mpi::rank( comm ) == 0 )
    {
        // A few tens of MB of rows: with shard rows (~5 KB per 50-table scenario) 2048 ids,
        // without them 16384 (every window is a synchronisation and a write of every column: at
        // 2048 ids the rounds, not the bytes, made /scenarios-only files 1.6x slower on 2 ranks).
        const std::uint64_t batch = std::max<std::uint64_t>( options.batch_size, 1 );
        const std::uint64_t min_ids = _with_shards ? 2048 : 16384;
        _size = options.finalize_window > 0 ? options.finalize_window
                                            : ( min_ids + batch - 1 ) / batch * batch;
    }

    const SliceRange& slice() const { return _slice; }

    //! The end of the window that starts at id `a`.
    std::uint64_t end( std::uint64_t a ) const
    {
        return std::min( _num_scenarios,
                         a < _slice.first ? std::min( a + _size, _slice.first ) : a + _size );
    }

    //! Scenarios found in more than one record so far (one copy of each kept).
    std::uint64_t duplicates() const { return _duplicates; }
    //! GPU and shard rows laid out so far.
    std::uint64_t gpuRows() const { return _gpu_base; }
    std::uint64_t shardRows() const { return _shard_base; }

    //! This rank's scenarios in the window starting at `a`, from every record that overlaps it:
    //! reads their scenario and GPU rows into `w`, checks the ids over all ranks and works out
    //! where every row goes in the file and in the column buffers. Collective, and the window
    //! loop's agreement point: a `failure` of any rank since the last one (this rank's is set
    //! when reading fails) throws CollectiveError on every rank.
    void prepare( std::uint64_t a, WindowRows& w, std::string& failure );

  private:
    //! Ids held more than once over the ranks keep one copy: the first journal's, at its lowest
    //! offset. Copies arise when two runs worked on one output at once (where the output's lock
    //! cannot be taken); rows are deterministic, so every copy holds the same values and only
    //! the choice must be the same on every rank. Collective (two reductions over the repeated
    //! ids), called by every rank for the same `repeated`.
    void keepFirstCopies( std::uint64_t a, const std::vector<std::uint64_t>& repeated );

    //! Reads the scenario and GPU rows of the records overlapping [a, b) into `w` and lists the
    //! scenarios of [a, b) they hold, in id order.
    void loadRecords( std::uint64_t a, std::uint64_t b, WindowRows& w );

    //! The file runs and the column-buffer destinations of the held rows (and, on rank 0, the
    //! not-computed rows of the ids outside the slice).
    void placeRows( std::uint64_t a, std::uint64_t b, const std::vector<std::uint64_t>& gpu_offset,
                    const std::vector<std::uint64_t>& shard_offset, WindowRows& w ) const;

    MPI_Comm _comm;
    const std::vector<RecordRef>& _records;
    std::uint64_t _num_scenarios;
    SliceRange _slice;
    bool _with_gpus, _with_shards, _writes_outside;
    std::uint64_t _size = 0;                      //!< ids per window
    std::uint64_t _gpu_base = 0, _shard_base = 0; //!< file rows laid out so far
    std::vector<Held> _held;                      //!< this rank's scenarios of the window
    std::vector<std::int64_t> _counts;            //!< per id: GPU rows, shard rows, copies
    std::uint64_t _duplicates = 0;
};

} // namespace detail
} // namespace shardsweep
