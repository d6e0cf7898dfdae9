#pragma once
//! \file zipf_sums.hpp
//! \brief Sums over the rows of a Zipf table in O(log E) work: distinct rows, the generalised
//! harmonic number and Che's LRU fixed point (docs/model/embedding.md has the derivations; the
//! public functions are in access_distribution.hpp).
//!
//! Zipf (p_i = i^-α / H(E, α), i = 1..E): the expected number of distinct rows of N independent
//! lookups is U = Σ_i 1 − (1 − p_i)^N, and H(E, α) = Σ_i i^-α. Both sums take O(log E) work:
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
//! and occ(T) ≥ E (1 − e^{−p_min T})) and run a fixed kCheIterations times. The distinct rows of a
//! batch that miss the cache, Σ_i (1 − (1 − p_i)^N) e^{−p_i T}, use the same sums (MissedTerm).
#include <shardsweep/model/math.hpp>

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

//! A = 1 − (1 − p)^N with p = c·x^-α (the probability that row x is touched by N lookups) and
//! its u-derivatives (u = ln x). With G = (1 − p)^N = e^W, r = p/(1 − p): W' = Nαr,
//! W'' = −Nα²r(1+r), W''' = Nα³r(1+r)(1+2r); G' = W'G, G'' = (W'' + W'²)G,
//! G''' = (W''' + 3W'W'' + W'³)G, and A^(k) = −G^(k).
struct TouchedShape
{
    double p, a, d1, d2, d3;
};
KOKKOS_INLINE_FUNCTION TouchedShape touchedShape( double alpha, double c, double n, double x )
{
    const double p = c * math::pow( x, -alpha );
    const double lq = math::log1p( -p );
    const double g = math::exp( n * lq );
    const double r = p / ( 1.0 - p );
    const double w1 = n * alpha * r;
    const double w2 = -n * alpha * alpha * r * ( 1.0 + r );
    const double w3 = n * alpha * alpha * alpha * r * ( 1.0 + r ) * ( 1.0 + 2.0 * r );
    return TouchedShape{ p, -math::expm1( n * lq ), -w1 * g, -( w2 + w1 * w1 ) * g,
                         -( w3 + 3.0 * w1 * w2 + w1 * w1 * w1 ) * g };
}

//! 1 − (1 − p)^N: the terms of the expected distinct rows.
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
        const TouchedShape a = touchedShape( alpha, c, n, x );
        return fromLogDerivatives( x, a.a, a.d1, a.d2, a.d3 );
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

//! (1 − (1 − p)^N)·e^{−p T}: row x is touched by the batch's N lookups and not in the LRU cache
//! (Che: cached with probability 1 − e^{−p T}); A·B with A = touchedShape, B = 1 − φ.
struct MissedTerm
{
    using value_type = double;
    double alpha, c, n, t;
    KOKKOS_INLINE_FUNCTION double value( double u ) const
    {
        const double p = c * math::exp( -alpha * u );
        return -math::expm1( n * math::log1p( -p ) ) * math::exp( -t * p );
    }
    KOKKOS_INLINE_FUNCTION TermValue operator()( double x ) const
    {
        const TouchedShape a = touchedShape( alpha, c, n, x );
        const CheShape s = cheShape( alpha, c, t, x );
        const double b = 1.0 - s.phi, b1 = -s.d1, b2 = -s.d2, b3 = -s.d3;
        return fromLogDerivatives( x, a.a * b, a.d1 * b + a.a * b1,
                                   a.d2 * b + 2.0 * a.d1 * b1 + a.a * b2,
                                   a.d3 * b + 3.0 * a.d2 * b1 + 3.0 * a.d1 * b2 + a.a * b3 );
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

//! Che's characteristic time T and the hit rate there.
struct CheSolution
{
    double time, hit_rate;
};

//! Solves occ(T) = C for T by kCheIterations safeguarded Newton steps on ln T inside
//! [ln T_lo, ln T_hi]. `rows` counts the rows with p > 0, `p_min` the smallest p.
template <class Che>
KOKKOS_INLINE_FUNCTION CheSolution cheSolve( const Che& che, double rows, double p_min,
                                             double cache )
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
    return CheSolution{ math::exp( y ), math::fmin( 1.0, math::fmax( 0.0, hit ) ) };
}

} // namespace access_detail
} // namespace shardsweep
