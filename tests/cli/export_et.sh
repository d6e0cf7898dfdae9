# `export-et` and `inspect-et` (issue 14): the written Chakra traces decoded independently
# (protoc --decode_raw; Python's protobuf module with tests/cli/chakra_et_def.proto), checked field
# by field against `evaluate`, replayed by tests/cli/chakra_et_check.py to shardsweep's
# iteration_ms; inspect-et's columns; bad input exits 2.
set -u
exe=$1 src=$2 scratch=$3
py=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch/pb2" && cd "$scratch" || exit 1
command -v protoc >/dev/null || fail "protoc not installed (Debian protobuf-compiler; scripts/setup.sh)"
$py -c "import google.protobuf" 2>/dev/null || fail "python3-protobuf not installed (scripts/setup.sh)"
protoc --proto_path="$src/tests/cli" --python_out=pb2 chakra_et_def.proto || fail "protoc"
check() { $py "$src/tests/cli/chakra_et_check.py" "$scratch/pb2" "$@"; }

"$exe" export-et --help | grep -q "comm_groups.json" || fail "export-et --help"
"$exe" inspect-et --help | grep -q "critical_path" || fail "inspect-et --help"

cat > w.yaml <<'YAML'
kind: workload
name: four
global_batch: 4096
dense: {num_dense_features: 13, bottom_mlp: [512, 256, 64], top_mlp: [512, 256, 1]}
tables:
  - {name: t0, rows: 2000000, dim: 64, pooling_factor: 40}
  - {name: t1, rows: 1000000, dim: 64, pooling_factor: 10}
  - {name: t2, rows: 500000, dim: 64, pooling_factor: 2}
  - {name: t3, rows: 100, dim: 64, pooling_factor: 1}
YAML
# An unbalanced plan: t0 alone on GPU 0 (the slowest lookups), t1 row-wise, t3 data-parallel.
cat > plan.yaml <<'YAML'
kind: plan
workload: four
tables:
  - table: t0
    sharding: table_wise
    compute_kernel: fused
    shards: [{gpu: 0, row_offset: 0, num_rows: 2000000, col_offset: 0, num_cols: 64}]
  - table: t1
    sharding: row_wise
    compute_kernel: fused
    shards:
      - {gpu: 0, row_offset: 0, num_rows: 250000, col_offset: 0, num_cols: 64}
      - {gpu: 1, row_offset: 250000, num_rows: 250000, col_offset: 0, num_cols: 64}
      - {gpu: 2, row_offset: 500000, num_rows: 250000, col_offset: 0, num_cols: 64}
      - {gpu: 3, row_offset: 750000, num_rows: 250000, col_offset: 0, num_cols: 64}
  - table: t2
    sharding: table_wise
    compute_kernel: fused
    shards: [{gpu: 2, row_offset: 0, num_rows: 500000, col_offset: 0, num_cols: 64}]
  - table: t3
    sharding: data_parallel
    compute_kernel: dense
    shards:
      - {gpu: 0, row_offset: 0, num_rows: 100, col_offset: 0, num_cols: 64}
      - {gpu: 1, row_offset: 0, num_rows: 100, col_offset: 0, num_cols: 64}
      - {gpu: 2, row_offset: 0, num_rows: 100, col_offset: 0, num_cols: 64}
      - {gpu: 3, row_offset: 0, num_rows: 100, col_offset: 0, num_cols: 64}
YAML
# One node of 4 (one Switch, one chunk, ring) and two nodes of 2 ([Switch 2, Ring 2], 4 chunks
# with 2 active, direct all-to-all, localBWAware all-reduce).
cat > node.yaml <<'YAML'
kind: platform
name: one-node
gpu: A100-SXM4-40GB
gpus_per_node: 4
num_nodes: 1
network: {topology: [Switch], npus_count: [4], bandwidth: [150], latency: [500]}
system: {endpoint-delay: 10, local-mem-bw: 1600}
YAML
cat > twonodes.yaml <<'YAML'
kind: platform
name: two-nodes
gpu: A100-SXM4-40GB
gpus_per_node: 2
num_nodes: 2
network: {topology: [Switch, Ring], npus_count: [2, 2], bandwidth: [150, 25], latency: [500, 2000]}
system:
  endpoint-delay: 10
  preferred-dataset-splits: 4
  active-chunks-per-dimension: 2
  all-to-all-implementation: [direct, direct]
  all-reduce-implementation: [ring, ring]
  collective-optimization: localBWAware
  local-mem-bw: 1600
