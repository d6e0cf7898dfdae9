#!/usr/bin/env bash
# The checks of the CUDA build on one GPU (README "CUDA", issue 25), in one run, on a machine with
# a driver and a python3 with PyTorch but without shardsweep's stack (scripts/cuda_bundle.sh):
#   1. `shardsweep --version`, then every unit test of the CUDA backend (8 at a time; the kernel
#      tests that compare the GPU with the host first), then the MPI tests on 1 and 2 ranks:
#      correctness first, so that a slow benchmark cannot crowd the tests out of a short lease;
#   2. `bench kernel` on cuda and, the baseline of the same run, on openmp with every core;
#   3. the GPU microbenchmark of `calibrate gpu` (scripts/microbench/), with SHAPES.csv timed
#      first when given (issue 24);
#   4. `bench sweep` on cuda and openmp.
#
#   scripts/gpu_checks.sh BUNDLE.tar.xz OUTDIR [SHAPES.csv]
#
# Each step has its own time limit, so that a slow one still leaves the others their results;
# OUTDIR gets summary.txt and one file per step.
set -uo pipefail
bundle="${1:?BUNDLE.tar.xz OUTDIR [SHAPES.csv]}"
out="${2:?BUNDLE.tar.xz OUTDIR [SHAPES.csv]}"
shapes="${3:-}"
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "${out}"
out="$(cd "${out}" && pwd)"
summary="${out}/summary.txt"
note() { echo "[gpu_checks $(date -u +%H:%M:%S)] $*" | tee -a "${summary}"; }

dir=/tmp/shardsweep-bundle
eval "$(bash "${repo_root}/scripts/cuda_bundle.sh" unpack "${bundle}" "${dir}")"
# The tests and benches read inputs/ at the source path of the build (SHARDSWEEP_SOURCE_DIR).
built_in="$(cat "${dir}/source_dir")"
if [[ "${built_in}" != "${repo_root}" && ! -e "${built_in}" ]]; then
    mkdir -p "$(dirname "${built_in}")" && ln -s "${repo_root}" "${built_in}"
fi
# Kokkos 3.4 compiles sm_80 code and its PTX: the driver compiles the PTX for this GPU at the
# first launch of each kernel (lazily, and cached for the next process).
export CUDA_MODULE_LOADING=LAZY CUDA_CACHE_MAXSIZE=4294967296
bin="${dir}/bin/shardsweep"
cores="$(nproc)"
batch="${GPU_CHECKS_BATCH:-262144}" # scenarios per bench kernel launch: about 50 KB of host memory each
# bench kernel's options on the GPU (GPU_CHECKS_KERNEL_ARGS), e.g. "--team-size 0,32,64" to
# compare the kernel's shapes in the same run; GPU_CHECKS_MICROBENCH=0 skips the microbenchmark.
kernel_args="${GPU_CHECKS_KERNEL_ARGS:---gemm-model both --min-seconds 2}"
microbench="${GPU_CHECKS_MICROBENCH:-1}"
# SHARDSWEEP_BUNDLE_BACKEND=OPENMP checks the script itself with a host build's bundle.
backend="${SHARDSWEEP_BUNDLE_BACKEND:-CUDA}"
kernel_backend="${backend,,}"
rm -rf /tmp/gpu_checks && mkdir -p /tmp/gpu_checks

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv | tee -a "${summary}"
timeout 300 "${bin}" --version 2>&1 | tee -a "${summary}"

note "unit tests"
run_test()
{
    # run_test NAME LOG COMMAND...: one line, PASS or FAIL(exit status) and the seconds taken.
    local name="$1" log="$2" start rc
    shift 2
    start="$(date +%s%N)"
    timeout -k 10 240 "$@" >"${log}" 2>&1
    rc=$?
    printf '%-40s %-9s %8.1f s\n' "${name}" "$([[ ${rc} == 0 ]] && echo PASS || echo "FAIL(${rc})")" \
        "$((($(date +%s%N) - start) / 1000000))e-3"
}
export -f run_test
{
    # The tests that compare the GPU with the host first.
    ls "${dir}"/tests/tst*_"${backend}" | grep -v /tstMpi |
        awk '/(Kernel|Collectives|EmbeddingCost|GemmModel|Learned|ShardsweepPlanner|TorchrecEstimator|TransformerModel)_/ { print 0, $0; next } { print 1, $0 }' |
        sort -s -k1,1 | cut -d' ' -f2 |
        xargs -P 8 -I{} bash -c 'run_test "$(basename {})" /tmp/gpu_checks/$(basename {}).log {}'
    for np in 1 2; do
        for t in "${dir}"/tests/tstMpi*_"${backend}"; do
            run_test "$(basename "${t}") np ${np}" "/tmp/gpu_checks/$(basename "${t}").np${np}.log" \
                "${dir}/bin/mpirun" -np "${np}" "${t}"
        done
    done
} | tee "${out}/tests.txt"
# The output of every failed test.
for f in /tmp/gpu_checks/*.log; do
    grep -q "PASSED" "${f}" && ! grep -q "FAILED" "${f}" && continue
    echo "===== ${f}"
    tail -60 "${f}"
done >"${out}/failures.txt" 2>&1
note "unit tests: $(grep -c PASS "${out}/tests.txt") passed, $(grep -c FAIL "${out}/tests.txt") failed"
note "bench kernel: cuda, then openmp on ${cores} threads"
{
    # shellcheck disable=SC2086 # kernel_args is a list of options
    timeout -k 10 240 "${bin}" bench kernel --backend "${kernel_backend}" --batch "${batch}" ${kernel_args}
    note "bench kernel ${kernel_backend} exit $?"
    OMP_PROC_BIND=spread OMP_PLACES=threads timeout -k 10 120 "${bin}" bench kernel --backend openmp \
        --kokkos-threads="${cores}" --batch "${batch}" --min-seconds 2
    note "bench kernel openmp exit $?"
} >"${out}/bench_kernel.txt" 2>&1

if [[ "${microbench}" == 0 ]]; then
    note "microbench skipped: GPU_CHECKS_MICROBENCH=0"
elif python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
    note "microbench"
    shape_args=()
    [[ -n "${shapes}" ]] && shape_args=(--shapes "${shapes}")
    PYTHONUNBUFFERED=1 timeout 300 python3 "${repo_root}/scripts/microbench/microbench.py" \
        "${shape_args[@]}" --gemm-out "${out}/gemm.csv" --ops-out "${out}/ops.csv" \
        >"${out}/microbench.txt" 2>&1
    note "microbench exit $?"
else
    note "microbench skipped: no python3 with PyTorch on CUDA"
fi

note "bench sweep: cuda, then openmp"
{
    for engine in "${kernel_backend}" openmp; do
        timeout -k 10 120 "${bin}" bench sweep --backend "${engine}" --kokkos-threads="${cores}" \
            --scenarios 200000 --batch-size 65536 --repeats 2 --rss-scenarios ""
        note "bench sweep ${engine} exit $?"
    done
} >"${out}/bench_sweep.txt" 2>&1

note "done"
