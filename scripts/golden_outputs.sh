#!/usr/bin/env bash
# Every output of shardsweep on the shipped inputs, in one folder, so that a refactoring can show
# that nothing changed: run it with the old and the new binary, then
#   scripts/golden_outputs.sh compare OLD_DIR NEW_DIR
# (diff -r of the text outputs, h5diff of the results files). Used for issue 22's "bit-identical
# before and after".
#
#   scripts/golden_outputs.sh write BUILD/src/shardsweep OUT_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)

write() {
  local exe out
  exe=$(realpath "$1")
  out=$2
  rm -rf "$out"
  mkdir -p "$out"
  out=$(realpath "$out")
  cd "$here/inputs"
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}

  # Sweeps: the quickstart (DLRM), a transformer grid and a --detail all run.
  "$exe" run quickstart.yaml -o "$out/quickstart.h5" --progress-interval 0 >/dev/null
  "$exe" run sweeps/transformer_grid.yaml -o "$out/transformer.h5" --progress-interval 0 >/dev/null
  "$exe" run sweeps/grid_example.yaml -o "$out/detail.h5" --detail all --progress-interval 0 \
    >/dev/null

  # plan: every DLRM workload on one platform, every transformer workload on 64 GPUs.
  local w name
  for w in workloads/synthetic-400.yaml workloads/mlperf-dlrm-criteo-1tb.yaml; do
    name=$(basename "$w" .yaml)
    "$exe" plan "$w" platforms/dgx-a100.yaml >"$out/plan.$name.txt"
    "$exe" plan "$w" platforms/dgx-a100.yaml -f json >"$out/plan.$name.json"
    "$exe" plan "$w" platforms/dgx-a100.yaml -o "$out/plan.$name.yaml" >/dev/null
  done
  for w in workloads/gpt3-1.3b.yaml workloads/bert-large.yaml workloads/gpt3-13b.yaml; do
    name=$(basename "$w" .yaml)
    "$exe" plan "$w" platforms/dgx-a100-4node-ib.yaml --gpus 32 --global-batch 256 \
      >"$out/plan.$name.txt"
    "$exe" plan "$w" platforms/dgx-a100-4node-ib.yaml --gpus 32 --global-batch 256 -f json \
      >"$out/plan.$name.json"
  done

  # evaluate and export-et: every shipped scenario.
  local s
  for s in scenarios/*.yaml; do
    name=$(basename "$s" .yaml)
    "$exe" evaluate "$s" >"$out/evaluate.$name.txt" 2>&1 || echo "exit $?" >>"$out/evaluate.$name.txt"
    "$exe" evaluate "$s" -f csv >"$out/evaluate.$name.csv" 2>&1 || true
    "$exe" export-et "$s" -o "$out/et.$name" >"$out/export-et.$name.txt" 2>&1 || true
  done

  # predict: one CSV per subcommand.
  local tmp
  tmp=$(mktemp -d)
  printf 'B,M,N,K,dtype,op\n1,4096,4096,4096,fp16,\n8,512,1024,64,fp32,bmm\n1,2048,8192,2048,bf16,linear\n' \
    >"$tmp/gemm.csv"
  printf 'op,B,H\nsoftmax,4096,1024\nln,8192,4096\ngelu,1024,16384\nadd,512,512\n' >"$tmp/op.csv"
  printf 'rows,dim,pooling_factor,batch,zipf_alpha,dtype,cache_rows,kernel,optimizer\n1000000,128,20,65536,1.05,fp32,,,\n50000000,64,5,32768,0.8,fp16,1000000,uvm_caching,rowwise_adagrad\n' \
    >"$tmp/emb.csv"
  printf 'rows,dim,shard_rows,shard_dim,pooling_factor,batch_size,world_size,local_world_size,sharding_type,compute_kernel,dtype_bytes,is_pooled,is_weighted,is_inference,cache_load_factor\n1000000,128,1000000,128,20,512,8,8,table_wise,fused,4,1,0,0,\n1000000,128,125000,128,20,512,16,8,row_wise,fused_uvm_caching,4,1,0,0,0.2\n' \
    >"$tmp/torchrec.csv"
  printf 'case,platform,gpus,hidden,heads,layers,seq_len,tp,pp,micro_batch,global_batch,recompute,zero,fused,sequence_parallel\ng175,%s,1024,12288,96,96,2048,8,16,1,1536,full,1,,\nsmall,%s,8,2048,16,24,2048,2,2,4,64,selective,0,1,1\n' \
    "$here/inputs/platforms/dgx-a100-4node-ib.yaml" "$here/inputs/platforms/dgx-a100.yaml" \
    >"$tmp/transformer.csv"
  local g m
  for g in A100-SXM4-40GB V100-SXM2-32GB H100-SXM-80GB; do
    for m in learned analytic; do
      "$exe" predict gemm --gpu "$g" --model "$m" --input "$tmp/gemm.csv" >"$out/gemm.$g.$m.txt"
      "$exe" predict op --gpu "$g" --model "$m" --input "$tmp/op.csv" >"$out/op.$g.$m.txt"
    done
    "$exe" predict embedding --gpu "$g" --input "$tmp/emb.csv" >"$out/emb.$g.txt"
  done
  "$exe" predict torchrec --input "$tmp/torchrec.csv" -f csv >"$out/torchrec.csv"
  "$exe" predict transformer --input "$tmp/transformer.csv" -f csv >"$out/transformer.csv"
  "$exe" predict collective --platform platforms/dgx-a100-4node-ib.yaml \
    --collective all_reduce --collective all_to_all --bytes 1048576 --bytes 1073741824 -f csv \
    >"$out/collective.csv"
  rm -rf "$tmp"
  # The output folder's own path is printed by export-et: take it out of the comparison.
  grep -rl --include='*.txt' "$out" "$out" | xargs -r sed -i "s|$out|OUT|g"
}

# Text with what may differ between two identical runs taken out: wall-clock figures (plan's
# timings), the output folder's path and the git hash.
normalised() {
  case $1 in
    *.h5)
      h5dump -m %.17g "$1" | awk '
        /ATTRIBUTE "(git_hash|shardsweep_version|command_line)"/ { match($0, /^ */); end = substr($0, 1, RLENGTH) "}"; skip = 1 }
        skip && $0 == end { skip = 0; next }
        !skip' | sed "s|$2|DIR|g"
      ;;
    */plan.*.json) sed -E 's/"plan_seconds": [^,}]*/"plan_seconds": T/' "$1" ;;
    */plan.*.txt)
      sed -E 's/planned in [0-9.e+-]+ s/planned in T s/' "$1" |
        awk '$1 ~ /^(round_robin|random|dim_greedy|size_greedy|lookup_greedy|size_lookup_greedy|torchrec|shardsweep|megatron|exhaustive)$/ { $NF = "T" } { print }' |
        tr -s ' '
      ;;
    *.txt) tr -s ' ' <"$1" ;;
    *) cat "$1" ;;
  esac
}

compare() {
  local old=$1 new=$2 bad=0 f rel n=0
  while IFS= read -r f; do
    rel=${f#"$old"/}
    n=$((n + 1))
    if [ ! -f "$new/$rel" ]; then
      echo "missing in $new: $rel"
      bad=1
    elif ! cmp -s <(normalised "$f" "$old") <(normalised "$new/$rel" "$new"); then
      echo "differs: $rel"
      bad=1
    fi
  done < <(find "$old" -type f | sort)
  [ "$(find "$new" -type f | wc -l)" = "$n" ] || { echo "file counts differ"; bad=1; }
  [ "$bad" = 0 ] && echo "identical: $n files"
  return "$bad"
}

case ${1:-} in
  write) write "$2" "$3" ;;
  compare) compare "$2" "$3" ;;
  *)
    echo "usage: $0 write SHARDSWEEP OUT_DIR | compare OLD_DIR NEW_DIR" >&2
    exit 2
    ;;
esac
