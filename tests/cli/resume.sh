# Never lose work (issue 5): `mpirun -np 2 shardsweep run resume_check.yaml` killed with SIGKILL
# at several points (right after the first journaled batch, at the first batch of a resumed run,
# while the final HDF5 file is being built), then rerun to completion, gives a file whose
# every dataset is identical (h5diff, exact) to an uninterrupted run's, with every scenario
# computed exactly once;
# SIGUSR1 to the ranks stops a run with exit status 3 and a rerun completes it; a resume with a
# changed sweep file is refused (exit 2, journals and file untouched) unless --fresh.
# Ranks orphaned (mpirun killed) while they wait for the output's lock leave at once and touch
# nothing.
# Usage: bash resume.sh <shardsweep> <source-dir> <scratch-dir>   (env: MPIEXEC)
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
fail() {
    echo "FAIL: $*"
    exit 1
}
command -v h5diff >/dev/null || fail "h5diff (hdf5-tools) is needed"
command -v setsid >/dev/null || fail "setsid (util-linux) is needed"
mpiexec=${MPIEXEC:-mpirun}
rm -rf "$scratch"
mkdir -p "$scratch"
# A copy with an absolute platform path (the sweep text is hashed: every run uses this copy), and
# a changed copy (another seed).
sed "s#\.\./platforms/#$src/inputs/platforms/#g" "$src/inputs/sweeps/resume_check.yaml" \
    >"$scratch/rc.yaml"
sed "s/^seed: 5$/seed: 6/" "$scratch/rc.yaml" >"$scratch/rc_changed.yaml"
cmp -s "$scratch/rc.yaml" "$scratch/rc_changed.yaml" && fail "could not make the changed sweep"
total=30000
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
t_script=$(now)

# Runs in the foreground; returns mpirun's exit status. Output in $2.log.
run() {
    local yaml=$1 out=$2
    shift 2
    $mpiexec --oversubscribe -np 2 "$exe" run "$yaml" -o "$out" --progress-interval 0 "$@" \
        >>"$out.log" 2>&1
}
# Starts a run in its own session (so that every process it spawns can be found); sets $job.
start() {
    local yaml=$1 out=$2
    setsid $mpiexec --oversubscribe -np 2 "$exe" run "$yaml" -o "$out" --progress-interval 0 \
        >>"$out.log" 2>&1 &
    job=$!
}
# killall9, killgroup9
source "$src/tests/cli/lib/mpi_session.sh"
# Waits (at most $2 s) until the command $1 succeeds; fails if the run ended first.
waitfor() {
    local cond=$1 limit=$2 t0
    t0=$(now)
    until eval "$cond"; do
        kill -0 "$job" 2>/dev/null || fail "the run ended before: $cond"
        awk -v a="$t0" -v b="$(now)" -v l="$limit" 'BEGIN { exit !(b - a > l) }' &&
            fail "timeout waiting for: $cond"
        sleep 0.05
    done
}
journaled() { [ -n "$(find "$1.journal" -name '*.jnl' -size +0 2>/dev/null)" ]; }
# "N scenarios, D already done, P to compute" of the latest start line of a log.
already_done() { grep "already done" "$1" | tail -1 | sed 's/.*scenarios, \([0-9]*\) already done.*/\1/'; }
computed() { grep "scenarios computed in" "$1" | tail -1 | awk '{ print $1 }'; }
same() {
    for g in scenarios gpus shards tables names; do
        h5diff "$1" "$2" "/$g" "/$g" >"$scratch/diff.txt" 2>&1 ||
            fail "/$g of $2 differs from the uninterrupted run: $(head -20 "$scratch/diff.txt")"
    done
}
attr() { h5dump -a "/$2" "$1" | awk '/\(0\):/ { print $2 }' | tr -d '"'; }

