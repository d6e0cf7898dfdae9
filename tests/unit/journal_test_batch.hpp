#pragma once
// Journal batches for the journal, write-behind and read-ahead tests: every field of every row
// is derived from its scenario id and position, so that a row read back in the wrong place, or
// not at all, shows.
#include <cstdint>
#include <shardsweep/sweep/journal.hpp>

namespace Test
{

//! Scenarios first .. first + n - 1, each with `gpus` GPU rows and shards(i) shard rows
//! (i: the scenario's position in the batch).
template <class ShardCount>
shardsweep::JournalBatch journalTestBatch( std::uint64_t first, int n, int gpus, ShardCount shards )
{
    using namespace shardsweep;
    JournalBatch b;
    for ( int i = 0; i < n; ++i )
    {
        ScenarioRow r;
        r.id = first + std::uint64_t( i );
        r.iteration_ms = 0.75 + 1.5 * double( r.id );
        r.num_gpus_rows = gpus;
        r.num_shards = shards( i );
        b.scenarios.push_back( r );
        for ( int g = 0; g < gpus; ++g )
        {
            GpuRow row;
            row.scenario_id = r.id;
            row.gpu = g;
            row.memory_GiB = double( r.id ) + 0.5 * g + 0.25;
            b.gpus.push_back( row );
        }
        for ( int s = 0; s < r.num_shards; ++s )
        {
            ShardRow row;
            row.scenario_id = r.id;
            row.shard = s;
            row.table = int( r.id ) * 10 + s;
            row.table_row = 7 * int( r.id ) + s;
            row.num_rows = 1000 * std::int64_t( r.id ) + s;
            row.dtype = std::uint8_t( s );
            row.cache_fraction = 1.0 / double( 1 + s + int( r.id ) );
            row.bwd_ms = 0.125 * double( i );
            row.fwd_ms = double( r.id ) + 0.125 * s;
            b.shards.push_back( row );
        }
    }
    return b;
}

} // namespace Test
