# Every dependency through find_package (Debian 12 packages; Kokkos from the trilinos source package, scripts/setup.sh).
find_package(MPI REQUIRED COMPONENTS CXX)
set_package_properties(MPI PROPERTIES TYPE REQUIRED PURPOSE "Distributes scenarios over ranks")

# Prefer the parallel (MPI-IO) HDF5 when both serial and openmpi flavours are installed.
set(HDF5_PREFER_PARALLEL TRUE)
find_package(HDF5 REQUIRED COMPONENTS C)
include(CheckSymbolExists)
set(CMAKE_REQUIRED_INCLUDES ${HDF5_INCLUDE_DIRS})
check_symbol_exists(H5_HAVE_PARALLEL "H5pubconf.h" SHARDSWEEP_HDF5_IS_PARALLEL)
unset(CMAKE_REQUIRED_INCLUDES)
if(NOT SHARDSWEEP_HDF5_IS_PARALLEL)
  message(FATAL_ERROR "shardsweep needs a parallel (MPI) HDF5 build; found a serial one in "
                      "${HDF5_INCLUDE_DIRS}. On Debian: apt-get install libhdf5-openmpi-dev")
endif()

find_package(Kokkos REQUIRED)
include(ShardsweepKokkosFix)
set(SHARDSWEEP_KOKKOS_BACKENDS SERIAL)
if(Kokkos_ENABLE_OPENMP OR "OPENMP" IN_LIST Kokkos_DEVICES)
  list(APPEND SHARDSWEEP_KOKKOS_BACKENDS OPENMP)
endif()
if(Kokkos_ENABLE_CUDA OR "CUDA" IN_LIST Kokkos_DEVICES)
  list(APPEND SHARDSWEEP_KOKKOS_BACKENDS CUDA)
endif()
message(STATUS "shardsweep: Kokkos ${Kokkos_VERSION} from ${Kokkos_DIR}, backends: ${SHARDSWEEP_KOKKOS_BACKENDS}")
# Under nvcc, reaching host-only code from a KOKKOS_INLINE_FUNCTION (a plain function, a constexpr
# function, a global constant of class type) is an error, not a warning that turns into a crash
# on the first GPU run: cudafe's cross-execution-space diagnostics 20011-20015 (README "CUDA").
if("CUDA" IN_LIST SHARDSWEEP_KOKKOS_BACKENDS)
  foreach(_diagnostic 20011 20012 20013 20014 20015)
    add_compile_options("SHELL:-Xcudafe --diag_error=${_diagnostic}")
  endforeach()
endif()

find_package(Boost REQUIRED COMPONENTS program_options)
find_package(fmt REQUIRED)
find_package(yaml-cpp REQUIRED)
if(TARGET yaml-cpp::yaml-cpp)
  set(SHARDSWEEP_YAML_TARGET yaml-cpp::yaml-cpp)
else()
  set(SHARDSWEEP_YAML_TARGET yaml-cpp)
endif()
find_package(Git QUIET)
