#pragma once
//! \file backend.hpp
//! \brief The Kokkos backends a build may hold (`--backend`), and the one call that runs code in
//! the execution space of a backend chosen at run time.
//!
//! A build compiles Serial and OpenMP, and CUDA where Kokkos was configured with it
//! (scripts/setup.sh --cuda). The cost kernel, the sweep engine and the benches take a Backend;
//! its default is Kokkos::DefaultExecutionSpace's (CUDA where compiled).
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <shardsweep/domain/names.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace shardsweep
{

//! A Kokkos execution space the cost kernel can run in.
enum class Backend : std::uint8_t
{
    serial,
    openmp,
    cuda
};

SHARDSWEEP_ENUM_NAMES( Backend, "backend",
                       { Backend::serial, "serial", "Kokkos::Serial: one host thread" },
                       { Backend::openmp, "openmp",
                         "Kokkos::OpenMP: the rank's host threads (OMP_NUM_THREADS)" },
                       { Backend::cuda, "cuda", "Kokkos::Cuda: the rank's GPU" } );

//! Whether this build compiled `b` (Kokkos' KOKKOS_ENABLE_* macros).
constexpr bool isCompiled( Backend b )
{
    switch ( b )
    {
    case Backend::serial:
#ifdef KOKKOS_ENABLE_SERIAL
        return true;
#else
        return false;
#endif
    case Backend::openmp:
#ifdef KOKKOS_ENABLE_OPENMP
        return true;
#else
        return false;
#endif
    case Backend::cuda:
#ifdef KOKKOS_ENABLE_CUDA
        return true;
#else
        return false;
#endif
    }
    return false;
}

//! The backends this build compiled, in declaration order.
std::vector<Backend> compiledBackends();

//! The backend of Kokkos::DefaultExecutionSpace: cuda where compiled, else openmp, else serial.
Backend defaultBackend();

//! Whether `b` runs in host memory (then several kernel calls may run at once, one per thread).
constexpr bool runsOnHost( Backend b )
{
    return b != Backend::cuda;
}

//! Calls `f( exec )` with an instance of `b`'s execution space and returns its result. Throws
//! std::invalid_argument where this build lacks `b`; command lines check isCompiled first.
template <class Function>
decltype( auto ) withExecutionSpace( Backend b, Function&& f )
{
    switch ( b )
    {
#ifdef KOKKOS_ENABLE_SERIAL
    case Backend::serial:
        return f( Kokkos::Serial() );
#endif
#ifdef KOKKOS_ENABLE_OPENMP
    case Backend::openmp:
        return f( Kokkos::OpenMP() );
#endif
#ifdef KOKKOS_ENABLE_CUDA
    case Backend::cuda:
        return f( Kokkos::Cuda() );
#endif
    default:
        break;
    }
    throw std::invalid_argument( std::string( "backend " ) + nameOf( b ) +
                                 " is not compiled into this build" );
}

//! The name Kokkos gives `b`'s execution space ("Serial", "OpenMP", "Cuda").
std::string executionSpaceName( Backend b );

} // namespace shardsweep
