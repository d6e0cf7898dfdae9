# shardsweep predict embedding: header, values derived by hand / brute force, errors.
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$scratch"
cat >"$scratch/tables.csv" <<'CSV'
rows,dim,pooling_factor,batch,zipf_alpha,dtype,cache_rows,optimizer
1000,128,1,1000,0,fp32,,
1000,64,5,1000,1.05,,,
1000,128,1,1000,0,,250,
1000,128,1,1000,0,fp32,,adam
CSV
out=$("$exe" predict embedding --gpu A100-PCIe-40GB --input "$scratch/tables.csv" --format csv) \
    || fail "exit $?"
want="rows,dim,pooling_factor,batch,zipf_alpha,dtype,cache_rows,kernel,optimizer,expected_unique_rows,cache_hit_rate,fwd_ms,bwd_ms"
[ "$(head -1 <<<"$out")" = "$want" ] || fail "header: $(head -1 <<<"$out")"
[ "$(wc -l <<<"$out")" -eq 5 ] || fail "rows: $out"

# The model's constants, read from the header so that the hand derivation below follows them.
hdr="$src/include/shardsweep/model/embedding.hpp"
eff=$(sed -n 's/.*kEmbeddingDramEfficiency = \([0-9.e-]*\);.*/\1/p' "$hdr")
l2x=$(sed -n 's/.*kL2ToDramBandwidth = \([0-9.e-]*\);.*/\1/p' "$hdr")
[ -n "$eff" ] && [ -n "$l2x" ] || fail "constants not found in $hdr"

# A100-PCIe-40GB: 1555 GB/s, 40 MiB L2. Row 1 (uniform, 1000 rows x 128 fp32 = 512 B, N = 1000
# lookups, all distinct rows fit in L2): U = E (1 - (1 - 1/E)^N);
# fwd = max((512 U + 1000*(8 + 8 + 512)) / dram, (N - U) 512 / l2),
# bwd = max((2*512 U + 1000*512 + 4*1000*8) / dram, N 512 / l2), dram = 1555e6 eff B/ms.
# Row 4 adds Adam's 2 fp32 states per element (1024 B per row) to the read-modify-write.
# Row 2 (Zipf 1.05, N = 5000): U against the brute-force sum over the 1000 rows.
# Row 3: a 250-row LRU cache over a uniform table hits 250/1000 of the lookups; uvm_caching.
awk -F, -v eff="$eff" -v l2x="$l2x" '
function rel(a, b) { d = a - b; if (d < 0) d = -d; return d / (b > 0 ? b : 1) }
function max(a, b) { return a > b ? a : b }
NR == 1 { next }
{ u[NR] = $10; hit[NR] = $11; fwd[NR] = $12; bwd[NR] = $13; kern[NR] = $8; opt[NR] = $9 }
END {
    dram = 1555e6 * eff; l2 = dram * l2x
    U = 1000 * (1 - (1 - 1e-3) ^ 1000)
    f = max((512 * U + 528000) / dram, (1000 - U) * 512 / l2)
    b = max((1024 * U + 544000) / dram, 512000 / l2)
    if (rel(u[2], U) > 1e-12) { print "row 1 U " u[2] " want " U; bad = 1 }
    if (rel(fwd[2], f) > 1e-12) { print "row 1 fwd " fwd[2] " want " f; bad = 1 }
    if (rel(bwd[2], b) > 1e-12) { print "row 1 bwd " bwd[2] " want " b; bad = 1 }
    if (kern[2] != "fused" || opt[2] != "sgd" || hit[2] != "") { print "row 1 defaults"; bad = 1 }
    ba = max((2 * U * (512 + 1024) + 544000) / dram, 512000 / l2)
    if (rel(bwd[5], ba) > 1e-12 || opt[5] != "adam") { print "adam bwd " bwd[5] " want " ba; bad = 1 }
    if (fwd[5] != fwd[2]) { print "optimizer changed fwd"; bad = 1 }
    h = 0; for (i = 1; i <= 1000; i++) h += i ^ -1.05
    Z = 0; for (i = 1; i <= 1000; i++) Z += 1 - (1 - i ^ -1.05 / h) ^ 5000
    if (rel(u[3], Z) > 1e-9) { print "zipf U " u[3] " brute force " Z; bad = 1 }
    if (rel(hit[4], 0.25) > 1e-9 || kern[4] != "fused_uvm_caching") { print "LRU " hit[4] " " kern[4]; bad = 1 }
    if (!(fwd[4] > fwd[2])) { print "fused_uvm_caching not slower than fused"; bad = 1 }
    exit bad
}' <<<"$out" || fail "values: $out"

