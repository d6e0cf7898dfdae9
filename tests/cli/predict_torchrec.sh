# shardsweep predict torchrec: golden values of TorchRec a48cef79 planner/tests/test_shard_estimators.py through the
# command line, every format, and the file:line:col errors of bad rows.
set -u
exe=$1
scratch=$3
mkdir -p "$scratch"
fail() { echo "FAIL: $*"; exit 1; }
cd "$scratch" || fail "scratch dir"

hdr="rows,dim,shard_rows,shard_dim,pooling_factor,batch_size,world_size,local_world_size,sharding_type,compute_kernel,dtype_bytes,is_pooled,is_weighted,is_inference,cache_load_factor"
cat > shards.csv <<CSV
$hdr,inter_host_GiBps,a2a_fwd_elem_bytes,a2a_bwd_elem_bytes,rs_fwd_elem_bytes,rs_bwd_elem_bytes
100,10,100,10,1,512,2,2,data_parallel,dense,4,1,0,0,,,,,,
100,10,100,10,1,512,2,2,table_wise,fused,4,1,0,0,,,,,,
100,10,50,10,1,512,2,2,row_wise,fused_uvm_caching,4,1,0,0,,,,,,
100,10,50,10,1,512,2,2,grid_shard,fused_uvm,4,1,0,0,,,,,,
100,10,100,10,1,512,2,2,table_column_wise,fused,4,1,0,0,,,1,1,2,2
256,32,256,32,1,512,2,2,table_wise,fused_uvm,4,0,0,0,,,,,,
100,16,100,16,1,512,2,2,table_wise,quant_uvm_caching,1,1,0,1,,,,,,
100,128,13,128,1,512,16,8,table_row_wise,fused,4,1,0,0,,,,,,
100,10,100,10,1,512,2,2,table_wise,fused,4,1,0,0,,40,,,,
CSV
out=$("$exe" predict torchrec --input shards.csv --format csv) || fail "csv exit $?"
[ "$(head -1 <<<"$out")" = "$hdr,inter_host_GiBps,a2a_fwd_elem_bytes,a2a_bwd_elem_bytes,rs_fwd_elem_bytes,rs_bwd_elem_bytes,fwd_compute_ms,fwd_comms_ms,bwd_compute_ms,bwd_comms_ms,prefetch_ms,total_ms" ] ||
    fail "header: $(head -1 <<<"$out")"
[ "$(wc -l <<<"$out")" -eq 10 ] || fail "row count"
# Golden totals (DP, TW fused, RW uvm-caching, GRID uvm = RW uvm, TWCW fp8, sequence TW uvm,
# quant inference TW uvm-caching) and the TWRW 2-host total 0.11656; last: TW at inter 40 GiB/s
# equals TW fused on one host (inter-host bandwidth unused).
awk -F, 'NR > 1 { print $NF }' <<<"$out" > totals.txt
python3 - totals.txt <<'PY' || fail "golden totals"
import sys
want = [5.062740117544049e-04,
        3.27460077428233e-04 + 6.357828776041667e-05 + 6.54920154856466e-04 + 6.357828776041667e-05,
        0.0029773246951219513 + 6.357828776041667e-05 + 0.0059546493902439025 + 0.004631910866838161,
        0.019073486328125 + 6.357828776041667e-05 + 0.03814697265625 + 0.029329458872477215,
        8.46718200207288e-04, 0.41346708933512366, 0.004584459754509654, 0.11655979730612458,
        3.27460077428233e-04 + 6.357828776041667e-05 + 6.54920154856466e-04 + 6.357828776041667e-05]
got = [float(x) for x in open(sys.argv[1])]
assert len(got) == len(want), got
for i, (g, w) in enumerate(zip(got, want)):
    assert abs(g - w) <= 1e-12 * w, (i, g, w)
PY
"$exe" predict torchrec --input shards.csv --format json > out.json || fail "json"
python3 -c "import json;d=json.load(open('out.json'));assert len(d)==9 and d[0]['sharding_type']=='data_parallel' and abs(d[0]['total_ms']-5.062740117544049e-04)<1e-15" ||
    fail "json content"
"$exe" predict torchrec --input shards.csv | grep -q "total_ms" || fail "table format"
"$exe" predict torchrec --input shards.csv --format csv --output res.csv || fail "--output"
[ "$(cat res.csv)" = "$out" ] || fail "--output content differs from stdout"
"$exe" predict torchrec --help | grep -q "cache_load_factor" || fail "--help"

# Bad rows: exit 2, message names file:line:col and the column.
bad() { # $1 = row, $2 = expected message fragment
    printf '%s\n%s\n' "$hdr" "$1" > bad.csv
    err=$("$exe" predict torchrec --input bad.csv 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "bad row '$1': exit $rc"
    grep -q "$2" <<<"$err" || fail "bad row '$1': message '$err' lacks '$2'"
}
bad "100,10,100,10,1,512,2,2,diagonal_wise,fused,4,1,0,0," "bad.csv:2:9: field 'sharding_type'"
bad "100,10,200,10,1,512,2,2,row_wise,fused,4,1,0,0," "bad.csv:2:3: field 'shard_rows'"
bad "100,10,100,20,1,512,2,2,column_wise,fused,4,1,0,0," "bad.csv:2:4: field 'shard_dim'"
bad "100,10,100,10,1,0,2,2,table_wise,fused,4,1,0,0," "bad.csv:2:6: field 'batch_size'"
bad "100,10,100,10,1,512,2,2,table_wise,fused_gpu,4,1,0,0," "bad.csv:2:10: field 'compute_kernel'"
bad "100,10,100,10,1,512,6,4,table_wise,fused,4,1,0,0," "bad.csv:2:8: field 'local_world_size'"
bad "100,10,100,10,1,512,2,2,table_wise,fused,4,1,0,0,1.5" "bad.csv:2:15: field 'cache_load_factor'"
printf 'rows,dim\n1,2\n' > bad.csv
"$exe" predict torchrec --input bad.csv >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing columns"
"$exe" predict torchrec >/dev/null 2>&1; [ $? -eq 2 ] || fail "missing --input"
echo "predict torchrec OK"
