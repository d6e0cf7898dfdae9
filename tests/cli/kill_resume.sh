# The kill harness (issue 21): a sweep is killed with SIGKILL at random moments spread over its
# whole run - before the first batch, mid-batch, mid-append, between an append and its fsync,
# while the results file is laid out and while it is closed - either every process at once (a
# node that loses power) or mpirun's process group alone (the ranks live on as orphans), and
# rerun; every rerun must finish within a timeout and give a file whose every dataset is
# identical (h5diff, exact) to an uninterrupted run's, with no journal left. Half of the reruns
# are killed again before the final one, so that resumed runs (several sessions of journals) are
# killed too.
#
# Usage: bash kill_resume.sh <shardsweep> <source-dir> <scratch-dir>
#   env: MPIEXEC (mpirun), SHARDSWEEP_KILLS (kills per layout, default 20),
#        SHARDSWEEP_KILL_LAYOUTS (default "2x1": ranks x threads; the long run by hand uses
#        "2x1 1x2"), SHARDSWEEP_KILL_SEED (default: random, printed), SHARDSWEEP_KILL_SCENARIOS
#        (scenarios swept, default 60000: inputs/sweeps/resume_check.yaml with other counts)
# The long run of docs/HDF5_LAYOUT.md ("Resume under SIGKILL"):
#   SHARDSWEEP_KILLS=100 SHARDSWEEP_KILL_LAYOUTS="2x1 1x2" \
#       bash tests/cli/kill_resume.sh build-tests/src/shardsweep . /tmp/kills
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
kills_wanted=${SHARDSWEEP_KILLS:-20}
layouts=${SHARDSWEEP_KILL_LAYOUTS:-2x1}
seed=${SHARDSWEEP_KILL_SEED:-$((RANDOM * 32768 + RANDOM))}
scenarios=${SHARDSWEEP_KILL_SCENARIOS:-60000}
mpiexec=${MPIEXEC:-mpirun}
fail() {
    echo "FAIL: $* (seed $seed: rerun with SHARDSWEEP_KILL_SEED=$seed)"
    [ -n "${job:-}" ] && kill -9 $(ps -o pid= -s "$job" 2>/dev/null) 2>/dev/null
    exit 1
}
command -v h5diff >/dev/null || fail "h5diff (hdf5-tools) is needed"
command -v setsid >/dev/null || fail "setsid (util-linux) is needed"
rm -rf "$scratch"
mkdir -p "$scratch"
# resume_check.yaml's two generators with $scenarios / 2 tasks each, drawn from a pool of 120
# tables instead of 856: every run (killed or not) first fills its ranks' caches of per-table
# bound terms, ~0.75 ms per table and dim, which took 3 of the 7.5 s of a 2-rank run with 856;
# with 120 the run takes 3 s, and every phase the kills aim at is still there.
sed -e "s#\.\./platforms/#$src/inputs/platforms/#g" -e "s/count: 15000/count: $((scenarios / 2))/" \
    -e "s/synthetic: 856/synthetic: 120/" "$src/inputs/sweeps/resume_check.yaml" >"$scratch/rc.yaml"
grep -q "synthetic: 120" "$scratch/rc.yaml" || fail "could not shrink resume_check.yaml's pool"
scenarios=$((scenarios / 2 * 2))
echo "seed $seed, $kills_wanted kills per layout ($layouts), $scenarios scenarios"
RANDOM=$seed
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# A uniform random time in [0, $1) seconds (15 random bits; at least a 50 ms span).
random_time() { awk -v r=$RANDOM -v t="$1" 'BEGIN { if (t < 0.05) t = 0.05; printf "%.3f", r / 32768 * t }'; }
# True once more than $limit seconds have passed since $1.
past_limit() { awk -v a="$1" -v b="$(now)" -v l="$limit" 'BEGIN { exit !(b - a > l) }'; }
attr() { h5dump -a "/$2" "$1" 2>/dev/null | awk '/\(0\):/ { print $2 }' | tr -d '"'; }

