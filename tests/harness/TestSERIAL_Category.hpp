#pragma once
//! Selects the Kokkos backend of a generated test executable (Cabana's test-harness pattern).
#include <Kokkos_Core.hpp>

#define TEST_CATEGORY serial
#define TEST_EXECSPACE Kokkos::Serial
#define TEST_MEMSPACE Kokkos::HostSpace
#define TEST_DEVICE Kokkos::Device<Kokkos::Serial, Kokkos::HostSpace>
