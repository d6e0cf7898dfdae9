# shardsweep predict gemm: columns, formats, bounds and errors.
set -u
exe=$1
scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$scratch"
cat >"$scratch/shapes.csv" <<'CSV'
B,M,N,K,dtype
1,8192,8192,8192,fp32
1,4096,4096,4096,
8,512,512,64,fp32
1,1,4096,4096,bf16
CSV

out=$("$exe" predict gemm --gpu A100-PCIe-40GB --input "$scratch/shapes.csv" --format csv --model analytic) || fail "exit $?"
[ "$(head -1 <<<"$out")" = "B,M,N,K,dtype,op,latency_ms,tile,waves,bound,model" ] || fail "header: $out"
[ "$(wc -l <<<"$out")" -eq 5 ] || fail "rows: $out"
# The same GPU by its NeuSight alias gives identical numbers; --output writes the same csv.
alias_out=$("$exe" predict gemm --gpu "NVIDIA A100-PCIE-40GB" --input "$scratch/shapes.csv" --format csv --model analytic)
[ "$out" = "$alias_out" ] || fail "alias differs"
"$exe" predict gemm --gpu A100-PCIe-40GB --input "$scratch/shapes.csv" --output "$scratch/pred.csv" --model analytic \
    || fail "--output exit $?"
[ "$out" = "$(cat "$scratch/pred.csv")" ] || fail "--output content differs"

# Per row (A100-PCIe-40GB catalog: 108 SMs, FP32 19.5 TFLOP/s, 1555 GB/s): latency above the
# roofline, below 3x it for 8192^3, waves between tiles/(108*8) and ceil(tiles/108), empty dtype
# reads as fp32, the 4096^3 GEMM is 8x faster than 8192^3 within wave quantisation.
awk -F, 'NR > 1 {
    b = $1; m = $2; n = $3; k = $4; lat = $7; split($8, t, "x"); w = $9
    e = ($5 == "bf16") ? 2 : 4
    roof = 2 * b * m * n * k / 19.5e12; mem = e * b * (m * k + k * n + m * n) / 1555e9
    if (mem > roof) roof = mem
    roof *= 1e3
    if (!(lat > roof)) { print "row " NR ": latency " lat " <= roofline " roof; bad = 1 }
    tiles = b * int((m + t[1] - 1) / t[1]) * int((n + t[2] - 1) / t[2])
    if (tiles >= 108 * 8 && (w < tiles / (108 * 8) || w > int((tiles + 107) / 108))) {
        print "row " NR ": waves " w " for " tiles " tiles"; bad = 1 }
    if ($10 != "compute" && $10 != "memory") { print "bound " $10; bad = 1 }
    if ($6 != "bmm") { print "default op " $6; bad = 1 }
    if (NR == 2) { big = lat; if (lat > 3 * roof) { print "8192^3 too slow: " lat; bad = 1 } }
    if (NR == 3) { if ($5 != "fp32") { print "default dtype " $5; bad = 1 }
                   r = big / lat; if (r < 6 || r > 9) { print "8192^3 / 4096^3 = " r; bad = 1 } }
} END { exit bad }' <<<"$out" || fail "row checks"

# op: linear (addmm with bias) adds c = launch_ms * (linear_launch_ratio - 1) of the shipped
# constants to every tile's time; the geometric mean over the tiles then grows by at least c (Minkowski:
# G(x + c) >= G(x) + c) and by less than 1.5 c for these shapes.
printf 'B,M,N,K,op\n1,64,64,64,bmm\n1,64,64,64,linear\n1,4096,1024,512,mm\n1,4096,1024,512,linear\n' \
    >"$scratch/ops.csv"
