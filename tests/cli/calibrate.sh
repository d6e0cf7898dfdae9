# shardsweep calibrate gpu|network on the shipped samples (inputs/calibration/samples): the files
# they write, --calibration on predict gemm|op (the calibrated model reproduces its measurements
# and changes nothing it did not calibrate), and bad inputs (exit 2 naming file and line).
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$scratch"
samples=$src/inputs/calibration/samples

# --- calibrate gpu ---------------------------------------------------------------------------
out=$("$exe" calibrate gpu --gpu "NVIDIA A100-PCIE-40GB" --gemm "$samples/gemm_A100-PCIe-40GB.csv" \
    --ops "$samples/ops_A100-PCIe-40GB.csv" -o "$scratch/a100.yaml" -f csv 2>"$scratch/err") ||
    fail "calibrate gpu exit $?: $(cat "$scratch/err")"
[ "$(head -1 <<<"$out")" = "family,dtype,rows,uncalibrated_mape,fit_mape,cv_mape" ] || fail "header: $out"
grep -q "^gemm,fp32,150," <<<"$out" || fail "gemm row: $out"
grep -q "^ops,fp32,150," <<<"$out" || fail "ops row: $out"
# Cross-validated error below the uncalibrated one, on both families.
awk -F, 'NR > 1 && !($6 < $4) { exit 1 }' <<<"$out" || fail "cv not better: $out"
grep -q "^gpu: A100-PCIe-40GB$" "$scratch/a100.yaml" || fail "gpu line"
[ ! -e "$scratch/a100.yaml.tmp" ] || fail "temporary file left"

# predict gemm --calibration: every measured shape comes back as measured (its own neighbour),
# model 'calibrated'; without it the answer differs.
cut -d, -f1-6 "$samples/gemm_A100-PCIe-40GB.csv" >"$scratch/shapes.csv"
cal=$("$exe" predict gemm --gpu A100-PCIe-40GB --calibration "$scratch/a100.yaml" \
    --input "$scratch/shapes.csv" -f csv) || fail "predict gemm --calibration"
paste -d, <(tail -n +2 "$samples/gemm_A100-PCIe-40GB.csv" | cut -d, -f7) <(tail -n +2 <<<"$cal") |
    awk -F, '{ d = $8 - $1; if (d < 0) d = -d; if (d > 1e-9 * $1 || $12 != "calibrated") { print; exit 1 } }' ||
    fail "measured shapes not reproduced: $cal"
