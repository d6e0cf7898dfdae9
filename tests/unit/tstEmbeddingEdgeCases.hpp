// Randomised edges of the Zipf sums in model/access_distribution.hpp, outside the regular grid of
// tstEmbeddingModel: every table size around the exact head (E = 1 … 64, the Euler–Maclaurin part
// starts at row 33), α from 1e-6 to 6 (beyond the α ≤ 2 of the stated remainder bound) and within
// 1e-6 of 1 (where H(E, α) changes form analytically), fractional and huge lookup counts
// (N = 0.3 … 1e12), and LRU caches of 1 row and of E − 1 rows. References are brute-force sums
// over every row in long double; Che's fixed point by bisection on ln T in long double.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>
#include <random>
#include <shardsweep/model/access_distribution.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
struct EdgeCase
{
    std::int64_t rows;
    double alpha, lookups, cache;
};

//! The cases: a fixed seed, so a failure names a reproducible case.
std::vector<EdgeCase> edgeCases()
{
    std::mt19937_64 gen( 20261123 );
    std::uniform_real_distribution<double> u01( 0.0, 1.0 );
    std::vector<EdgeCase> cases;
    for ( int k = 0; k < 160; ++k )
    {
        EdgeCase c;
        c.rows = k < 64 ? k + 1
                        : static_cast<std::int64_t>( std::exp( u01( gen ) * std::log( 20000.0 ) ) );
        const double r = u01( gen );
        c.alpha = r < 0.15  ? std::pow( 10.0, -6.0 + 5.0 * u01( gen ) )
                  : r < 0.3 ? 1.0 + ( u01( gen ) - 0.5 ) * 2e-6
                            : 6.0 * u01( gen );
        c.lookups = std::exp( std::log( 0.3 ) + u01( gen ) * std::log( 1e12 / 0.3 ) );
        c.cache = k % 5 == 0   ? 1.0
                  : k % 5 == 1 ? static_cast<double>( c.rows - 1 )
                               : std::floor( 1.0 + u01( gen ) * static_cast<double>( c.rows - 1 ) );
        cases.push_back( c );
    }
    return cases;
}

std::vector<long double> probabilities( std::int64_t rows, double alpha )
{
    std::vector<long double> p( rows );
    long double h = 0.0L;
    for ( std::int64_t i = rows; i >= 1; --i )
        h += ( p[i - 1] =
                   std::pow( static_cast<long double>( i ), -static_cast<long double>( alpha ) ) );
    for ( auto& x : p )
        x /= h;
    return p;
}

TableSpec zipf( std::int64_t rows, double alpha )
{
    TableSpec t;
    t.rows = rows;
    t.dim = 16;
    t.distribution = AccessDistribution::zipf;
    t.zipf_alpha = alpha;
    return t;
}
} // namespace

// Distinct rows: relative error below 1e-9 on every case (the grid test asserts 1e-9 too; the
// stated remainder bound is 2.2e-8 for α ≤ 2 and 1e-7 for α = 3).
TEST( TEST_CATEGORY, unique_rows_edge_cases )
{
    double worst = 0.0;
    for ( const EdgeCase& c : edgeCases() )
    {
        const std::vector<long double> p = probabilities( c.rows, c.alpha );
        long double exact = 0.0L;
        for ( std::size_t i = p.size(); i-- > 0; )
            exact += -std::expm1( static_cast<long double>( c.lookups ) * std::log1p( -p[i] ) );
        const double model = expectedUniqueRows( zipf( c.rows, c.alpha ), c.lookups );
        const double rel = static_cast<double>( std::fabs( model - exact ) / exact );
        worst = std::max( worst, rel );
        EXPECT_LT( rel, 1e-9 ) << "E=" << c.rows << " alpha=" << c.alpha << " N=" << c.lookups
                               << " model " << model << " exact " << static_cast<double>( exact );
    }
    std::printf( "edge cases: distinct rows, max relative error %.2e\n", worst );
}

// Che's hit rate against its fixed point solved by brute force, |Δ| < 1e-9 (absolute), for
// caches from 1 row to E − 1 rows.
TEST( TEST_CATEGORY, lru_hit_rate_edge_cases )
{
    double worst = 0.0;
    for ( const EdgeCase& c : edgeCases() )
    {
        if ( !( c.cache >= 1.0 && c.cache < static_cast<double>( c.rows ) ) )
            continue;
        const std::vector<long double> p = probabilities( c.rows, c.alpha );
        long double lo = -60.0L, hi = 80.0L; // ln T
        for ( int it = 0; it < 110; ++it )
        {
            const long double mid = 0.5L * ( lo + hi ), time = std::exp( mid );
            long double occ = 0.0L;
            for ( const long double q : p )
                occ += -std::expm1( -q * time );
            ( occ < c.cache ? lo : hi ) = mid;
        }
        const long double time = std::exp( 0.5L * ( lo + hi ) );
        long double hit = 0.0L;
        for ( const long double q : p )
            hit += q * -std::expm1( -q * time );
        const double model = lruHitRate( zipf( c.rows, c.alpha ), c.lookups, c.cache );
        const double diff = std::fabs( model - static_cast<double>( hit ) );
        worst = std::max( worst, diff );
        EXPECT_LT( diff, 1e-9 ) << "E=" << c.rows << " alpha=" << c.alpha << " C=" << c.cache
                                << " model " << model << " brute force "
                                << static_cast<double>( hit );
    }
    std::printf( "edge cases: Che hit rate, max absolute error %.2e\n", worst );
}

