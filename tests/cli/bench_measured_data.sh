# A clone reproduces its own figures: `bench gemm`, `bench ops` and `bench transformer` read the
# measurements the shipped constants were fitted on from the repository (inputs/measured/), run
# from an unrelated directory without ../shared, and count exactly the rows those files hold
# (counted here independently with awk).
# Usage: bash bench_measured_data.sh <shardsweep> <source-dir> <scratch-dir>
set -u
exe=$(realpath "$1")
src=$(realpath "$2")
scratch=$3
fail() {
    echo "FAIL: $*"
    exit 1
}
rm -rf "$scratch"
mkdir -p "$scratch"
cd "$scratch" || fail "no scratch directory"
data=$src/inputs/measured
# Data rows of a CSV (header and # lines excluded), optionally only those whose column c is v.
rows() { awk -F, -v c="${2:-0}" -v v="${3:-}" 'NR > 1 && !/^#/ && (c == 0 || $c == v)' "$1" | wc -l; }
# The value of column `name` in the CSV row whose first two cells are $2,$3.
cell() {
    awk -F, -v n="$1" -v a="$2" -v b="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i; next }
        $1 == a && $2 == b { print $c }' "$4"
}

OMP_NUM_THREADS=1 "$exe" bench gemm --table learned --format csv >gemm.csv 2>gemm.err ||
    fail "bench gemm exit $?: $(cat gemm.err)"
bmm=$(rows "$data/gemm/train/bmm_NVIDIA_A100-PCIE-40GB.csv")
got=$(cell rows A100-PCIe-40GB bmm gemm.csv)
[ "$got" = "$bmm" ] || fail "bench gemm: A100 bmm rows $got, the file has $bmm"

OMP_NUM_THREADS=1 "$exe" bench ops --format csv >ops.csv 2>ops.err || fail "bench ops exit $?: $(cat ops.err)"
# NeuSight's ops files name the device in column 3 (Device).
softmax=$(($(rows "$data/ops/train/softmax.csv" 3 "NVIDIA A100-PCIE-40GB")))
got=$(cell rows A100-PCIe-40GB softmax ops.csv)
[ "$got" = "$softmax" ] || fail "bench ops: A100 softmax rows $got, the file has $softmax"

"$exe" bench transformer --table nccl --format csv >nccl.csv 2>nccl.err ||
    fail "bench transformer exit $?: $(cat nccl.err)"
nccl=$(rows "$data/transformer/nccl_tests_a100/all_reduce_8gpu.csv")
got=$(awk -F, '$1 == 8 { print $2 }' nccl.csv)
[ "$got" = "$nccl" ] || fail "bench transformer --table nccl: 8-GPU rows $got, the file has $nccl"
# The validated range's highest measured MFU per GPU (model/transformer/validated_range.hpp) is
# the largest measured_mfu_pct of bench transformer's rows, rounded to 0.01.
"$exe" bench transformer --table rows --format csv >rows.csv 2>rows.err ||
    fail "bench transformer --table rows exit $?: $(cat rows.err)"
maxmfu=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i == "measured_mfu_pct") c = i; next }
    { if (!($2 in m) || $c > m[$2]) m[$2] = $c } END { for (g in m) printf "%s=%.2f\n", g, m[g] }' rows.csv | sort | tr '\n' ' ')
[ "$maxmfu" = "A100-SXM4=43.44 P100=70.15 P4=40.08 T4=52.20 V100-PCIe-32GB=82.85 " ] ||
    fail "measured MFU maxima $maxmfu differ from kMeasuredTransformerRuns"
grep -q "43.44," "$src/include/shardsweep/model/transformer/validated_range.hpp" ||
    fail "validated_range.hpp no longer holds A100's 43.44 %"
# The GEMM ceiling of each NeuSight GPU (catalog max_matmul_fp32_TFLOPs) is the highest FP32 rate
# in its measured GEMMs, rounded up to 0.01 TFLOP/s (docs/model/gemm.md).
# NeuSight's files end their lines with CR LF.
awk -F, '{ sub(/\r$/, "") }
    FNR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
    { r = 2 * $c["B"] * $c["M"] * $c["N"] * $c["K"] / ($c["latency_ms"] * 1e-3) / 1e12
      if (r > m[$c["device"]]) m[$c["device"]] = r }
    END { for (d in m) printf "%s,%.2f\n", d, int(m[d] * 100 + 0.999999) / 100 }' \
    "$data"/gemm/train/*.csv | sort >"$scratch/fp32_max.csv"
