# Mixture-of-experts models (issue 23) through every command: predict transformer prices the
# shipped published MoE configurations as evaluate prices the same scenario, more expert
# parallelism lowers the memory of the experts, plan searches ep and etp and equals exhaustive,
# export-et writes the all-to-alls into Chakra traces that replay to evaluate's time, and bad MoE
# rows and workload keys exit 2 naming file, line and field.
set -u
exe=$1 src=$2 scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch" || exit 1
col() { # $1 = csv file, $2 = case, $3 = column
    awk -F, -v k="$2" -v name="$3" 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
        $1 == k { print $c[name] }' "$1"
}

# The shipped published configurations (inputs/predict/published_moe.csv) price, and evaluate
# prices the Megatron-Bridge row's scenario to the same digits.
(cd "$src/inputs/predict" && "$exe" predict transformer --input published_moe.csv -f csv) \
    >published.csv || fail "published_moe.csv: exit $?"
row=megatron-bridge-2509-deepseek-v3-h100-1024
[ "$(col published.csv $row experts)" = 256 ] && [ "$(col published.csv $row ep)" = 64 ] ||
    fail "published row: $(cat published.csv)"
awk -v x="$(col published.csv $row ep_comm_ms)" 'BEGIN { exit !(x > 0) }' || fail "no ep_comm"
printf '%s\n' "kind: scenario" "workload: $src/inputs/workloads/deepseek-v3.yaml" \
    "platform: $src/inputs/platforms/h100-16node-ib.yaml" "global_batch: 8192" "gpus: 1024" "plan:" \
    "  kind: plan" "  parallel: { tp: 2, pp: 8, dp: 64, ep: 64, etp: 1, micro_batch: 1, recompute: selective, sequence_parallel: true, distributed_optimizer: true, first_stage_layers: 5 }" \
    >ds.yaml
evaluated=$("$exe" evaluate ds.yaml -f csv |
    awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "iteration_ms") c = i } $1 == "critical_path" { print $c }')
[ -n "$evaluated" ] && [ "$evaluated" = "$(col published.csv $row iteration_ms)" ] ||
    fail "evaluate $evaluated ms, predict $(col published.csv $row iteration_ms) ms: $("$exe" evaluate ds.yaml 2>&1 | head -3)"

# Mixtral 8x7B on one DGX H100: ep 8 holds one expert per GPU instead of two at ep 4, so the
# peak memory drops; the all-to-alls appear with ep > 1 only.
H="case,platform,gpus,tp,pp,dp,global_batch,arch,hidden,heads,kv_heads,layers,seq_len,vocab,ffn_hidden,ffn_type,experts,top_k,ep"
M="$src/inputs/platforms/dgx-h100.yaml,8,1,1,8,64,gpt,4096,32,8,32,4096,32000,14336,swiglu,8,2"
printf '%s\n' "$H" "ep1,$M,1" "ep4,$M,4" "ep8,$M,8" >mixtral_cases.csv
"$exe" predict transformer --input mixtral_cases.csv -f csv >mixtral.csv
rc=$?
[ $rc -eq 0 ] || fail "mixtral rows: exit $rc"
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
    { m[$1] = $c["peak_memory_GiB"]; e[$1] = $c["ep_comm_ms"] }
    END { exit !(m["ep8"] < m["ep4"] && m["ep4"] < m["ep1"] && e["ep1"] == 0 && e["ep8"] > 0) }' mixtral.csv ||
    fail "mixtral: $(cat mixtral.csv)"

# plan searches ep and etp; shardsweep's choice is exhaustive's.
"$exe" plan "$src/inputs/workloads/mixtral-8x7b.yaml" "$src/inputs/platforms/h100-16node-ib.yaml" \
    --gpus 64 -f csv >plan.csv || fail "plan mixtral exit $?"
/usr/bin/python3 - <<'PY' || fail "plan: $(cat plan.csv)"
import csv, sys
rows = {r["planner"]: r for r in csv.DictReader(open("plan.csv"))}
ss, ex = rows["shardsweep"], rows["exhaustive"]
cols = ["iteration_ms", "tp", "pp", "dp", "micro_batch", "recompute", "zero", "ep", "etp"]
if [ss[c] for c in cols] != [ex[c] for c in cols]:
    sys.exit(1)