# Starts a run of the current layout in a session of its own (so that every process it spawns can
# be found): sets $job.
start() {
    local out=$1
    OMP_NUM_THREADS=$threads setsid $mpiexec --oversubscribe -np "$np" "$exe" run "$scratch/rc.yaml" \
        -o "$out" --progress-interval 0 >>"$out.log" 2>&1 &
    job=$!
}
# killall9 (a node that loses power), killgroup9 (mpirun's process group alone: orphaned ranks)
source "$src/tests/cli/lib/mpi_session.sh"
# Runs to the end within $limit seconds (a hung rank fails the harness instead of the job's time
# limit); returns the run's exit status and sets t_journal and t_file: when the first journal
# record and the results file appeared.
finish() {
    local out=$1 t0
    t0=$(now)
    t_journal=
    t_file=
    start "$out"
    while kill -0 "$job" 2>/dev/null; do
        [ -z "$t_journal" ] && [ -n "$(find "$out.journal" -name '*.jnl' -size +0 2>/dev/null)" ] &&
            t_journal=$(elapsed "$t0")
        [ -z "$t_file" ] && [ -e "$out" ] && t_file=$(elapsed "$t0")
        past_limit "$t0" && {
            killall9
            fail "a rerun did not finish within $limit s (deadlock?): $(tail -5 "$out.log")"
        }
        sleep 0.05
    done
    wait "$job"
}
journal_files() { find "$1.journal" -name '*.jnl' -size +0 2>/dev/null | wc -l; }
# Kills a run of $1 at a random moment of one of its phases, drawn at random: its start (from
# mpirun to the first journal record), its sweep loop (from its first record) or the results
# file's build (from the file's creation), each over the span it had in the uninterrupted run.
# Sets phase, and ran=1 when the run was still running at the kill. A run that hangs in a phase fails the harness.
kill_random() {
    local out=$1 journals t0 span
    phase=$((RANDOM % 3))
    journals=$(journal_files "$out")
    case $phase in
    0) span=$t_journal ;;
    1) span=$(awk -v a="$t_journal" -v b="$t_file" 'BEGIN { print b - a }') ;;
    2) span=$(awk -v a="$t_file" -v b="$t_ref" 'BEGIN { print b - a }') ;;
    esac
    t0=$(now)
    start "$out"
    killed_jobs+=("$job")
    # The anchor: a new journal file of this run; the results file (re)created by this run.
    until case $phase in
        0) true ;;
        1) [ "$(journal_files "$out")" -gt "$journals" ] ;;
        2) [ -e "$out" ] && awk -v m="$(stat -c %.9Y "$out" 2>/dev/null)" -v t="$t0" \
            'BEGIN { exit !(m >= t) }' ;;
        esac; do
        kill -0 "$job" 2>/dev/null || break
        past_limit "$t0" &&
            fail "a run stayed more than $limit s before its phase $phase (deadlock?): $(tail -5 "$out.log")"
        sleep 0.01
    done
    sleep "$(random_time "$span")"
    kill -0 "$job" 2>/dev/null && ran=1 || ran=0
    if [ $((RANDOM % 2)) = 0 ]; then
        killall9
    else
        killgroup9
    fi
}
# The processes of this trial's killed runs still alive (orphaned ranks), for a failure message.
survivors() {
    local j
    for j in "${killed_jobs[@]}"; do ps -o pid=,stat=,etimes=,args= -s "$j" 2>/dev/null; done |
        tr -s ' \n' ' '
}
same() {
    for g in scenarios gpus shards tables names; do
        h5diff "$1" "$2" "/$g" "/$g" >"$scratch/diff.txt" 2>&1 ||
            fail "/$g of $2 differs from the uninterrupted run: $(head -5 "$scratch/diff.txt")"
    done
}

t_script=$(now)
for layout in $layouts; do
    np=${layout%x*}
    threads=${layout#*x}
    ref=$scratch/ref-$layout.h5
    t0=$(now)
    limit=600
    finish "$ref" || fail "$layout: reference run exit $?: $(tail -5 "$ref.log")"
    t_ref=$(elapsed "$t0")
    # A rerun does at most a whole run's work; 10x that (at least 60 s) is a hang on a loaded VM.
    limit=$(awk -v t="$t_ref" 'BEGIN { l = 10 * t; print (l < 60 ? 60 : l) }')
    [ -n "$t_journal" ] && [ -n "$t_file" ] || fail "$layout: the reference run's phases not seen"
    echo "$layout: uninterrupted run $t_ref s (first journal record at $t_journal s, results" \
        "file from $t_file s)"
    landed=(0 0 0)
    kills=0
    trial=0
    while [ $kills -lt "$kills_wanted" ]; do
        trial=$((trial + 1))
        out=$scratch/t$trial-$layout.h5
        # One to three runs killed at random moments, then one to the end.
        killed_jobs=()
        for round in 1 2 3; do
            [ $round -gt 1 ] && [ $((RANDOM % 2)) = 0 ] && break
            kill_random "$out"
            landed[$phase]=$((landed[$phase] + ran))
            kills=$((kills + ran))
        done
        finish "$out" || fail "$layout trial $trial: rerun exit $?: $(tail -5 "$out.log")"
        [ -e "$out.journal" ] && fail "$layout trial $trial: journals left after the run" \
            "finished: $(ls -A "$out.journal" | tr '\n' ' '); processes of its killed runs" \
            "still alive: $(survivors)"
        same "$ref" "$out"
        [ "$(attr "$out" num_done)" = "$scenarios" ] || fail "$layout trial $trial: num_done"
        rm -rf "$out" "$out.log"
    done
    echo "$layout: $kills kills in $trial trials resumed to identical files (kills in the start" \
        "${landed[0]}, the sweep loop ${landed[1]}, the results file ${landed[2]};" \
        "$(elapsed "$t_script") s so far)"
done
rm -rf "$scratch"/*.h5 "$scratch"/*.journal
echo "kill_resume OK ($(elapsed "$t_script") s)"
