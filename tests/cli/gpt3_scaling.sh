# The shipped GPT-3 scaling sweep (transformer planners in a sweep): every scenario planned and
# evaluated, its configuration in the results, shardsweep never slower than megatron's rule, the
# sweep's 175B/4096-A100 point equal to `plan`'s, and the scaling plot.
set -u
exe=$1 src=$2 scratch=$3
py=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch" || exit 1

"$exe" run "$src/inputs/sweeps/gpt3_scaling.yaml" -o out.h5 --progress-interval 0 > run.log 2>&1 ||
    fail "run exit $?: $(tail -5 run.log)"
"$exe" plan "$src/inputs/workloads/gpt3-175b.yaml" "$src/inputs/platforms/dgx-a100-hdr800.yaml" \
    --gpus 4096 --format csv > plan.csv || fail "plan exit $?"
PYTHONPATH=$src/postprocess $py - <<'PY' || exit 1
import csv, sys
from shardsweep_results import load
df = load(["out.h5"]).scenarios
if len(df) != 224 or (df["status"] != 0).any() or (df["feasible"] != 1).any():
    print("FAIL: scenarios", len(df), df["status"].value_counts().to_dict()); sys.exit(1)
if (df["tp"] * df["pp"] * df["dp"] != df["gpu_count"]).any():
    print("FAIL: tp x pp x dp != GPUs"); sys.exit(1)
keys = ["workload_name", "platform_name", "gpu_count"]
t = df.pivot_table(index=keys, columns="planner_name", values="iteration_ms")
if not (t["shardsweep"] <= t["megatron"]).all():
    print("FAIL: shardsweep slower than megatron at", t[t["shardsweep"] > t["megatron"]]); sys.exit(1)
meg = df[df["planner_name"] == "megatron"]
if not ((meg["recompute"] == 2) & (meg["zero"] == 0) & (meg["sequence_parallel"] == 0)).all():
    print("FAIL: megatron's rule"); sys.exit(1)
row = df[(df["workload_name"] == "gpt3-175b") & (df["platform_name"] == "DGX-A100-HDR800")
         & (df["gpu_count"] == 4096) & (df["planner_name"] == "shardsweep")].iloc[0]
plan = next(r for r in csv.DictReader(open("plan.csv")) if r["planner"] == "shardsweep")
got = [repr(float(row["iteration_ms"]))] + [str(int(row[c])) for c in ("tp", "pp", "dp", "micro_batch", "zero")]
want = [repr(float(plan["iteration_ms"]))] + [plan[c] for c in ("tp", "pp", "dp", "micro_batch", "zero")]
if got != want:
    print("FAIL: sweep", got, "!= plan", want); sys.exit(1)
PY
$py "$src/postprocess/plot_transformer_scaling.py" out.h5 -o fig > points.csv 2> plot.err ||
    fail "plot exit $?: $(cat plot.err)"
[ -s fig/transformer_scaling.png ] || fail "no transformer_scaling.png"
[ "$(wc -l < points.csv)" -eq 113 ] || fail "points: $(wc -l < points.csv) lines, expected 1 + 112"
awk -F, 'NR > 1 && !($6 > 0 && $6 < 100) { print "mfu " $0; bad = 1 } END { exit bad }' points.csv ||
    fail "MFU out of (0, 100)"
echo OK