YAML
for p in node twonodes; do
    printf 'kind: scenario\nworkload: w.yaml\nplatform: %s.yaml\nplan: plan.yaml\n' $p > s_$p.yaml
    "$exe" evaluate s_$p.yaml --format csv > eval_$p.csv || fail "evaluate $p"
    "$exe" export-et s_$p.yaml -o out_$p --format csv > export_$p.csv || fail "export-et $p exit $?"
    [ "$(wc -l < export_$p.csv)" -eq 2 ] || fail "export-et csv: one header, one row"
    for f in et.0.et et.3.et network.yml system.json remote_memory.json replay.sh; do
        [ -f out_$p/$f ] || fail "$p: $f missing"
    done
    [ ! -e out_$p/comm_groups.json ] || fail "$p: comm_groups.json written without sub-groups"
    [ -x out_$p/replay.sh ] && grep -q -- "--workload-configuration=./et" out_$p/replay.sh ||
        fail "replay.sh"
    "$exe" inspect-et "$scratch/out_$p/et" --format csv > inspect_$p.csv || fail "inspect-et $p"
    check "$scratch/out_$p/et" eval_$p.csv export_$p.csv inspect_$p.csv || fail "check $p"
done
# inspect-et DIR reads DIR/et; --summary keeps the slowest and the fastest rank (first of equals)
# and the critical path, rows equal to the full table's.
"$exe" inspect-et out_twonodes --format csv > inspect_dir.csv || fail "inspect-et DIR"
cmp -s inspect_dir.csv inspect_twonodes.csv || fail "inspect-et DIR differs from DIR/et"
"$exe" inspect-et out_twonodes --summary --format csv > summary.csv || fail "inspect-et --summary"
$py - <<'PY' || fail "--summary rows"
import csv
full = list(csv.reader(open("inspect_twonodes.csv")))
ranks = [r for r in full[1:] if r[0] != "critical_path"]
finish = [float(r[-1]) for r in ranks]
slow, fast = finish.index(max(finish)), finish.index(min(finish))
want = [full[0], ["slowest:%d" % slow] + ranks[slow][1:], ["fastest:%d" % fast] + ranks[fast][1:], full[-1]]
got = list(csv.reader(open("summary.csv")))
assert got == want, (got, want)
PY
# Progress on standard error: none at the default interval on a small step, every trace with a
# tiny one, and the table on standard output unchanged.
"$exe" export-et s_twonodes.yaml -o out_prog --format csv > export_prog.csv 2> prog.err || fail "export-et"
[ ! -s prog.err ] || fail "progress at the default interval: $(cat prog.err)"
"$exe" export-et s_twonodes.yaml -o out_prog --format csv --progress-interval 1e-9 > export_prog.csv \
    2> prog.err || fail "export-et --progress-interval"
cmp -s export_prog.csv <(sed 's|out_twonodes|out_prog|' export_twonodes.csv) || fail "export-et table with progress"
[ "$(grep -c '^export-et: [1-4]/4 traces written ([0-9.]* s)$' prog.err)" -eq 4 ] || fail "export progress: $(cat prog.err)"
"$exe" inspect-et out_prog --progress-interval 1e-9 --format csv > /dev/null 2> prog.err || fail "inspect progress"
[ "$(grep -c '^inspect-et: [1-4]/4 traces read' prog.err)" -eq 4 ] || fail "inspect progress: $(cat prog.err)"
# The per-rank graphs differ (unbalanced lookups), the collective sizes do not.
cmp -s out_node/et.0.et out_node/et.1.et && fail "rank 0 and 1 traces identical"
# The network and system files say what the platform says.
$py - <<'PY' || fail "network.yml / system.json"
import json, yaml
n = yaml.safe_load(open("out_twonodes/network.yml"))
assert n == {"topology": ["Switch", "Ring"], "npus_count": [2, 2], "bandwidth": [150, 25],
             "latency": [500, 2000]}, n