if int(ss["ep"]) < 2 or 8 % int(ss["ep"]):
    sys.exit(1)
PY

# export-et writes an MoE step as Chakra traces with its all-to-alls; their replay is evaluate's
# iteration.
printf '%s\n' "kind: scenario" "workload: $src/inputs/workloads/mixtral-8x7b.yaml" \
    "platform: $src/inputs/platforms/dgx-h100.yaml" "global_batch: 16" "plan:" "  kind: plan" \
    "  parallel: { tp: 2, pp: 2, dp: 2, ep: 2, etp: 1, sequence_parallel: true, recompute: full }" \
    >mx.yaml
"$exe" export-et mx.yaml -o et_mx -f csv >mx.csv || fail "export-et mixtral: exit $?"
awk -F, 'NR == 2 { d = $4 - $3; if (d < 0) d = -d; exit !($2 == 8 && d <= 1e-6 * $3) }' mx.csv ||
    fail "mixtral replay: $(cat mx.csv)"
"$exe" inspect-et et_mx --summary -f csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
    $1 == "critical_path" { exit !($c["all_to_all_bytes"] > 0) }' || fail "no all-to-all in the traces"
# DeepSeek-V3 in fp8 on 256 H100s (the shipped scenario, whose replay docs/model/moe.md quotes:
# its dense first stage 3 layers, the last 2): the uneven stages make the 1F1B closed form an
# approximation of the replayed schedule, within 1 % here.
"$exe" export-et "$src/inputs/scenarios/deepseek-v3-h100-256.yaml" -o et_ds -f csv >ds.csv ||
    fail "export-et deepseek fp8: exit $?"
awk -F, 'NR == 2 { d = $4 - $3; if (d < 0) d = -d; exit !($2 == 256 && d <= 1e-2 * $3) }' ds.csv ||
    fail "deepseek replay: $(cat ds.csv)"

# Bad MoE rows: exit 2 naming line, column and field.
bad() { # $1 = CSV text, $2 = expected "line:col: field 'name'"
    printf '%s\n' "$1" >bad.csv
    err=$("$exe" predict transformer --input bad.csv 2>&1); rc=$?
    [ $rc -eq 2 ] && grep -qF "bad.csv:$2" <<<"$err" || fail "exit $rc for '$1': $err (want $2)"
}
B=hidden,heads,layers,seq_len,gpu,experts
bad "$B,ep,dp
1024,16,4,512,H100,8,3,3" "2:7: field 'ep'"
bad "$B,top_k
1024,16,4,512,H100,8,9" "2:7: field 'top_k'"
bad "$B,capacity_factor
1024,16,4,512,H100,8,0" "2:7: field 'capacity_factor'"
bad "$B,tp,dp,ep,sequence_parallel
1024,16,4,512,H100,8,2,2,2,0" "2:10: field 'sequence_parallel'"
bad "$B,first_dense_layers,pp
1024,16,4,512,H100,8,2,4" "2:1: field 'first_stage_layers'"
bad "hidden,heads,layers,seq_len,gpu,ep,dp
1024,16,4,512,H100,2,2" "2:6: field 'ep'"

# A workload's capacity_factor is a number above 0 (file, line and key).
printf '%s\n' "kind: transformer" "layers: 4" "hidden: 1024" "heads: 16" "seq_len: 512" \
    "experts: 8" "capacity_factor: -1" "global_batch: 8" >w.yaml
err=$("$exe" validate w.yaml 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "w.yaml:7" <<<"$err" && grep -q "capacity_factor" <<<"$err" ||
    fail "capacity_factor -1: exit $rc, $err"
sed -i 's/capacity_factor: -1/capacity_factor: 1.25/' w.yaml
"$exe" validate w.yaml >/dev/null || fail "capacity_factor 1.25: $("$exe" validate w.yaml 2>&1)"
echo "moe: OK"
