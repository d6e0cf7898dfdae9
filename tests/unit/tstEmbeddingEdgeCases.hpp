// Randomised edges of the Zipf sums in model/access_distribution.hpp, outside the regular grid of
// tstEmbeddingModel: every table size around the exact head (E = 1 … 64, the Euler–Maclaurin part
// starts at row 33), α from 1e-6 to 6 (beyond the α ≤ 2 of the stated remainder bound) and within
// 1e-6 of 1 (where H(E, α) changes form analytically), fractional and huge lookup counts
// (N = 0.3 … 1e12), and LRU caches of 1 row and of E − 1 rows. References are brute-force sums
// over every row in long double; Che's fixed point by bisection on ln T in long double.
#include <Kokkos_Core.hpp>
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

} // namespace Test