s = json.load(open("out_twonodes/system.json"))
assert s["preferred-dataset-splits"] == 4 and s["active-chunks-per-dimension"] == 2, s
assert s["all-to-all-implementation"] == ["direct", "direct"], s
assert s["all-reduce-implementation"] == ["ring", "ring"], s
assert s["collective-optimization"] == "localBWAware" and s["local-mem-bw"] == 1600, s
assert s["endpoint-delay"] == 10 and s["roofline-enabled"] == 0, s
PY

# protoc --decode_raw on rank 0's second node (bottom_mlp_fwd), split off at its varint length.
$py - > node1.bin <<'PY'
import sys
data = open("out_node/et.0.et", "rb").read()
def varint(pos):
    v = s = 0
    while True:
        b = data[pos]; pos += 1; v |= (b & 0x7f) << s; s += 7
        if b < 0x80: return v, pos
pos = 0
for i in range(3):  # metadata, node 0, node 1
    n, pos = varint(pos)
    if i == 2: sys.stdout.buffer.write(data[pos:pos + n])
    pos += n
PY
raw=$(protoc --decode_raw < node1.bin) || fail "protoc --decode_raw"
grep -q '^1: 1$' <<<"$raw" && grep -q '^2: "bottom_mlp_fwd"$' <<<"$raw" && grep -q '^3: 4$' <<<"$raw" ||
    fail "decode_raw fields: $raw"
grep -q '^5:' <<<"$raw" && fail "bottom_mlp_fwd has no dependencies: $raw"
# duration_micros > 0; attr 10 holds bool_val (27) = false (decode_raw guesses the name's type).
grep -q '^7: [1-9]' <<<"$raw" && grep -q '^10 {' <<<"$raw" && grep -q '^  27: 0$' <<<"$raw" ||
    fail "decode_raw duration / is_cpu_op: $raw"

# The shipped MLPerf scenario (8 GPUs, HGX-H100 system: 4 chunks, 2 active) and a plan the
# planner makes for two nodes (checked the same way).
"$exe" evaluate "$src/inputs/scenarios/mlperf-dgx-h100.yaml" --format csv > eval_mlperf.csv || fail "evaluate mlperf"
"$exe" export-et "$src/inputs/scenarios/mlperf-dgx-h100.yaml" -o out_mlperf --format csv \
    > export_mlperf.csv || fail "export-et mlperf"
check "$scratch/out_mlperf/et" eval_mlperf.csv export_mlperf.csv || fail "check mlperf"
"$exe" plan w.yaml twonodes.yaml --planner shardsweep --budget-s 0.1 -o planned.yaml > /dev/null || fail "plan"
printf 'kind: scenario\nworkload: w.yaml\nplatform: twonodes.yaml\nplan: planned.yaml\n' > s_planned.yaml
"$exe" evaluate s_planned.yaml --format csv > eval_planned.csv || fail "evaluate planned"
"$exe" export-et s_planned.yaml -o out_planned --format json > export_planned.json || fail "export json"
$py -c "
import csv, json, sys
r = json.load(open('export_planned.json'))[0]
w = csv.writer(open('export_planned.csv', 'w'))
w.writerow(list(r)); w.writerow(list(r.values()))" || fail "export-et json"
check "$scratch/out_planned/et" eval_planned.csv export_planned.csv || fail "check planned"

# A transformer (issue 14): 4 layers on two nodes of 4 GPUs ([Switch 4, Ring 2], 4 chunks with 2
# active), TP 2 x PP 2 x DP 2, 2 micro-batches of 1 sequence, 1F1B; then sequence parallelism,
# ZeRO-1 and GPipe. Checked by tests/cli/chakra_et_transformer_check.py against evaluate.
cat > gpt.yaml <<'YAML'
kind: transformer
name: tiny-gpt
arch: gpt
layers: 4
hidden: 256
heads: 4
seq_len: 128
vocab: 1000
dtype: bf16
global_batch: 4
YAML
cat > gpunodes.yaml <<'YAML'
kind: platform
name: two-nodes-of-4
gpu: A100-SXM4-40GB
gpus_per_node: 4
num_nodes: 2
network: {topology: [Switch, Ring], npus_count: [4, 2], bandwidth: [150, 25], latency: [500, 2000]}
system:
  endpoint-delay: 10
  preferred-dataset-splits: 4
  active-chunks-per-dimension: 2
  local-mem-bw: 1600
