# Shared by the real-Slurm job tests (jobs/ci/test-*.sh): submit with `sbatch --wait` in the
# background, send SIGUSR1 to a job's batch shell once its journal holds a record, wait for
# sbatch. Source it after defining fail() and elapsed(), inside the test's scratch directory.

# submit_job SBATCH_ARGS...: `sbatch --wait --parsable SBATCH_ARGS` in the background (output in
# sbatch.txt; environment assignments before the call reach sbatch); sets sbatch_pid and jid.
submit_job() {
    sbatch --wait --parsable "$@" >sbatch.txt 2>&1 &
    sbatch_pid=$!
    jid=
    for _ in $(seq 100); do
        jid=$(head -1 sbatch.txt 2>/dev/null | grep -Eo '^[0-9]+')
        [ -n "$jid" ] && break
        sleep 0.1
    done
    [ -n "$jid" ] || fail "sbatch printed no job id: $(cat sbatch.txt)"
}

# True once a journal file in directory $1 holds a record (fsynced: the run has made progress).
journal_has_record() { [ "$(cat "$1"/*.jnl 2>/dev/null | wc -c)" -gt 0 ]; }

# signal_when_journaled JOURNAL_DIR JOB SECONDS WHAT: waits at most SECONDS for the first journal
# record, checks JOB (an id or id_task) is RUNNING, then `scancel --signal=USR1 --batch JOB` (the
# deterministic stand-in for `--signal=B:USR1@300`). WHAT names the job in messages.
signal_when_journaled() {
    local dir=$1 job=$2 seconds=$3 what=$4
    for _ in $(seq $((seconds * 20))); do
        journal_has_record "$dir" && break
        kill -0 "$sbatch_pid" 2>/dev/null || fail "$what ended before its first batch was journaled"
        sleep 0.05
    done
    journal_has_record "$dir" ||
        fail "$what journaled nothing within $seconds s (state $(squeue -h -j "$job" -o %T))"
    [ "$(squeue -h -j "$job" -o %T)" = RUNNING ] || fail "$what ($job) is not RUNNING when signalled"
    scancel --signal=USR1 --batch "$job" || fail "scancel --signal=USR1 --batch $job"
    echo "$(elapsed) s: $what ($job) journaled its first batch, SIGUSR1 sent to its batch shell"
}

# wait_job EXPECTED_RC: waits for sbatch --wait; fails unless it returns EXPECTED_RC.
wait_job() {
    wait "$sbatch_pid"
    local rc=$?
    echo "$(elapsed) s: sbatch --wait returned $rc"
    [ "$rc" -eq "$1" ] || fail "sbatch --wait exit status $rc, expected $1"
}
