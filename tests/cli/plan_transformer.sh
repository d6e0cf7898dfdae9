# `plan` for a transformer workload: the chosen planner's top K, every transformer planner on the
# same task, the plan file read back by `evaluate` (the same iteration time, to the last digit)
# and by `export-et` (16 ranks, the same time), infeasible tasks (exit 2, the reason) and bad options.
set -u
exe=$1 src=$2 scratch=$3
py=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch" || exit 1
w=$src/inputs/workloads/gpt3-1.3b.yaml
p=$src/inputs/platforms/dgx-a100-hdr800.yaml

help=$("$exe" plan --help) || fail "plan --help"
for opt in --gpus --global-batch --top --planner --output --format megatron exhaustive; do
    grep -q -- "$opt" <<<"$help" || fail "plan --help does not explain $opt"
done

# GPT-3 1.3B on 16 GPUs (2 nodes) at global batch 64, top 3, as CSV and with a plan file.
"$exe" plan "$w" "$p" --gpus 16 --global-batch 64 --top 3 --format csv -o plan.yaml > plan.csv ||
    fail "plan exit $?"
$py - <<'PY' || exit 1
import csv, sys
rows = list(csv.DictReader(open("plan.csv")))
names = [(r["planner"], r["rank"]) for r in rows]
want = [("shardsweep", "1"), ("shardsweep", "2"), ("shardsweep", "3"), ("megatron", "1"), ("exhaustive", "1")]
if names != want:
    print("FAIL: rows", names); sys.exit(1)
ss, ex, meg = rows[0], rows[4], rows[3]
cols = ["iteration_ms", "tp", "pp", "dp", "micro_batch", "recompute", "zero", "sequence_parallel", "schedule"]
if [ss[c] for c in cols] != [ex[c] for c in cols]:
    print("FAIL: shardsweep", [ss[c] for c in cols], "!= exhaustive", [ex[c] for c in cols]); sys.exit(1)
t = [float(r["iteration_ms"]) for r in rows[:3]]
if not (t[0] <= t[1] <= t[2]) or float(ss["ratio_to_best"]) != 1.0:
    print("FAIL: top 3 not in order", t); sys.exit(1)
# every configuration multiplies to the 16 GPUs and divides the batch
for r in rows:
    if int(r["tp"]) * int(r["pp"]) * int(r["dp"]) != 16 or 64 % (int(r["micro_batch"]) * int(r["dp"])):
        print("FAIL: configuration", r); sys.exit(1)
# megatron's rule: TP = 8 GPUs per node, full recompute, no ZeRO; never faster than the optimum
if (meg["tp"], meg["recompute"], meg["zero"]) != ("8", "full", "0") or float(meg["ratio_to_best"]) < 1.0:
    print("FAIL: megatron", meg); sys.exit(1)
# shardsweep priced far fewer configurations than exhaustive, out of the same space
if not (int(ss["priced"]) * 20 < int(ex["priced"]) and ss["configurations"] == ex["configurations"]):
    print("FAIL: priced", ss["priced"], ex["priced"], ss["configurations"]); sys.exit(1)
open("best_ms", "w").write(ss["iteration_ms"])
PY
grep -q "^parallel: { tp: " plan.yaml || fail "plan.yaml: $(cat plan.yaml)"

