#!/bin/bash
# Real-Slurm test of jobs/sweep.sbatch (issue 7): submitted with `sbatch --wait` to the one-node
# cluster of start-slurm.sh, the job gets SIGUSR1 on its batch shell (`scancel --signal=USR1
# --batch`, the deterministic stand-in for `--signal=B:USR1@300`) as soon as its first batch is
# journaled; the job must stop with `shardsweep run` exit 3, requeue itself, resume on its second
# run and finish with state COMPLETED, Restarts=1, exit 0; its HDF5 file must equal, dataset by
# dataset, a direct `mpirun -np 2` run of the same sweep.
# Usage: test-sweep-job.sh <shardsweep> <source-dir> <scratch-dir> <slurm-dir>
set -u
exe=$1
src=$2
scratch=$3
slurm=$4
fail() {
    echo "FAIL: $*"
    [ -f "$scratch/job.out" ] && { echo "---- job output"; cat "$scratch/job.out"; }
    [ -n "${jid:-}" ] && scancel "$jid" 2>/dev/null
    exit 1
}
[ -f "$slurm/env.sh" ] || fail "no cluster in $slurm (the slurm fixture did not run)"
. "$slurm/env.sh"
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch" || fail "cd $scratch"
# slurm_test_sweep.yaml: 3000 scenarios, a few seconds on 2 ranks. --detail gpus keeps the file
# small (the per-shard rows are covered by tests/cli/resume.sh); batches of 16 journal early.
sweep=$src/jobs/ci/slurm_test_sweep.yaml
total=3000
opts=(--detail gpus --progress-interval 1 --batch-size 16)
start=$(date +%s)
elapsed() { echo $(($(date +%s) - start)); }
. "$src/jobs/ci/slurm_job_lib.sh"

# Overrides of the script's multi-node #SBATCH defaults for the one 2-CPU node.
SETUP='echo "setup ran in $SLURM_JOB_ID"' SHARDSWEEP=$exe submit_job --job-name=sweep-test \
    --nodes=1 --ntasks-per-node=2 --cpus-per-task=1 --time=10 --output="$scratch/job.out" \
    "$src/jobs/sweep.sbatch" "$sweep" "$scratch/job.h5" "${opts[@]}"
signal_when_journaled "$scratch/job.h5.journal" "$jid" 60 "job"
# The requeued run completes.
wait_job 0
info=$(scontrol show job "$jid")
echo "$info" | grep -q "JobState=COMPLETED" || fail "job state: $(echo "$info" | grep -o 'JobState=[A-Z_]*')"
echo "$info" | grep -q "Restarts=1 " || fail "expected one requeue: $(echo "$info" | grep -o 'Restarts=[0-9]*')"
out=$(cat job.out)
for expected in "setup ran in $jid" "USR1 received" "shardsweep run exit status 3" "requeueing job $jid" \
    "job $jid (sweep-test) run 2 on" "shardsweep run exit status 0"; do
    grep -qF "$expected" job.out || fail "job output lacks '$expected'"
done
# The second run resumed: it found scenarios done, computed only the rest.
before=$(sed -n "s/^shardsweep run: $total scenarios, \([0-9]*\) already done.*/\1/p" job.out | tail -1)
[ -n "$before" ] && [ "$before" -gt 0 ] && [ "$before" -lt "$total" ] ||
    fail "the requeued run did not resume (already done: '${before}')"
[ ! -e job.h5.journal ] || fail "journals left behind after the job completed"
echo "requeued run resumed with $before of $total scenarios already done"

# The reference: a direct run outside Slurm.
${MPIEXEC:-mpirun} --oversubscribe -np 2 "$exe" run "$sweep" -o "$scratch/direct.h5" "${opts[@]}" \
    >direct.log 2>&1 || fail "direct run exit $?: $(tail -5 direct.log)"
/usr/bin/python3 "$src/jobs/ci/compare_h5.py" direct.h5 job.h5 || fail "the job's file differs"
echo "PASS: sweep.sbatch signalled, requeued and resumed; file identical to a direct run ($(elapsed) s)"
