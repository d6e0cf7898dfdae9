#pragma once
//! \file access_distribution.hpp
//! \brief How many distinct rows a batch of lookups touches, and the hit rate of an LRU cache,
//! for uniform, Zipf and reuse-histogram access (docs/model/embedding.md has the derivations).
//!
//! Zipf (p_i = i^-α / H(E, α), i = 1..E): the expected number of distinct rows of N independent
//! lookups is U = Σ_i 1 − (1 − p_i)^N, and H(E, α) = Σ_i i^-α. Both sums are evaluated in O(1):
//! the first kExactTerms = 32 terms exactly, the rest [a = 33, E] by Euler–Maclaurin up to the
//! f''' term,
//!   Σ_{i=a..E} f(i) = ∫_a^E f + (f(a) + f(E))/2 + (f'(E) − f'(a))/12 − (f'''(E) − f'''(a))/720 +
//!   R, |R| ≤ 2ζ(5)/(2π)^5 ∫_a^E |f^(5)| ≈ 2.1e-4 ∫_a^E |f^(5)|,
//! with analytic derivatives, and the integral by 8-point Gauss–Legendre on panels equally spaced
//! in ln x (the terms are smooth functions of ln x) no wider than 1.2/max(α, 1.2). Writing a term
//! as f(x) = g(ln x) with |g^(j)| ≤ m_j α^j (m_j of the Gumbel shape 1 − exp(−e^{−αu}) that the
//! terms take, m = 0.37, 0.31, 0.43, 1.12, 3.19), ∫_a^∞ |f^(5)| ≤ Σ_j |s(5,j)| m_j α^j / (4 a^4)
//! (s: Stirling numbers of the first kind), so |R| ≤ 2.2e-8 for α ≤ 2 (4.0e-9 for α ≤ 1.2); for
//! H, |R| ≤ 2.1e-4 α(α+1)(α+2)(α+3) a^{−α−4} ≤ 2.1e-10. U ≥ 1 and H ≥ 1 for N ≥ 1, so these are
//! relative bounds too. The quadrature error is not bounded analytically: 4x more panels change
//! the result by < 1e-11 up to E = 1e12. Measured against the brute-force sum over E ∈ [10, 1e6],
//! N ∈ [1, 1e7], α ∈ {0 … 2} (tests/unit/tstEmbeddingModel.hpp): relative error ≤ 2e-12, at
//! about 100–400 evaluations of exp/log1p/expm1 per call whatever E is.
//!
//! Reuse histogram (17 bins, fraction of the distinct rows seen (2^{j−1}, 2^j] times, measured
//! over n_h = histogram_batch·pooling_factor lookups): the rows it saw are S = n_h / Σ_j h_j m_j
//! (m_j the bin's mean count, binMeanCount), Lin et al.'s unique rows at the measured batch; the
//! histogram then stands for the Zipf exponent α̂ whose distinct rows over the table's E rows at
//! n_h lookups equal S (Illinois root finding). Other batches (the rescaling) and the LRU hit rate
//! use that Zipf distribution, so they reproduce S at the measured batch.
//!
//! LRU: Che's approximation. The characteristic time T solves occ(T) = Σ_i 1 − e^{−p_i T} = C
//! and the hit rate is hit(T) = Σ_i p_i (1 − e^{−p_i T}). occ is increasing in ln T with
//! d occ / d ln T = T (1 − hit(T)), which gives Newton steps on ln T; they are safeguarded by a
//! bracket [T_uniform, T_max] (the uniform distribution has the largest occupancy for a given T,
//! and occ(T) ≥ E (1 − e^{−p_min T})) and run a fixed kCheIterations times: no loop whose length
//! depends on the data.
#include <shardsweep/model/math.hpp>
#include <shardsweep/model/workload.hpp>

