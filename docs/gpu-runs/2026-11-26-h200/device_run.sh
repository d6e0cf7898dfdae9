#!/bin/bash
# The record of how docs/gpu-runs/2026-11-26-h200 was made (see README.md there); not part
# of the build.
# Runs on the device machine from the repository root: the CUDA unit tests, then bench kernel and
# bench sweep on CUDA and on OpenMP (the baseline, same machine, same run).
set -u
root=$PWD
out=${OUT:-/tmp/out}; mkdir -p "$out"
t0=$(date +%s)
mkdir -p /tmp/ss && tar -C /tmp/ss -xJf .devcarry/bundle.tar.xz || exit 1
# The binaries name their source folder (inputs, models) by absolute path.
[ -e /work/main ] || { mkdir -p /work && ln -s "$root" /work/main; }
export LD_LIBRARY_PATH=/tmp/ss/lib
grep -q GLIBCXX_3.4.30 /usr/lib/x86_64-linux-gnu/libstdc++.so.6 2>/dev/null || export LD_LIBRARY_PATH=/tmp/ss/lib:/tmp/ss/libstd
export OMPI_MCA_mca_base_component_path=/tmp/ss/ompi/openmpi3 PMIX_MCA_mca_base_component_path=/tmp/ss/ompi/pmix
export OMPI_MCA_ess_singleton_isolated=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export CUDA_CACHE_MAXSIZE=4294967296 OMP_PROC_BIND=false
B=/tmp/ss/bin
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; nproc; uname -r; } >"$out/machine.txt" 2>&1
"$B/shardsweep" --version >>"$out/machine.txt" 2>&1
echo "setup $(( $(date +%s) - t0 )) s" >>"$out/machine.txt"
# Unit and MPI (one rank) tests on the CUDA backend, 6 at a time.
cd /tmp/ss && ls "$B"/tst*_CUDA | timeout 200 xargs -P 8 -I{} sh -c 'n=$(basename {}); s=$(date +%s); timeout 180 {} --gtest_brief=1 >/tmp/ss/$n.log 2>&1; rc=$?; echo "$n rc=$rc $(( $(date +%s) - s ))s" >>/tmp/ss/summary.txt'
{ sort /tmp/ss/summary.txt; for f in /tmp/ss/tst*.log; do grep -q "FAILED\|Segmentation\|error" "$f" && { echo "== $f"; tail -60 "$f"; }; done; } >"$out/tests.txt" 2>&1
cd "$root"
echo "tests done $(( $(date +%s) - t0 )) s" >>"$out/machine.txt"
for opts in "--backend cuda" "--backend cuda --evaluate-tile 16384" "--backend openmp"; do
  echo "== bench sweep $opts" >>"$out/bench_sweep.txt"
  OMP_NUM_THREADS=$(nproc) timeout 90 "$B/shardsweep" bench sweep $opts --scenarios 200000 --repeats 2 --rss-scenarios "" --detail scenarios --batch-size 16384 --dir /tmp >>"$out/bench_sweep.txt" 2>&1
  echo "bench sweep $opts done $(( $(date +%s) - t0 )) s" >>"$out/machine.txt"
done
