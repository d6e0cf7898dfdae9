# `shardsweep run` end to end: the quickstart sweep with its generators cut to a fifth (300
# scenarios: the 150 grid scenarios and 30 tasks, every planner; the whole sweep took 250 of the
# suite's 800 s on CI's 2 cores) on 1 and 2 ranks, 1 and 2 OpenMP threads and two batch sizes gives
# files whose datasets are identical (h5diff, exact), with a summary printed and every scenario
# done; a sweep with another seed gives a different file (so the comparison can fail); --help
# works; bad input exits 2 before any output exists; rerunning a finished sweep does nothing.
# Usage: bash run_basic.sh <shardsweep> <source-dir> <scratch-dir>   (env: MPIEXEC)
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
command -v h5diff >/dev/null || fail "h5diff (hdf5-tools) is needed"
mpiexec=${MPIEXEC:-mpirun}
rm -rf "$scratch"
mkdir -p "$scratch"
# The README's default sweep with absolute paths and 20 + 10 generated tasks instead of 100 + 50.
sweep=$scratch/quickstart_small.yaml
sed -e "s#workloads/#$src/inputs/workloads/#g" -e "s#platforms/#$src/inputs/platforms/#g" \
    -e "s/count: 100$/count: 20/" -e "s/count: 50$/count: 10/" "$src/inputs/quickstart.yaml" >"$sweep"
[ "$(grep -c -e "count: 20$" -e "count: 10$" "$sweep")" = 2 ] || fail "could not shrink the quickstart"

# run NP THREADS OUT [options]: one sweep, output captured in OUT.log; returns the exit status.
run() {
    local np=$1 threads=$2 out=$3
    shift 3
    OMP_NUM_THREADS=$threads $mpiexec --oversubscribe -np "$np" "$exe" run "$@" -o "$out" \
        --progress-interval 0 >"$out.log" 2>&1
}
attr() { h5dump -a "/$2" "$1" | awk '/\(0\):/ { print $2 }' | tr -d '"'; }

# ---- four runs of the same sweep --------------------------------------------------------------
run 1 1 "$scratch/np1t1.h5" "$sweep" || fail "np1 t1 exit $?: $(cat "$scratch/np1t1.h5.log")"
run 2 1 "$scratch/np2t1.h5" "$sweep" || fail "np2 t1 exit $?: $(cat "$scratch/np2t1.h5.log")"
run 1 2 "$scratch/np1t2.h5" "$sweep" || fail "np1 t2 exit $?: $(cat "$scratch/np1t2.h5.log")"
run 2 2 "$scratch/np2t2.h5" "$sweep" --batch-size 7 ||
    fail "np2 t2 exit $?: $(cat "$scratch/np2t2.h5.log")"

for f in np1t1 np2t1 np1t2 np2t2; do
    log=$scratch/$f.h5.log
    grep -q "^300 scenarios computed in .* on [12] rank(s)" "$log" || fail "$f: no summary line"
    grep -q "^busy s per rank: r0" "$log" || fail "$f: no per-rank busy line"
    for phase in materialize plan evaluate journal hdf5 busy; do
        grep -q "^$phase " "$log" || fail "$f: no '$phase' row in the phase table"
    done
    [ ! -e "$scratch/$f.h5.journal" ] || fail "$f: journals left behind after a complete run"
    [ "$(attr "$scratch/$f.h5" complete)" = 1 ] || fail "$f: complete != 1"
    [ "$(attr "$scratch/$f.h5" num_scenarios)" = 300 ] || fail "$f: num_scenarios"
    [ "$(attr "$scratch/$f.h5" num_done)" = 300 ] || fail "$f: num_done"
    # The done-mask: 300 ones.
    ones=$(h5dump -y -w 0 -d /scenarios/done "$scratch/$f.h5" | tr ', ' '\n\n' | grep -cx 1)
    [ "$ones" = 300 ] || fail "$f: $ones scenarios done, expected 300"
done
[ "$(attr "$scratch/np2t1.h5" num_ranks)" = 2 ] || fail "num_ranks of the 2-rank file"
[ "$(attr "$scratch/np1t1.h5" num_ranks)" = 1 ] || fail "num_ranks of the 1-rank file"
[ "$(h5ls "$scratch/np1t1.h5/scenarios" | wc -l)" = 64 ] || fail "/scenarios has not 64 columns"
[ "$(h5ls "$scratch/np1t1.h5/gpus" | wc -l)" = 13 ] || fail "/gpus has not 13 columns"
[ "$(h5ls "$scratch/np1t1.h5/shards" | wc -l)" = 16 ] || fail "/shards has not 16 columns"
[ "$(h5ls "$scratch/np1t1.h5/tables" | wc -l)" = 24 ] || fail "/tables has not 24 columns"
gpu_rows=$(h5ls "$scratch/np1t1.h5/gpus/gpu" | sed -n 's/.*{\([0-9]*\)}.*/\1/p')
[ "${gpu_rows:-0}" -gt 300 ] || fail "/gpus has only ${gpu_rows:-0} rows"

