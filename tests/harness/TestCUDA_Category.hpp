#pragma once
//! Selects the Kokkos backend of a generated test executable (Cabana's test-harness pattern).
#include <Kokkos_Core.hpp>

#define TEST_CATEGORY cuda
#define TEST_EXECSPACE Kokkos::Cuda
#define TEST_MEMSPACE Kokkos::CudaSpace
#define TEST_DEVICE Kokkos::Device<Kokkos::Cuda, Kokkos::CudaSpace>
