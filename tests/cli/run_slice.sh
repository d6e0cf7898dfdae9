# `run --slice I/N` (issue 15): three parts of a sweep, run into three files (2 ranks each), hold
# exactly the whole run's scenarios: each part's done rows of /scenarios are the whole file's rows
# of the same ids, value for value (row offsets aside), its num_done is its part's size, and the
# postprocess reader's combination of the parts equals the whole run in every group. A resume
# into a part's file with another slice is refused; bad slices exit 2 before any output exists.
# Usage: bash run_slice.sh <shardsweep> <source-dir> <scratch-dir>   (env: MPIEXEC)
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
fail() {
    echo "FAIL: $*"
    exit 1
}
py=/usr/bin/python3
mpiexec=${MPIEXEC:-mpirun}
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch" || fail "no scratch dir"
sed "s#\.\./platforms/#$src/inputs/platforms/#g" "$src/inputs/sweeps/bench_50x4.yaml" >sweep.yaml
n=1000
run() {
    local np=$1
    shift
    OMP_NUM_THREADS=1 $mpiexec --oversubscribe -np "$np" "$exe" run sweep.yaml --max-scenarios $n \
        --progress-interval 0 "$@"
}
run 1 -o whole.h5 >whole.log 2>&1 || fail "whole run exit $?: $(cat whole.log)"
for i in 0 1 2; do
    run 2 --slice $i/3 -o part$i.h5 >part$i.log 2>&1 || fail "slice $i/3 exit $?: $(cat part$i.log)"
done
grep -q "slice 1/3: scenario ids \[333, 666) of 1000" part1.log || fail "part 1: $(head -3 part1.log)"

PYTHONPATH=$src/postprocess $py - <<'EOF' || fail "the parts do not make up the whole run"
import sys
import h5py
import numpy as np
from shardsweep_results import load

offsets = {"gpu_row_offset", "shard_row_offset"}
with h5py.File("whole.h5", "r") as w:
    whole = {k: w["scenarios"][k][...] for k in w["scenarios"]}
bounds = [(0, 333), (333, 666), (666, 1000)]
for i, (a, b) in enumerate(bounds):
    with h5py.File(f"part{i}.h5", "r") as f:
        s = f["scenarios"]
        done = s["done"][...]
        expect = np.zeros(1000, dtype=done.dtype)
        expect[a:b] = 1
        assert (done == expect).all(), f"part {i}: done-mask is not ids [{a}, {b})"
        assert int(f.attrs["num_done"]) == b - a, f"part {i}: num_done {f.attrs['num_done']}"
        assert f.attrs["slice"] in (f"{i}/3", f"{i}/3".encode()), f"part {i}: slice attribute"
        for k in whole:
            if k in offsets:
                continue
            mine, ref = s[k][a:b], whole[k][a:b]
            same = (mine == ref) | (np.isnan(ref) & np.isnan(mine) if ref.dtype.kind == "f" else False)
            assert np.all(same), f"part {i}: /scenarios/{k} differs from the whole run"
        # Outside the part: not computed (fill values).
        assert np.isnan(s["iteration_ms"][b:]).all() and np.isnan(s["iteration_ms"][:a]).all()

parts, ref = load(["part0.h5", "part1.h5", "part2.h5"]), load("whole.h5")
assert len(parts.scenarios) == 1000 and len(parts.shards) == len(ref.shards) > 0
for group in ("scenarios", "gpus", "shards"):
    a, b = getattr(parts, group), getattr(ref, group)
    cols = [c for c in b.columns if c not in offsets]
    a = a[cols].reset_index(drop=True)
    b = b[cols].reset_index(drop=True)
    assert a.equals(b), f"combined parts differ from the whole run in {group}"
print("parts = whole")
EOF

# A part's output resumed with another slice is refused (its journals/file belong to part 1).
run 1 --slice 2/3 -o part1.h5 >refused.log 2>&1
[ $? -eq 2 ] || fail "part 1's file rerun as slice 2/3: not refused with exit 2: $(cat refused.log)"
grep -q "slice" refused.log || fail "the refusal does not name the slice: $(cat refused.log)"

for bad in 3/3 1/0 x/2 1 -1/2 1/2/3; do
    "$exe" run sweep.yaml --slice "$bad" -o bad.h5 >bad.log 2>&1
    rc=$?
    [ $rc -eq 2 ] || fail "--slice $bad: exit $rc, expected 2: $(cat bad.log)"
    grep -q -- "--slice" bad.log || fail "--slice $bad: the message does not name the option"
    [ ! -e bad.h5 ] && [ ! -e bad.h5.journal ] || fail "--slice $bad: output created"
done
echo "PASS: run --slice: 3 parts = the whole run; bad slices exit 2"
