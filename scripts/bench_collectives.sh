#!/usr/bin/env bash
# Builds and runs scripts/bench_collectives.cpp (cost of allToAllvTimeNs vs collectiveTimeNs per
# call, one thread) against a Kokkos install: KOKKOS_ROOT (default .deps/kokkos-openmp).
#   scripts/bench_collectives.sh
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
kokkos="${KOKKOS_ROOT:-${repo_root}/.deps/kokkos-openmp}"
out="$(mktemp -d)"
trap 'rm -rf "${out}"' EXIT
libdir="$(ls -d "${kokkos}"/lib*/ | head -1)"
g++ -O3 -std=c++17 -fopenmp -I"${repo_root}/include" -I"${kokkos}/include" \
    "${repo_root}/scripts/bench_collectives.cpp" -o "${out}/bench_collectives" \
    -L"${libdir}" -Wl,-rpath,"${libdir}" -lkokkoscore -ldl
OMP_NUM_THREADS=1 OMP_PROC_BIND=false "${out}/bench_collectives"
