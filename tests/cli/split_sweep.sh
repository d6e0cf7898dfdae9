# jobs/split_sweep.py (the job array's slices at sweep level, issue 7): the small postprocess sweep
# (948 scenarios: 48 grid + 300 tasks x 3 planners) split into 3 and into 7 parts; every part
# validates and runs; the parts' scenario counts add up to the original's; every grid scenario of
# the original appears in exactly one part with identical results (deterministic planners); the
# generator's 300 tasks x 3 planners are all there. The shipped grid_example (480 scenarios per its
# header: ranges expanded as docs/SWEEPS.md says) splits into parts whose counts add up to 480.
# Usage: bash split_sweep.sh <shardsweep> <source-dir> <scratch-dir>   (env: MPIEXEC)
set -u
exe=$1
src=$2
scratch=$3
py=/usr/bin/python3
fail() {
    echo "FAIL: $*"
    exit 1
}
$py -c "import h5py, pandas" 2>/dev/null || fail "$py lacks h5py/pandas (Debian python3-h5py, python3-pandas)"
$py -c "import yaml" 2>/dev/null || fail "$py lacks PyYAML: apt-get install python3-yaml (split_sweep.py reads sweep files with it)"
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch" || fail "cd $scratch"
sweep=$src/tests/cli/postprocess_sweep.yaml
# </dev/null: mpirun reads stdin, which would swallow the rest of a `while read` list.
run() { ${MPIEXEC:-mpirun} --oversubscribe -np 2 "$exe" run "$1" -o "$2" --progress-interval 0 >"$2.log" 2>&1 </dev/null; }
run "$sweep" whole.h5 || fail "run of the whole sweep exit $?: $(tail -3 whole.h5.log)"

for n in 3 7; do
    $py "$src/jobs/split_sweep.py" "$sweep" $n parts$n >split$n.txt 2>&1 || fail "split $n: $(cat split$n.txt)"
    grep -q "948 scenarios in $n parts" split$n.txt || fail "split $n: $(head -1 split$n.txt)"
    [ "$(wc -l <parts$n/parts.txt)" -eq $n ] || fail "split $n: $(wc -l <parts$n/parts.txt) files listed"
    files=()
    sum=0
    while read -r part; do
        "$exe" validate "$part" >/dev/null 2>&1 || fail "$part does not validate: $("$exe" validate "$part" 2>&1)"
        out=${part%.yaml}.h5
        run "$part" "$out" || fail "run of $part exit $?: $(tail -3 "$out.log")"
        expect=$(awk -v f="$part" '$5 == f { print $4 }' split$n.txt)
        got=$(sed -n 's/^\([0-9]*\) scenarios computed.*/\1/p' "$out.log")
        [ -n "$expect" ] && [ "$got" = "$expect" ] || fail "$part: $got scenarios computed, split says '$expect'"
        sum=$((sum + got))
        files+=("$out")
    done <parts$n/parts.txt
    [ "$sum" -eq 948 ] || fail "split $n: the parts compute $sum scenarios, the sweep has 948"
    $py - whole.h5 "$src/postprocess" "${files[@]}" <<'PY' || fail "split $n: parts differ from the whole sweep"
import sys
sys.path.insert(0, sys.argv[2])
from shardsweep_results import PHASES, load
whole, parts = load(sys.argv[1]), load(sys.argv[3:])
key = ["workload_name", "platform_name", "gpu_count", "global_batch", "planner_name", "cost_model_name"]
cols = ["status", "feasible", "iteration_ms", "max_memory_GiB"] + [p + "_ms" for p in PHASES]
g_whole = whole.scenarios[whole.scenarios.generator == -1].set_index(key).sort_index()
g_parts = parts.scenarios[parts.scenarios.generator_name.isna()].set_index(key).sort_index()
assert len(g_whole) == 48 and len(g_parts) == 48, (len(g_whole), len(g_parts))
assert g_whole.index.equals(g_parts.index), "grid scenarios differ"
assert g_whole[cols].equals(g_parts[cols]), "grid results differ"
t = parts.scenarios[parts.scenarios.generator_name.notna()]
assert len(t) == 900 and set(t.task_protocol_name) == {"neuroshard"}, len(t)
tasks = t.groupby(["file", "generator_name", "task_index"]).planner_name.apply(sorted)
assert len(tasks) == 300, len(tasks)
assert all(p == ["lookup_greedy", "round_robin", "size_greedy"] for p in tasks), tasks.head()
print(f"{len(sys.argv) - 3} parts: 48 grid scenarios identical to the whole sweep's, 300 tasks x 3 planners")
PY
done
# The scenario count of a grid with ranges: grid_example's header says 480.
$py "$src/jobs/split_sweep.py" "$src/inputs/sweeps/grid_example.yaml" 4 ge >ge.txt 2>&1 || fail "$(cat ge.txt)"
grep -q "480 scenarios in 4 parts" ge.txt || fail "grid_example: $(head -1 ge.txt)"
sum=$(awk '$5 ~ /yaml$/ { s += $4 } END { print s }' ge.txt)
[ "$sum" -eq 480 ] || fail "grid_example parts add up to $sum"
while read -r part; do
    "$exe" validate "$part" >/dev/null 2>&1 || fail "$part does not validate"
done <ge/parts.txt
$py "$src/jobs/split_sweep.py" "$sweep" 0 bad >/dev/null 2>&1 && fail "N = 0 accepted"
echo "PASS: split_sweep"
