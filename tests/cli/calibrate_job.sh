# jobs/calibrate.sbatch end to end, without Slurm or a GPU: fake srun and scontrol, nccl-tests
# binaries that print the shipped 8-GPU all-reduce log, and a "python" that writes the shipped
# A100 GEMM and operator samples as microbench.py would. Checks that SCENARIOS' GEMMs reach the
# microbenchmark (the union of `shardsweep shapes` on each, every GEMM once), that the two
# calibrations the job writes are the ones `calibrate gpu|network` write from the same files, and
# that a SCENARIOS entry shapes cannot read stops the job before any measurement.
set -u
exe=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch/bin" "$scratch/nccl"
samples=$src/inputs/calibration/samples

cat >"$scratch/bin/srun" <<FAKE
#!/bin/bash
# srun: log the call, drop its --options, run the command on this machine.
echo "srun \$*" >>"$scratch/srun.calls"
while [ \$# -gt 0 ] && [ "\${1#--}" != "\$1" ]; do shift; done
exec "\$@"
FAKE
printf '#!/bin/bash\necho node1\n' >"$scratch/bin/scontrol"
for t in all_reduce_perf all_gather_perf reduce_scatter_perf alltoall_perf sendrecv_perf; do
    printf '#!/bin/bash\ncat "%s"\n' "$samples/all_reduce_perf_8gpu.log" >"$scratch/nccl/$t"
done
cat >"$scratch/python" <<FAKE
#!/bin/bash
# microbench.py's outputs from the shipped samples; its arguments are logged.
echo "\$*" >"$scratch/python.args"
while [ \$# -gt 0 ]; do
    case \$1 in
    --gemm-out) cp "$samples/gemm_A100-PCIe-40GB.csv" "\$2"; shift ;;
    --ops-out) cp "$samples/ops_A100-PCIe-40GB.csv" "\$2"; shift ;;
    esac
    shift
done
FAKE
chmod +x "$scratch"/bin/* "$scratch"/nccl/* "$scratch/python"

job() {
    (cd "$src" && env PATH="$scratch/bin:$PATH" SLURM_JOB_ID=42 SLURM_SUBMIT_DIR="$src" \
        SLURM_JOB_NUM_NODES=1 SLURM_NTASKS_PER_NODE=8 SLURM_JOB_NODELIST=node1 \
        NCCL_TESTS="$scratch/nccl" SHARDSWEEP="$exe" PYTHON="$scratch/python" \
        GPU_NAME="A100-PCIe-40GB" "$@" bash jobs/calibrate.sbatch)
}

scenarios="inputs/scenarios/gpt3-175b-a100.yaml inputs/scenarios/bert-large-inline.yaml inputs/scenarios/gpt3-175b-a100.yaml"
job OUT="$scratch/out" SCENARIOS="$scenarios" >"$scratch/job.log" 2>&1 ||
    fail "job exit $?: $(tail -5 "$scratch/job.log")"

# The microbenchmark timed the scenarios' GEMMs: each GEMM `shapes` lists for them, once.
grep -q -- "--shapes $scratch/out/shapes.csv" "$scratch/python.args" ||
    fail "microbench.py without --shapes: $(cat "$scratch/python.args")"
(cd "$src" && "$exe" shapes inputs/scenarios/gpt3-175b-a100.yaml -o "$scratch/a.csv" &&
    "$exe" shapes inputs/scenarios/bert-large-inline.yaml -o "$scratch/b.csv") || fail "shapes"
[ "$(head -1 "$scratch/out/shapes.csv")" = "B,M,N,K,dtype,op" ] || fail "header: $(head -1 "$scratch/out/shapes.csv")"
expected=$(tail -q -n +2 "$scratch/a.csv" "$scratch/b.csv" | sort -u)
[ "$(tail -n +2 "$scratch/out/shapes.csv" | sort)" = "$expected" ] ||
    fail "shapes.csv is not the union of each scenario's shapes"
[ "$(tail -n +2 "$scratch/out/shapes.csv" | wc -l)" -gt "$(tail -n +2 "$scratch/a.csv" | wc -l)" ] ||
    fail "the second scenario added no GEMM"
ls "$scratch/out"/shapes.*.csv >/dev/null 2>&1 && fail "per-scenario shape files left behind"

# The calibrations are what the commands write from the same files.
(cd "$src" && "$exe" calibrate gpu --gpu A100-PCIe-40GB --gemm "$scratch/out/gemm.csv" \
    --ops "$scratch/out/ops.csv" -o "$scratch/gpu.yaml" >/dev/null 2>"$scratch/err" &&
    "$exe" calibrate network --platform inputs/platforms/dgx-a100-4node-ib.yaml \
        --nccl-tests "$scratch/out"/nccl/*.log -o "$scratch/platform.yaml" >/dev/null 2>>"$scratch/err") ||
    fail "calibrate on the job's files: $(cat "$scratch/err")"
diff <(grep -v '^#' "$scratch/gpu.yaml") <(grep -v '^#' "$scratch/out/gpu_calibration.yaml") >/dev/null ||
    fail "gpu_calibration.yaml differs from calibrate gpu's"
diff <(grep -v '^#' "$scratch/platform.yaml") <(grep -v '^#' "$scratch/out/platform.yaml") >/dev/null ||
    fail "platform.yaml differs from calibrate network's"
[ "$(find "$scratch/out/nccl" -name '*.log' | wc -l)" -eq 5 ] || fail "nccl logs: $(ls "$scratch/out/nccl")"

# A SCENARIOS entry that shapes cannot read (a DLRM scenario) stops the job before any srun.
rm -f "$scratch/srun.calls"
job OUT="$scratch/bad" SCENARIOS="inputs/scenarios/mlperf-dgx-h100.yaml" >"$scratch/bad.log" 2>&1 &&
    fail "a DLRM scenario in SCENARIOS was accepted"
grep -q "shardsweep shapes inputs/scenarios/mlperf-dgx-h100.yaml failed" "$scratch/bad.log" ||
    fail "message: $(tail -3 "$scratch/bad.log")"
[ ! -e "$scratch/srun.calls" ] || fail "measured before failing: $(cat "$scratch/srun.calls")"
echo "calibrate_job: ok"
