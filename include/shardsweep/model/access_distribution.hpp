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
constexpr int kCheIterations = 24;

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
//! Euler–Maclaurin corrections need.
struct TermValue
{
    double f, d1, d3;
};

//! x-derivatives from derivatives in u = ln x (h1..h3 = d^k h / du^k):
//! h_x' = h1 / x, h_x''' = (h3 − 3 h2 + 2 h1) / x^3.
KOKKOS_INLINE_FUNCTION TermValue fromLogDerivatives( double x, double h, double h1, double h2,
                                                     double h3 )
{
    return TermValue{ h, h1 / x, ( h3 - 3.0 * h2 + 2.0 * h1 ) / ( x * x * x ) };
}

//! Σ_{i=a..b} f(i) for integers a ≤ b by Euler–Maclaurin (see the file comment); the integral by
//! Gauss–Legendre on panels equally spaced in ln x (Refine times more than needed: tests only).
template <int Refine = 1, class F>
KOKKOS_INLINE_FUNCTION double eulerMaclaurinSum( const F& f, double a, double b )
{
    if ( b < a )
        return 0.0;
    const TermValue fa = f( a );
    if ( b - a < 0.5 )
        return fa.f;
    const TermValue fb = f( b );
    const double ua = math::log( a ), ub = math::log( b );
    const double width = kPanelWidth / math::fmax( f.alpha, kPanelWidth );
    const int panels =
        Refine * static_cast<int>( math::fmin( kMaxPanels, math::ceil( ( ub - ua ) / width ) ) );
    const double h = ( ub - ua ) / panels;
    double integral = 0.0;
    for ( int p = 0; p < panels; ++p )
    {
        const double mid = ua + ( p + 0.5 ) * h;
        double panel = 0.0;
        for ( int k = 0; k < kGaussPoints; ++k )
        {
            const double u = mid + 0.5 * h * gaussNode( k );
            const double x = math::exp( u );
            panel += gaussWeight( k ) * f.value( u ) * x; // dx = x du
        }
        integral += panel;
    }
    integral *= 0.5 * h;
    return integral + 0.5 * ( fa.f + fb.f ) + ( fb.d1 - fa.d1 ) / 12.0 - ( fb.d3 - fa.d3 ) / 720.0;
}

