# `cost_model: learned` end to end (issue 12): a small native sweep's own /shards rows train
# postprocess/train_cost_model.py's MLP (--export-mlp); a second sweep prices shards with it in the
# kernel, and every shard's fwd_ms + bwd_ms is checked against an independent numpy evaluation of
# the exported weights on the features read back from the HDF5 file (platform codes by name: the
# second sweep lists its platforms in another order, and a third platform the model never saw is
# priced natively). `plan` and `evaluate` with --cost-model learned reproduce the sweep's value;
# the shardsweep planner's search with the learned model beats every baseline under it; bad model
# files and missing options exit 2 naming the file and field.
set -u
exe=$1 src=$2 scratch=$3
py=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
$py -c "import h5py, numpy, pandas, sklearn" 2>/dev/null || fail "$py lacks h5py/numpy/pandas/sklearn"
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch" || exit 1
inputs=$src/inputs

cat > train.yaml <<YAML
kind: sweep
name: learned-train
grid:
  workloads: [$inputs/workloads/mlperf-dlrm-criteo-1tb.yaml]
  platforms: [$inputs/platforms/dgx-a100.yaml, $inputs/platforms/dgx-h100.yaml]
  planners: [round_robin, size_greedy, lookup_greedy]
  batches: [32768, 131072]
  gpu_counts: [2, 4, 8]
YAML
"$exe" run train.yaml -o train.h5 --detail all >train_run.log 2>&1 || fail "training sweep: $(tail -3 train_run.log)"
$py "$src/postprocess/train_cost_model.py" train.h5 -o m.joblib --model mlp --mlp-max-iter 20 \
    --cost-model native --export-mlp dlrm.mlp >train.txt 2>&1 || fail "train_cost_model: $(tail -3 train.txt)"
grep -q "^trained_on DGX-A100 DGX-H100$" dlrm.mlp || fail "trained_on line: $(grep trained_on dlrm.mlp)"

# Platforms in another order than in training, and one the model never saw (priced natively).
cat > use.yaml <<YAML
kind: sweep
name: learned-use
cost_model_file: dlrm.mlp
grid:
  workloads: [$inputs/workloads/mlperf-dlrm-criteo-1tb.yaml]
  platforms: [$inputs/platforms/dgx1-v100.yaml, $inputs/platforms/dgx-h100.yaml, $inputs/platforms/dgx-a100.yaml]
  planners: [round_robin, shardsweep]
  batches: [65536]
  gpu_counts: [4, 8]
  cost_models: [native, learned]
YAML
"$exe" run use.yaml -o use.h5 --detail all >use_run.log 2>&1 || fail "learned sweep: $(tail -3 use_run.log)"
grep -q "not trained on platform 'DGX-1-V100'" use_run.log || fail "no warning for the unseen platform"
$py - <<'PY' || exit 1
import sys
import h5py, numpy as np
def fail(m): print("FAIL:", m); sys.exit(1)
# The exported MLP, parsed independently of the C++ reader.
lines = [l.split() for l in open("dlrm.mlp") if l.strip() and not l.startswith("#")]
kv = {}
layers = []
for w in lines:
    if w[0] == "layer": layers.append({"act": w[1], "shape": (int(w[3]), int(w[2]))})
    elif w[0] in ("weights", "bias"): layers[-1][w[0]] = np.array(w[1:], dtype=float)
    elif w[0] != "check": kv[w[0]] = w[1:]
names, mean, scale = kv["names"], np.array(kv["mean"], float), np.array(kv["scale"], float)
platforms = kv["trained_on"]
def mlp(x):
    a = (x - mean) / scale
    for L in layers:
        a = L["weights"].reshape(L["shape"]) @ a + L["bias"]
        if L["act"] == "relu": a = np.maximum(a, 0.0)
    return a[0]