namespace shardsweep
{
namespace access_detail
{

constexpr int kExactTerms = 32;
constexpr int kGaussPoints = 8;
//! Widest quadrature panel in ln x: kPanelWidth / max(α, kPanelWidth). The terms change over
//! about 1/α in ln x (they are analytic in a strip of half-width π/(2α) around the real axis),
//! so the panel count grows with α and with ln E (at most kMaxPanels).
constexpr double kPanelWidth = 1.2;
constexpr int kMaxPanels = 256;
constexpr int kCheIterations = 16;

KOKKOS_INLINE_FUNCTION double gaussNode( int k )
{
    // 8-point Gauss–Legendre nodes on [-1, 1].
    constexpr double x[kGaussPoints] = {
        -0.9602898564975363, -0.7966664774136267, -0.5255324099163290, -0.1834346424956498,
        0.1834346424956498,  0.5255324099163290,  0.7966664774136267,  0.9602898564975363 };
    return x[k];
}
KOKKOS_INLINE_FUNCTION double gaussWeight( int k )
{
    constexpr double w[kGaussPoints] = { 0.1012285362903763, 0.2223810344533745, 0.3137066458778873,
                                         0.3626837833783620, 0.3626837833783620, 0.3137066458778873,
                                         0.2223810344533745, 0.1012285362903763 };
    return w[k];
}

//! A term of the sums as a function of x, with the first and third derivatives that the
//! Euler–Maclaurin corrections need. V is double, or Pair for two sums taken in one pass.
template <class V>
struct TermValueT
{
    V f, d1, d3;
};
using TermValue = TermValueT<double>;

//! Two sums evaluated together (Che's occupancy and hit mass share every exp).
struct Pair
{
    double a, b;
};
KOKKOS_INLINE_FUNCTION Pair operator+( Pair x, Pair y )
{
    return Pair{ x.a + y.a, x.b + y.b };
}
KOKKOS_INLINE_FUNCTION Pair operator-( Pair x, Pair y )
{
    return Pair{ x.a - y.a, x.b - y.b };
}
KOKKOS_INLINE_FUNCTION Pair operator*( double s, Pair x )
{
    return Pair{ s * x.a, s * x.b };
}

//! x-derivatives from derivatives in u = ln x (h1..h3 = d^k h / du^k):
//! h_x' = h1 / x, h_x''' = (h3 − 3 h2 + 2 h1) / x^3.
KOKKOS_INLINE_FUNCTION TermValue fromLogDerivatives( double x, double h, double h1, double h2,
                                                     double h3 )
{
    return TermValue{ h, h1 / x, ( h3 - 3.0 * h2 + 2.0 * h1 ) / ( x * x * x ) };
}

//! Σ_{i=a..b} f(i) for integers a ≤ b by Euler–Maclaurin (see the file comment); the integral by
//! Gauss–Legendre on panels equally spaced in ln x (Refine times more than needed: tests only).
template <int Refine = 1, int Coarsen = 1, class F>
KOKKOS_INLINE_FUNCTION typename F::value_type eulerMaclaurinSum( const F& f, double a, double b )
{
    using V = typename F::value_type;
    const TermValueT<V> fa = f( a );
    if ( b - a < 0.5 )
        return fa.f;
    const TermValueT<V> fb = f( b );
    const double ua = math::log( a ), ub = math::log( b );
    const double width = Coarsen * kPanelWidth / math::fmax( f.alpha, kPanelWidth );
    const int panels =
        Refine * static_cast<int>( math::fmin( kMaxPanels, math::ceil( ( ub - ua ) / width ) ) );
    const double h = ( ub - ua ) / panels;
    V integral = 0.0 * fa.f;
    for ( int p = 0; p < panels; ++p )
    {
        const double mid = ua + ( p + 0.5 ) * h;
        V panel = 0.0 * fa.f;
        for ( int k = 0; k < kGaussPoints; ++k )
        {
            const double u = mid + 0.5 * h * gaussNode( k );
            const double x = math::exp( u );
            panel = panel + ( gaussWeight( k ) * x ) * f.value( u ); // dx = x du
        }
        integral = integral + panel;
    }
    return ( 0.5 * h ) * integral + 0.5 * ( fa.f + fb.f ) + ( 1.0 / 12.0 ) * ( fb.d1 - fa.d1 ) -
           ( 1.0 / 720.0 ) * ( fb.d3 - fa.d3 );
}

//! x^-α, the term of the generalised harmonic number.
struct PowerTerm
{
    using value_type = double;
    double alpha;
    KOKKOS_INLINE_FUNCTION double value( double u ) const { return math::exp( -alpha * u ); }
    KOKKOS_INLINE_FUNCTION TermValue operator()( double x ) const
    {
        const double v = math::pow( x, -alpha );
        return TermValue{ v, -alpha * v / x,
                          -alpha * ( alpha + 1.0 ) * ( alpha + 2.0 ) * v / ( x * x * x ) };
    }
};

//! 1 − (1 − p)^N with p = c·x^-α: the probability that row x is touched by N lookups. With
//! G = (1 − p)^N = e^W, r = p/(1 − p) and derivatives in u = ln x: W' = Nαr, W'' = −Nα²r(1+r),
//! W''' = Nα³r(1+r)(1+2r); G' = W'G, G'' = (W'' + W'²)G, G''' = (W''' + 3W'W'' + W'³)G.
struct TouchedTerm
{
    using value_type = double;
    double alpha, c, n;
    KOKKOS_INLINE_FUNCTION double value( double u ) const
    {
        return -math::expm1( n * math::log1p( -c * math::exp( -alpha * u ) ) );
    }
    KOKKOS_INLINE_FUNCTION TermValue operator()( double x ) const
    {
        const double p = c * math::pow( x, -alpha );
        const double lq = math::log1p( -p );
        const double g = math::exp( n * lq );
        const double r = p / ( 1.0 - p );
        const double w1 = n * alpha * r;
        const double w2 = -n * alpha * alpha * r * ( 1.0 + r );
        const double w3 = n * alpha * alpha * alpha * r * ( 1.0 + r ) * ( 1.0 + 2.0 * r );
        return fromLogDerivatives( x, -math::expm1( n * lq ), -w1 * g, -( w2 + w1 * w1 ) * g,
                                   -( w3 + 3.0 * w1 * w2 + w1 * w1 * w1 ) * g );
    }
};

//! φ = 1 − e^{−p T} (p = c·x^-α) and its u-derivatives, free of cancellation:
//! φ' = −αTpG, φ'' = α²TpG(1 − Tp), φ''' = α³TpG(−1 + 3Tp − T²p²), G = e^{−pT}.
struct CheShape
{
    double p, phi, d1, d2, d3;
};
KOKKOS_INLINE_FUNCTION CheShape cheShape( double alpha, double c, double t, double x )
{
    const double p = c * math::pow( x, -alpha );
    const double tp = t * p;
    const double g = math::exp( -tp );
    const double a2 = alpha * alpha;
    return CheShape{ p, -math::expm1( -tp ), -alpha * tp * g, a2 * tp * g * ( 1.0 - tp ),
                     a2 * alpha * tp * g * ( -1.0 + 3.0 * tp - tp * tp ) };
}

//! Che's occupancy term 1 − e^{−p T} (a) and hit-mass term p (1 − e^{−p T}) = p φ (b); the hit
//! mass' derivatives by the Leibniz rule with p^(k) = (−α)^k p.
struct CheTerms
{
    using value_type = Pair;
    double alpha, c, t;
    KOKKOS_INLINE_FUNCTION Pair value( double u ) const
    {
        const double p = c * math::exp( -alpha * u );
        const double phi = -math::expm1( -t * p );
        return Pair{ phi, p * phi };
    }
    KOKKOS_INLINE_FUNCTION TermValueT<Pair> operator()( double x ) const
    {
        const CheShape s = cheShape( alpha, c, t, x );
        const double a = alpha, p = s.p;
        const double h1 = p * ( -a * s.phi + s.d1 );
        const double h2 = p * ( a * a * s.phi - 2.0 * a * s.d1 + s.d2 );
        const double h3 = p * ( -a * a * a * s.phi + 3.0 * a * a * s.d1 - 3.0 * a * s.d2 + s.d3 );
        const TermValue occ = fromLogDerivatives( x, s.phi, s.d1, s.d2, s.d3 );
        const TermValue hit = fromLogDerivatives( x, p * s.phi, h1, h2, h3 );
        return TermValueT<Pair>{ Pair{ occ.f, hit.f }, Pair{ occ.d1, hit.d1 },
                                 Pair{ occ.d3, hit.d3 } };
    }
};

//! Σ_{i=1..E} term(i): exact for i ≤ Head (kExactTerms), Euler–Maclaurin beyond. Refine > 1
//! (tests) takes more panels; the histogram fit's cheaper variant takes Head 8 and Coarsen 2
//! (panels twice as wide).
template <int Refine = 1, int Head = kExactTerms, int Coarsen = 1, class F>
KOKKOS_INLINE_FUNCTION typename F::value_type sumOverRows( const F& f, double rows )
{
    const double exact_end = math::fmin( rows, static_cast<double>( Head ) );
    typename F::value_type sum = f.value( 0.0 ); // i = 1 (rows ≥ 1)
    for ( int i = 2; i <= static_cast<int>( exact_end ); ++i )
        sum = sum + f.value( math::log( static_cast<double>( i ) ) );
    if ( rows > Head )
        sum = sum + eulerMaclaurinSum<Refine, Coarsen>( f, Head + 1.0, rows );
    return sum;
}

//! H(E, α) = Σ_{i=1..E} i^-α.
KOKKOS_INLINE_FUNCTION double harmonic( double rows, double alpha )
{
    return sumOverRows( PowerTerm{ alpha }, rows );
}

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

//! Che's occupancy and hit rate for characteristic time T, Zipf rows (by quadrature).
struct ZipfChe
{
    double alpha, c, rows;
    KOKKOS_INLINE_FUNCTION void operator()( double t, double& occ, double& hit ) const
    {
        const Pair s = sumOverRows( CheTerms{ alpha, c, t }, rows );
        occ = s.a;
        hit = s.b;
    }
};

//! Solves occ(T) = C for T by kCheIterations safeguarded Newton steps on ln T inside
//! [ln T_lo, ln T_hi], returns hit(T). `rows` counts the rows with p > 0, `p_min` the smallest p.
template <class Che>
KOKKOS_INLINE_FUNCTION double cheHitRate( const Che& che, double rows, double p_min, double cache )
{
    // Uniform over `rows` has the largest occupancy for a given T, so its T is a lower bound;
    // every row has p ≥ p_min, so occ(T_hi) ≥ rows·(1 − e^{−p_min T_hi}) = C.
    const double frac = -math::log1p( -cache / rows );
    double lo = math::log( rows * frac ), hi = math::log( frac / p_min );
    if ( !( hi > lo ) )
        hi = lo;
    double y = lo, occ = 0.0, hit = 0.0;
    for ( int it = 0; it < kCheIterations; ++it )
    {
        const double t = math::exp( y );
        che( t, occ, hit );
        const double f = occ - cache;
        if ( f < 0.0 )
            lo = y;
        else if ( f > 0.0 )
            hi = y;
        else
            lo = hi = y; // converged: stay
        // Newton where it stays inside the bracket (the root is there), else bisection.
        const double slope = t * ( 1.0 - hit );
        const double next = slope > 0.0 ? y - f / slope : 0.5 * ( lo + hi );
        y = ( next >= lo && next <= hi ) ? next : 0.5 * ( lo + hi );
    }
    che( math::exp( y ), occ, hit );
    return math::fmin( 1.0, math::fmax( 0.0, hit ) );
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
        return ad::cheHitRate( ad::ZipfChe{ alpha, c, rows }, rows, c * math::pow( rows, -alpha ),
                               cache_rows );
    }
    return cache_rows / rows; // uniform: every row equally likely to be cached
}

} // namespace shardsweep