//! x^-α, the term of the generalised harmonic number.
struct PowerTerm
{
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

//! Che's occupancy term 1 − e^{−p T}.
struct CheOccupancy
{
    double alpha, c, t;
    KOKKOS_INLINE_FUNCTION double value( double u ) const
    {
        return -math::expm1( -t * c * math::exp( -alpha * u ) );
    }
    KOKKOS_INLINE_FUNCTION TermValue operator()( double x ) const
    {
        const CheShape s = cheShape( alpha, c, t, x );
        return fromLogDerivatives( x, s.phi, s.d1, s.d2, s.d3 );
    }
};

//! Che's hit-mass term p (1 − e^{−p T}) = p φ; p^(k) = (−α)^k p, Leibniz rule.
struct CheHitMass
{
    double alpha, c, t;
    KOKKOS_INLINE_FUNCTION double value( double u ) const
    {
        const double p = c * math::exp( -alpha * u );
        return -p * math::expm1( -t * p );
    }
    KOKKOS_INLINE_FUNCTION TermValue operator()( double x ) const
    {
        const CheShape s = cheShape( alpha, c, t, x );
        const double a = alpha, p = s.p;
        const double h1 = p * ( -a * s.phi + s.d1 );
        const double h2 = p * ( a * a * s.phi - 2.0 * a * s.d1 + s.d2 );
        const double h3 = p * ( -a * a * a * s.phi + 3.0 * a * a * s.d1 - 3.0 * a * s.d2 + s.d3 );
        return fromLogDerivatives( x, p * s.phi, h1, h2, h3 );
    }
};

//! Σ_{i=1..E} term(i): exact for i ≤ kExactTerms, Euler–Maclaurin beyond.
template <int Refine = 1, class F>
KOKKOS_INLINE_FUNCTION double sumOverRows( const F& f, double rows )
{
    const double exact_end = math::fmin( rows, static_cast<double>( kExactTerms ) );
    double sum = 0.0;
    for ( int i = 1; i <= static_cast<int>( exact_end ); ++i )
        sum += f.value( math::log( static_cast<double>( i ) ) );
    if ( rows > kExactTerms )
        sum += eulerMaclaurinSum<Refine>( f, kExactTerms + 1.0, rows );
    return sum;
}

//! H(E, α) = Σ_{i=1..E} i^-α.
KOKKOS_INLINE_FUNCTION double harmonic( double rows, double alpha )
{
    return sumOverRows( PowerTerm{ alpha }, rows );
}

//! Representative reuse count of histogram bin j: (2^{j-1}, 2^j] → 0.75·2^j, the bin's middle
//! (bin 0, (0, 1]: 1).
KOKKOS_INLINE_FUNCTION double binCount( int j )
{
    return j == 0 ? 1.0 : 0.75 * ( 1 << j );
}

//! A reuse histogram as 18 row classes: rows[j] rows each drawn with probability prob[j] per
//! lookup. The histogram, measured over n_h = histogram_batch·pooling_factor lookups, says that
//! a fraction h_j of the S rows it saw were drawn about binCount(j) times: S = n_h / Σ_j h_j
//! binCount(j) (at most E), class j holds S·h_j rows of probability binCount(j)/n_h. Class 17
//! holds the E − S rows the measurement never saw; they share the Good–Turing unseen mass (the
//! share of lookups that hit a row seen once, h_0·S/n_h). All probabilities are then normalised.
//! The classes do not depend on the scenario's batch: a scenario with another batch draws its
//! N = batch·pooling_factor lookups from the same per-row probabilities (this is the rescaling).
struct HistogramClasses
{
    double rows[kReuseBins + 1];
    double prob[kReuseBins + 1];
};

KOKKOS_INLINE_FUNCTION HistogramClasses histogramClasses( const TableSpec& t, double batch )
{
    HistogramClasses c;
    const double measured_batch =
        t.histogram_batch > 0 ? static_cast<double>( t.histogram_batch ) : batch;
    const double n_h = math::fmax( 1.0, measured_batch * t.pooling_factor );
    double mean_count = 0.0, mass = 0.0;
    for ( int j = 0; j < kReuseBins; ++j )
        mean_count += t.reuse_histogram[j] * binCount( j );
    const double seen =
        math::fmin( static_cast<double>( t.rows ), n_h / math::fmax( mean_count, 1.0 ) );
    for ( int j = 0; j < kReuseBins; ++j )
    {
        c.rows[j] = seen * t.reuse_histogram[j];
        c.prob[j] = binCount( j ) / n_h;
        mass += c.rows[j] * c.prob[j];
    }
    const double unseen = static_cast<double>( t.rows ) - seen;
    c.rows[kReuseBins] = unseen;
    c.prob[kReuseBins] = unseen > 0.0 ? t.reuse_histogram[0] * seen / n_h / unseen : 0.0;
    mass += unseen * c.prob[kReuseBins];
    for ( int j = 0; j <= kReuseBins; ++j ) // normalise to a probability distribution
        c.prob[j] = mass > 0.0 ? c.prob[j] / mass : 0.0;
    return c;
}

//! Che's occupancy and hit rate for characteristic time T, Zipf rows (by quadrature).
struct ZipfChe
{
    double alpha, c, rows;
    KOKKOS_INLINE_FUNCTION void operator()( double t, double& occ, double& hit ) const
    {
        occ = sumOverRows( CheOccupancy{ alpha, c, t }, rows );
        hit = sumOverRows( CheHitMass{ alpha, c, t }, rows );
    }
};

//! The same for the 18 classes of a histogram (exact sums).
struct ClassChe
{
    const HistogramClasses* h;
    KOKKOS_INLINE_FUNCTION void operator()( double t, double& occ, double& hit ) const
    {
        occ = 0.0;
        hit = 0.0;
        for ( int j = 0; j <= kReuseBins; ++j )
        {
            const double miss = math::expm1( -h->prob[j] * t ); // e^{−pT} − 1
            occ -= h->rows[j] * miss;
            hit -= h->rows[j] * h->prob[j] * miss;
        }
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
    if ( t.distribution == AccessDistribution::zipf && t.zipf_alpha > 0.0 )
    {
        const double c = 1.0 / ad::harmonic( rows, t.zipf_alpha );
        return math::fmin( rows,
                           ad::sumOverRows( ad::TouchedTerm{ t.zipf_alpha, c, lookups }, rows ) );
    }
    if ( t.distribution == AccessDistribution::histogram )
    {
        const ad::HistogramClasses h = ad::histogramClasses( t, lookups / t.pooling_factor );
        double u = 0.0;
        for ( int j = 0; j <= kReuseBins; ++j )
            u += h.rows[j] * -math::expm1( lookups * math::log1p( -math::fmin( h.prob[j], 1.0 ) ) );
        return math::fmin( rows, u );
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
    if ( t.distribution == AccessDistribution::zipf && t.zipf_alpha > 0.0 )
    {
        const double c = 1.0 / ad::harmonic( rows, t.zipf_alpha );
        return ad::cheHitRate( ad::ZipfChe{ t.zipf_alpha, c, rows }, rows,
                               c * math::pow( rows, -t.zipf_alpha ), cache_rows );
    }
    if ( t.distribution == AccessDistribution::histogram )
    {
        const ad::HistogramClasses h =
            ad::histogramClasses( t, t.pooling_factor > 0.0 ? lookups / t.pooling_factor : 0.0 );
        double live = 0.0, p_min = 1.0;
        for ( int j = 0; j <= kReuseBins; ++j )
            if ( h.prob[j] > 0.0 && h.rows[j] > 0.0 )
            {
                live += h.rows[j];
                p_min = math::fmin( p_min, h.prob[j] );
            }
        if ( cache_rows >= live ) // every row that is ever drawn fits
            return live > 0.0 ? 1.0 : 0.0;
        return ad::cheHitRate( ad::ClassChe{ &h }, live, p_min, cache_rows );
    }
    return cache_rows / rows; // uniform: every row equally likely to be cached
}

} // namespace shardsweep