namespace
{
//! Fully associative LRU over row ids 0..rows-1 (linked list threaded through per-row arrays).
class Lru
{
  public:
    Lru( std::int64_t rows, std::int64_t capacity )
        : _prev( rows, -1 ), _next( rows, -1 ), _in( rows, 0 ), _capacity( capacity )
    {
    }
    bool access( std::int64_t r ) //!< true on a hit
    {
        if ( _in[r] )
        {
            unlink( r );
            pushFront( r );
            return true;
        }
        if ( _size == _capacity )
        {
            const std::int64_t v = _tail;
            unlink( v );
            _in[v] = 0;
            --_size;
        }
        pushFront( r );
        _in[r] = 1;
        ++_size;
        return false;
    }

  private:
    void unlink( std::int64_t r )
    {
        ( _prev[r] >= 0 ? _next[_prev[r]] : _head ) = _next[r];
        ( _next[r] >= 0 ? _prev[_next[r]] : _tail ) = _prev[r];
        _prev[r] = _next[r] = -1;
    }
    void pushFront( std::int64_t r )
    {
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
} // namespace

// Host traffic of a uvm_caching table per batch. FBGEMM's LRU cache is filled per batch: the
// batch's distinct rows are looked up once each, and the misses are fetched from the host. The
// simulation does exactly that (Zipf draws by inverse CDF, mt19937_64; 50 warm-up batches, 200
// measured; cache ≥ the batch's distinct rows). Under Che's approximation with independent
// requests, row i is cached with probability 1 − e^{−p_i T}, so the expected missed distinct
// rows are M = Σ_i (1 − (1 − p_i)^N) e^{−p_i T}: asserted within 5 % of the simulation.
// Printed next to it: U·(1 − h), the per-lookup hit rate h applied to the distinct rows U, which
// undercounts M because the hot rows that make h high are few among the distinct rows (uniform
// access is the exception: there M = U (1 − C/E) exactly).
TEST( TEST_CATEGORY, uvm_cache_misses_per_batch )
{
    struct Case
    {
        std::int64_t rows;
        double alpha;
        long lookups;
        std::int64_t cache;
    };
    const Case cases[] = { { 100000, 0.0, 2048, 25000 },
                           { 100000, 0.8, 2048, 20000 },
                           { 100000, 1.05, 2048, 10000 },
                           { 100000, 1.2, 4096, 5000 } };
    std::uint64_t seed = 99;
    for ( const Case& c : cases )
    {
        std::vector<long double> p;
        if ( c.alpha > 0.0 )
            p = probabilities( c.rows, c.alpha );
        else
            p.assign( c.rows, 1.0L / c.rows );
        // Che's T by bisection on ln T (long double), then M.
        long double lo = -60.0L, hi = 80.0L;
        for ( int it = 0; it < 110; ++it )
        {
            const long double mid = 0.5L * ( lo + hi ), time = std::exp( mid );
            long double occ = 0.0L;
            for ( const long double q : p )
                occ += -std::expm1( -q * time );
            ( occ < c.cache ? lo : hi ) = mid;
        }
        const long double time = std::exp( 0.5L * ( lo + hi ) );
        long double missed = 0.0L;
        for ( const long double q : p )
            missed += -std::expm1( c.lookups * std::log1p( -q ) ) * std::exp( -q * time );

        std::vector<double> cdf( p.size() );
        long double acc = 0.0L;
        for ( std::size_t i = 0; i < p.size(); ++i )
            cdf[i] = static_cast<double>( acc += p[i] );
        std::mt19937_64 gen( seed++ );
        std::uniform_real_distribution<double> u( 0.0, cdf.back() );
        Lru cache( c.rows, c.cache );
        std::vector<std::int64_t> ids( c.lookups );
        double sim = 0.0;
        for ( int batch = 0; batch < 250; ++batch )
        {
            for ( auto& id : ids )
                id = std::min<std::int64_t>( std::upper_bound( cdf.begin(), cdf.end(), u( gen ) ) -
                                                 cdf.begin(),
                                             c.rows - 1 );
            std::sort( ids.begin(), ids.end() );
            const auto end = std::unique( ids.begin(), ids.end() );
            long misses = 0;
            for ( auto it = ids.begin(); it != end; ++it )
                misses += !cache.access( *it );
            if ( batch >= 50 )
                sim += misses / 200.0;
        }
        const TableSpec t = c.alpha > 0.0 ? zipf( c.rows, c.alpha ) : TableSpec{};
        TableSpec tu = t;
        tu.rows = c.rows;
        const double unique = expectedUniqueRows( tu, static_cast<double>( c.lookups ) );
        const double h = lruHitRate( tu, static_cast<double>( c.lookups ), c.cache );
        std::printf( "uvm cache, missed rows per batch: E=%lld alpha=%.2f N=%ld C=%lld: simulated "
                     "%.1f, Che per row %.1f (%+.1f %%), U (1 - h) = %.1f (x%.2f)\n",
                     static_cast<long long>( c.rows ), c.alpha, c.lookups,
                     static_cast<long long>( c.cache ), sim, static_cast<double>( missed ),
                     100.0 * ( static_cast<double>( missed ) / sim - 1.0 ), unique * ( 1.0 - h ),
                     sim / ( unique * ( 1.0 - h ) ) );
        EXPECT_NEAR( static_cast<double>( missed ), sim, 0.05 * sim )
            << "E=" << c.rows << " alpha=" << c.alpha;
    }
}

} // namespace Test
