// Write-behind for the sweep's journal (one background append in flight, double-buffered).
#include <chrono>
#include <ctime>
#include <shardsweep/sweep/journal_async.hpp>
#include <utility>

namespace shardsweep
{

namespace
{

double threadCpuSeconds()
{
    timespec ts{};
    ::clock_gettime( CLOCK_THREAD_CPUTIME_ID, &ts );
    return double( ts.tv_sec ) + 1e-9 * double( ts.tv_nsec );
}

double wallSeconds()
{
    return std::chrono::duration<double>( std::chrono::steady_clock::now().time_since_epoch() )
        .count();
}

} // namespace

AsyncJournalWriter::AsyncJournalWriter( std::string path ) : _path( std::move( path ) ) {}

AsyncJournalWriter::~AsyncJournalWriter()
{
    // The thread writes from _in_flight and _writer: it must end before they go.
    if ( _pending.valid() )
        _pending.wait();
}

bool AsyncJournalWriter::wait()
{
    if ( !_pending.valid() )
        return false;
    // get() leaves the future empty whether the append succeeded or threw: a failed batch is
    // reported once and never counted.
    _pending.get();
    _records.push_back( _last );
    _background_wall += _last_wall;
    _background_cpu += _last_cpu;
    return true;
}

void AsyncJournalWriter::submit( JournalBatch& batch )
{
    wait();
    if ( !_writer )
        _writer = std::make_unique<JournalWriter>( _path );
    std::swap( batch, _in_flight );
    // Only the thread touches _in_flight, _writer, _last and _last_* until wait() joins it.
    _pending = std::async( std::launch::async,
                           [this]
                           {
                               const double wall = wallSeconds(), cpu = threadCpuSeconds();
                               _last = _writer->append( _in_flight );
                               _last_wall = wallSeconds() - wall;
                               _last_cpu = threadCpuSeconds() - cpu;
                           } );
}

} // namespace shardsweep
