#!/usr/bin/env bash
# README command 1: set up (Debian 12, as root), build Release, run the default sweep on 2 ranks.
#   scripts/quickstart.sh [SWEEP.yaml] [OUT.h5]
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
sweep="${1:-${repo_root}/inputs/quickstart.yaml}"
out="${2:-${repo_root}/out/quickstart.h5}"
build="${SHARDSWEEP_BUILD_DIR:-${repo_root}/build}"

SHARDSWEEP_WITH_SLURM="${SHARDSWEEP_WITH_SLURM:-0}" bash "${repo_root}/scripts/setup.sh"
cmake -S "${repo_root}" -B "${build}" -DCMAKE_BUILD_TYPE=Release -DSHARDSWEEP_ENABLE_TESTS=OFF >/dev/null
cmake --build "${build}" -j "$(nproc)" --target shardsweep
mkdir -p "$(dirname "${out}")"
# Open MPI refuses root without these; --oversubscribe lets 2 ranks run on a 1-core machine.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
mpirun --oversubscribe -np 2 "${build}/src/shardsweep" run "${sweep}" -o "${out}"
# What the sweep found, per planner (postprocess/summarize.py; CSVs next to the results file).
/usr/bin/python3 "${repo_root}/postprocess/summarize.py" "${out}" --by planner --csv-dir "$(dirname "${out}")"