with h5py.File("use.h5") as f:
    sc = {k: f["scenarios"][k][...] for k in f["scenarios"]}
    sh = {k: f["shards"][k][...] for k in f["shards"]}
    # Each shard's table features are its /tables row (schema 4).
    tb = {k: f["tables"][k][...] for k in f["tables"]}
    sh.update({k: v[sh["table_row"]] for k, v in tb.items() if k not in ("workload", "generator", "index")})
    gp = {k: f["gpus"][k][...] for k in f["gpus"]}
    pnames = [s.decode() for s in f["names"]["platforms"][...]]
    cnames = [s.decode() for s in f["names"]["cost_models"][...]]
    planners = [s.decode() for s in f["names"]["planners"][...]]
learned = cnames.index("learned")
n = len(sc["status"])
if n != 24 or (sc["status"] == 0).sum() < 20: fail(f"{n} scenarios, status {sc['status']}")
checked = fallback = 0
for i in range(n):
    if sc["cost_model"][i] != learned or sc["status"][i] != 0: continue
    mine = sh["scenario_id"] == i
    pname = pnames[sc["platform"][i]]
    total = sh["fwd_ms"][mine] + sh["bwd_ms"][mine]
    native_id = i - 1  # cost_model is the fastest axis: the same grid point, native
    if sc["cost_model"][native_id] == learned or sc["platform"][native_id] != sc["platform"][i]: fail("layout")
    if pname not in platforms:
        # (the shardsweep planner's seed differs per scenario id: compare round_robin plans only)
        if planners[sc["planner"][i]] == "round_robin":
            if sc["iteration_ms"][i] != sc["iteration_ms"][native_id]: fail(f"{pname}: fallback is not native")
            fallback += 1
        continue
    for s in np.nonzero(mine)[0]:
        x = [sh[nm][s] if nm in sh else None for nm in names[:28]]
        x += [sc["global_batch"][i], sc["gpu_count"][i], platforms.index(pname)]
        want = np.exp(mlp(np.array(x, dtype=float)))
        got = sh["fwd_ms"][s] + sh["bwd_ms"][s]
        if abs(got - want) > 1e-9 * want: fail(f"scenario {i} shard {s}: kernel {got!r} reference {want!r}")
        checked += 1
    # Per GPU: the embedding phases are the sums of the GPU's learned shard costs.
    g = gp["scenario_id"] == i
    for k, gpu in enumerate(gp["gpu"][g]):
        want = total[sh["gpu"][mine] == gpu].sum()
        got = gp["embedding_fwd_ms"][g][k] + gp["embedding_bwd_ms"][g][k]
        if abs(got - want) > 1e-9 * max(want, 1e-12): fail(f"scenario {i} GPU {gpu}: {got} vs {want}")
    if planners[sc["planner"][i]] == "round_robin":
        # Same plan as the native scenario: same fwd/bwd split and the same communication.
        nat = sh["scenario_id"] == native_id
        r_l = sh["fwd_ms"][mine] / total
        r_n = sh["fwd_ms"][nat] / (sh["fwd_ms"][nat] + sh["bwd_ms"][nat])
        if not np.allclose(r_l, r_n, rtol=1e-12, atol=0): fail(f"scenario {i}: fwd/bwd split differs from native")
        if sc["embedding_comm_fwd_ms"][i] != sc["embedding_comm_fwd_ms"][native_id]: fail("communication changed")
        if np.allclose(total, sh["fwd_ms"][nat] + sh["bwd_ms"][nat]): fail("learned costs equal the native ones")
if fallback < 1 or checked < 200: fail(f"{checked} shards checked, {fallback} fallback scenarios")
print(f"{checked} learned shard costs equal the numpy reference; {fallback} unseen-platform scenarios native")
PY

