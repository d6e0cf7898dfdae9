# The shipped sweep over issue 23's dimensions (inputs/sweeps/llama3_interleaving.yaml): every
# scenario evaluated and feasible; overlap never slower than the same configuration without it;
# the first stage's memory under interleaving p + (p - 1)/v micro-batches, above 1F1B's p and
# falling with v (Korthikanti et al. 2022, §4.2.3); and the plot with one CSV line per point.
set -u
exe=$1 src=$2 scratch=$3
py=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch" || exit 1

"$exe" run "$src/inputs/sweeps/llama3_interleaving.yaml" -o out.h5 --progress-interval 0 > run.log 2>&1 ||
    fail "run exit $?: $(tail -5 run.log)"
PYTHONPATH=$src/postprocess $py - <<'PY' || exit 1
import sys
from shardsweep_results import load
df = load(["out.h5"]).scenarios
if len(df) != 48 or (df["status"] != 0).any() or (df["feasible"] != 1).any():
    print("FAIL: scenarios", len(df), df["status"].value_counts().to_dict()); sys.exit(1)
keys = ["gpu_count", "pp", "virtual_stages"]
t = df.pivot_table(index=keys, columns="overlap", values="iteration_ms")
if not (t[1] <= t[0]).all() or not (t[1] < t[0]).any():
    print("FAIL: overlap", t); sys.exit(1)
m = df[df["overlap"] == 1].pivot_table(index=["gpu_count", "pp"], columns="virtual_stages",
                                       values="max_memory_GiB")
if not ((m[2] > m[5]) & (m[5] > m[10]) & (m[10] > m[1])).all():
    print("FAIL: memory against virtual_stages", m); sys.exit(1)
PY
$py "$src/postprocess/plot_interleaving.py" out.h5 -o fig > points.csv 2> plot.err ||
    fail "plot exit $?: $(cat plot.err)"
[ -s fig/interleaving.png ] || fail "no interleaving.png"
[ "$(wc -l < points.csv)" -eq 49 ] || fail "points: $(wc -l < points.csv) lines, expected 1 + 48"
echo OK
