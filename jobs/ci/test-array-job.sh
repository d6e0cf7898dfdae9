#!/bin/bash
# Real-Slurm test of jobs/sweep_array.sbatch (issue 7) launched with mpirun (LAUNCHER=mpirun):
# a 2-task array over a list of two sweeps
# (tests/cli/postprocess_sweep.yaml, jobs/ci/slurm_test_sweep.yaml), submitted with
# `sbatch --wait`; task 1 gets SIGUSR1 on its batch shell after its first journaled batch, must
# requeue itself and complete on its second run (task 0 runs once); each task's file must equal a
# direct `mpirun -np 2` run of its sweep, and the reader must combine the two files (948 + 3000
# scenarios).
# Usage: test-array-job.sh <shardsweep> <source-dir> <scratch-dir> <slurm-dir>
set -u
exe=$1
src=$2
scratch=$3
slurm=$4
fail() {
    echo "FAIL: $*"
    for f in "$scratch"/job-*.out; do
        [ -f "$f" ] && { echo "---- $f"; cat "$f"; }
    done
    [ -n "${jid:-}" ] && scancel "$jid" 2>/dev/null
    exit 1
}
[ -f "$slurm/env.sh" ] || fail "no cluster in $slurm (the slurm fixture did not run)"
. "$slurm/env.sh"
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch" || fail "cd $scratch"
sweep=$src/jobs/ci/slurm_test_sweep.yaml
total=3000
cat >sweeps.txt <<LIST
# one sweep per array task
$src/tests/cli/postprocess_sweep.yaml
$sweep
LIST
opts=(--detail gpus --progress-interval 1 --batch-size 16)
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }
. "$src/jobs/ci/slurm_job_lib.sh"

# LAUNCHER=mpirun: the array covers the scripts' second launcher (sweep_job covers srun); the
# batch shell's trap forwards USR1 to mpirun, which forwards it to every rank.
LAUNCHER=mpirun SHARDSWEEP=$exe SHARDSWEEP_JOBS=$src/jobs submit_job --array=0-1 \
    --job-name=array-test --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=10 \
    --output="$scratch/job-%A_%a.out" "$src/jobs/sweep_array.sbatch" sweeps.txt "$scratch/out" \
    "${opts[@]}"
signal_when_journaled "$scratch/out/slurm_test_sweep.h5.journal" "${jid}_1" 90 "task 1"
wait_job 0
for t in 0 1; do
    info=$(scontrol show job "${jid}_$t")
    echo "$info" | grep -q "JobState=COMPLETED" || fail "task $t: $(echo "$info" | grep -o 'JobState=[A-Z_]*')"
    echo "$info" | grep -q "Restarts=$t " || fail "task $t: expected Restarts=$t: $(echo "$info" | grep -o 'Restarts=[0-9]*')"
done
log1=$scratch/job-${jid}_1.out
for expected in "task 1 of 2: sweep $sweep" "launcher mpirun" "USR1 received" "shardsweep run exit status 3" \
    "requeueing job" "shardsweep run exit status 0"; do
    grep -qF "$expected" "$log1" || fail "task 1 output lacks '$expected'"
done
before=$(sed -n "s/^shardsweep run: $total scenarios, \([0-9]*\) already done.*/\1/p" "$log1" | tail -1)
[ -n "$before" ] && [ "$before" -gt 0 ] && [ "$before" -lt "$total" ] ||
    fail "task 1's requeued run did not resume (already done: '${before}')"
grep -q "USR1 received" "$scratch/job-${jid}_0.out" && fail "task 0 was signalled too"
echo "task 1 requeued and resumed with $before of $total scenarios already done"

# Each task's file equals a direct run of its sweep.
i=0
for s in "$src/tests/cli/postprocess_sweep.yaml" "$sweep"; do
    name=$(basename "$s" .yaml)
    ${MPIEXEC:-mpirun} --oversubscribe -np 2 "$exe" run "$s" -o "direct$i.h5" "${opts[@]}" \
        >"direct$i.log" 2>&1 || fail "direct run of $name exit $?: $(tail -5 "direct$i.log")"
    /usr/bin/python3 "$src/jobs/ci/compare_h5.py" "direct$i.h5" "out/$name.h5" ||
        fail "task $i's file out/$name.h5 differs from a direct run"
    i=$((i + 1))
done
# Combined by the reader (different sweeps: appended) and summarized.
/usr/bin/python3 "$src/postprocess/summarize.py" out/postprocess_sweep.h5 out/slurm_test_sweep.h5 --csv-dir sum \
    >summary.txt 2>&1 || fail "summarize of the two files: $(cat summary.txt)"
grep -q "^3948 scenarios computed of 3948" summary.txt || fail "combined summary: $(head -3 summary.txt)"
echo "PASS: sweep_array.sbatch: 2 tasks, one signalled, requeued and resumed; files identical to direct runs; combined ($(elapsed) s)"
