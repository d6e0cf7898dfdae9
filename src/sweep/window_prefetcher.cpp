// Reading and scattering one window of journal rows into column buffers, on a second thread.
#include "window_prefetcher.hpp"

#include <algorithm>

namespace shardsweep
{
namespace detail
{

namespace
{

//! Streams the shard rows of every loaded batch from its journal record into the columns (one
//! read of the rows, scattered block by block while in cache; the checksum checked as they go).
void scatterShards( const std::vector<RecordRef>& records, WindowRows& w,
                    std::vector<ShardRow>& block )
{
    auto& segments = w.shard_out;
    std::sort( segments.begin(), segments.end(),
               []( const ShardSegment& x, const ShardSegment& y )
               { return x.batch != y.batch ? x.batch < y.batch : x.source < y.source; } );
    constexpr std::size_t kBlockRows = 512; // 40 KiB of 80-byte rows: stays in L2 while scattered
    auto seg = segments.begin();
    for ( std::size_t b = 0; b < w.num_loaded; ++b )
    {
        const RecordRef& record = records[w.record_of[b]];
        while ( seg != segments.end() && seg->batch < b )
            ++seg; // none left: every row of a batch is in its record
        readJournalShards( record.path, record.info, w.loaded[b], block, kBlockRows,
                           [&]( std::size_t first, std::size_t count )
                           {
                               const std::size_t end = first + count;
                               for ( ; seg != segments.end() && seg->batch == b; ++seg )
                               {
                                   // The part of this segment inside the block; the rest waits for
                                   // the next.
                                   const std::size_t lo = std::max( seg->source, first );
                                   const std::size_t hi = std::min( seg->source + seg->count, end );
                                   if ( lo < hi )
                                       scatterRows( block.data() + ( lo - first ), hi - lo,
                                                    seg->dest + ( lo - seg->source ),
                                                    shardColumns(), w.shard_columns );
                                   if ( seg->source + seg->count > end )
                                       break;
                               }
                           } );
    }
}

} // namespace

void scatterWindow( const std::vector<RecordRef>& records, WindowRows& w,
                    std::vector<ShardRow>& block )
{
    // Every record is streamed (its checksum checked) even without shard rows.
    w.shard_columns.resize( shardColumns(), w.local_shards );
    scatterShards( records, w, block );
    w.scen_columns.resize( scenarioColumns(), w.scen_rows.size() );
    scatterRows( w.scen_rows.data(), w.scen_rows.size(), 0, scenarioColumns(), w.scen_columns );
    if ( w.with_gpus )
    {
        w.gpu_columns.resize( gpuColumns(), w.local_gpus );
        std::size_t at = 0;
        for ( const RowSpan<GpuRow>& span : w.gpu_out )
        {
            scatterRows( span.first, span.count, at, gpuColumns(), w.gpu_columns );
            at += span.count;
        }
    }
}

WindowPrefetcher::~WindowPrefetcher()
{
    // The thread writes into the window's buffers: it must end before they go.
    if ( _pending.valid() )
        _pending.wait();
}

void WindowPrefetcher::start( WindowRows& window )
{
    wait();
    _pending = std::async( std::launch::async,
                           [this, &window] { scatterWindow( _records, window, _block ); } );
}

void WindowPrefetcher::wait()
{
    // get() leaves the future empty whether the scatter succeeded or threw.
    if ( _pending.valid() )
        _pending.get();
}

} // namespace detail
} // namespace shardsweep