# ---- the uninterrupted reference ---------------------------------------------------------------
ref=$scratch/ref.h5
t0=$(now)
run "$scratch/rc.yaml" "$ref" || fail "reference run exit $?: $(tail -5 "$ref.log")"
t_ref=$(since "$t0")
echo "reference run: $t_ref s"
[ "$(computed "$ref.log")" = $total ] || fail "reference computed $(computed "$ref.log")"
[ "$(attr "$ref" complete)" = 1 ] || fail "reference file not complete"

# ---- SIGKILL at three points, then resume ------------------------------------------------------
out=$scratch/killed.h5
# (1) just after the first batch is journaled: certainly inside the sweep loop. The journal
# grows as its first record is being written (in the background): 0.1 s more let that record
# complete (~5 MB and an fsync), far less than the sweep's remaining half second.
start "$scratch/rc.yaml" "$out"
waitfor "journaled $out" 60
sleep 0.1
killall9
[ -e "$out" ] && fail "kill 1: the output file exists although the sweep was not finished"
# (2) in the resumed run's sweep loop: as soon as it journals its first batch, to journal files
# of its own (s<session>-r<rank>.jnl). A delay (half a reference run) came after the end of the
# resumed half once the sweep got faster.
journal_files() { find "$1.journal" -name '*.jnl' -size +0 2>/dev/null | wc -l; }
files_before=$(journal_files "$out")
start "$scratch/rc.yaml" "$out"
waitfor "[ \$(journal_files $out) -gt $files_before ]" 60
killall9
d1=$(already_done "$out.log")
[ -n "$d1" ] && [ "$d1" -gt 0 ] && [ "$d1" -lt $total ] ||
    fail "kill 1 did not hit a running sweep (${d1:-?} of $total journaled)"
echo "kill 1: $d1 of $total scenarios journaled"
if [ -e "$out" ]; then
    [ "$(attr "$out" complete)" = 1 ] && fail "kill 2 came too late: the sweep had finished"
    echo "kill 2: during the HDF5 build"
else
    echo "kill 2: in the sweep loop ($(find "$out.journal" -name '*.jnl' | wc -l) journal files)"
fi
# (3) while the HDF5 file is being built from the journals (it appears only then), 0.02 s after
# it appears (creating its datasets or writing them: the build takes 0.1-0.3 s here); if kill 2
# left a partial file, right after the start.
start "$scratch/rc.yaml" "$out"
waitfor "[ -e $out ]" 120
sleep 0.02
kill -0 "$job" 2>/dev/null || fail "kill 3 came after the run had ended"
killall9
echo "kill 3: $(already_done "$out.log") done at the start of that run, output file partial"
[ -d "$out.journal" ] || fail "kill 3: journals gone although the file was not finished"
[ "$(attr "$out" complete 2>/dev/null)" = 1 ] && fail "kill 3: the file is complete already"
# Resume to completion.
run "$scratch/rc.yaml" "$out" || fail "resume exit $?: $(tail -5 "$out.log")"
grep -q "scenarios computed in" "$out.log" || fail "resume printed no summary"
d=$(already_done "$out.log")
c=$(computed "$out.log")
[ $((d + c)) -eq $total ] || fail "final resume: $d done before + $c computed != $total"
[ ! -e "$out.journal" ] || fail "journals left after the resumed run completed"
same "$ref" "$out"
[ "$(attr "$out" num_done)" = $total ] || fail "num_done of the resumed file"
echo "SIGKILL x3 + resume: identical to the uninterrupted run ($(since "$t_script") s so far)"

# ---- ranks orphaned while they wait for the lock leave at once -----------------------------------
# A run whose mpirun is killed while it waits for another run's lock must not wait on as orphans:
# once the other run finishes and removes its journals, a late orphan would create the journal
# directory again next to the finished file (cli.kill_resume saw one left after its rerun).
out=$scratch/orphans.h5
start "$scratch/rc.yaml" "$out"
holder=$job
waitfor "journaled $out" 60
holder_ranks=$(ps -o pid=,comm= -s "$holder" | awk '$2 == "shardsweep" { print $1 }')
kill -STOP $holder_ranks # the lock stays held as long as we like
start "$scratch/rc.yaml" "$out"
waitfor "grep -q 'is in use by another run' $out.log" 60
killgroup9
t0=$(now)
# (Exited ranks may stay zombies a while until init reaps them: those count as gone.)
until [ -z "$(ps -o stat= -s "$job" 2>/dev/null | grep -v '^Z')" ]; do
    awk -v a="$t0" -v b="$(now)" 'BEGIN { exit !(b - a > 10) }' && {
        kill -CONT $holder_ranks
        killall9
        fail "ranks orphaned while waiting for the lock still wait 10 s later"
    }
    sleep 0.05
