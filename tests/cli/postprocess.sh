# postprocess/ on real engine output (issue 7): `mpirun -np 2 shardsweep run` of a small sweep,
# then summarize.py, plot.py and train_cost_model.py, each checked against numbers computed here
# independently from the HDF5 datasets with h5py (means, percentiles, infeasible shares, gaps to
# the best plan of each task), PNG files of the expected names and sizes, and the learned cost
# model's held-out errors below stated bounds. Also: --help of every tool, the reader on two
# files (disjoint halves of the done-mask) equals the whole file.
# Usage: bash postprocess.sh <shardsweep> <source-dir> <scratch-dir>   (env: MPIEXEC)
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
py=/usr/bin/python3
pp=$src/postprocess
fail() {
    echo "FAIL: $*"
    exit 1
}
$py -c "import h5py, numpy, pandas, matplotlib, sklearn" 2>/dev/null ||
    fail "$py lacks h5py/numpy/pandas/matplotlib/sklearn (Debian python3-* packages, scripts/setup.sh)"
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch" || fail "cd $scratch"
out=$scratch/r.h5

${MPIEXEC:-mpirun} --oversubscribe -np 2 "$exe" run "$src/tests/cli/postprocess_sweep.yaml" \
    -o "$out" --progress-interval 0.02 >run.log 2>&1 || fail "run exit $?: $(tail -5 run.log)"
grep -q "^948 scenarios computed" run.log || fail "unexpected run summary: $(tail -12 run.log)"

for tool in summarize plot train_cost_model shardsweep_results; do
    $py "$pp/$tool.py" --help >help.txt 2>&1 || fail "$tool.py --help exit $?"
    grep -qi "usage" help.txt || fail "$tool.py --help prints no usage"
done

# ---- summarize ----------------------------------------------------------------------------------
$py "$pp/summarize.py" "$out" --csv-dir sum --by planner --by platform --by planner,gpu_count \
    >summary.txt 2>&1 || fail "summarize exit $?: $(cat summary.txt)"
grep -q "^948 scenarios computed of 948" summary.txt || fail "summary header: $(head -2 summary.txt)"
for f in planner platform planner_gpu_count; do
    [ -s "sum/summary_by_$f.csv" ] || fail "summarize wrote no sum/summary_by_$f.csv"
done
# Independent reference: plain h5py + numpy + dict loops, no pandas and no postprocess code.
$py - "$out" sum <<'PY' || fail "summarize's numbers differ from the h5py reference"
import csv, math, sys
import h5py, numpy as np
path, d = sys.argv[1], sys.argv[2]
with h5py.File(path, "r") as f:
    s = {k: f["scenarios"][k][...] for k in f["scenarios"]}
    planners = [x.decode() for x in f["names"]["planners"][...]]
    platforms = [x.decode() for x in f["names"]["platforms"][...]]
n = len(s["done"])
ok = (s["done"] == 1) & (s["status"] == 0) & (s["feasible"] == 1)
# Best feasible plan of every task (all columns but the planner's identify the task).
key_cols = ["workload", "platform", "gpu_count", "global_batch", "cost_model", "task_protocol",
            "generator", "task_index", "task_seed", "memory_cap_GiB"]
best = {}
for i in range(n):
    if ok[i]:
        k = tuple(s[c][i].item() for c in key_cols)
        best[k] = min(best.get(k, math.inf), s["iteration_ms"][i])
gap = np.full(n, np.nan)
for i in range(n):
    if ok[i]:
        gap[i] = 100.0 * (s["iteration_ms"][i] / best[tuple(s[c][i].item() for c in key_cols)] - 1.0)

def check(csv_path, groups):
    rows = {tuple(r[k] for k in groups[0]): r for r in csv.DictReader(open(csv_path))}
    checked = 0
    for label, mask in groups[1]:
        r = rows.get(label)
        assert r is not None, f"{csv_path}: no row {label}"
        m = mask & (s["done"] == 1)
        t = s["iteration_ms"][m & ok]
        expect = {"scenarios": m.sum(), "feasible": (m & ok).sum(),
                  "no_feasible_plan_pct": 100.0 * (1 - (m & ok).sum() / m.sum()),
                  "mean_ms": t.mean(), "p50_ms": np.percentile(t, 50), "p90_ms": np.percentile(t, 90),
                  "p99_ms": np.percentile(t, 99), "gap_mean_pct": gap[m & ok].mean(),
                  "gap_p90_pct": np.percentile(gap[m & ok], 90),
                  # best over all of the group's scenarios: one without a fitting plan is not
                  "best_pct": 100.0 * (gap[m & ok] == 0.0).sum() / m.sum()}
        for k, v in expect.items():
            got = float(r[k])
            assert abs(got - v) <= 1e-7 * max(1.0, abs(v)), f"{csv_path} {label} {k}: {got} != {v}"
            checked += 1
    # Feasibility first: rows ranked by the share without a fitting plan, then by mean time.
    order = [(float(r["no_feasible_plan_pct"]), float(r["mean_ms"])) for r in csv.DictReader(open(csv_path))]
    assert order == sorted(order), f"{csv_path}: rows not ranked feasibility first: {order}"
    print(f"{csv_path}: {checked} numbers agree with the h5py reference")
    return checked

