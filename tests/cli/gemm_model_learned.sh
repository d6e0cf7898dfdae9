# `gemm_model: learned` / `--gemm-model learned` (issue 12): the DLRM dense part's GEMMs priced
# with the shipped learned GEMM model on GPUs it was trained on, the analytic model elsewhere.
# A one-layer bottom MLP's forward time must equal `predict gemm --model learned` of its linear
# GEMM (B=1, M=local batch, N=64, K=13); on an untrained GPU everything equals the analytic run;
# embedding phases never change; a sweep gives evaluate's value.
set -u
exe=$1 src=$2 scratch=$3
py=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch" || exit 1

cat > w.yaml <<'YAML'
kind: workload
name: one-bottom-layer
global_batch: 8192
dense: {num_dense_features: 13, bottom_mlp: [64], top_mlp: [64, 1]}
tables:
  - {name: t0, rows: 100000, dim: 64, pooling_factor: 10}
  - {name: t1, rows: 50000, dim: 64, pooling_factor: 3}
YAML
for gpu in A100-PCIe-40GB A100-SXM4-40GB; do
    cat > "p_$gpu.yaml" <<YAML
kind: platform
name: two-$gpu
gpu: $gpu
gpus_per_node: 2
num_nodes: 1
network: {topology: [Switch], npus_count: [2], bandwidth: [150], latency: [500]}
YAML
    "$exe" plan w.yaml "p_$gpu.yaml" --planner dim_greedy -o "plan_$gpu.yaml" >/dev/null || fail "plan $gpu"
    cat > "s_$gpu.yaml" <<YAML
kind: scenario
workload: w.yaml
platform: p_$gpu.yaml
plan: plan_$gpu.yaml
YAML
    for m in analytic learned; do
        "$exe" evaluate "s_$gpu.yaml" --gemm-model $m --format csv >"e_${gpu}_$m.csv" 2>"e_${gpu}_$m.err" ||
            fail "evaluate $gpu $m: $(cat "e_${gpu}_$m.err")"
    done
done
grep -q "A100-SXM4-40GB is not among the GPUs" e_A100-SXM4-40GB_learned.err || fail "no note for the untrained GPU"
printf 'B,M,N,K,op\n1,4096,64,13,linear\n' > shape.csv
"$exe" predict gemm --gpu A100-PCIe-40GB --input shape.csv --model learned --format csv >gemm.csv ||
    fail "predict gemm"

cat > sweep.yaml <<YAML
kind: sweep
name: gemm-learned
gemm_model: learned
grid:
  workloads: [w.yaml]
  platforms: [p_A100-PCIe-40GB.yaml, p_A100-SXM4-40GB.yaml]
  planners: [dim_greedy]
YAML
"$exe" run sweep.yaml -o sweep.h5 >run.log 2>&1 || fail "sweep: $(tail -3 run.log)"
grep -q "A100-SXM4-40GB of platform 'two-A100-SXM4-40GB' is not among" run.log || fail "no sweep note: $(cat run.log)"

$py - <<'PY' || exit 1
import csv, sys
import h5py
def fail(m): print("FAIL:", m); sys.exit(1)
def rows(p): return {r["gpu"]: r for r in csv.DictReader(open(p))}
gemm = float(next(csv.DictReader(open("gemm.csv")))["latency_ms"])
if next(csv.DictReader(open("gemm.csv")))["model"] != "learned": fail("predict gemm did not use the learned model")
pc_a, pc_l = rows("e_A100-PCIe-40GB_analytic.csv"), rows("e_A100-PCIe-40GB_learned.csv")
sx_a, sx_l = rows("e_A100-SXM4-40GB_analytic.csv"), rows("e_A100-SXM4-40GB_learned.csv")
got = float(pc_l["0"]["bottom_mlp_fwd_ms"])
if abs(got - gemm) > 1e-12 * gemm: fail(f"bottom MLP forward {got!r} vs predict gemm {gemm!r}")
if float(pc_a["0"]["bottom_mlp_fwd_ms"]) == got: fail("the learned GEMM changed nothing")
for g in ("0", "1"):
    for ph in ("embedding_fwd_ms", "embedding_bwd_ms", "input_dist_ms"):
        if pc_l[g][ph] != pc_a[g][ph]: fail(f"GPU {g} {ph} changed with the GEMM model")
if sx_l != sx_a: fail("untrained GPU: the learned run differs from the analytic one")
with h5py.File("sweep.h5") as f:
    s = f["scenarios"]
    names = [x.decode() for x in f["names"]["platforms"][...]]
    sweep = {names[p]: t for p, t in zip(s["platform"][...], s["iteration_ms"][...])}
for name, e in (("two-A100-PCIe-40GB", pc_l), ("two-A100-SXM4-40GB", sx_l)):
    want = float(e["critical_path"]["total_ms"])
    if abs(sweep[name] - want) > 1e-12 * want: fail(f"{name}: sweep {sweep[name]!r} vs evaluate {want!r}")
print(f"bottom MLP fwd {got:.6f} ms = predict gemm learned; analytic {float(pc_a['0']['bottom_mlp_fwd_ms']):.6f} ms")
PY
"$exe" evaluate s_A100-PCIe-40GB.yaml --gemm-model tuned >err.txt 2>&1
[ $? -eq 2 ] && grep -q "gemm-model" err.txt || fail "bad --gemm-model: $(cat err.txt)"
sed 's/gemm_model: learned/gemm_model: tuned/' sweep.yaml > bad.yaml
"$exe" validate bad.yaml >err.txt 2>&1
[ $? -eq 2 ] && grep -q "gemm_model" err.txt || fail "bad gemm_model: $(cat err.txt)"
echo PASS
