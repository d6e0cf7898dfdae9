#pragma once
//! \file access_distribution.hpp
//! \brief How many distinct rows a batch of lookups touches, and the hit rate of an LRU cache,
//! for uniform, Zipf and reuse-histogram access (docs/model/embedding.md has the derivations).
//! The Zipf sums and Che's fixed point are in zipf_sums.hpp.
//!
//! Reuse histogram (17 bins, fraction of the distinct rows seen (2^{j−1}, 2^j] times, measured
//! over n_h = histogram_batch·pooling_factor lookups): the rows it saw are S = n_h / Σ_j h_j m_j
//! (m_j the bin's mean count, binMeanCount), Lin et al.'s unique rows at the measured batch; the
//! histogram then stands for the Zipf exponent α̂ whose distinct rows over the table's E rows at
//! n_h lookups equal S (Illinois root finding). Other batches (the rescaling) and the LRU hit rate
//! use that Zipf distribution, so they reproduce S at the measured batch.
//!
#include <shardsweep/domain/dlrm_spec.hpp>
#include <shardsweep/model/math.hpp>
#include <shardsweep/model/zipf_sums.hpp>

namespace shardsweep
{
namespace access_detail
{

//! Lowest and highest reuse count of histogram bin j: (0, 1] → 1; bin j ≥ 1 holds the integers
//! 2^{j−1}+1 … 2^j (the open bin 16, > 32768, is taken as 32769 … 65536).
KOKKOS_INLINE_FUNCTION double binLow( int j )
{
    return j == 0 ? 1.0 : 0.5 * ( 1 << j ) + 1.0;
}
KOKKOS_INLINE_FUNCTION double binHigh( int j )
{
    return static_cast<double>( 1 << j );
}
//! Rows per unit count in bin j (h_j over the bin's width in integers), at its geometric centre.
KOKKOS_INLINE_FUNCTION double binDensity( const TableSpec& t, int j )
{
    return t.reuse_histogram[j] / ( binHigh( j ) - binLow( j ) + 1.0 );
}
KOKKOS_INLINE_FUNCTION double binCentre( int j )
{
    return math::sqrt( binLow( j ) * binHigh( j ) );
}

//! Mean reuse count of the rows in bin j. Bins 0 and 1 hold one count each (1, 2). Wider bins:
//! the number of rows with count k is taken as a power law k^-γ inside the bin, γ from the
//! densities of the neighbouring bins (counts fall off within a bin for Poisson and Zipf
//! access alike, so the arithmetic middle would overstate the mean), mean over [low − ½,
//! high + ½] in closed form.
KOKKOS_INLINE_FUNCTION double binMeanCount( const TableSpec& t, int j )
{
    if ( j <= 1 )
        return binLow( j );
    const int lo = j - 1;
    const int hi = ( j + 1 < kReuseBins && t.reuse_histogram[j + 1] > 0.0 ) ? j + 1 : j;
    const double d_lo = binDensity( t, lo ), d_hi = binDensity( t, hi );
    double gamma = 0.0;
    if ( d_lo > 0.0 && d_hi > 0.0 )
        gamma = math::log( d_lo / d_hi ) / math::log( binCentre( hi ) / binCentre( lo ) );
    gamma = math::fmin( 8.0, math::fmax( -8.0, gamma ) );
    const double a = binLow( j ) - 0.5, b = binHigh( j ) + 0.5;
    // ∫ k^{1−γ} / ∫ k^{−γ} over [a, b]; I(s) = ∫ k^{s−1} = (b^s − a^s)/s, ln(b/a) at s = 0.
    auto integral = [&]( double s )
    {
        return math::fabs( s ) < 1e-9 ? math::log( b / a )
                                      : ( math::pow( b, s ) - math::pow( a, s ) ) / s;
    };
    return integral( 2.0 - gamma ) / integral( 1.0 - gamma );
}

constexpr double kMaxFitAlpha = 4.0;
constexpr int kFitBisections = 8;
//! The fit evaluates U with 8 exact terms and panels twice as wide: relative error < 1e-6 (the
//! measured S is uncertain by about 1 %), at half the cost.
constexpr int kFitHead = 8;
constexpr int kFitCoarsen = 2;
constexpr int kFitIterations = 6;

//! Distinct rows the histogram saw: n_h / Σ_j h_j·binMeanCount(j), n_h = measured batch ·
//! pooling_factor lookups (at most E).
KOKKOS_INLINE_FUNCTION double histogramSeenRows( const TableSpec& t, double n_h )
{
    double mean_count = 0.0, total = 0.0;
    for ( int j = 0; j < kReuseBins; ++j )
    {
        mean_count += t.reuse_histogram[j] * binMeanCount( t, j );
        total += t.reuse_histogram[j];
    }
    if ( !( total > 0.0 ) )
        return 0.0;
    // The fractions should sum to 1; normalise rounding (the published histograms have 3 digits).
    return math::fmin( static_cast<double>( t.rows ),
                       n_h * total / math::fmax( mean_count, 1e-300 ) );
}

//! The Zipf exponent that a reuse histogram stands for: the α ∈ [0, kMaxFitAlpha] whose expected
//! distinct rows over the table's E rows at the measured n_h lookups equal the rows the
//! histogram saw (U decreases in α; 8 bisection + 6 Illinois steps). A scenario
//! with another batch then draws its N lookups from that Zipf distribution: this is how a
//! histogram measured at histogram_batch is rescaled (at N = n_h it reproduces the measurement).
//! `batch` is used when histogram_batch is 0 (measured at the scenario's batch).
KOKKOS_INLINE_FUNCTION double histogramZipfAlpha( const TableSpec& t, double batch )
{
    const double rows = static_cast<double>( t.rows );
    const double measured_batch =
        t.histogram_batch > 0 ? static_cast<double>( t.histogram_batch ) : batch;
    const double n_h = measured_batch * t.pooling_factor;
    const double seen = histogramSeenRows( t, n_h );
    if ( !( n_h > 0.0 ) || !( seen > 0.0 ) || rows <= 0.0 )
        return 0.0;
    if ( seen >= -rows * math::expm1( n_h * math::log1p( -1.0 / rows ) ) )
        return 0.0; // as spread as uniform access (or more): uniform
    // g(α) = ln U(α) − ln S decreases from g(0) > 0 (checked above). It can be flat near 0 (a
    // sparse batch touches ~N rows whatever α is small), which stalls regula falsi started on
    // [0, kMaxFitAlpha]: kFitBisections bisection steps first, then Illinois (regula falsi with
    // halving, superlinear) on the remaining bracket; fixed step counts.
    auto g = [&]( double alpha )
    {
        const double c = 1.0 / sumOverRows<1, kFitHead, kFitCoarsen>( PowerTerm{ alpha }, rows );
        return math::log(
            sumOverRows<1, kFitHead, kFitCoarsen>( TouchedTerm{ alpha, c, n_h }, rows ) / seen );
    };
    double a = 0.0,
           ga = math::log( -rows * math::expm1( n_h * math::log1p( -1.0 / rows ) ) / seen );
    double b = kMaxFitAlpha, gb = g( b );
    if ( gb >= 0.0 )
        return kMaxFitAlpha; // more concentrated than Zipf(4): clamp
    for ( int it = 0; it < kFitBisections; ++it )
    {
        const double m = 0.5 * ( a + b ), gm = g( m );
        if ( gm > 0.0 )
        {
            a = m;
            ga = gm;
        }
        else
        {
            b = m;
            gb = gm;
        }
    }
    for ( int it = 0; it < kFitIterations; ++it )
    {
        if ( gb == 0.0 || ga == gb )
            break; // converged (a bounded loop: at most kFitIterations steps)
        const double x = b - gb * ( b - a ) / ( gb - ga );
        const double gx = g( x );
        if ( ( gx < 0.0 ) != ( gb < 0.0 ) )
        {
            a = b;
            ga = gb;
        }
        else
            ga *= 0.5;
        b = x;
        gb = gx;
    }
    return b;
}

//! The access distribution that the model evaluates: histograms become their Zipf fit.
KOKKOS_INLINE_FUNCTION double effectiveZipfAlpha( const TableSpec& t, double batch )
{
    if ( t.distribution == AccessDistribution::zipf )
        return t.zipf_alpha;
    if ( t.distribution == AccessDistribution::histogram )
        return histogramZipfAlpha( t, batch );
    return 0.0;
}

} // namespace access_detail

//! Expected distinct rows of `t` touched by `lookups` independent lookups (whole table).
KOKKOS_INLINE_FUNCTION double expectedUniqueRows( const TableSpec& t, double lookups )
{
    namespace ad = access_detail;
    const double rows = static_cast<double>( t.rows );
    if ( rows <= 0.0 || lookups <= 0.0 )
        return 0.0;
    const double alpha =
        ad::effectiveZipfAlpha( t, t.pooling_factor > 0.0 ? lookups / t.pooling_factor : 0.0 );
    if ( alpha > 0.0 )
    {
        const double c = 1.0 / ad::harmonic( rows, alpha );
        return math::fmin( rows, ad::sumOverRows( ad::TouchedTerm{ alpha, c, lookups }, rows ) );
    }
    // Uniform: E (1 − (1 − 1/E)^N).
    return -rows * math::expm1( lookups * math::log1p( -1.0 / rows ) );
}

//! A fully associative LRU cache of `cache_rows` rows in front of the table (Che's approximation;
//! independent requests): the per-lookup hit rate, and the distinct rows of one batch of
//! `lookups` lookups that are not in the cache, Σ_i (1 − (1 − p_i)^N) e^{−p_i T} — what a cache
//! filled per batch (FBGEMM's UVM cache) fetches from the host. Hot rows make the hit rate high
//! but are few among the distinct rows, so the missed rows exceed U·(1 − hit rate) for skewed
//! access; for uniform access both equal U·(1 − C/E).
struct LruStats
{
    double hit_rate = 0.0;
    double missed_rows = 0.0;
};

//! LruStats of `t` for a batch of `lookups` lookups (which also sets a histogram's batch when
//! histogram_batch is 0).
KOKKOS_INLINE_FUNCTION LruStats lruStats( const TableSpec& t, double lookups, double cache_rows )
{
    namespace ad = access_detail;
    LruStats s;
    const double rows = static_cast<double>( t.rows );
    if ( rows <= 0.0 )
        return s;
    if ( cache_rows >= rows )
    {
        s.hit_rate = 1.0;
        return s;
    }
    if ( cache_rows <= 0.0 )
    {
        s.missed_rows = expectedUniqueRows( t, lookups );
        return s;
    }
    const double alpha =
        ad::effectiveZipfAlpha( t, t.pooling_factor > 0.0 ? lookups / t.pooling_factor : 0.0 );
    if ( alpha > 0.0 )
    {
        const double c = 1.0 / ad::harmonic( rows, alpha );
        const ad::CheSolution che = ad::cheSolve( ad::ZipfChe{ alpha, c, rows }, rows,
                                                  c * math::pow( rows, -alpha ), cache_rows );
        s.hit_rate = che.hit_rate;
        s.missed_rows = lookups > 0.0
                            ? ad::sumOverRows( ad::MissedTerm{ alpha, c, lookups, che.time }, rows )
                            : 0.0;
        return s;
    }
    // Uniform: every row cached with probability C/E.
    s.hit_rate = cache_rows / rows;
    s.missed_rows =
        -rows * math::expm1( lookups * math::log1p( -1.0 / rows ) ) * ( 1.0 - cache_rows / rows );
    return s;
}

//! Steady-state hit rate of a fully associative LRU cache of `cache_rows` rows under the
//! table's access distribution (Che's approximation; independent reference model). `lookups`
//! sets the histogram's batch when histogram_batch is 0.
KOKKOS_INLINE_FUNCTION double lruHitRate( const TableSpec& t, double lookups, double cache_rows )
{
    namespace ad = access_detail;
    const double rows = static_cast<double>( t.rows );
    if ( cache_rows <= 0.0 || rows <= 0.0 )
        return 0.0;
    if ( cache_rows >= rows )
        return 1.0;
    const double alpha =
        ad::effectiveZipfAlpha( t, t.pooling_factor > 0.0 ? lookups / t.pooling_factor : 0.0 );
    if ( alpha > 0.0 )
    {
        const double c = 1.0 / ad::harmonic( rows, alpha );
        return ad::cheSolve( ad::ZipfChe{ alpha, c, rows }, rows, c * math::pow( rows, -alpha ),
                             cache_rows )
            .hit_rate;
    }
    return cache_rows / rows; // uniform: every row equally likely to be cached
}

} // namespace shardsweep