ops=$("$exe" predict gemm --gpu T4 --input "$scratch/ops.csv" --format csv --model analytic) || fail "ops exit $?"
# The constants: the `return { ... };` line of shippedGemmConstants() (launch_ms 1st, ratio 8th).
constants=$(awk '/constexpr GemmConstants shippedGemmConstants\(\)/ { on = 1 }
    on && /return \{/ { gsub(/[{};,]/, " "); print; exit }' "$2/include/shardsweep/model/gemm.hpp")
launch=$(awk '{ print $2 }' <<<"$constants")
ratio=$(awk '{ print $9 }' <<<"$constants")
awk -F, -v launch="$launch" -v ratio="$ratio" 'NR > 1 { lat[NR] = $7; op[NR] = $6 } END {
    want = launch * (ratio - 1); if (!(want > 0)) { print "bad constants " launch " " ratio; exit 1 }
    if (op[2] != "bmm" || op[3] != "linear" || op[4] != "bmm" || op[5] != "linear") { print "ops"; exit 1 }
    for (i = 2; i <= 4; i += 2) { d = lat[i + 1] - lat[i]
        if (d < want * (1 - 1e-9) || d > 1.5 * want) { print "linear - bmm = " d ", c = " want; exit 1 } }
}' <<<"$ops" || fail "op column: $ops"
# PyTorch's names of the same calls: matmul is a bmm, addmm a linear layer.
printf 'B,M,N,K,op\n1,64,64,64,matmul\n1,64,64,64,addmm\n' >"$scratch/torch_ops.csv"
torch_ops=$("$exe" predict gemm --gpu T4 --input "$scratch/torch_ops.csv" --format csv --model analytic) ||
    fail "torch op names"
[ "$(tail -n +2 <<<"$torch_ops" | cut -d, -f6-)" = "$(sed -n 2,3p <<<"$ops" | cut -d, -f6-)" ] ||
    fail "matmul/addmm priced differently from bmm/linear: $torch_ops"
printf 'B,M,N,K,op\n1,64,64,64,conv2d\n' >"$scratch/badop.csv"
err=$("$exe" predict gemm --gpu T4 --input "$scratch/badop.csv" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "bad op exit $rc"
grep -q "badop.csv:2:.*op" <<<"$err" || fail "bad op message: $err"

json=$("$exe" predict gemm --gpu H100 --input "$scratch/shapes.csv" --format json) || fail "json"
grep -q '"latency_ms"' <<<"$json" || fail "json: $json"

# Errors: exit 2 with file:line:col and the field.
printf 'B,M,N,K,dtype\n1,64,64,64,fp8\n' >"$scratch/bad.csv"
err=$("$exe" predict gemm --gpu A100-PCIe-40GB --input "$scratch/bad.csv" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "bad dtype exit $rc"
grep -q "bad.csv:2:.*dtype" <<<"$err" || fail "bad dtype message: $err"
printf 'B,M,N,K\n1,0,64,64\n' >"$scratch/zero.csv"
err=$("$exe" predict gemm --gpu A100-PCIe-40GB --input "$scratch/zero.csv" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "M=0 exit $rc"
grep -q "zero.csv:2:.*'M'" <<<"$err" || fail "M=0 message: $err"
"$exe" predict gemm --gpu NoSuchGpu --input "$scratch/shapes.csv" >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown GPU must exit 2"
"$exe" predict gemm --help | grep -q -- "--input" || fail "--help"

# --model learned: used on a GPU the shipped model was trained on (T4: model column "learned",
# latency differs from the analytic one but stays above the plain roofline), the analytic model on
# a GPU it was not (H100: identical to --model analytic) unless --force-learned; a bad --model or
# --model-file fails with exit 2. The default (auto) is the out-of-distribution winner per GPU.
printf 'B,M,N,K\n1,4096,4096,4096\n64,128,128,64\n' >"$scratch/two.csv"
lt=$("$exe" predict gemm --gpu T4 --input "$scratch/two.csv" --format csv --model learned) || fail "learned exit $?"
at=$("$exe" predict gemm --gpu T4 --input "$scratch/two.csv" --format csv --model analytic)
awk -F, 'NR > 1 && $11 != "learned" { exit 1 }' <<<"$lt" || fail "T4 not learned: $lt"
[ "$(cut -d, -f7 <<<"$lt")" != "$(cut -d, -f7 <<<"$at")" ] || fail "learned = analytic on T4"
awk -F, 'NR > 1 { roof = 2 * $1 * $2 * $3 * $4 / 8.1e12 * 1e3
    if (!($7 >= roof)) { print "below roofline: " $0; exit 1 } }' <<<"$lt" || fail "T4 roofline"
source "$2/tests/cli/lib/learned_default.sh"
checkLearnedDefault gemm "$scratch/two.csv" gemm --table learned
lh=$("$exe" predict gemm --gpu H100 --input "$scratch/two.csv" --format csv)
ah=$("$exe" predict gemm --gpu H100 --input "$scratch/two.csv" --format csv --model analytic)
[ "$lh" = "$ah" ] || fail "unseen GPU must fall back to analytic: $lh"
fh=$("$exe" predict gemm --gpu H100 --input "$scratch/two.csv" --format csv --force-learned)
awk -F, 'NR > 1 && $11 != "learned" { exit 1 }' <<<"$fh" || fail "--force-learned: $fh"
"$exe" predict gemm --gpu T4 --input "$scratch/two.csv" --model mlp >/dev/null 2>&1
[ $? -eq 2 ] || fail "--model mlp must exit 2"
printf 'shardsweep-mlp 1\nfamily gemm\n' >"$scratch/broken.mlp"
err=$("$exe" predict gemm --gpu T4 --input "$scratch/two.csv" --model-file "$scratch/broken.mlp" 2>&1)
[ $? -eq 2 ] || fail "broken model exit"
grep -q "broken.mlp:3:1: field 'target'" <<<"$err" || fail "broken model message: $err"
echo "predict gemm OK"
