#pragma once
//! Selects the Kokkos backend of a generated test executable (Cabana's test-harness pattern).
#include <Kokkos_Core.hpp>
#include <shardsweep/kernel/backend.hpp>

#define TEST_CATEGORY openmp
#define TEST_EXECSPACE Kokkos::OpenMP
#define TEST_MEMSPACE Kokkos::HostSpace
#define TEST_DEVICE Kokkos::Device<Kokkos::OpenMP, Kokkos::HostSpace>
//! The same backend as shardsweep names it (evaluateScenarios( Backend, ... ): the compiled
//! kernel).
#define TEST_BACKEND shardsweep::Backend::openmp
