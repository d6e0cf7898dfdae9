#pragma once
//! Selects the Kokkos backend of a generated test executable (Cabana's test-harness pattern).
#include <Kokkos_Core.hpp>
#include <shardsweep/kernel/backend.hpp>

#define TEST_CATEGORY cuda
#define TEST_EXECSPACE Kokkos::Cuda
#define TEST_MEMSPACE Kokkos::CudaSpace
#define TEST_DEVICE Kokkos::Device<Kokkos::Cuda, Kokkos::CudaSpace>
//! The same backend as shardsweep names it (evaluateScenarios( Backend, ... ): the compiled
//! kernel).
#define TEST_BACKEND shardsweep::Backend::cuda