done
echo "orphans waiting for the lock: gone $(since "$t0") s after their mpirun was killed"
kill -CONT $holder_ranks
job=$holder
wait "$job" || fail "the run that held the lock: exit $?: $(tail -5 "$out.log")"
[ ! -e "$out.journal" ] || fail "a journal directory next to the finished file: $(ls "$out.journal")"
same "$ref" "$out"

# ---- SIGUSR1: exit 3, refused with another sweep, resumed with the same --------------------------
out=$scratch/usr1.h5
start "$scratch/rc.yaml" "$out"
waitfor "journaled $out" 60
ranks=$(ps -o pid=,comm= -s "$job" | awk '$2 == "shardsweep" { print $1 }')
[ "$(wc -w <<<"$ranks")" = 2 ] || fail "expected 2 ranks in the session, found: $ranks"
kill -USR1 $ranks
wait "$job"
rc=$?
[ $rc -eq 3 ] || fail "SIGUSR1: exit $rc, expected 3: $(tail -5 "$out.log")"
grep -q "^stopped by SIGUSR1: " "$out.log" || fail "SIGUSR1: no 'stopped by SIGUSR1' message"
[ ! -e "$out" ] || fail "SIGUSR1: the output file was written for an unfinished sweep"
stopped_at=$(find "$out.journal" -name '*.jnl' -exec cat {} + | md5sum)
# A changed sweep file must not resume these journals.
run "$scratch/rc_changed.yaml" "$out"
rc=$?
[ $rc -eq 2 ] || fail "resume with a changed sweep: exit $rc, expected 2"
grep -q "refusing to resume" "$out.log" || fail "no refusal message: $(tail -3 "$out.log")"
grep -q -- "--fresh" "$out.log" || fail "the refusal does not mention --fresh"
[ "$(find "$out.journal" -name '*.jnl' -exec cat {} + | md5sum)" = "$stopped_at" ] ||
    fail "the refused run changed the journals"
[ ! -e "$out" ] || fail "the refused run created the output file"
# The same command resumes.
: >"$out.log"
run "$scratch/rc.yaml" "$out" || fail "resume after SIGUSR1 exit $?: $(tail -5 "$out.log")"
d=$(already_done "$out.log")
c=$(computed "$out.log")
[ "$d" -gt 0 ] && [ $((d + c)) -eq $total ] ||
    fail "after SIGUSR1: $d done before + $c computed != $total"
same "$ref" "$out"
echo "SIGUSR1: exit 3, changed sweep refused, resume identical ($d + $c scenarios)"

# ---- a finished file and a changed sweep: refused, unless --fresh --------------------------------
sum=$(md5sum <"$out")
run "$scratch/rc_changed.yaml" "$out"
rc=$?
[ $rc -eq 2 ] || fail "changed sweep on a finished file: exit $rc, expected 2"
[ "$(md5sum <"$out")" = "$sum" ] || fail "the refused run changed the finished file"
run "$scratch/rc_changed.yaml" "$out" --fresh --max-scenarios 2000 ||
    fail "--fresh exit $?: $(tail -5 "$out.log")"
[ "$(attr "$out" num_scenarios)" = 2000 ] || fail "--fresh did not start over"
[ "$(attr "$out" complete)" = 1 ] || fail "--fresh file not complete"

rm -rf "$scratch"/*.h5 "$scratch"/*.journal
echo "resume OK ($(since "$t_script") s)"