# plan and evaluate: the same value as the sweep (DGX-H100, 8 GPUs, batch 65536, round_robin).
sweep_ms=$($py -c "
import h5py
f = h5py.File('use.h5'); s = f['scenarios']
p = [x.decode() for x in f['names']['platforms'][...]].index('DGX-H100')
c = [x.decode() for x in f['names']['cost_models'][...]].index('learned')
r = [x.decode() for x in f['names']['planners'][...]].index('round_robin')
for i in range(len(s['status'])):
    if s['platform'][i] == p and s['cost_model'][i] == c and s['planner'][i] == r and s['gpu_count'][i] == 8:
        print(repr(float(s['iteration_ms'][i])))")
w=$inputs/workloads/mlperf-dlrm-criteo-1tb.yaml
h=$inputs/platforms/dgx-h100.yaml
"$exe" plan "$w" "$h" --batch 65536 --planner round_robin --cost-model learned --cost-model-file dlrm.mlp \
    --max-iterations 300 --format csv -o rr.yaml >plan.csv 2>plan.err || fail "plan: $(cat plan.err)"
cat > s.yaml <<YAML
kind: scenario
workload: $w
platform: $h
plan: rr.yaml
global_batch: 65536
cost_model: learned
cost_model_file: dlrm.mlp
YAML
"$exe" evaluate s.yaml --format csv >eval.csv 2>eval.err || fail "evaluate: $(cat eval.err)"
$py - "$sweep_ms" <<'PY' || exit 1
import csv, sys
def fail(m): print("FAIL:", m); sys.exit(1)
sweep = float(sys.argv[1])
rows = {r["planner"]: r for r in csv.DictReader(open("plan.csv"))}
rr = float(rows["round_robin"]["iteration_ms"])
if abs(rr - sweep) > 1e-12 * sweep: fail(f"plan round_robin {rr!r} vs sweep {sweep!r}")
ev = list(csv.DictReader(open("eval.csv")))[-1]
got = float(ev["total_ms"])
if ev["gpu"] != "critical_path" or abs(got - sweep) > 1e-12 * sweep: fail(f"evaluate {got!r} vs sweep {sweep!r}")
ss = float(rows["shardsweep"]["iteration_ms"])
fits = [float(r["iteration_ms"]) for k, r in rows.items() if r["feasible"] == "1" and k != "shardsweep"]
if rows["shardsweep"]["feasible"] != "1" or any(ss > f * (1 + 1e-12) for f in fits):
    fail(f"shardsweep planner {ss} under the learned model vs baselines {fits}")
print(f"plan/evaluate = sweep = {sweep:.6f} ms; shardsweep planner {ss:.6f} <= baselines {min(fits):.6f}")
PY

# Bad input: exit 2 naming file and field.
expect2() { # expect2 PATTERN cmd...
    local pat=$1; shift
    "$@" >err.txt 2>&1; local rc=$?
    [ $rc -eq 2 ] || fail "exit $rc (expected 2): $* -> $(cat err.txt)"
    grep -q -- "$pat" err.txt || fail "message lacks '$pat': $(cat err.txt)"
}
expect2 "needs --cost-model-file" "$exe" plan "$w" "$h" --cost-model learned
expect2 "cannot open the model file" "$exe" plan "$w" "$h" --cost-model learned --cost-model-file nope.mlp
expect2 "field 'family'" "$exe" plan "$w" "$h" --cost-model learned --cost-model-file "$inputs/models/gemm.mlp"
expect2 "applies to cost model 'learned' only" "$exe" plan "$w" "$h" --cost-model-file dlrm.mlp
sed 's/^trained_on .*/trained_on/' dlrm.mlp > no_platforms.mlp
expect2 "field 'trained_on'" "$exe" evaluate s.yaml --cost-model-file no_platforms.mlp
sed 's#cost_model_file: dlrm.mlp#cost_model_file: missing.mlp#' s.yaml > s_missing.yaml
expect2 "field 'cost_model_file'" "$exe" evaluate s_missing.yaml
grep -v cost_model_file s.yaml > s_nofile.yaml
expect2 "cost_model_file" "$exe" evaluate s_nofile.yaml
grep -v cost_model_file: use.yaml > use_nofile.yaml
expect2 "cost_model_file" "$exe" validate use_nofile.yaml
sed 's#cost_model_file: dlrm.mlp#cost_model_file: missing.mlp#' use.yaml > use_missing.yaml
expect2 "field 'cost_model_file'" "$exe" run use_missing.yaml -o x.h5
echo "PASS"