YAML
printf 'kind: scenario\nworkload: gpt.yaml\nplatform: gpunodes.yaml\nparallel: { tp: 2, pp: 2, dp: 2, micro_batch: 1, recompute: none }\n' > s_gpt.yaml
printf 'kind: scenario\nworkload: gpt.yaml\nplatform: gpunodes.yaml\nparallel: { tp: 2, pp: 2, dp: 2, micro_batch: 1, recompute: none, sequence_parallel: true, zero: 1, schedule: gpipe }\n' > s_gpt_sp.yaml
for s in gpt gpt_sp; do
    "$exe" evaluate s_$s.yaml --format csv > eval_$s.csv || fail "evaluate $s"
    "$exe" export-et s_$s.yaml -o out_$s --format csv > export_$s.csv || fail "export-et $s exit $?"
    [ -f out_$s/comm_groups.json ] && grep -q -- "--comm-group-configuration=./comm_groups.json" \
        out_$s/replay.sh || fail "$s: comm_groups.json / replay.sh"
    "$exe" inspect-et "$scratch/out_$s/et" --format csv > inspect_$s.csv || fail "inspect-et $s"
done
tcheck() { $py "$src/tests/cli/chakra_et_transformer_check.py" "$scratch/pb2" "$@"; }
tcheck "$scratch/out_gpt/et" eval_gpt.csv export_gpt.csv inspect_gpt.csv 2 2 2 2 1f1b || fail "check gpt"
tcheck "$scratch/out_gpt_sp/et" eval_gpt_sp.csv export_gpt_sp.csv inspect_gpt_sp.csv 2 2 2 2 gpipe ||
    fail "check gpt_sp"
# Interleaved 1F1B (issue 23): 2 chunks of 1 layer per rank, with sequence parallelism, the
# distributed optimizer and overlap (the TP collectives and the DP reduction carry only their
# exposed time). Then an MoE model (4 experts, top-2, ep 2) interleaved with context parallelism
# 2: tp 2 x cp 2 x pp 2 = 8 GPUs, 4 micro-batches, etp = tp = 2; the checker derives the CP
# rings and the EP and ETP groups of MoE parallel folding itself.
printf 'kind: scenario\nworkload: gpt.yaml\nplatform: gpunodes.yaml\nparallel: { tp: 2, pp: 2, dp: 2, micro_batch: 1, recompute: none, sequence_parallel: true, virtual_stages: 2, distributed_optimizer: true, overlap: true }\n' > s_gpt_v2.yaml
# Sequences of 2048 tokens: shorter ones make the expert all-to-alls so small that the model's
# time for them lies below ASTRA-sim's latency floor on that group (docs/model/chakra.md).
sed 's/^name: tiny-gpt/name: tiny-moe\nexperts: 4\ntop_k: 2/; s/^seq_len: 128/seq_len: 2048/' gpt.yaml > moe.yaml
printf 'kind: scenario\nworkload: moe.yaml\nplatform: gpunodes.yaml\nparallel: { tp: 2, pp: 2, dp: 1, cp: 2, ep: 2, micro_batch: 1, recompute: full, sequence_parallel: true, virtual_stages: 2 }\n' > s_moe_v2.yaml
for s in gpt_v2 moe_v2; do
    "$exe" evaluate s_$s.yaml --format csv > eval_$s.csv || fail "evaluate $s"
    "$exe" export-et s_$s.yaml -o out_$s --format csv > export_$s.csv || fail "export-et $s exit $?"
    "$exe" inspect-et "$scratch/out_$s/et" --format csv > inspect_$s.csv || fail "inspect-et $s"
done
tcheck "$scratch/out_gpt_v2/et" eval_gpt_v2.csv export_gpt_v2.csv inspect_gpt_v2.csv 2 2 2 2 1f1b v2 ||
    fail "check gpt_v2"
tcheck "$scratch/out_moe_v2/et" eval_moe_v2.csv export_moe_v2.csv inspect_moe_v2.csv 2 2 1 4 1f1b \
    v2 cp2 ep2 etp2 || fail "check moe_v2"