total = check(f"{d}/summary_by_planner.csv",
              (["planner"], [((p,), s["planner"] == c) for c, p in enumerate(planners)
                             if (s["planner"] == c).any()]))
total += check(f"{d}/summary_by_platform.csv",
               (["platform"], [((p,), s["platform"] == c) for c, p in enumerate(platforms)]))
total += check(f"{d}/summary_by_planner_gpu_count.csv",
               (["planner", "gpu_count"],
                [((p, str(g)), (s["planner"] == c) & (s["gpu_count"] == g))
                 for c, p in enumerate(planners) for g in np.unique(s["gpu_count"])
                 if ((s["planner"] == c) & (s["gpu_count"] == g)).any()]))
assert total >= 9 * 10, total
# The comparison can fail: round_robin is not the best plan everywhere (a non-zero gap).
rr = [r for r in csv.DictReader(open(f"{d}/summary_by_planner.csv")) if r["planner"] == "round_robin"][0]
assert float(rr["gap_mean_pct"]) > 0.0, rr
PY

# ---- reader: two files with disjoint halves of the done-mask load as the whole file -------------
$py - "$out" "$pp" <<'PY' || fail "reader on split files"
import shutil, sys
import h5py, numpy as np
out, pp = sys.argv[1], sys.argv[2]
sys.path.insert(0, pp)
from shardsweep_results import load
whole = load(out)
# Each shard row carries its /tables row's features (schema 4 stores them once per table).
with h5py.File(out, "r") as f:
    at = f["shards"]["table_row"][...]
    for k in ["rows", "pooling_factor", "distribution", "zipf_alpha"] + [f"bin_{j}" for j in range(17)]:
        assert np.array_equal(whole.shards[k].to_numpy(), f["tables"][k][...][at]), k
    assert len(f["tables"]["rows"]) == len(f["names"]["tables"]) > 0
parts = []
for j in range(2):
    p = out.replace(".h5", f".part{j}.h5")
    shutil.copy(out, p)
    with h5py.File(p, "r+") as f:
        done = f["scenarios"]["done"]
        d = done[...]
        d[np.arange(len(d)) % 2 != j] = 0     # the other half: not computed in this file
        done[...] = d
    parts.append(p)
both = load(parts)
for name in ("scenarios", "gpus", "shards"):
    a, b = getattr(whole, name), getattr(both, name)
    assert a.shape == b.shape, (name, a.shape, b.shape)
    assert a.reset_index().equals(b.reset_index()), name
half = load(parts[0])
assert len(half.scenarios) == (len(whole.scenarios) + 1) // 2, len(half.scenarios)
assert set(half.gpus.scenario_id) <= set(half.scenarios.index)
# A scenario done in two files with different results is refused.
bad = out.replace(".h5", ".bad.h5")
shutil.copy(out, bad)
with h5py.File(bad, "r+") as f:
    f["scenarios"]["iteration_ms"][7] = 1.0
try:
    load([out, bad])
    raise AssertionError("conflicting files accepted")
except ValueError as e:
    assert "scenario 7" in str(e), e
# Files of different sweeps are appended: ids offset by the first file's scenario count, codes
# remapped onto the merged name tables (the decoded names are unchanged).
cat = load([out, out], combine="concat")
n = len(whole.scenarios)
assert len(cat.scenarios) == 2 * n and len(cat.gpus) == 2 * len(whole.gpus), len(cat.scenarios)
second = cat.scenarios[cat.scenarios.file == 1]
assert (second.index.to_numpy() == whole.scenarios.index.to_numpy() + n).all()
for c in ("planner_name", "workload_name", "platform_name", "iteration_ms"):
    assert second[c].reset_index(drop=True).equals(whole.scenarios[c].reset_index(drop=True)), c
