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

    //! The statistics of a case seen before, or null.
    const EmbeddingTableStats* find( const TableCaseKey& key ) const
    {
        const auto it = _stats.find( key );
        return it == _stats.end() ? nullptr : &it->second;
    }
    void insert( const TableCaseKey& key, const EmbeddingTableStats& stats )
    {
        if ( _stats.size() >= _max_entries )
            _stats.clear();
        _stats.emplace( key, stats );
    }
    std::size_t size() const { return _stats.size(); }

  private:
    std::size_t _max_entries;
    std::unordered_map<TableCaseKey, EmbeddingTableStats, TableCaseKeyHash> _stats;
};

} // namespace shardsweep
