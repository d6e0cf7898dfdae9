#pragma once
//! Comparing what a kernel computed in TEST_EXECSPACE with the same function run on the host.
//!
//! Host backends (Serial, OpenMP) run the host's machine code: bit for bit. A GPU backend
//! differs in the last bits (nvcc contracts a * b + c into one FMA; CUDA's exp, log and pow
//! round differently from glibc's), so there the two must agree within kDeviceRelTolerance
//! relative, the CUDA backend's contract (issue 25, README "CUDA").
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <iomanip>
#include <type_traits>
#include <vector>

namespace Test
{

constexpr bool kTestOnDevice = !std::is_same<TEST_MEMSPACE, Kokkos::HostSpace>::value;
constexpr double kDeviceRelTolerance = 1e-12;

//! `backend` (computed in TEST_EXECSPACE) equals `host`: bit for bit on host backends, within
//! kDeviceRelTolerance relative on a device.
inline ::testing::AssertionResult sameAsHost( double backend, double host )
{
    const bool same =
        kTestOnDevice ? backend == host || std::abs( backend - host ) <=
                                               kDeviceRelTolerance *
                                                   std::max( std::abs( backend ), std::abs( host ) )
                      : std::memcmp( &backend, &host, sizeof( double ) ) == 0;
    if ( same )
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << std::setprecision( 17 ) << TEST_EXECSPACE::name()
                                         << " gave " << backend << ", the host " << host;
}

//! Element by element, as sameAsHost( double, double ).
inline ::testing::AssertionResult sameAsHost( const std::vector<double>& backend,
                                              const std::vector<double>& host )
{
    if ( backend.size() != host.size() )
        return ::testing::AssertionFailure()
               << backend.size() << " values from " << TEST_EXECSPACE::name() << ", " << host.size()
               << " from the host";
    for ( std::size_t i = 0; i < host.size(); ++i )
        if ( ::testing::AssertionResult r = sameAsHost( backend[i], host[i] ); !r )
            return r << " (element " << i << ")";
    return ::testing::AssertionSuccess();
}

} // namespace Test
