# shardsweep predict op: columns, learned vs analytic, the roofline bound, the default per GPU,
# fallback on unseen GPUs and errors naming the row.
set -u
exe=$1
scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$scratch"
printf 'op,B,H\nsoftmax,8192,1024\nln,4096,4096\nadd,16384,2048\naddu,16384,2048\nmul,1,1\nmulu,100,100\ndiv,9000,600\ndivu,9000,600\npow,12000,3000\npowu,12000,3000\ngelu,8192,4096\nrelu,8192,4096\ntanh,8192,4096\n' \
    >"$scratch/ops.csv"
out=$("$exe" predict op --gpu T4 --input "$scratch/ops.csv" --format csv --model learned) || fail "exit $?"
[ "$(head -1 <<<"$out")" = "op,B,H,latency_ms,bound_ms,model" ] || fail "header: $out"
[ "$(wc -l <<<"$out")" -eq 14 ] || fail "rows: $out"
# T4 (catalog: 320 GB/s, 8.1 TFLOP/s): bound_ms = max(4 * tensors * B * H / 320e9, flops * B * H /
# 8.1e12) in ms, tensors 3 for add/mul/div/pow, else 2; flops 5 softmax, 6 ln, 8 gelu, 4 tanh,
# else 1. The learned latency is >= the bound and, for these large tensors, < 3x it.
awk -F, 'NR > 1 {
    t = ($1 == "add" || $1 == "mul" || $1 == "div" || $1 == "pow") ? 3 : 2
    f = ($1 == "softmax") ? 5 : ($1 == "ln") ? 6 : ($1 == "gelu") ? 8 : ($1 == "tanh") ? 4 : 1
    mem = 4 * t * $2 * $3 / 320e9 * 1e3; cmp = f * $2 * $3 / 8.1e12 * 1e3
    b = mem > cmp ? mem : cmp
    if ((b - $5) > 1e-9 * b || ($5 - b) > 1e-9 * b) { print "bound " $0 " want " b; bad = 1 }
    if (!($4 >= $5)) { print "below bound: " $0; bad = 1 }
    if ($2 * $3 > 1e6 && $4 > 3 * $5) { print "too slow: " $0; bad = 1 }
    if ($6 != "learned") { print "model " $6; bad = 1 }
} END { exit bad }' <<<"$out" || fail "row checks: $out"
# analytic: 0.0086411 ms + bound / 0.75080, softmax x 1.2618, ln x 1.5117 (shippedOperatorConstants)
an=$("$exe" predict op --gpu T4 --input "$scratch/ops.csv" --format csv --model analytic) || fail "analytic"
awk -F, 'NR > 1 { f = ($1 == "softmax") ? 1.2618 : ($1 == "ln") ? 1.5117 : 1
    w = 0.0086411 + $5 / 0.75080 * f; if ((w - $4) > 1e-9 * w || ($4 - w) > 1e-9 * w || $6 != "analytic") {
    print "analytic " $0; exit 1 } }' <<<"$an" || fail "analytic rows: $an"
# A GPU the model was not trained on gets the analytic model; --force-learned uses the MLP.
h=$("$exe" predict op --gpu H100 --input "$scratch/ops.csv" --format csv)
ha=$("$exe" predict op --gpu H100 --input "$scratch/ops.csv" --format csv --model analytic)
[ "$h" = "$ha" ] || fail "H100 fallback: $h"
hf=$("$exe" predict op --gpu H100 --input "$scratch/ops.csv" --format csv --force-learned)
awk -F, 'NR > 1 && ($6 != "learned" || !($4 >= $5)) { exit 1 }' <<<"$hf" || fail "force: $hf"
# The default (auto) is the out-of-distribution winner per GPU.
source "$2/tests/cli/lib/learned_default.sh"
checkLearnedDefault op "$scratch/ops.csv" ops
# json and table formats
"$exe" predict op --gpu T4 --input "$scratch/ops.csv" --format json | grep -q '"latency_ms"' || fail json
"$exe" predict op --gpu T4 --input "$scratch/ops.csv" | grep -q "^softmax" || fail table

# Errors: exit 2 naming file, row and field.
printf 'op,B,H\nadd,10,10\nconv,10,10\n' >"$scratch/badop.csv"
err=$("$exe" predict op --gpu T4 --input "$scratch/badop.csv" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "unknown op exit $rc"
grep -q "badop.csv:3:.*field 'op'.*conv" <<<"$err" || fail "unknown op message: $err"
printf 'op,B,H\nadd,10,0\n' >"$scratch/zero.csv"
err=$("$exe" predict op --gpu T4 --input "$scratch/zero.csv" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "H=0 exit $rc"
grep -q "zero.csv:2:.*'H'" <<<"$err" || fail "H=0 message: $err"
err=$("$exe" predict op --gpu NoSuchGpu --input "$scratch/ops.csv" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "unknown GPU exit $rc"
grep -q "NoSuchGpu" <<<"$err" || fail "unknown GPU message: $err"
"$exe" predict op --help | grep -q -- "--force-learned" || fail "--help"
echo "predict op OK"