# The plan file read back: evaluate predicts exactly the time plan printed.
cat > s.yaml <<YAML
kind: scenario
workload: $w
platform: $p
global_batch: 64
plan: plan.yaml
YAML
"$exe" evaluate s.yaml --format csv > eval.csv || fail "evaluate exit $?"
got=$(awk -F, '$1 == "critical_path" { print $(NF - 1) }' eval.csv)
[ "$got" = "$(cat best_ms)" ] || fail "evaluate $got ms != plan $(cat best_ms) ms"
# export-et reads the same scenario (plan included): 16 ranks, the same iteration time.
"$exe" export-et s.yaml -o et --format csv > et.csv || fail "export-et exit $?"
row=$(tail -1 et.csv)
[ "$(cut -d, -f2 <<<"$row")" = 16 ] || fail "export-et ranks: $row"
[ "$(cut -d, -f3 <<<"$row")" = "$(cat best_ms)" ] || fail "export-et iteration_ms: $row"
[ -s et/et.15.et ] || fail "export-et wrote no trace of rank 15"
# The plan file alone is a scenario (its source: names workload, platform, 16 GPUs, the batch):
# the same answers from evaluate and export-et, with no scenario file written by hand.
grep -q "^source: { workload: .*, gpus: 16, global_batch: 64 }" plan.yaml || fail "no source: $(cat plan.yaml)"
"$exe" evaluate plan.yaml --format csv > eval_plan.csv || fail "evaluate plan.yaml exit $?"
cmp -s eval.csv eval_plan.csv || fail "evaluate plan.yaml differs from the scenario's answer"
"$exe" export-et plan.yaml -o et2 --format csv > et2.csv || fail "export-et plan.yaml exit $?"
[ "$(tail -1 et2.csv | cut -d, -f2-)" = "$(tail -1 et.csv | cut -d, -f2-)" ] || fail "export-et plan.yaml: $(cat et2.csv)"
cmp -s et/et.15.et et2/et.15.et || fail "export-et of the plan file wrote another trace"
# A plan without source: (hand-written) is not a scenario: exit 2, saying what is missing.
grep -v "^source:" plan.yaml > bare.yaml
err=$("$exe" evaluate bare.yaml 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "a plan without 'source:'" <<<"$err" || fail "bare plan: exit $rc: $err"

# The table format: the best configuration, its phases and per-stage memory, and the planners.
"$exe" plan "$w" "$p" --gpus 16 --global-batch 64 > plan.txt || fail "plan (table) exit $?"
for text in "best: tp " "bubble" "memory_GiB" "megatron" "exhaustive" "configurations priced"; do
    grep -q "$text" plan.txt || fail "plan table lacks '$text'"
done

# GPT-3 175B on one node: it fits nowhere; exit 2 with the leanest configuration's memory.
"$exe" plan "$src/inputs/workloads/gpt3-175b.yaml" "$p" --gpus 8 > inf.out 2> inf.err
[ $? -eq 2 ] || fail "infeasible plan: exit status not 2"
grep -q "fits nowhere on 8 GPUs" inf.err || fail "infeasible message: $(cat inf.err)"
[ -e inf.yaml ] && fail "a plan file for an infeasible task"

# Bad options: a DLRM planner, a GPU count the platform cannot be resized to, --top 0, a JSON
# plan file, a cost model other than native.
for bad in "--planner torchrec" "--gpus 12" "--top 0" "-o plan.json" "--cost-model torchrec"; do
    # shellcheck disable=SC2086
    "$exe" plan "$w" "$p" $bad > /dev/null 2> bad.err
    [ $? -eq 2 ] || fail "plan $bad: exit status not 2"
    [ -s bad.err ] || fail "plan $bad: no message"
done
# bench planners --protocol transformer on 64 GPUs: 16 tasks (8 GPT-3 sizes x 2 clusters);
# shardsweep returns exhaustive's optimum on every one and is never slower than megatron's rule.
"$exe" bench planners --protocol transformer --gpu-counts 64 --format csv > bench.csv ||
    fail "bench planners exit $?"
$py - <<'PY' || exit 1
import csv, sys
rows = {(r["protocol"], r["planner"]): r for r in csv.DictReader(open("bench.csv"))}
cols = "protocol,planner,tasks,share_equal_to_exhaustive_pct,mean_improvement_vs_megatron_pct,mean_plan_seconds,max_plan_seconds"
if open("bench.csv").readline().strip() != cols:
    print("FAIL: columns", open("bench.csv").readline()); sys.exit(1)
ss, ex = rows[("transformer", "shardsweep")], rows[("transformer", "exhaustive")]
if ss["tasks"] != "16" or float(ss["share_equal_to_exhaustive_pct"]) != 100.0 or float(ex["share_equal_to_exhaustive_pct"]) != 100.0:
    print("FAIL: bench", ss, ex); sys.exit(1)
if float(ss["mean_improvement_vs_megatron_pct"]) < 0 or ss["mean_improvement_vs_megatron_pct"] != ex["mean_improvement_vs_megatron_pct"]:
    print("FAIL: improvement", ss, ex); sys.exit(1)
# Mixtures of experts (ep, etp, uneven stages searched too): exhaustive's optimum every time,
# Mixtral 8x7B on 64 GPUs and DeepSeek-V3 on its 2048 H800s.
for protocol in ("moe", "deepseek-v3-2048-h800"):
    ss, ex = rows[(protocol, "shardsweep")], rows[(protocol, "exhaustive")]
    if int(ss["tasks"]) < 1 or float(ss["share_equal_to_exhaustive_pct"]) != 100.0:
        print("FAIL: bench", protocol, ss, ex); sys.exit(1)
PY
echo OK
