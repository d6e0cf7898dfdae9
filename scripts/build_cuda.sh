#!/usr/bin/env bash
# The README's CUDA command: set up Debian's CUDA 11.8 toolkit and Kokkos with the CUDA backend
# (scripts/setup.sh --cuda, as root), then build shardsweep, its benches and its tests with
# nvcc into build-cuda/. No GPU is needed to build; the CUDA tests need one to run.
#   scripts/build_cuda.sh [cmake --build arguments, e.g. --target tstCostKernel_CUDA]
#   SHARDSWEEP_CUDA_BUILD_DIR=DIR  build elsewhere
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SHARDSWEEP_CUDA_BUILD_DIR:-${repo_root}/build-cuda}"
kokkos="${SHARDSWEEP_DEPS_DIR:-${repo_root}/.deps}/kokkos-cuda"

bash "${repo_root}/scripts/setup.sh" --cuda
# Debian's toolkit only: another CUDA on the machine (/usr/local/cuda, CUDA_HOME) has headers
# that do not match Debian's nvcc (scripts/setup.sh writes the compiler wrapper likewise).
unset CUDA_HOME CUDA_PATH CUDA_ROOT CPATH LIBRARY_PATH
export PATH="/usr/bin:${PATH}"
cmake -S "${repo_root}" -B "${build}" -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="${kokkos}/bin/nvcc_wrapper_debian" -DKokkos_ROOT="${kokkos}" \
    -DSHARDSWEEP_ENABLE_TESTS=ON -DSHARDSWEEP_ENABLE_BENCHMARKS=ON -DSHARDSWEEP_TEST_BACKENDS=CUDA \
    >/dev/null
# Warning-free, as the OpenMP build: a warning fails the build (ccache replays a cached object's
# warnings, so a warm rebuild checks them too).
log="${build}/build.log"
cmake --build "${build}" -j "$(nproc)" "$@" 2>&1 | tee "${log}"
if grep -E "(: warning|warning #[0-9]+)" "${log}" >/dev/null; then
    echo "[build_cuda] the CUDA build has warnings (see ${log}):" >&2
    grep -E "(: warning|warning #[0-9]+)" "${log}" | sort -u | head -20 >&2
    exit 1
fi