[ "$(wc -l <"$scratch/fp32_max.csv")" -eq 5 ] || fail "measured GEMM maxima: $(cat "$scratch/fp32_max.csv")"
while IFS=, read -r device want; do
    got=$(grep -l -- "\"$device\"" "$src"/inputs/gpus/*.yaml | xargs grep -h "^max_matmul_fp32_TFLOPs:" |
        awk '{ printf "%.2f", $2 }')
    [ "$got" = "$want" ] || fail "$device: catalog max_matmul_fp32_TFLOPs '$got', measured maximum $want"
done <"$scratch/fp32_max.csv"
# The analytic operator model's shipped constants are the fit on all GPUs, to 5 significant digits.
"$exe" bench ops --table constants -f csv >"$scratch/ops_constants.csv" || fail "bench ops --table constants"
awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
    { v[$1] = sprintf("%.5g %.5g %.5g %.5g", $c["launch_ms"], $c["bandwidth_efficiency"],
                       $c["softmax_factor"], $c["ln_factor"]) }
    END { if (v["all GPUs"] == "" || v["all GPUs"] != v["shipped"]) {
              print "fit " v["all GPUs"] ", shipped " v["shipped"]; exit 1 } }' \
    "$scratch/ops_constants.csv" || fail "shippedOperatorConstants() is not the fit on all GPUs"
# Published H100 runs (issue 23): one row per data row, each with the file's measured TFLOP/s
# per GPU (by line), and each source's MAPE the mean of its rows' |error_pct|.
"$exe" bench transformer --table published -f csv >"$scratch/published.csv" ||
    fail "bench transformer --table published"
published=$(rows "$data/transformer/published_h100_dev.csv")
awk -F, -v want="$published" 'FNR == NR { if (FNR > 1) tflops[FNR] = $17; next }
    block == 0 && /^$/ { block = 1; next }
    block == 1 && /^$/ { block = 2; next }
    block == 0 && !head0 { for (i = 1; i <= NF; ++i) c[$i] = i; head0 = 1; next }
    block == 0 { ++n; e = $c["error_pct"]; sum[$1] += e < 0 ? -e : e; cnt[$1]++
                 if ($c["measured_tflops_per_gpu"] + 0 != tflops[$c["line"]] + 0) {
                     print "line " $c["line"] ": " $c["measured_tflops_per_gpu"] " vs " tflops[$c["line"]]; bad = 1 } }
    block == 1 && !head1 { for (i = 1; i <= NF; ++i) d[$i] = i; head1 = 1; next }
    block == 1 { m = sum[$1] / cnt[$1]; if ($d["rows"] != cnt[$1] || $d["mape_pct"] < m * (1 - 1e-9) || $d["mape_pct"] > m * (1 + 1e-9)) {
                     print $1 ": " $0 " vs " m; bad = 1 } ++sets }
    END { if (n != want || sets != 2) { print n " rows (want " want "), " sets " sets"; bad = 1 } exit bad }' \
    "$data/transformer/published_h100_dev.csv" "$scratch/published.csv" || fail "bench transformer --table published"
# The validated range's deepest pipeline and optimistic regime per class (validated_range.hpp:
# max_pp, then the regime's least dp, runs and range of |error_pct|), recounted: vTrain's runs
# from --table rows (case "h L tT pP dD ..."), the H100 ones from --table published with tp, pp and
# dp read from the data file by line. The regime is tp below 8 (one node) with dp >= 16, where
# every run must have been predicted short; NeMo's FP8 runs there go both ways, so none.
maxpp() { awk -F, 'FNR == 1 { for (i = 1; i <= NF; ++i) if ($i == "pp") c = i; next }
    $c + 0 > m { m = $c + 0 } END { print m }' "$@"; }
a100=$(awk -F, -v pp="$(maxpp "$data"/transformer/vtrain_*_dev.csv)" '
    $1 == "vtrain_multi" { split($4, f, " "); t = substr(f[3], 2) + 0; d = substr(f[5], 2) + 0
        if (t < 8 && d >= 16) { e = -$7; ++n; short += e > 0
            if (n == 1 || e < lo) lo = e; if (n == 1 || e > hi) hi = e } }
    END { if (short == n) printf "%d, 16, %d, %.1f, %.1f", pp, n, lo, hi; else print "mixed" }' rows.csv)
h100=$(awk -F, 'FNR == NR { if (FNR > 1) { tp[FNR] = $12; pp[FNR] = $13; dp[FNR] = $14 } next }
    /^$/ { exit }
    FNR > 1 { s = $1; l = $2; if (pp[l] > m[s]) m[s] = pp[l]
        if (tp[l] < 8 && dp[l] >= 16) { e = -$8; ++n[s]; short[s] += e > 0
            if (n[s] == 1 || e < lo[s]) lo[s] = e; if (n[s] == 1 || e > hi[s]) hi[s] = e } }
    END { for (s in m) printf "%s=%s ", s, short[s] == n[s] ? sprintf("%d, 16, %d, %.1f, %.1f", m[s], n[s], lo[s], hi[s]) : sprintf("%d, 0, 0, 0.0, 0.0", m[s]) }' \
    "$data/transformer/published_h100_dev.csv" "$scratch/published.csv")
for want in "$a100" "${h100#*megatron2024=}" "${h100#*nemo2407=}"; do
    want=${want%% [a-z]*}
    want=${want% }
    tr -d ' \n' <"$src/include/shardsweep/model/transformer/validated_range.hpp" | grep -q "\",${want// /}}," ||
        fail "validated_range.hpp lacks the measured pipeline depth and regime '$want' ($a100; $h100)"
done
echo "bench gemm, ops and transformer read the repository's measurements: A100 bmm $bmm rows," \
    "A100 softmax $softmax, 8-GPU all-reduce $nccl"