# --output writes the same csv; json and table formats; the GPU by alias.
"$exe" predict embedding --gpu "NVIDIA A100-PCIE-40GB" --input "$scratch/tables.csv" \
    --output "$scratch/pred.csv" || fail "--output exit $?"
[ "$out" = "$(cat "$scratch/pred.csv")" ] || fail "--output content differs"
json=$("$exe" predict embedding --gpu A100-PCIe-40GB --input "$scratch/tables.csv" --format json) \
    || fail "json"
grep -q '"expected_unique_rows"' <<<"$json" || fail "json: $json"
"$exe" predict embedding --gpu A100-PCIe-40GB --input "$scratch/tables.csv" | grep -q fwd_ms \
    || fail "table format"

# Errors: exit 2 with file:line:col and the field.
check_bad() { # name, csv text, pattern
    printf '%b' "$2" >"$scratch/$1.csv"
    err=$("$exe" predict embedding --gpu A100-PCIe-40GB --input "$scratch/$1.csv" 2>&1)
    rc=$?
    [ $rc -eq 2 ] || fail "$1: exit $rc ($err)"
    grep -q "$1.csv:$3" <<<"$err" || fail "$1: message: $err"
}
check_bad rows 'rows,dim,pooling_factor,batch,zipf_alpha\n10,8,1,4,0\nabc,8,1,4,0\n' "3:1:.*'rows'"
check_bad alpha 'rows,dim,pooling_factor,batch,zipf_alpha\n10,8,1,4,-1\n' "2:.*'zipf_alpha'"
check_bad kernel 'rows,dim,pooling_factor,batch,zipf_alpha,kernel\n10,8,1,4,0,fused_uvm_caching\n' \
    "2:.*'kernel'"
check_bad kernel_name 'rows,dim,pooling_factor,batch,zipf_alpha,kernel\n10,8,1,4,0,fused\n10,8,1,4,0,hbmx\n' \
    "3:.*'kernel'"
# The names before issue 22 (hbm, uvm, uvm_caching) still read, with one note, as the names every
# other file uses.
printf 'rows,dim,pooling_factor,batch,zipf_alpha,kernel,cache_rows\n10,8,1,4,0,hbm,\n10,8,1,4,0,uvm,\n10,8,1,4,0,uvm_caching,5\n' \
    >"$scratch/legacy.csv"
out=$("$exe" predict embedding --gpu A100-PCIe-40GB --input "$scratch/legacy.csv" -f csv 2>"$scratch/legacy.err") ||
    fail "legacy kernel names: exit $?"
[ "$(cut -d, -f8 <<<"$out" | tr '\n' ' ')" = "kernel fused fused_uvm fused_uvm_caching " ] ||
    fail "legacy kernel names: $out"
[ "$(grep -c "kernel 'hbm' is deprecated; write 'fused'" "$scratch/legacy.err")" = 1 ] ||
    fail "legacy note: $(cat "$scratch/legacy.err")"
check_bad column 'rows,dim,pooling_factor,batch,zipf_alpha,alpha\n10,8,1,4,0,1\n' ".*alpha"
"$exe" predict embedding --gpu NoSuchGpu --input "$scratch/tables.csv" >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown GPU must exit 2"
"$exe" predict embedding --help | grep -q -- "cache_rows" || fail "--help"
echo "predict embedding OK"
