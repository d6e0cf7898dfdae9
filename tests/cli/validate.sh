# shardsweep validate: every shipped input file is accepted; broken copies are rejected with exit
# status 2 and a "file:line:col: field ..." message (issue 2, "Bad input").
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch" || fail "cannot create $scratch"
cd "$src" || fail "no source dir $src"

shipped=( inputs/gpus/*.yaml inputs/platforms/*.yaml inputs/workloads/*.yaml inputs/plans/*.yaml
          inputs/scenarios/*.yaml inputs/astra-sim/*.yml inputs/astra-sim/*.json inputs/sweeps/*.yaml
          inputs/quickstart.yaml )
out=$("$exe" validate --format csv "${shipped[@]}" 2>&1); rc=$?
[ $rc -eq 0 ] || fail "shipped inputs rejected (exit $rc):"$'\n'"$out"
ok=$(grep -c ',ok,' <<<"$out")
[ "$ok" -eq "${#shipped[@]}" ] || fail "expected ${#shipped[@]} ok rows, found $ok:"$'\n'"$out"
grep -q '^inputs/gpus/H100-SXM-80GB.yaml,gpu,H100-SXM-80GB,ok,"132 SMs, 80 GiB, 3350 GB/s"$' <<<"$out" ||
    fail "H100 row: $out"
# A plan checked against its workload and platform.
"$exe" validate --workload inputs/workloads/mlperf-dlrm-criteo-1tb.yaml \
    --platform inputs/platforms/dgx-h100.yaml inputs/plans/mlperf-dlrm-8gpu.yaml >/dev/null ||
    fail "plan against workload and platform"

# broken NAME SOURCE SED-EXPRESSION EXPECTED-MESSAGE: a copy of SOURCE edited by SED must fail
# with exit 2 and exactly EXPECTED on standard error (after the program's prefix).
broken() {
    local name=$1 source=$2 edit=$3 expected=$4
    local copy="$scratch/$name"
    sed -e "$edit" "$source" >"$copy"
    cmp -s "$source" "$copy" && fail "$name: the edit '$edit' changed nothing"
    local err
    err=$("$exe" validate "$copy" 2>&1 >/dev/null); local rc=$?
    [ $rc -eq 2 ] || fail "$name: exit $rc, expected 2 ($err)"
    [ "$err" = "shardsweep: input error: $copy:$expected" ] ||
        fail "$name: message"$'\n'"  got:      $err"$'\n'"  expected: shardsweep: input error: $copy:$expected"
}
P=inputs/platforms/dgx-a100.yaml
W=inputs/workloads/mlperf-dlrm-criteo-1tb.yaml
S=inputs/scenarios/tiny-inline.yaml
broken unknown-key.yaml $P 's/^num_nodes:/num_node:/' \
    "7:1: field 'num_node': expected one of the keys kind, gpu, gpus_per_node, num_nodes, name, description, hbm_reserve_GiB, host_memory_GiB, host_to_gpu_GBps, network, system or calibration (did you mean 'num_nodes'?), found unknown key 'num_node'"
broken wrong-type.yaml $P 's/^gpus_per_node: 8/gpus_per_node: eight/' \
    "6:16: field 'gpus_per_node': expected an integer in [1, 1024], found 'eight'"
broken zero-bandwidth.yaml $P 's/bandwidth: \[ 300.0 \]/bandwidth: [ 0 ]/' \
    "14:16: field 'network.bandwidth[0]': expected a number in (0, 1000000], found '0'"
broken npus-product.yaml $P 's/^num_nodes: 1/num_nodes: 2/' \
    "13:15: field 'network.npus_count': expected npus_count multiplying to gpus_per_node x num_nodes = 8 x 2 = 16, found [8] (product 8)"
broken unknown-gpu.yaml $P 's/^gpu: A100-SXM4-80GB/gpu: A100-SXM4-81GB/' \
    "5:6: field 'gpu': expected a GPU of the catalog (A100-PCIe-40GB, A100-PCIe-80GB, A100-SXM4-40GB, A100-SXM4-80GB, B200, GB200, H100-PCIe, H100-SXM-80GB, H200, H800-SXM-80GB, L4, P100, P4, T4, V100-PCIe-32GB or V100-SXM2-32GB) (did you mean 'A100-SXM4-80GB'?), found 'A100-SXM4-81GB'"
broken negative-size.yaml $W 's/rows: 39884406/rows: -39884406/' \
    "24:26: field 'tables[0].rows': expected an integer in [1, 10000000000000], found '-39884406'"
broken dim-zero.yaml $W 's/^  dim: 128/  dim: 0/' \
    "19:8: field 'table_defaults.dim': expected an integer in [1, 65536], found '0'"
broken batch-divisible.yaml $S 's/^global_batch: 4096/global_batch: 4095/' \
    "4:15: field 'global_batch': expected a batch divisible by the platform's 2 GPUs, found '4095'"
broken bad-kind.yaml $P 's/^kind: platform/kind: platfrom/' \
    "3:7: field 'kind': expected one of gpu, platform, workload, transformer, plan, scenario or sweep, found 'platfrom'"
broken syntax.yaml $P 's/^  npus_count: \[ 8 \]/  npus_count: [ 8/' \
    "14:12: field '(syntax)': expected valid YAML, found end of sequence flow not found"

# Transformer workloads, scenarios and plans (issue 11). Scenario copies point at the shipped
# workload and platform through absolute paths.
TW=inputs/workloads/gpt3-175b.yaml
TS=inputs/scenarios/gpt3-175b-a100.yaml
abs="s|\.\./|$src/inputs/|"
broken heads-divide.yaml $TW 's/^heads: 96/heads: 97/' \
    "7:8: field 'heads': expected a head count dividing hidden 12288, found '97'"
broken kv-heads.yaml $TW 's/^heads: 96/heads: 96\nkv_heads: 5/' \
    "8:11: field 'kv_heads': expected a key/value head count dividing heads 96, found '5'"
broken arch-typo.yaml $TW 's/^arch: gpt/arch: gtp/' \
    "4:7: field 'arch': expected one of gpt, bert or opt (did you mean 'gpt'?), found 'gtp'"
broken tp-heads.yaml $TS "$abs;s/^  tp: 8/  tp: 7/" \
    "10:7: field 'parallel.tp': expected a tensor-parallel degree that splits the model (tp 7 does not divide the 96 heads), found '7'"
broken pp-layers.yaml $TS "$abs;s/^  pp: 16/  pp: 10/" \
    "11:7: field 'parallel.pp': expected a pipeline-parallel degree dividing the 96 layers, found '10'"
broken micro-batch.yaml $TS "$abs;s/^  micro_batch: 1/  micro_batch: 5/" \
    "13:16: field 'parallel.micro_batch': expected micro_batch x dp dividing the global batch 1536, found 5 x 8 = 40"
broken recompute.yaml $TS "$abs;s/^  recompute: full/  recompute: partial/" \
    "15:14: field 'parallel.recompute': expected one of none, selective or full, found 'partial'"
broken zero-stage.yaml inputs/plans/gpt3-175b-1024gpu.yaml 's/zero: 1/zero: 4/' \
    "6:110: field 'parallel.zero': expected an integer in [0, 3], found '4'"
"$exe" validate --workload $TW inputs/plans/gpt3-175b-1024gpu.yaml >/dev/null ||
    fail "transformer plan against its workload"
err=$("$exe" validate --workload $W inputs/plans/gpt3-175b-1024gpu.yaml 2>&1 >/dev/null)
[ $? -eq 2 ] && grep -q "expected 'tables:' (workload 'mlperf-dlrm-criteo-1tb' is a DLRM)" <<<"$err" ||
    fail "transformer plan against a DLRM workload: $err"

# Several files: every one is checked, each error reported, exit 2.
err=$("$exe" validate "$scratch/unknown-key.yaml" $P "$scratch/dim-zero.yaml" 2>&1 >/dev/null)
[ $? -eq 2 ] || fail "mixed files must exit 2"
[ "$(grep -c 'input error' <<<"$err")" -eq 2 ] || fail "mixed files: $err"
"$exe" validate >/dev/null 2>&1; [ $? -eq 2 ] || fail "no files must exit 2"
"$exe" validate --help | grep -q "Usage: shardsweep validate" || fail "--help"
echo "validate OK"
