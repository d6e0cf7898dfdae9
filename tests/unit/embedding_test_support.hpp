#pragma once
// Shared by tstEmbeddingModel.hpp and tstEmbeddingCost.hpp: Zipf tables, the exact distinct-row
// sum in long double, a simulated LRU cache and an evaluation counter.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <shardsweep/model/embedding.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

// Each test file that includes this header uses only some of the helpers ([[maybe_unused]]).
namespace
{
TableSpec zipfTable( std::int64_t rows, double alpha )
{
    TableSpec t;
    t.rows = rows;
    t.dim = 64;
    t.distribution = alpha > 0.0 ? AccessDistribution::zipf : AccessDistribution::uniform;
    t.zipf_alpha = alpha;
    return t;
}

//! p_i = i^-α / Σ_j j^-α in long double, summed from the smallest terms up.
std::vector<long double> zipfProbabilities( std::int64_t rows, double alpha,
                                            long double* harmonic = nullptr )
{
    std::vector<long double> p( rows );
    long double h = 0.0L;
    for ( std::int64_t i = rows; i >= 1; --i )
    {
        p[i - 1] = std::pow( static_cast<long double>( i ), -static_cast<long double>( alpha ) );
        h += p[i - 1];
    }
    for ( auto& x : p )
        x /= h;
    if ( harmonic )
        *harmonic = h;
    return p;
}

//! Σ_i 1 − (1 − p_i)^N = Σ_i −expm1(N·log1p(−p_i)), smallest terms first; `log_q` holds
//! log1p(−p_i) (computed once per distribution).
[[maybe_unused]] long double exactUniqueRows( const std::vector<long double>& log_q,
                                              double lookups )
{
    long double u = 0.0L;
    for ( std::size_t i = log_q.size(); i-- > 0; )
        u += -std::expm1( static_cast<long double>( lookups ) * log_q[i] );
    return u;
}

//! A fully associative LRU cache of `capacity` rows over row ids 0..rows-1: a doubly linked list
//! threaded through per-row arrays (head = most recent), O(1) per access.
class LruCache
{
  public:
    LruCache( std::int64_t rows, std::int64_t capacity )
        : _prev( rows, -1 ), _next( rows, -1 ), _in( rows, 0 ), _capacity( capacity )
    {
    }
    //! Touches `row`; true on a hit.
    bool access( std::int64_t row )
    {
        if ( _in[row] )
        {
            if ( row != _head )
            {
                unlink( row );
                pushFront( row );
            }
            return true;
        }
        if ( _size == _capacity )
        {
            const std::int64_t victim = _tail;
            unlink( victim );
            _in[victim] = 0;
            --_size;
        }
        pushFront( row );
        _in[row] = 1;
        ++_size;
        return false;
    }

  private:
    void unlink( std::int64_t r )
    {
        if ( _prev[r] >= 0 )
            _next[_prev[r]] = _next[r];
        else
            _head = _next[r];
        if ( _next[r] >= 0 )
            _prev[_next[r]] = _prev[r];
        else
            _tail = _prev[r];
        _prev[r] = _next[r] = -1;
    }
    void pushFront( std::int64_t r )
    {
        _prev[r] = -1;
        _next[r] = _head;
        if ( _head >= 0 )
            _prev[_head] = r;
        _head = r;
        if ( _tail < 0 )
            _tail = r;
    }
    std::vector<std::int64_t> _prev, _next;
    std::vector<char> _in;
    std::int64_t _capacity, _size = 0, _head = -1, _tail = -1;
};

//! Simulated LRU hit ratio for independent draws from `prob` (row i with probability prob[i]):
//! inverse-CDF sampling with mt19937_64, `warmup` draws to fill the cache, then `measured`.
[[maybe_unused]] double simulateLru( const std::vector<double>& prob, std::int64_t capacity,
                                     long warmup, long measured, std::uint64_t seed )
{
    std::vector<double> cdf( prob.size() );
    double acc = 0.0;
    for ( std::size_t i = 0; i < prob.size(); ++i )
        cdf[i] = ( acc += prob[i] );
    std::mt19937_64 gen( seed );
    std::uniform_real_distribution<double> u( 0.0, acc );
    LruCache cache( static_cast<std::int64_t>( prob.size() ), capacity );
    auto draw = [&]()
    {
        const auto it = std::upper_bound( cdf.begin(), cdf.end(), u( gen ) );
        return static_cast<std::int64_t>(
            std::min<std::ptrdiff_t>( it - cdf.begin(), cdf.size() - 1 ) );
    };
    for ( long k = 0; k < warmup; ++k )
        cache.access( draw() );
    long hits = 0;
    for ( long k = 0; k < measured; ++k )
        hits += cache.access( draw() );
    return static_cast<double>( hits ) / measured;
}
//! Counts the evaluations of a term (the work of one sum).
struct CountingTerm
{
    using value_type = double;
    access_detail::PowerTerm term;
    double alpha = term.alpha;
    mutable int calls = 0;
    // Device-callable like the terms it wraps (nvcc checks every instantiation of the sum), but
    // only ever called on the host.
    KOKKOS_INLINE_FUNCTION double value( double u ) const
    {
        ++calls;
        return term.value( u );
    }
    KOKKOS_INLINE_FUNCTION access_detail::TermValue operator()( double x ) const
    {
        ++calls;
        return term( x );
    }
};
} // namespace

} // namespace Test
