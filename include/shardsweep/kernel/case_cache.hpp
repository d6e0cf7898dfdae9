#pragma once
//! \file case_cache.hpp
//! \brief The plan-independent cases of the batched kernel, kept across kernel calls (one cache
//! per process): table access statistics, dense parts and transformer operator cases.
//!
//! A sweep draws its tables from a pool of a few hundred and its dense models and transformer
//! layouts from a short list, so the distinct cases of one batch of scenarios are almost all
//! cases of the previous batch. packScenarios looks each distinct case of a batch up here and the
//! kernel computes only the ones not found; evaluateScenarios then stores those. A case's value
//! depends on nothing but the case (embeddingTableStats, denseCost and transformerOperatorCost
//! are pure functions of the key's fields), so a hit returns the bits the kernel would compute
//! and results do not depend on which batch, rank or thread saw a case first. Dense cases priced
//! with a learned GEMM model are not kept: the key does not name the model.
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <mutex>
#include <shardsweep/core/hash.hpp>
#include <shardsweep/domain/dlrm_fields.hpp>
#include <shardsweep/domain/gpu_fields.hpp>
#include <shardsweep/domain/transformer_fields.hpp>
#include <shardsweep/model/dense.hpp>
#include <shardsweep/model/embedding.hpp>
#include <shardsweep/model/transformer.hpp>
#include <unordered_map>

namespace shardsweep
{

struct TableCase;
struct DenseCase;

//! Every field embeddingTableStats reads, as a fixed-size key (no allocation per table).
constexpr std::size_t kTableCaseKeySize = 7 + kReuseBins;
using TableCaseKey = std::array<double, kTableCaseKeySize>;
TableCaseKey tableCaseKey( const TableCase& c );
TableCaseKey tableCaseKey( const TableSpec& spec, double batch, double cache_fraction );

//! Every field denseCost reads: the GPU, the dense model's fields, its layer counts, the case's
//! inputs, then the layer widths (unused entries 0).
constexpr std::size_t kDenseCaseHeadSize = kGpuSpecWords + std::size( kDenseFields ) + 6;
constexpr std::size_t kDenseCaseKeySize = kDenseCaseHeadSize + 2 * kMaxMlpLayers;
using DenseCaseKey = std::array<double, kDenseCaseKeySize>;
DenseCaseKey denseCaseKey( const DenseCase& c );

//! The GPU, every model field (domain/transformer_fields.hpp) and the case's seven knobs.
constexpr std::size_t kTransformerCaseKeySize = kGpuSpecWords + kNumModelFields + 7;
using TransformerCaseKey = std::array<double, kTransformerCaseKeySize>;
TransformerCaseKey transformerCaseKey( const TransformerOperatorCase& c );

//! Hashes of a key's 64-bit words (equal keys with equal bits hash alike; maps compare with ==):
//! a table case's seven scalars only (pack_scenarios.cpp says why), every word of the others.
struct TableCaseKeyHash
{
    std::size_t operator()( const TableCaseKey& key ) const;
};
struct CaseKeyHash
{
    template <std::size_t N>
    std::size_t operator()( const std::array<double, N>& key ) const
    {
        return static_cast<std::size_t>( hashWords( key.data(), N ) );
    }
};

//! One kind of case: a bounded map from key to value that several threads may share.
template <class Key, class Value, class Hash>
class KeyedCases
{
  public:
    explicit KeyedCases( std::size_t max_entries ) : _max_entries( max_entries ) {}

    //! Copies the value of a case seen before into `value`; false if the case is new.
    bool find( const Key& key, Value& value ) const
    {
        std::lock_guard<std::mutex> lock( _mutex );
        const auto it = _values.find( key );
        if ( it == _values.end() )
            return false;
        value = it->second;
        return true;
    }
    //! Beyond the maximum number of entries the map starts over (bounded memory for sweeps whose
    //! planners pick continuous cache fractions).
    void insert( const Key& key, const Value& value )
    {
        std::lock_guard<std::mutex> lock( _mutex );
        if ( _values.size() >= _max_entries )
            _values.clear();
        _values.emplace( key, value );
    }
    std::size_t size() const
    {
        std::lock_guard<std::mutex> lock( _mutex );
        return _values.size();
    }

  private:
    std::size_t _max_entries;
    //! Kernel calls of one rank may run on several host threads at once (the sweep engine's
    //! tiles): a lookup or insert at a time. A call looks up only the cases new to it, a few
    //! per scenario, so the lock is rarely contended.
    mutable std::mutex _mutex;
    std::unordered_map<Key, Value, Hash> _values;
};

//! The three kinds of cases, each bounded by `max_entries`.
class CaseCache
{
  public:
    explicit CaseCache( std::size_t max_entries = std::size_t( 1 ) << 20 )
        : tables( max_entries ), dense( max_entries ), transformer( max_entries )
    {
    }

    KeyedCases<TableCaseKey, EmbeddingTableStats, TableCaseKeyHash> tables;
    KeyedCases<DenseCaseKey, DenseCost, CaseKeyHash> dense;
    KeyedCases<TransformerCaseKey, TransformerOperatorCost, CaseKeyHash> transformer;
};

} // namespace shardsweep