# Node counts by hand (docs/model/chakra.md's table), per micro-batch x 2 + 3 after the pipeline.
# Stage 0: forward embedding.fwd, embedding.tp, 2 x (layer.fwd, tp_attn, tp_mlp), p2p_host,
# send_act; backward recv_grad, 2 x (layer.bwd, tp_mlp, tp_attn), embedding.bwd, bwd_unpaired.
# Stage 1: forward recv_act, 2 x 3 layer nodes, head.fwd, loss.fwd, loss.tp0-2, fwd_unpaired;
# backward loss.bwd, head.bwd, head.tp, 2 x 3 layer nodes, p2p_host, send_grad.
# Every TP collective here is host-bound (64 KiB or 512 B: a few us on the network, the model
# charges 46 us per issued kernel): each has its `.host` compute node (9 per micro-batch on
# stage 0, 12 on stage 1). After: dp.allreduce, embedding.grad_allreduce, optimizer.
$py - <<'PY' || fail "transformer node counts"
import csv
rows = {r["rank"]: r for r in csv.DictReader(open("inspect_gpt.csv"))}
want = {0: (59, 35, 20, 2, 2), 1: (75, 45, 26, 2, 2)}  # nodes, comp, coll, send, recv per stage
for r in range(8):
    got = tuple(int(rows[str(r)][c]) for c in ("nodes", "comp_nodes", "coll_nodes", "send_nodes",
                                               "recv_nodes"))
    assert got == want[r // 4], (r, got)
PY
# Ranks of one stage: the same operations; the two stages differ.
cmp -s out_gpt/et.0.et out_gpt/et.4.et && fail "stage 0 and 1 traces identical"

# Bad input: exit 2 with a message naming the problem.
expect2() {
    local what=$1; shift
    err=$("$@" 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "$what: exit $rc, expected 2: $err"
    echo "$err"
}
expect2 "no -o" "$exe" export-et s_node.yaml | grep -q -- "-o DIR is required" || fail "no -o message"
expect2 "no scenario" "$exe" export-et -o x | grep -q "scenario file is required" || fail "msg"
expect2 "missing file" "$exe" export-et missing.yaml -o x | grep -q "missing.yaml" || fail "msg"
expect2 "bad format" "$exe" export-et s_node.yaml -o x --format xml | grep -q "xml" || fail "msg"
expect2 "bad interval" "$exe" inspect-et out_prog --progress-interval -1 | grep -q "progress-interval" || fail "msg"
sed 's/gpus_per_node: 4/gpus_per_node: 1/; s/npus_count: \[4\]/npus_count: [2]/' node.yaml > one.yaml
sed -i '/network:/d' one.yaml
printf 'kind: scenario\nworkload: w.yaml\nplatform: one.yaml\nplan: one_plan.yaml\n' > s_one.yaml
"$exe" plan w.yaml one.yaml --planner dim_greedy --budget-s 0.1 -o one_plan.yaml > /dev/null || fail "plan one GPU"
expect2 "one GPU" "$exe" export-et s_one.yaml -o x | grep -q "at least 2 NPUs" || fail "one GPU msg"
sed 's/tp: 2, pp: 2, dp: 2/tp: 3, pp: 2, dp: 2/' s_gpt.yaml > s_badtp.yaml
expect2 "bad tp" "$exe" export-et s_badtp.yaml -o x | grep -q "tensor-parallel" || fail "bad tp msg"
[ ! -e x ] || fail "nothing may be written on bad input"
expect2 "no traces" "$exe" inspect-et nowhere/et | grep -q "nowhere/et.0.et" || fail "msg"
cp -r out_node bad && head -c 100 out_node/et.2.et > bad/et.2.et
expect2 "truncated" "$exe" inspect-et bad/et | grep -q "bad/et.2.et: byte" || fail "truncated msg"
cp out_node/et.0.et bad/et.2.et && rm bad/network.yml
expect2 "no network" "$exe" inspect-et bad/et | grep -q -- "--network" || fail "no network msg"
expect2 "wrong network" "$exe" inspect-et bad/et --network out_mlperf/network.yml | grep -q "8 NPUs" || fail "msg"
cp out_node/network.yml bad/ && cp out_node/et.1.et bad/et.3.et
# Rank 3's trace now has rank 1's nodes: still consistent (same collectives) and replays.
"$exe" inspect-et bad/et --format csv > /dev/null || fail "inspect of swapped traces"
echo '{"1": [0, 9]}' > bad/comm_groups.json
expect2 "bad groups" "$exe" inspect-et bad/et | grep -q "comm_groups.json" || fail "groups msg"
echo "export-et / inspect-et OK"
