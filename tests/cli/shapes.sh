# shardsweep shapes: the GEMMs the transformer model prices for a scenario, as
# scripts/microbench/microbench.py --shapes reads them. GPT-3 175B at tp 8, micro-batch 1,
# fused attention (no attention GEMMs): T = 2048 tokens, h = 12288, per rank QKV 3h/8 = 4608,
# attention output h/8 = 1536, FC1 4h/8 = 6144; each linear layer y[T,out] = x[T,in]·W is one
# forward 'linear' GEMM (1,T,out,in), a dgrad (1,T,in,out) and a wgrad (1,in,out,T).
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$scratch"
out=$("$exe" shapes "$src/inputs/scenarios/gpt3-175b-a100.yaml" -f csv) || fail "exit $?"
[ "$(head -1 <<<"$out")" = "B,M,N,K,dtype,op" ] || fail "header: $out"
for row in 1,2048,4608,12288,bf16,linear 1,2048,12288,4608,bf16,bmm 1,12288,4608,2048,bf16,bmm \
    1,2048,12288,1536,bf16,linear 1,2048,1536,12288,bf16,bmm 1,1536,12288,2048,bf16,bmm \
    1,2048,6144,12288,bf16,linear 1,2048,12288,6144,bf16,bmm 1,12288,6144,2048,bf16,bmm \
    1,2048,12288,6144,bf16,linear 1,2048,6144,12288,bf16,bmm 1,6144,12288,2048,bf16,bmm; do
    grep -qx "$row" <<<"$out" || fail "missing $row: $out"
done
# The rest is the LM head's vocabulary GEMMs (forward, dgrad, wgrad): 15 distinct rows.
[ "$(tail -n +2 <<<"$out" | wc -l)" -eq 15 ] || fail "rows: $out"
[ "$(tail -n +2 <<<"$out" | sort -u | wc -l)" -eq 15 ] || fail "duplicates: $out"
# -o writes the same CSV, which the microbenchmark's reader accepts.
"$exe" shapes "$src/inputs/scenarios/gpt3-175b-a100.yaml" -o "$scratch/shapes.csv" || fail "-o"
[ "$(cat "$scratch/shapes.csv")" = "$out" ] || fail "-o differs"
/usr/bin/python3 -c "import sys; sys.path.insert(0, '$src/scripts/microbench'); import microbench
s = microbench.read_shapes('$scratch/shapes.csv'); assert len(s) == 15, s" || fail "microbench read_shapes"
err=$("$exe" shapes "$src/inputs/scenarios/mlperf-dgx-h100.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "DLRM exit $rc"
grep -q "is a DLRM scenario" <<<"$err" || fail "DLRM message: $err"
"$exe" shapes --help | grep -q -- "--shapes input" || fail "--help"
echo "shapes OK"
