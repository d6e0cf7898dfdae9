# `plan` and `evaluate` end to end: a hand-checked baseline placement through the command line,
# plan files that `evaluate` reads back with the same predicted time, and bad input.
set -u
exe=$1 src=$2 scratch=$3
py=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch" || exit 1

"$exe" plan --help | grep -q -- "--torchrec" || fail "plan --help"
"$exe" evaluate --help | grep -q "critical path" || fail "evaluate --help"

# The four tables of tests/unit/tstBaselinePlanners.hpp: dim_greedy puts t0,t3 on GPU 0 and t1,t2 on 1.
cat > w.yaml <<'YAML'
kind: workload
name: four
global_batch: 1024
dense: {num_dense_features: 13, bottom_mlp: [64, 16], top_mlp: [64, 1]}
tables:
  - {name: t0, rows: 1000, dim: 16, pooling_factor: 10}
  - {name: t1, rows: 1000, dim: 32, pooling_factor: 1}
  - {name: t2, rows: 1000, dim: 8, pooling_factor: 40}
  - {name: t3, rows: 1000, dim: 32, pooling_factor: 2}
YAML
cat > p.yaml <<'YAML'
kind: platform
name: two
gpu: A100-SXM4-40GB
gpus_per_node: 2
num_nodes: 1
network: {topology: [Switch], npus_count: [2], bandwidth: [150], latency: [500]}
YAML
"$exe" validate w.yaml p.yaml >/dev/null || fail "validate of the test inputs: $("$exe" validate w.yaml p.yaml 2>&1)"
"$exe" plan w.yaml p.yaml --planner dim_greedy -o plan.yaml --torchrec tr.json > plan.txt || fail "plan exit $?"
$py - <<'PY' || exit 1
import json, sys
tr = json.load(open("tr.json"))
ranks = {t: v["ranks"] for t, v in tr.items()}
want = {"t0": [0], "t1": [1], "t2": [1], "t3": [0]}
if ranks != want:
    print("FAIL: dim_greedy ranks", ranks, "expected", want); sys.exit(1)
if any(v["sharding_types"] != ["table_wise"] or v["compute_kernels"] != ["fused"] for v in tr.values()):
    print("FAIL: constraints", tr); sys.exit(1)
PY

# The plan file round-trips: evaluate gives exactly the time plan reported.
predicted=$("$exe" plan w.yaml p.yaml --planner dim_greedy --format csv | awk -F, '$1=="dim_greedy"{print $3}')
cat > s.yaml <<'YAML'
kind: scenario
name: four-on-two
workload: w.yaml
platform: p.yaml
plan: plan.yaml
YAML
"$exe" evaluate s.yaml --format csv > eval.csv || fail "evaluate exit $?"
$py - "$predicted" <<'PY' || exit 1
import csv, sys
rows = list(csv.DictReader(open("eval.csv")))
path = rows[-1]
if path["gpu"] != "critical_path" or len(rows) != 3:
    print("FAIL: rows", [r["gpu"] for r in rows]); sys.exit(1)
phases = [k for k in path if k.endswith("_ms") and k != "total_ms"]
if len(phases) != 10:
    print("FAIL: phases", phases); sys.exit(1)
total = float(path["total_ms"])
if abs(sum(float(path[k]) for k in phases) - total) > 1e-12 * total:
    print("FAIL: phases do not add up to the iteration"); sys.exit(1)
if float(sys.argv[1]) != total:
    print("FAIL: plan said", sys.argv[1], "evaluate says", total); sys.exit(1)
for r in rows[:-1]:
    if not float(r["memory_GiB"]) > 0:
        print("FAIL: memory", r); sys.exit(1)
PY
# plan -o's file alone is a scenario (source: workload, platform, GPUs, batch): the same answer.
grep -q "^source: { workload: \"w.yaml\", platform: \"p.yaml\", gpus: 2, global_batch: " plan.yaml ||
    fail "plan.yaml has no source: $(tail -2 plan.yaml)"
"$exe" evaluate plan.yaml --format csv > eval_plan.csv || fail "evaluate plan.yaml exit $?"
cmp -s eval.csv eval_plan.csv || fail "evaluate plan.yaml differs from the scenario's answer"
# The table explains why a GPU's total_ms may exceed the iteration; CSV stays data only.
"$exe" evaluate s.yaml | grep -q "^total_ms adds up a GPU's busy time" || fail "no total_ms note"
grep -q "adds up" eval.csv && fail "the total_ms note leaked into CSV"
# JSON plans are read back too (JSON is YAML).
"$exe" plan w.yaml p.yaml --planner shardsweep -o plan.json >/dev/null || fail "plan -o json"
sed 's/plan.yaml/plan.json/' s.yaml > sj.yaml
"$exe" evaluate sj.yaml --format json > eval.json || fail "evaluate json plan"
$py -c "import json; d=json.load(open('eval.json')); assert d[-1]['gpu']=='critical_path'" || fail "json output"

# --global-batch (plan's name) is --batch in evaluate and export-et: the same answer, and another
# batch than the scenario's changes it; both names with different values are a usage error.
"$exe" evaluate s.yaml --batch 8192 -f csv >b1.csv || fail "evaluate --batch exit $?"
"$exe" evaluate s.yaml --global-batch 8192 -f csv >b2.csv || fail "evaluate --global-batch exit $?"
cmp -s b1.csv b2.csv || fail "evaluate --global-batch differs from --batch"
cmp -s b1.csv eval.csv && fail "evaluate --batch 8192 gives the scenario's own batch's answer"
err=$("$exe" evaluate s.yaml --batch 8192 --global-batch 4096 2>&1)
[ $? -eq 2 ] || fail "evaluate --batch with another --global-batch must exit 2: $err"
"$exe" export-et s.yaml -o et1 --batch 8192 -f csv >e1.csv || fail "export-et --batch exit $?"
"$exe" export-et s.yaml -o et2 --global-batch 8192 -f csv >e2.csv || fail "export-et --global-batch"
[ "$(cut -d, -f2- e1.csv)" = "$(cut -d, -f2- e2.csv)" ] || fail "export-et --global-batch: $(cat e1.csv e2.csv)"
err=$("$exe" export-et s.yaml -o et3 --batch 8192 --global-batch 4096 2>&1)
[ $? -eq 2 ] || fail "export-et --batch with another --global-batch must exit 2: $err"

# Bad input: exit 2, the message names the file.
printf 'kind: scenario\nname: x\nworkload: w.yaml\nplatform: p.yaml\nplan: missing.yaml\n' > bad.yaml
err=$("$exe" evaluate bad.yaml 2>&1); rc=$?
[ $rc -eq 2 ] || fail "missing plan file must exit 2 (got $rc): $err"
grep -q "missing.yaml" <<<"$err" || fail "message does not name the file: $err"
err=$("$exe" plan w.yaml p.yaml --planner nope 2>&1); [ $? -eq 2 ] || fail "unknown planner must exit 2"
grep -q "unknown planner 'nope'" <<<"$err" || fail "message: $err"
err=$("$exe" plan w.yaml p.yaml --batch 1001 2>&1); [ $? -eq 2 ] || fail "batch not divisible must exit 2"
echo "plan/evaluate OK"