assert (cat.gpus.scenario_id.to_numpy()[len(whole.gpus):] == whole.gpus.scenario_id.to_numpy() + n).all()
print(f"reader: 2 half files == the whole file ({len(whole.scenarios)} scenarios, "
      f"{len(whole.gpus)} GPU rows, {len(whole.shards)} shard rows)")
PY

# ---- plot ---------------------------------------------------------------------------------------
sid=$($py -c "
import h5py, numpy as np, sys
with h5py.File('$out', 'r') as f:
    s = f['scenarios']
    ok = np.flatnonzero((s['status'][...] == 0) & (s['gpu_count'][...] == 8))
print(ok[0])")
$py "$pp/plot.py" "$out" -o figs --scenario "$sid" --log run.log >plot.txt 2>&1 ||
    fail "plot exit $?: $(cat plot.txt)"
# sweep_throughput.png needs the run's progress lines (a very fast run may print none: then the
# tool must say so).
pngs="planner_comparison phase_breakdown cost_vs_gpus"
if grep -q '^\[ *[0-9.]*%\] [0-9]*/948 scenarios' run.log; then
    pngs="$pngs sweep_throughput"
else
    grep -q "sweep_throughput.png skipped: no progress lines" plot.txt || fail "$(cat plot.txt)"
fi
for png in $pngs; do
    f=figs/$png.png
    [ -f "$f" ] || fail "plot wrote no $f: $(cat plot.txt)"
    [ "$(head -c 8 "$f" | od -An -c | tr -d ' ')" = "211PNG\r\n032\n" ] || fail "$f is not a PNG"
    [ "$(stat -c %s "$f")" -gt 15000 ] || fail "$f has only $(stat -c %s "$f") bytes"
done
grep -q "phase_breakdown.png (scenario $sid)" plot.txt || fail "phase breakdown not of scenario $sid"
$py "$pp/plot.py" "$out" -o figs2 >plot2.txt 2>&1 || fail "plot without --log exit $?"
grep -q "sweep_throughput.png skipped" plot2.txt || fail "no skip message without --log"
[ ! -e figs2/sweep_throughput.png ] || fail "sweep_throughput.png without a log"
$py "$pp/plot.py" "$out" -o figs3 --scenario 99999 >/dev/null 2>&1 && fail "a bad --scenario is accepted"
# With nothing infeasible the bar panel says "all feasible" instead of an empty axis (and with
# something infeasible it draws the bars).
$py - "$pp" <<'PY' || fail "planner_comparison's all-feasible panel"
import sys
sys.path.insert(0, sys.argv[1])
import pandas as pd
import plot
df = pd.DataFrame({"planner_name": ["a", "a", "b"], "ok": [True] * 3, "gap_pct": [0.0, 1.0, 2.0]})
assert plot.planner_comparison(df, "all_ok.png") == "all feasible"
df.loc[2, "ok"] = False
assert plot.planner_comparison(df, "one_bad.png") is None
PY
[ -s all_ok.png ] && [ -s one_bad.png ] || fail "planner_comparison wrote no figure"
# A file without /gpus and /shards (--detail scenarios): per-GPU figure and training refused
# with a message, the rest works.
${MPIEXEC:-mpirun} --oversubscribe -np 2 "$exe" run "$src/tests/cli/postprocess_sweep.yaml" \
    -o small.h5 --detail scenarios --progress-interval 0 >small.log 2>&1 || fail "--detail scenarios run"
$py "$pp/plot.py" small.h5 -o figs4 >plot4.txt 2>&1 || fail "plot on --detail scenarios: $(cat plot4.txt)"
grep -q "phase_breakdown.png skipped: the file has no /gpus rows" plot4.txt || fail "$(cat plot4.txt)"
[ -s figs4/planner_comparison.png ] || fail "no planner comparison from a --detail scenarios file"
$py "$pp/train_cost_model.py" small.h5 -o x.joblib >train4.txt 2>&1
[ $? -eq 2 ] && grep -q "no /shards rows" train4.txt || fail "training on no shards: $(cat train4.txt)"

# ---- train_cost_model ---------------------------------------------------------------------------
$py "$pp/train_cost_model.py" "$out" -o model.joblib --csv errors.csv >train.txt 2>&1 ||
    fail "train_cost_model exit $?: $(cat train.txt)"
cat train.txt
$py - "$out" "$pp" <<'PY' || fail "learned cost model errors or model file"
import csv, math, sys
import h5py, joblib, numpy as np
out, pp = sys.argv[1], sys.argv[2]
err = {(r["split"], r["level"]): r for r in csv.DictReader(open("errors.csv"))}
# Stated bounds (measured 2.0 / 1.7 / 3.0 % on this sweep at commit 40c4836): 10 % held-out tasks per shard and
# per GPU, 15 % on tables never seen in training.
bounds = {("held-out tasks", "shard"): 10.0, ("held-out tasks", "gpu (sum-pooled)"): 10.0,
          ("unseen tables", "shard"): 15.0}
for key, bound in bounds.items():
    mape = float(err[key]["mape_pct"])
    assert math.isfinite(mape) and 0.0 < mape < bound, (key, mape, bound)
    assert int(err[key]["test_rows"]) > 100, err[key]
# The saved model predicts the stored per-GPU embedding time by sum-pooling its shards.
m = joblib.load("model.joblib")
with h5py.File(out, "r") as f:
    sh = {k: f["shards"][k][...] for k in f["shards"]}
    tb = {k: f["tables"][k][...] for k in f["tables"]}
    sc = {k: f["scenarios"][k][...] for k in f["scenarios"]}
    g = {k: f["gpus"][k][...] for k in f["gpus"]}
# Each shard's table features are its /tables row (schema 4).
sh.update({k: v[sh["table_row"]] for k, v in tb.items() if k not in ("workload", "generator", "index")})
sid = sh["scenario_id"]
ctx = {"global_batch": sc["global_batch"][sid], "gpu_count": sc["gpu_count"][sid], "platform": sc["platform"][sid]}
X = np.column_stack([ctx[c] if c in ctx else sh[c] for c in m["features"]]).astype(float)
pred = np.exp(m["model"].predict(X))
true = sh["fwd_ms"] + sh["bwd_ms"]
key = sid * 1000 + sh["gpu"]
gkey = g["scenario_id"] * 1000 + g["gpu"]
gtrue = g["embedding_fwd_ms"] + g["embedding_bwd_ms"]
order = np.argsort(gkey)
pos = order[np.searchsorted(gkey, key, sorter=order)]
pooled_true = np.bincount(pos, weights=true, minlength=len(gkey))
pooled_pred = np.bincount(pos, weights=pred, minlength=len(gkey))
has = np.bincount(pos, minlength=len(gkey)) > 0
# The model's premise: a GPU's embedding time is the sum of its shards' costs.
assert np.allclose(pooled_true[has], gtrue[has], rtol=1e-9, atol=1e-12)
ape = 100 * np.abs(pooled_pred[has] - gtrue[has]) / gtrue[has]
assert ape.mean() < 5.0, ape.mean()
print(f"saved model: per-GPU sum-pooled MAPE {ape.mean():.2f} % over {has.sum()} GPUs (training data)")
PY

# --model mlp --export-mlp: the sklearn MLP as a shardsweep-mlp file that the C++ reader accepts
# (its check records = sklearn's own predict, verified by `validate`).
$py "$pp/train_cost_model.py" "$out" -o mlp.joblib --model mlp --mlp-max-iter 3 --export-mlp dlrm.mlp >train5.txt 2>&1 ||
    fail "train_cost_model --export-mlp exit $?: $(tail -3 train5.txt)"
v=$("$exe" validate dlrm.mlp 2>&1) || fail "validate dlrm.mlp: $v"
grep -q "dlrm.*4 check records verified" <<<"$v" || fail "validate output: $v"
$py - <<'PY' || fail "exported MLP differs from sklearn"
import joblib, numpy as np
m = joblib.load("mlp.joblib")["model"]
lines = {l.split()[0]: l.split()[1:] for l in open("dlrm.mlp") if l.strip() and not l.startswith("check")}
checks = [list(map(float, l.split()[1:])) for l in open("dlrm.mlp") if l.startswith("check")]
for c in checks:
    assert abs(m.predict(np.array([c[:-1]]))[0] - c[-1]) <= 1e-9 * max(1.0, abs(c[-1])), c
assert lines["family"] == ["dlrm"] and int(lines["inputs"][0]) == len(joblib.load("mlp.joblib")["features"])
PY
"$py" "$pp/train_cost_model.py" "$out" --model gbt --export-mlp x.mlp >/dev/null 2>&1
[ $? -eq 2 ] || fail "--export-mlp with gbt must exit 2"
echo "PASS: postprocess tools on engine output"