plain=$("$exe" predict gemm --gpu A100-PCIe-40GB --input "$scratch/shapes.csv" -f csv)
[ "$plain" != "$cal" ] || fail "--calibration changed nothing"
# A dtype it did not calibrate (fp16) and another GPU's rows are priced as without it.
printf 'B,M,N,K,dtype\n4,1000,1000,1000,fp32\n4,1000,1000,1000,fp16\n' >"$scratch/mixed.csv"
m=$("$exe" predict gemm --gpu A100-PCIe-40GB --calibration "$scratch/a100.yaml" --input "$scratch/mixed.csv" -f csv)
p=$("$exe" predict gemm --gpu A100-PCIe-40GB --input "$scratch/mixed.csv" -f csv)
[ "$(sed -n 3p <<<"$m")" = "$(sed -n 3p <<<"$p")" ] || fail "fp16 row changed: $m / $p"
[ "$(sed -n 2p <<<"$m" | cut -d, -f11)" = "calibrated" ] || fail "fp32 row: $m"
err=$("$exe" predict gemm --gpu T4 --calibration "$scratch/a100.yaml" --input "$scratch/mixed.csv" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "other GPU exit $rc"
grep -q "calibrates GPU 'A100-PCIe-40GB', not 'T4'" <<<"$err" || fail "other GPU message: $err"

# predict op --calibration: the same for the measured operators.
cut -d, -f1-4 "$samples/ops_A100-PCIe-40GB.csv" >"$scratch/ops.csv"
ocal=$("$exe" predict op --gpu A100-PCIe-40GB --calibration "$scratch/a100.yaml" --input "$scratch/ops.csv" -f csv) ||
    fail "predict op --calibration"
[ "$(head -1 <<<"$ocal")" = "op,B,H,dtype,latency_ms,bound_ms,model" ] || fail "op header: $ocal"
paste -d, <(tail -n +2 "$samples/ops_A100-PCIe-40GB.csv" | cut -d, -f5) <(tail -n +2 <<<"$ocal") |
    awk -F, '{ d = $6 - $1; if (d < 0) d = -d; if (d > 1e-9 * $1 || $8 != "calibrated") { print; exit 1 } }' ||
    fail "measured operators not reproduced: $ocal"

# A measurement file as another tool writes it (columns in another order, PyTorch's dtype names, a
# column of its own) calibrates as the canonical file does; its own column is named as unused. A
# column a typo away from a known one still fails.
awk -F, 'BEGIN { OFS = "," } NR == 1 { print "kernel,latency_ms,K,N,M,B,dtype,op"; next }
    { print "sgemm_" NR, $7, $4, $3, $2, $1, "torch.float32", $6 }' \
    "$samples/gemm_A100-PCIe-40GB.csv" >"$scratch/foreign.csv"
"$exe" calibrate gpu --gpu A100-PCIe-40GB --gemm "$scratch/foreign.csv" -o "$scratch/foreign.yaml" \
    >/dev/null 2>"$scratch/err" || fail "calibrate gpu on a foreign file: $(cat "$scratch/err")"
grep -q "foreign.csv: not used: the column kernel$" "$scratch/err" || fail "unused column: $(cat "$scratch/err")"
fcal=$("$exe" predict gemm --gpu A100-PCIe-40GB --calibration "$scratch/foreign.yaml" \
    --input "$scratch/shapes.csv" -f csv) || fail "predict gemm with the foreign calibration"
a100_plain=$("$exe" calibrate gpu --gpu A100-PCIe-40GB --gemm "$samples/gemm_A100-PCIe-40GB.csv" \
    -o "$scratch/a100_gemm.yaml" 2>/dev/null) || fail "calibrate gpu --gemm"
[ "$fcal" = "$("$exe" predict gemm --gpu A100-PCIe-40GB --calibration "$scratch/a100_gemm.yaml" \
    --input "$scratch/shapes.csv" -f csv)" ] || fail "the foreign file calibrates differently"
# Without a dtype column every row is fp32: the same calibration again.
cut -d, -f1-6,8 "$scratch/foreign.csv" >"$scratch/no_dtype.csv"
"$exe" calibrate gpu --gpu A100-PCIe-40GB --gemm "$scratch/no_dtype.csv" -o "$scratch/no_dtype.yaml" \
    >/dev/null 2>&1 || fail "calibrate gpu without a dtype column"
[ "$fcal" = "$("$exe" predict gemm --gpu A100-PCIe-40GB --calibration "$scratch/no_dtype.yaml" \
    --input "$scratch/shapes.csv" -f csv)" ] || fail "no dtype column calibrates differently"
sed '1s/latency_ms/latncy_ms/' "$scratch/foreign.csv" >"$scratch/typo.csv"
err=$("$exe" calibrate gpu --gpu A100-PCIe-40GB --gemm "$scratch/typo.csv" -o "$scratch/x.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "typo.csv:1:2: field 'latncy_ms'.*(did you mean 'latency_ms'?)" <<<"$err" ||
    fail "typo column: $rc $err"

# NeuSight's operator files as they are (OPName and Latency for op and latency_ms, a device, a
# quoted kernel name with commas, no dtype) calibrate as the canonical file does, and predict op
# reads them too, pricing each row as the canonical shapes.
awk -F, 'BEGIN { OFS = "," } NR == 1 { print "OPName,Latency,Device,Kernel Name,B,H"; next }
    { print $1, $5, "NVIDIA A100-PCIE-40GB", "\"void k<4, f>(int, a)\"", $2, $3 }' \
    "$samples/ops_A100-PCIe-40GB.csv" >"$scratch/neusight_ops.csv"
"$exe" calibrate gpu --gpu A100-PCIe-40GB --ops "$scratch/neusight_ops.csv" -o "$scratch/ns_ops.yaml" \
    >/dev/null 2>"$scratch/err" || fail "calibrate gpu on NeuSight's ops file: $(cat "$scratch/err")"
grep -q "neusight_ops.csv: not used: the columns Device and Kernel Name$" "$scratch/err" ||
    fail "NeuSight ops unused columns: $(cat "$scratch/err")"
"$exe" calibrate gpu --gpu A100-PCIe-40GB --ops "$samples/ops_A100-PCIe-40GB.csv" -o "$scratch/ops_only.yaml" \
    >/dev/null 2>&1 || fail "calibrate gpu --ops"
nsop=$("$exe" predict op --gpu A100-PCIe-40GB --calibration "$scratch/ns_ops.yaml" \
    --input "$scratch/neusight_ops.csv" -f csv 2>/dev/null) || fail "predict op on NeuSight's file"
# (Without a dtype column the output has none: op,B,H,latency_ms,bound_ms,model.)
[ "$(cut -d, -f1-6 <<<"$nsop")" = "$(cut -d, -f1-3,5-7 <<<"$("$exe" predict op --gpu A100-PCIe-40GB \
    --calibration "$scratch/ops_only.yaml" --input "$samples/ops_A100-PCIe-40GB.csv" -f csv)")" ] ||
    fail "NeuSight's ops file calibrates or prices differently: $nsop"

# NeuSight's convention (N the reduction): the same measurements with the N and K columns swapped
# are read as such (a note says so; the file records gemm_reduction_dim: N) and calibrate exactly
# as the original; predict gemm reads its input as the calibration's file was, so the swapped
# shapes get the original's prices row for row, their columns as given. --reduction-dim K reads
# the file as it stands; without a calibration, --reduction-dim N swaps the columns back.
awk -F, 'BEGIN { OFS = "," } NR > 1 { t = $3; $3 = $4; $4 = t } { print }' \
    "$samples/gemm_A100-PCIe-40GB.csv" >"$scratch/neusight.csv"
"$exe" calibrate gpu --gpu A100-PCIe-40GB --gemm "$scratch/neusight.csv" -o "$scratch/neusight.yaml" \
    >/dev/null 2>"$scratch/err" || fail "calibrate gpu on N-reduction file: $(cat "$scratch/err")"
grep -q "neusight.csv: read with N as the reduction dimension" "$scratch/err" || fail "N note: $(cat "$scratch/err")"
grep -q "^gemm_reduction_dim: N " "$scratch/neusight.yaml" || fail "N not recorded"
grep -q "^gemm_reduction_dim: K " "$scratch/a100_gemm.yaml" || fail "K not recorded"
cut -d, -f1-6 "$scratch/neusight.csv" >"$scratch/neusight_shapes.csv"
kcal=$("$exe" predict gemm --gpu A100-PCIe-40GB --calibration "$scratch/a100_gemm.yaml" \
    --input "$scratch/shapes.csv" -f csv)
ncal=$("$exe" predict gemm --gpu A100-PCIe-40GB --calibration "$scratch/neusight.yaml" \
    --input "$scratch/neusight_shapes.csv" -f csv 2>"$scratch/err") || fail "predict on N file"
grep -q "input read with N as the reduction dimension, as the GEMM file of .*neusight.yaml" "$scratch/err" ||
    fail "predict N note: $(cat "$scratch/err")"
[ "$(cut -d, -f1,2,5- <<<"$ncal")" = "$(cut -d, -f1,2,5- <<<"$kcal")" ] || fail "N file priced differently"
[ "$(tail -n +2 <<<"$ncal" | cut -d, -f3)" = "$(tail -n +2 <<<"$kcal" | cut -d, -f4)" ] ||
    fail "N file's columns not as given"
"$exe" calibrate gpu --gpu A100-PCIe-40GB --gemm "$scratch/neusight.csv" --reduction-dim K \
    -o "$scratch/as_is.yaml" >/dev/null 2>"$scratch/err" || fail "--reduction-dim K"
! grep -q "read with N" "$scratch/err" && grep -q "^gemm_reduction_dim: K " "$scratch/as_is.yaml" ||
    fail "--reduction-dim K not as it stands"
[ "$(cut -d, -f5- <<<"$("$exe" predict gemm --gpu A100-PCIe-40GB --reduction-dim N \
    --input "$scratch/neusight_shapes.csv" -f csv)")" = "$(cut -d, -f5- <<<"$plain")" ] ||
    fail "predict --reduction-dim N without a calibration"
err=$("$exe" calibrate gpu --gpu A100-PCIe-40GB --gemm "$scratch/neusight.csv" --reduction-dim X \
    -o "$scratch/x.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "reduction-dim: expected K, N or auto, found 'X'" <<<"$err" ||
    fail "bad --reduction-dim: $rc $err"

# predict gemm|op on a measurement file: latency_ms is taken as measured; each row ends in
# measured_ms and error_pct, and the MAPE over the rows goes to standard error. Checked against
# awk on the uncalibrated model's prices, and 0 where the calibration reproduces its rows.
out=$("$exe" predict gemm --gpu A100-PCIe-40GB --input "$samples/gemm_A100-PCIe-40GB.csv" -f csv \
    2>"$scratch/err") || fail "predict gemm on measurements: $(cat "$scratch/err")"
[ "$(head -1 <<<"$out")" = "B,M,N,K,dtype,op,latency_ms,tile,waves,bound,model,measured_ms,error_pct" ] ||
    fail "measured header: $(head -1 <<<"$out")"
expect=$(paste -d, <(tail -n +2 "$samples/gemm_A100-PCIe-40GB.csv" | cut -d, -f7) <(tail -n +2 <<<"$out") |
    awk -F, '{ e = 100 * ($8 / $1 - 1); d = e - $14; if (d < 0) d = -d; if ($13 != $1 || d > 1e-9) bad = 1
               s += (e < 0 ? -e : e) } END { if (bad) print "bad"; else printf "%.2f", s / NR }')
grep -q "^predict gemm: MAPE $expect % over 150 rows with latency_ms" "$scratch/err" ||
    fail "MAPE line: $expect vs $(cat "$scratch/err")"
"$exe" predict op --gpu A100-PCIe-40GB --calibration "$scratch/a100.yaml" \
    --input "$samples/ops_A100-PCIe-40GB.csv" -f csv 2>&1 >/dev/null |
    grep -q "^predict op: MAPE 0.00 % over 150 rows" || fail "predict op on its calibration rows"

# Operators alone (--ops without --gemm): the measured operators are reproduced, and GEMMs stay
# priced by the uncalibrated model, bit for bit.
"$exe" calibrate gpu --gpu A100-PCIe-40GB --ops "$samples/ops_A100-PCIe-40GB.csv" \
    -o "$scratch/ops_only.yaml" >/dev/null 2>&1 || fail "calibrate gpu --ops alone"
grep -q "^gemm:" "$scratch/ops_only.yaml" && fail "ops-only calibration has a gemm section"
oonly=$("$exe" predict op --gpu A100-PCIe-40GB --calibration "$scratch/ops_only.yaml" --input "$scratch/ops.csv" -f csv) ||
    fail "predict op with the ops-only calibration"
[ "$oonly" = "$ocal" ] || fail "ops-only calibration prices operators differently"
gonly=$("$exe" predict gemm --gpu A100-PCIe-40GB --calibration "$scratch/ops_only.yaml" --input "$scratch/mixed.csv" -f csv) ||
    fail "predict gemm with the ops-only calibration"
gnone=$("$exe" predict gemm --gpu A100-PCIe-40GB --input "$scratch/mixed.csv" -f csv) || fail "predict gemm"
[ "$gonly" = "$gnone" ] || fail "an ops-only calibration changed GEMM prices"
err=$("$exe" calibrate gpu --gpu A100-PCIe-40GB -o "$scratch/x.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "no measurements exit $rc"
grep -q -- "--gemm, --ops or both are required" <<<"$err" || fail "no measurements: $err"

# Bad measurement files: exit 2 naming the file and line.
printf 'B,M,N,K,dtype,latency_ms\n1,2,3,4,fp32,-1\n' >"$scratch/neg.csv"
err=$("$exe" calibrate gpu --gpu T4 --gemm "$scratch/neg.csv" -o "$scratch/x.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "negative latency exit $rc"
grep -q "neg.csv:2:6: field 'latency_ms': expected a latency > 0 (ms), found '-1'" <<<"$err" || fail "negative: $err"
printf 'B,M,N,K,latency\n' >"$scratch/cols.csv"
err=$("$exe" calibrate gpu --gpu T4 --gemm "$scratch/cols.csv" -o "$scratch/x.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "wrong columns exit $rc"
grep -q "cols.csv:1:" <<<"$err" || fail "wrong columns: $err"
: >"$scratch/empty.csv"
err=$("$exe" calibrate gpu --gpu T4 --gemm "$scratch/empty.csv" -o "$scratch/x.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "empty exit $rc"
grep -q "empty.csv: empty CSV file" <<<"$err" || fail "empty: $err"
head -6 "$samples/gemm_A100-PCIe-40GB.csv" >"$scratch/few.csv"
err=$("$exe" calibrate gpu --gpu T4 --gemm "$scratch/few.csv" -o "$scratch/x.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "few rows exit $rc"
grep -q "no dtype has 10 or more measured rows" <<<"$err" || fail "few rows: $err"
err=$("$exe" calibrate gpu --gpu NoSuchGpu --gemm "$samples/gemm_A100-PCIe-40GB.csv" -o "$scratch/x.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "unknown GPU exit $rc"
grep -q "NoSuchGpu" <<<"$err" || fail "unknown GPU: $err"
printf 'B,M,N,K,dtype,latency_ms\n1,16,16,16,bf16,0.01\n1,16,16,16,fp8,0.01\n' >"$scratch/fp8.csv"
err=$("$exe" calibrate gpu --gpu T4 --gemm "$scratch/fp8.csv" -o "$scratch/x.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "fp8 on a T4 exit $rc"
grep -q "fp8.csv:3:5: field 'dtype': expected a type the GPU computes in" <<<"$err" || fail "fp8 on a T4: $err"
[ ! -e "$scratch/x.yaml" ] || fail "a failed calibration wrote its file"

# fp8 GEMMs calibrate on a GPU with FP8 tensor cores (the H100 measurements), and the calibration
# prices them: the calibrated latency of a measured shape is its measurement.
h100=$src/inputs/measured/h100/gemm_aligned_a.csv
grep -E '^([^,]*,){4}fp8,' "$h100" | head -40 | sed '1i B,M,N,K,dtype,op,latency_ms' >"$scratch/h100_fp8.csv"
out=$("$exe" calibrate gpu --gpu H100 --gemm "$scratch/h100_fp8.csv" -o "$scratch/h100_fp8.yaml" 2>&1) ||
    fail "fp8 calibration: $out"
grep -Eq '^gemm +fp8 +40 ' <<<"$out" || fail "fp8 calibration table: $out"
cut -d, -f1-6 "$scratch/h100_fp8.csv" >"$scratch/h100_fp8_shapes.csv"
"$exe" predict gemm --gpu H100 --calibration "$scratch/h100_fp8.yaml" --input "$scratch/h100_fp8_shapes.csv" \
    --output "$scratch/h100_fp8_pred.csv" || fail "fp8 predict"
paste -d, <(cut -d, -f7 "$scratch/h100_fp8.csv") <(cut -d, -f7 "$scratch/h100_fp8_pred.csv") | tail -n +2 |
    awk -F, '{ d = $2 - $1; if (d < 0) d = -d; if (d > 1e-9 * $1) { print; exit 1 } }' ||
    fail "fp8 measurements not reproduced"

# bench calibrate --table measured: the repeat column is the second file against the first (here
# every latency times 1.1: 10 % on every row), and a second file of other shapes is refused.
awk -F, 'NR == 1 || ($5 == "bf16" && n++ < 60)' "$h100" >"$scratch/m_a.csv"
awk -F, -v CONVFMT=%.17g 'BEGIN { OFS = "," } NR > 1 { $7 = $7 * 1.1 } { print }' "$scratch/m_a.csv" >"$scratch/m_b.csv"
ops=$src/inputs/measured/h100/ops_a.csv
awk -F, 'NR == 1 || ($4 == "fp32" && n++ < 60)' "$ops" >"$scratch/o_a.csv"
awk -F, -v CONVFMT=%.17g 'BEGIN { OFS = "," } NR > 1 { $5 = $5 * 1.1 } { print }' "$scratch/o_a.csv" >"$scratch/o_b.csv"
out=$("$exe" bench calibrate --table measured --format csv --gemm-file "$scratch/m_a.csv" \
    --gemm-repeat "$scratch/m_b.csv" --ops-file "$scratch/o_a.csv" --ops-repeat "$scratch/o_b.csv" 2>&1) ||
    fail "bench calibrate --table measured: $out"
# family,dtype,calibration_shapes,tested_on,rows,...,repeat_mape: 25 shapes of 60, 3 seeds.
grep -q '^gemm,bf16,25,all others,35,' <<<"$out" || fail "measured table rows: $out"
grep -q '^ops,fp32,25,all others,35,' <<<"$out" || fail "measured ops rows: $out"
tail -n +2 <<<"$out" | awk -F, '{ d = $9 - 10; if (d < 0) d = -d; if (d > 1e-9) { print; exit 1 } }' ||
    fail "repeat_mape is not 10: $out"
sed -i '3s/^[0-9]*,/7,/' "$scratch/m_b.csv"
err=$("$exe" bench calibrate --table measured --gemm-file "$scratch/m_a.csv" --gemm-repeat "$scratch/m_b.csv" \
    --ops-file "$scratch/o_a.csv" --ops-repeat "$scratch/o_b.csv" 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "m_b.csv.*data row 2 is not the shape" <<<"$err" || fail "mismatched repeat: $rc $err"

# --- a calibration on the platform-level commands ------------------------------------------------
# The same measurements as a calibration of A100-SXM4-80GB (DGX A100's GPU): predict transformer,
# plan, evaluate and run price that GPU with its measured ceilings and bandwidth, other GPUs as
# before; a platform's calibration: key does the same as --calibration.
"$exe" calibrate gpu --gpu A100-SXM4-80GB --gemm "$samples/gemm_A100-PCIe-40GB.csv" \
    --ops "$samples/ops_A100-PCIe-40GB.csv" -o "$scratch/sxm.yaml" >/dev/null 2>&1 || fail "calibrate sxm"
sed 's|^kind: platform$|kind: platform\ncalibration: sxm.yaml|' "$src/inputs/platforms/dgx-a100.yaml" >"$scratch/dgx-cal.yaml"
"$exe" validate "$scratch/dgx-cal.yaml" >/dev/null || fail "platform with calibration: key"
{
    echo "case,platform,gpu,tp,pp,dp,global_batch,arch,hidden,heads,layers,seq_len,micro_batch"
    echo "sxm,,A100-SXM4-80GB,1,1,1,8,gpt,2048,16,24,2048,1"
    echo "v100,,V100-SXM2-32GB,1,1,1,8,gpt,2048,16,24,2048,1"
    echo "dgx,$src/inputs/platforms/dgx-a100.yaml,,8,1,1,8,gpt,2048,16,24,2048,1"
    echo "dgxkey,$scratch/dgx-cal.yaml,,8,1,1,8,gpt,2048,16,24,2048,1"
} >"$scratch/cases.csv"
iter() { /usr/bin/python3 -c 'import csv,sys; print(" ".join(r["iteration_ms"] for r in csv.DictReader(sys.stdin)))'; }
before=$("$exe" predict transformer --input "$scratch/cases.csv" -f csv | iter) || fail "predict transformer"
after=$("$exe" predict transformer --input "$scratch/cases.csv" --calibration "$scratch/sxm.yaml" -f csv | iter) ||
    fail "predict transformer --calibration"
read -r b_sxm b_v100 b_dgx b_key <<<"$before"
read -r a_sxm a_v100 a_dgx a_key <<<"$after"
[ "$b_sxm" != "$a_sxm" ] || fail "calibrated GPU unchanged: $before / $after"
[ "$b_v100" = "$a_v100" ] || fail "another GPU changed: $before / $after"
[ "$b_dgx" != "$a_dgx" ] && [ "$a_dgx" = "$b_key" ] && [ "$a_key" = "$b_key" ] ||
    fail "platform key vs --calibration: $before / $after"
err=$("$exe" plan "$src/inputs/workloads/gpt3-1.3b.yaml" "$src/inputs/platforms/dgx-a100.yaml" \
    --calibration "$scratch/a100.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "plan with another GPU's calibration: exit $rc"
grep -q "plan: --calibration .*a100.yaml calibrates GPU 'A100-PCIe-40GB', not the platform's 'A100-SXM4-80GB'" <<<"$err" ||
    fail "plan message: $err"
"$exe" plan "$src/inputs/workloads/gpt3-1.3b.yaml" "$src/inputs/platforms/dgx-a100.yaml" \
    --calibration "$scratch/sxm.yaml" -o "$scratch/plan.yaml" >/dev/null || fail "plan --calibration"
p1=$("$exe" evaluate "$scratch/plan.yaml" -f csv | tail -1)
p2=$("$exe" evaluate "$scratch/plan.yaml" -f csv --calibration "$scratch/sxm.yaml" | tail -1)
[ -n "$p1" ] && [ "$p1" != "$p2" ] || fail "evaluate --calibration: $p1 / $p2"
# export-et writes the step evaluate prices: with --calibration, the calibrated one.
e1=$("$exe" export-et "$scratch/plan.yaml" -o "$scratch/et_plain" -f csv --progress-interval 0 | tail -1 | cut -d, -f3)
e2=$("$exe" export-et "$scratch/plan.yaml" -o "$scratch/et_cal" -f csv --progress-interval 0 \
    --calibration "$scratch/sxm.yaml" | tail -1 | cut -d, -f3)
[ -n "$e1" ] && [ "$e1" != "$e2" ] && [ "$e2" = "$(grep '^critical_path,' <<<"$p2" | cut -d, -f11)" ] ||
    fail "export-et --calibration: $e1 / $e2 / $p2"
err=$("$exe" run "$src/inputs/sweeps/transformer_grid.yaml" -o "$scratch/grid.h5" \
    --calibration "$scratch/a100.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "run with an unused calibration: exit $rc"
grep -q "a100.yaml: calibrates GPU 'A100-PCIe-40GB', which no platform of the sweep uses" <<<"$err" ||
    fail "run message: $err"
[ ! -e "$scratch/grid.h5" ] || fail "run wrote output after a bad calibration"
# run --calibration changes the sweep's rows (its platform is DGX A100's GPU) and is part of the
# sweep's identity: resuming without it is refused.
rm -f "$scratch/plain.h5" "$scratch/cal.h5" # a rerun of the test starts afresh
"$exe" run "$src/inputs/sweeps/transformer_grid.yaml" -o "$scratch/plain.h5" --max-scenarios 24 \
    --progress-interval 0 >/dev/null 2>&1 || fail "run"
"$exe" run "$src/inputs/sweeps/transformer_grid.yaml" -o "$scratch/cal.h5" --max-scenarios 24 \
    --progress-interval 0 --calibration "$scratch/sxm.yaml" >/dev/null 2>&1 || fail "run --calibration"
/usr/bin/python3 - "$scratch/plain.h5" "$scratch/cal.h5" <<'PY' || fail "run --calibration rows"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["scenarios/iteration_ms"][:] for p in sys.argv[1:])
ok = np.isfinite(a) & (a > 0)
assert ok.sum() > 0 and len(a) == len(b) == 24, (a, b)
assert np.all(a[ok] != b[ok]), (a, b)  # every priced scenario moved
PY
err=$("$exe" run "$src/inputs/sweeps/transformer_grid.yaml" -o "$scratch/cal.h5" --max-scenarios 24 2>&1); rc=$?
[ $rc -eq 2 ] && grep -q "refusing to resume" <<<"$err" || fail "resume without the calibration: $rc $err"

# --- calibrate network -----------------------------------------------------------------------
out=$("$exe" calibrate network --platform "$src/inputs/platforms/dgx-a100.yaml" \
    --nccl-tests "$samples"/all_reduce_perf_{2,4,8}gpu.log -o "$scratch/net.yaml" -f csv 2>"$scratch/err") ||
    fail "calibrate network exit $?: $(cat "$scratch/err")"
[ "$(head -1 <<<"$out")" = "log,test,ranks,hosts,rows,base_mape,calibrated_mape,role" ] || fail "net header: $out"
[ "$(grep -c ',all_reduce,[248],1,11,' <<<"$out")" -eq 3 ] || fail "net rows: $out"
awk -F, 'NR > 1 && !($7 < $6 && $7 < 30) { exit 1 }' <<<"$out" || fail "net not better: $out"
"$exe" validate "$scratch/net.yaml" >/dev/null || fail "calibrated platform does not validate"
grep -q "^name: DGX-A100 (calibrated)$" "$scratch/net.yaml" || fail "platform name"
grep -q "all-reduce-implementation: \[ring\]" "$scratch/net.yaml" || fail "algorithm kept"
# Logs of three GPU counts: the call terms are fitted, written and said in the header.
grep -q "^  call-latency-ns: [0-9]" "$scratch/net.yaml" && grep -q "^  call-bw: [0-9]" "$scratch/net.yaml" &&
    grep -q "^# fitted dimension 0: .*; per call: .* ns and its bytes at .* GB/s$" "$scratch/net.yaml" ||
    fail "call terms: $(cat "$scratch/net.yaml")"
# --check scores a log without fitting it: the 8-GPU log held out of a fit on 2 and 4 GPUs, the
# fitted platform the same as without --check, and the held-out error the one the fitted platform
# has when that log is scored as a fitted one's base (a refit starting from it).
out=$("$exe" calibrate network --platform "$src/inputs/platforms/dgx-a100.yaml" \
    --nccl-tests "$samples"/all_reduce_perf_{2,4}gpu.log --check "$samples/all_reduce_perf_8gpu.log" \
    -o "$scratch/net24c.yaml" -f csv 2>/dev/null) || fail "calibrate network --check"
"$exe" calibrate network --platform "$src/inputs/platforms/dgx-a100.yaml" \
    --nccl-tests "$samples"/all_reduce_perf_{2,4}gpu.log -o "$scratch/net24.yaml" >/dev/null 2>&1 ||
    fail "calibrate network 2 and 4"
[ "$(grep -v '^#' "$scratch/net24c.yaml")" = "$(grep -v '^#' "$scratch/net24.yaml")" ] || fail "--check changed the fit"
held=$(grep ',held out$' <<<"$out" | cut -d, -f7)
again=$("$exe" calibrate network --platform "$scratch/net24.yaml" --nccl-tests "$samples/all_reduce_perf_8gpu.log" \
    -o "$scratch/x.yaml" -f csv 2>/dev/null | tail -1 | cut -d, -f6)
[ -n "$held" ] && [ "$held" = "$again" ] || fail "--check error: $held vs $again: $out"
rm -f "$scratch/x.yaml"
# bench calibrate --table nccl (docs/model/calibration.md): held-out GPU counts within 5 %, and
# the fitted platform's reduce-scatter and all-gather within 10 % of the all-reduce's bus
# bandwidth (a full pass over the comm_size each made them 0.76 and 1.34).
out=$("$exe" bench calibrate --table nccl -f csv) || fail "bench calibrate --table nccl"
[ "$(head -1 <<<"$out")" = "gpus,role,rows,base_mape,links_only_mape,calibrated_mape,rs_over_ar_busbw,ag_over_ar_busbw" ] ||
    fail "nccl table header: $out"
awk -F, 'NR > 1 && !($6 < 5 && $7 > 0.9 && $7 < 1 && $8 > 1 && $8 < 1.1) { exit 1 } END { if (NR != 8) exit 1 }' \
    <<<"$out" || fail "nccl table: $out"
# A log across two hosts on a one-dimension platform, and a log cut short.
{ sed -n 1,5p "$samples/all_reduce_perf_8gpu.log"
  for r in $(seq 0 15); do echo "#  Rank $r Group 0 Pid 1 on node$((r / 8)) device $((r % 8)) [0x0] A100"; done
  sed -n '14,$p' "$samples/all_reduce_perf_8gpu.log"; } >"$scratch/all_reduce_2node.log"
err=$("$exe" calibrate network --platform "$src/inputs/platforms/dgx-a100.yaml" \
    --nccl-tests "$scratch/all_reduce_2node.log" -o "$scratch/y.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "2-node log exit $rc"
grep -q "all_reduce_2node.log:6: expected ranks on one host: the base platform's network has one dimension" <<<"$err" ||
    fail "2-node message: $err"
head -20 "$samples/all_reduce_perf_8gpu.log" | sed '$ s/ *[0-9.]* *[0-9.]* *[0-9.]* *0 *$//' >"$scratch/all_reduce_cut.log"
err=$("$exe" calibrate network --platform "$src/inputs/platforms/dgx-a100.yaml" \
    --nccl-tests "$scratch/all_reduce_cut.log" -o "$scratch/y.yaml" 2>&1); rc=$?
[ $rc -eq 2 ] || fail "truncated exit $rc"
grep -q "all_reduce_cut.log:20: expected a row of 13 columns" <<<"$err" || fail "truncated: $err"
[ ! -e "$scratch/y.yaml" ] || fail "a failed network calibration wrote its file"
"$exe" calibrate --help | grep -q "network" || fail "calibrate --help"
"$exe" calibrate gpu --help | grep -q -- "--ops" || fail "calibrate gpu --help"
echo "calibrate OK"
