#pragma once
//! \file table_stats_cache.hpp
//! \brief Access statistics of table cases kept across kernel calls (one cache per process).
//!
//! A sweep draws its tables from a pool of a few hundred, so the distinct (table spec, batch,
//! cache fraction) cases of one batch of scenarios are almost all cases of the previous batch.
//! packScenarios looks each distinct case of a batch up here and the kernel computes only the
//! ones not found; evaluateScenarios then stores those. A case's statistics depend on nothing
//! but the case (embeddingTableStats is a pure function), so a hit returns the bits the kernel
//! would compute and results do not depend on which batch, rank or thread saw a case first.
#include <array>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <shardsweep/model/embedding.hpp>
#include <unordered_map>

namespace shardsweep
{

struct TableCase;

//! Every field embeddingTableStats reads, as a fixed-size key (no allocation per table).
constexpr std::size_t kTableCaseKeySize = 7 + kReuseBins;
using TableCaseKey = std::array<double, kTableCaseKeySize>;
TableCaseKey tableCaseKey( const TableCase& c );
TableCaseKey tableCaseKey( const TableSpec& spec, double batch, double cache_fraction );

//! Hash of a key's 64-bit words (equal keys with equal bits hash alike; maps compare with ==).
struct TableCaseKeyHash
{
    std::size_t operator()( const TableCaseKey& key ) const;
};

class TableStatsCache
{
  public:
    //! Beyond `max_entries` distinct cases the cache starts over (bounded memory for sweeps
    //! whose planners pick continuous cache fractions).
    explicit TableStatsCache( std::size_t max_entries = std::size_t( 1 ) << 20 )
        : _max_entries( max_entries )
    {
    }

    //! Copies the statistics of a case seen before into `stats`; false if the case is new.
    bool find( const TableCaseKey& key, EmbeddingTableStats& stats ) const
    {
        std::lock_guard<std::mutex> lock( _mutex );
        const auto it = _stats.find( key );
        if ( it == _stats.end() )
            return false;
        stats = it->second;
        return true;
    }
    void insert( const TableCaseKey& key, const EmbeddingTableStats& stats )
    {
        std::lock_guard<std::mutex> lock( _mutex );
        if ( _stats.size() >= _max_entries )
            _stats.clear();
        _stats.emplace( key, stats );
    }
    std::size_t size() const
    {
        std::lock_guard<std::mutex> lock( _mutex );
        return _stats.size();
    }

  private:
    std::size_t _max_entries;
    //! Kernel calls of one rank may run on several host threads at once (the sweep engine's
    //! tiles): a lookup or insert at a time. A call looks up only the cases new to it, a few
    //! per scenario, so the lock is rarely contended.
    mutable std::mutex _mutex;
    std::unordered_map<TableCaseKey, EmbeddingTableStats, TableCaseKeyHash> _stats;
};

} // namespace shardsweep