# Every dataset of every group identical (root attributes such as num_ranks differ by design).
for f in np2t1 np1t2 np2t2; do
    for g in scenarios gpus shards tables names; do
        h5diff "$scratch/np1t1.h5" "$scratch/$f.h5" "/$g" "/$g" >"$scratch/diff.txt" 2>&1 ||
            fail "/$g differs between np1t1 and $f: $(head -20 "$scratch/diff.txt")"
    done
done

# ---- the comparison can fail: another seed changes the results ---------------------------------
sed -e "s#^seed: 2024#seed: 2025#" "$sweep" >"$scratch/other_seed.yaml"
grep -q "^seed: 2025" "$scratch/other_seed.yaml" || fail "could not make the other-seed sweep"
run 2 1 "$scratch/seed.h5" "$scratch/other_seed.yaml" || fail "other-seed run exit $?"
h5diff -q "$scratch/np1t1.h5" "$scratch/seed.h5" /scenarios /scenarios >/dev/null 2>&1
[ $? -eq 1 ] || fail "h5diff finds no difference between two seeds: the comparison is blind"

# ---- a finished sweep is not recomputed --------------------------------------------------------
sum=$(md5sum <"$scratch/np2t1.h5")
run 2 1 "$scratch/np2t1.h5" "$sweep" || fail "rerun of a finished sweep exit $?"
grep -q "already complete" "$scratch/np2t1.h5.log" || fail "rerun: $(cat "$scratch/np2t1.h5.log")"
[ "$(md5sum <"$scratch/np2t1.h5")" = "$sum" ] || fail "rerun of a finished sweep changed the file"

# ---- --help ---------------------------------------------------------------------------------------
help=$("$exe" run --help) || fail "run --help exit $?"
for opt in --output --batch-size --progress-interval --fresh --compress --max-scenarios --detail \
    --format --lock-wait; do
    grep -q -- "$opt" <<<"$help" || fail "run --help does not explain $opt"
done
grep -q "3 stopped by a signal" <<<"$help" || fail "run --help does not document exit status 3"

# ---- bad input: exit 2, no output file, no journals ------------------------------------------------
bad() {
    local name=$1 expect=$2
    shift 2
    local out=$scratch/bad_$name.h5
    $mpiexec --oversubscribe -np 2 "$exe" run "$@" -o "$out" >"$out.log" 2>&1
    local rc=$?
    [ $rc -eq 2 ] || fail "$name: exit $rc, expected 2: $(cat "$out.log")"
    [ ! -e "$out" ] || fail "$name: the output file was created"
    [ ! -e "$out.journal" ] || fail "$name: a journal directory was created"
    grep -q -- "$expect" "$out.log" || fail "$name: message lacks '$expect': $(cat "$out.log")"
}
sed "s/^seed: 2025/seed: 2025\nfrobnicate: 1/" "$scratch/other_seed.yaml" >"$scratch/unknown_key.yaml"
sed "s/count: 20$/count: -3/" "$scratch/other_seed.yaml" >"$scratch/negative_count.yaml"
sed "s#platforms/dgx-h100.yaml#platforms/nowhere.yaml#" "$scratch/other_seed.yaml" \
    >"$scratch/missing_platform.yaml"
bad missing_file "nowhere.yaml" "$scratch/nowhere.yaml"
bad unknown_key "frobnicate" "$scratch/unknown_key.yaml"
bad negative_count "count" "$scratch/negative_count.yaml"
bad missing_platform "nowhere.yaml" "$scratch/missing_platform.yaml"
bad bad_detail "detail" "$sweep" --detail everything
bad bad_format "format" "$sweep" --format xml
bad negative_lock_wait "--lock-wait: expected seconds >= 0, found -1" "$sweep" --lock-wait=-1
$mpiexec --oversubscribe -np 1 "$exe" run "$sweep" >"$scratch/no_output.log" 2>&1
[ $? -eq 2 ] || fail "run without -o must exit 2"

rm -f "$scratch"/*.h5
echo "run basic OK"
