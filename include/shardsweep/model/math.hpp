#pragma once
//! \file math.hpp
//! \brief Device-callable math used by the cost model.
//!
//! Kokkos 3.4 (Debian's) keeps its math functions in Kokkos::Experimental, Kokkos >= 3.7 in
//! Kokkos::. The model calls these wrappers only, so it compiles against both and runs in every
//! backend. Functions not offered by Kokkos 3.4 (floor/ceil on all backends) use the CUDA/host
//! overloads that are callable from both sides.

#include <Kokkos_Core.hpp>
#include <cstdint>

#if KOKKOS_VERSION >= 30700
#define SHARDSWEEP_KOKKOS_MATH Kokkos
#else
#define SHARDSWEEP_KOKKOS_MATH Kokkos::Experimental
#endif

namespace shardsweep
{
namespace math
{
KOKKOS_INLINE_FUNCTION double sqrt( double x )
{
    return SHARDSWEEP_KOKKOS_MATH::sqrt( x );
}
KOKKOS_INLINE_FUNCTION double exp( double x )
{
    return SHARDSWEEP_KOKKOS_MATH::exp( x );
}
KOKKOS_INLINE_FUNCTION double log( double x )
{
    return SHARDSWEEP_KOKKOS_MATH::log( x );
}
KOKKOS_INLINE_FUNCTION double log2( double x )
{
    return SHARDSWEEP_KOKKOS_MATH::log2( x );
}
KOKKOS_INLINE_FUNCTION double log1p( double x )
{
    return SHARDSWEEP_KOKKOS_MATH::log1p( x );
}
KOKKOS_INLINE_FUNCTION double expm1( double x )
{
    return SHARDSWEEP_KOKKOS_MATH::expm1( x );
}
KOKKOS_INLINE_FUNCTION double pow( double x, double y )
{
    return SHARDSWEEP_KOKKOS_MATH::pow( x, y );
}
KOKKOS_INLINE_FUNCTION double floor( double x )
{
    return SHARDSWEEP_KOKKOS_MATH::floor( x );
}
KOKKOS_INLINE_FUNCTION double ceil( double x )
{
    return SHARDSWEEP_KOKKOS_MATH::ceil( x );
}
KOKKOS_INLINE_FUNCTION double fabs( double x )
{
    return x < 0.0 ? -x : x;
}
KOKKOS_INLINE_FUNCTION double fmin( double a, double b )
{
    return a < b ? a : b;
}
KOKKOS_INLINE_FUNCTION double fmax( double a, double b )
{
    return a > b ? a : b;
}
template <class T>
KOKKOS_INLINE_FUNCTION T min( T a, T b )
{
    return a < b ? a : b;
}
template <class T>
KOKKOS_INLINE_FUNCTION T max( T a, T b )
{
    return a > b ? a : b;
}
//! Integer ceil division for non-negative operands.
KOKKOS_INLINE_FUNCTION std::int64_t ceilDiv( std::int64_t a, std::int64_t b )
{
    return ( a + b - 1 ) / b;
}
} // namespace math
} // namespace shardsweep
