#!/usr/bin/env bash
# README command 2: set up (Debian 12, as root), build with tests, run the whole suite with ctest.
#   scripts/run_tests.sh [extra ctest arguments]
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${SHARDSWEEP_BUILD_DIR:-${repo_root}/build-tests}"

bash "${repo_root}/scripts/setup.sh"
cmake -S "${repo_root}" -B "${build}" -DCMAKE_BUILD_TYPE=Release -DSHARDSWEEP_ENABLE_TESTS=ON \
    -DSHARDSWEEP_ENABLE_BENCHMARKS=ON >/dev/null
cmake --build "${build}" -j "$(nproc)"
ctest --test-dir "${build}" --output-on-failure -j "$(nproc)" "$@"
