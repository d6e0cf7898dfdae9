# Debian's libtrilinos-kokkos-dev 13.2 exports INTERFACE_INCLUDE_DIRECTORIES=/usr/lib/include, which
# does not exist, so CMake stops at generate time (Debian bug: the package ships KokkosTargets.cmake without the headers it names). Point the target at
# the real headers. A no-op for Kokkos installs whose include directory exists.
if(TARGET Kokkos::kokkos)
  get_target_property(_shardsweep_kokkos_inc Kokkos::kokkos INTERFACE_INCLUDE_DIRECTORIES)
  if(_shardsweep_kokkos_inc)
    set(_shardsweep_kokkos_fixed_inc "")
    set(_shardsweep_kokkos_needs_fix FALSE)
    foreach(_dir IN LISTS _shardsweep_kokkos_inc)
      if(_dir MATCHES "^\\$<" OR EXISTS "${_dir}")
        list(APPEND _shardsweep_kokkos_fixed_inc "${_dir}")
      else()
        set(_shardsweep_kokkos_needs_fix TRUE)
      endif()
    endforeach()
    if(_shardsweep_kokkos_needs_fix)
      find_path(SHARDSWEEP_KOKKOS_INCLUDE_DIR Kokkos_Core.hpp PATH_SUFFIXES trilinos REQUIRED)
      list(APPEND _shardsweep_kokkos_fixed_inc "${SHARDSWEEP_KOKKOS_INCLUDE_DIR}")
      set_target_properties(Kokkos::kokkos PROPERTIES INTERFACE_INCLUDE_DIRECTORIES
                                                      "${_shardsweep_kokkos_fixed_inc}")
    endif()
  endif()
endif()
