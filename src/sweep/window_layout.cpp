// The results writer's layout of rows: reading a window's records, checking that every scenario of
// the slice is there once (keeping one copy of a repeated one), and placing the rows.
#include "window_layout.hpp"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>
#include <limits>
#include <shardsweep/core/errors.hpp>

namespace shardsweep
{
namespace detail
{

namespace
{

//! The row of a scenario outside the run's slice (not computed): the columns' fill values.
ScenarioRow notComputedRow()
{
    ScenarioRow row;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for ( const auto& c : scenarioColumns() )
        if ( c.type == h5::Type::f64 )
            std::memcpy( reinterpret_cast<char*>( &row ) + c.offset, &nan, sizeof( nan ) );
    return row;
}

//! Rank 0 writes the rows of the ids in [from, to) (outside the slice) as not computed.
void addNotComputed( std::uint64_t from, std::uint64_t to, std::vector<ScenarioRow>& rows,
                     std::vector<h5::Run>& runs )
{
    static const ScenarioRow fill = notComputedRow();
    for ( std::uint64_t id = from; id < to; ++id )
    {
        rows.push_back( fill );
        rows.back().id = id;
        addRun( runs, id, 1 );
    }
}

} // namespace

void WindowLayout::prepare( std::uint64_t a, WindowRows& w, std::string& failure )
{
    const std::uint64_t b = end( a );
    guarded( failure, [&] { loadRecords( a, b, w ); } );
    if ( !failure.empty() )
        _held.clear(); // not loaded (or partly): only the failure is reduced
    const std::uint64_t n = b - a;
    // Per id: GPU rows, shard rows, copies; then the failure flag.
    _counts.assign( 3 * n + 1, 0 );
    for ( const auto& h : _held )
    {
        const std::uint64_t i = h.id - a;
        _counts[3 * i] = h.gpus;
        _counts[3 * i + 1] = h.shards;
        _counts[3 * i + 2] += 1;
    }
    _counts[3 * n] = failure.empty() ? 0 : 1;
    // The window's one synchronisation (its writes are independent): waited for without
    // spinning, so that on a node with more threads than cores the ranks still writing or
    // reading get the core of a rank that waits.
    mpi::allreduceSumYielding( _counts.data(), _counts.size(), _comm );
    if ( _counts[3 * n] > 0 )
        mpi::throwIfAnyFailed( failure, _comm );
    std::vector<std::uint64_t> repeated; // positions in the window of ids with copies
    for ( std::uint64_t i = 0; i < n; ++i )
    {
        const bool mine = a + i >= _slice.first && a + i < _slice.end;
        const std::int64_t copies = _counts[3 * i + 2];
        if ( mine && copies > 1 )
            repeated.push_back( i );
        else if ( copies != ( mine ? 1 : 0 ) )
            throw CollectiveError( // the same counts on every rank: rank 0 says it
                fmt::format( "scenario {} appears {} times in the journals (expected {})", a + i,
                             copies, mine ? "once" : "never: outside the slice" ),
                mpi::rank( _comm ) == 0 );
    }
    if ( !repeated.empty() )
        keepFirstCopies( a, repeated );
    // Offsets: prefix sums in id order.
    std::vector<std::uint64_t> gpu_offset( n ), shard_offset( n );
    for ( std::uint64_t i = 0; i < n; ++i )
    {
        gpu_offset[i] = _gpu_base;
        shard_offset[i] = _shard_base;
        _gpu_base += std::uint64_t( _counts[3 * i] );
        _shard_base += std::uint64_t( _counts[3 * i + 1] );
    }
    guarded( failure, [&] { placeRows( a, b, gpu_offset, shard_offset, w ); } );
}

void WindowLayout::keepFirstCopies( std::uint64_t a, const std::vector<std::uint64_t>& repeated )
{
    const std::size_t m = repeated.size();
    const auto slot = [&]( std::uint64_t id )
    {
        auto it = std::lower_bound( repeated.begin(), repeated.end(), id - a );
        return it != repeated.end() && *it == id - a ? std::size_t( it - repeated.begin() ) : m;
    };
    std::vector<std::int64_t> first( m, std::numeric_limits<std::int64_t>::max() );
    for ( const Held& h : _held )
        if ( const std::size_t j = slot( h.id ); j < m )
            first[j] = std::min( first[j], h.copy );
    mpi::allreduceMin( first.data(), m, _comm );
    _held.erase( std::remove_if( _held.begin(), _held.end(),
                                 [&]( const Held& h )
                                 {
                                     const std::size_t j = slot( h.id );
                                     return j < m && h.copy != first[j];
                                 } ),
                 _held.end() );
    std::vector<std::int64_t> rows( 2 * m, 0 ); // the kept copies' GPU and shard rows
    for ( const Held& h : _held )
        if ( const std::size_t j = slot( h.id ); j < m )
        {
            rows[2 * j] = h.gpus;
            rows[2 * j + 1] = h.shards;
        }
    mpi::allreduceSum( rows.data(), rows.size(), _comm );
    for ( std::size_t j = 0; j < m; ++j )
    {
        _counts[3 * repeated[j]] = rows[2 * j];
        _counts[3 * repeated[j] + 1] = rows[2 * j + 1];
        _counts[3 * repeated[j] + 2] = 1;
    }
    _duplicates += m;
}

void WindowLayout::loadRecords( std::uint64_t a, std::uint64_t b, WindowRows& w )
{
    w.num_loaded = 0;
    w.record_of.clear();
    w.with_gpus = _with_gpus;
    w.with_shards = _with_shards;
    _held.clear();
    for ( std::size_t k = 0; k < _records.size(); ++k )
    {
        const auto& info = _records[k].info;
        if ( info.num_scenarios == 0 || info.first_id >= b || info.last_id < a )
            continue;
        if ( w.num_loaded == w.loaded.size() )
            w.loaded.emplace_back();
        readJournalRecordHead( _records[k].path, info, w.loaded[w.num_loaded] );
        w.record_of.push_back( k );
        const JournalBatch& batch = w.loaded[w.num_loaded++];
        const std::int64_t copy =
            std::int64_t( _records[k].journal ) << 40 | std::int64_t( info.offset );
        std::size_t g = 0, s = 0;
        for ( std::size_t r = 0; r < batch.scenarios.size(); ++r )
        {
            const ScenarioRow& row = batch.scenarios[r];
            const std::int32_t shards = _with_shards ? row.num_shards : 0;
            if ( row.id >= a && row.id < b )
                _held.push_back( { row.id, std::uint32_t( w.num_loaded - 1 ), std::uint32_t( r ),
                                   row.num_gpus_rows, shards, g, s, copy } );
            g += std::size_t( row.num_gpus_rows );
            s += std::size_t( shards );
        }
    }
    // Records come sorted by first id and a fresh run's hold ascending ids: usually no-op.
    // (Two copies of an id on one rank: the one kept does not depend on their order.)
    const auto by_id = []( const Held& x, const Held& y ) { return x.id < y.id; };
    if ( !std::is_sorted( _held.begin(), _held.end(), by_id ) )
        std::sort( _held.begin(), _held.end(), by_id );
}

void WindowLayout::placeRows( std::uint64_t a, std::uint64_t b,
                              const std::vector<std::uint64_t>& gpu_offset,
                              const std::vector<std::uint64_t>& shard_offset, WindowRows& w ) const
{
    w.scen_runs.clear();
    w.gpu_runs.clear();
    w.shard_runs.clear();
    w.scen_rows.clear();
    w.gpu_out.clear();
    w.shard_out.clear();
    w.local_gpus = 0;
    w.local_shards = 0;
    // Ids before the slice, then the slice's rows (sorted), then ids after it.
    w.scen_rows.reserve( _writes_outside ? std::size_t( b - a ) : _held.size() );
    if ( _writes_outside )
        addNotComputed( a, std::min( b, _slice.first ), w.scen_rows, w.scen_runs );
    for ( const Held& h : _held )
    {
        const std::uint64_t i = h.id - a;
        const JournalBatch& batch = w.loaded[h.batch];
        w.scen_rows.push_back( batch.scenarios[h.row] );
        w.scen_rows.back().gpu_row_offset = std::int64_t( gpu_offset[i] );
        w.scen_rows.back().shard_row_offset = std::int64_t( shard_offset[i] );
        addRun( w.scen_runs, h.id, 1 );
        if ( _with_gpus )
        {
            addRun( w.gpu_runs, gpu_offset[i], std::uint64_t( h.gpus ) );
            w.gpu_out.push_back( { batch.gpus.data() + h.gpu_begin, std::size_t( h.gpus ) } );
            w.local_gpus += std::size_t( h.gpus );
        }
        if ( _with_shards )
        {
            addRun( w.shard_runs, shard_offset[i], std::uint64_t( h.shards ) );
            if ( h.shards > 0 )
                w.shard_out.push_back(
                    { h.batch, h.shard_begin, std::size_t( h.shards ), w.local_shards } );
            w.local_shards += std::size_t( h.shards );
        }
    }
    if ( _writes_outside )
        addNotComputed( std::max( a, _slice.end ), b, w.scen_rows, w.scen_runs );
}

} // namespace detail
} // namespace shardsweep
