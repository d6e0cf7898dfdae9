#!/bin/bash
# Replays `shardsweep export-et` traces with ASTRA-sim's congestion-unaware analytical backend and
# prints, per case, shardsweep's iteration_ms, the traces' critical path (export-et's
# critical_path_ms) and ASTRA-sim's slowest rank (docs/model/chakra.md, "Agreement with
# ASTRA-sim"). ASTRA-sim is a development tool, not a dependency: build it yourself (see the
# doc) and point ASTRA_SIM at AstraSim_Analytical_Congestion_Unaware.
#
# usage: ASTRA_SIM=/path/to/AstraSim_Analytical_Congestion_Unaware \
#            scripts/astra_replay.sh [SHARDSWEEP] [CASES_FILE | SCENARIO.yaml ...]
# CASES_FILE lines: "workload platform global_batch parallel-fields" (inputs/workloads/W.yaml,
# inputs/platforms/P.yaml), e.g. "gpt3-125m dgx-h100 32 tp: 2, pp: 2, dp: 2, micro_batch: 2".
# Without cases: the transformer table of docs/model/chakra.md.
set -u -o pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
exe=${1:-$here/build/src/shardsweep}
shift $(( $# > 0 ? 1 : 0 ))
: "${ASTRA_SIM:?set ASTRA_SIM to the AstraSim_Analytical_Congestion_Unaware binary}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

default_cases() {
    cat <<'EOF'
gpt3-125m dgx-h100 32 tp: 2, pp: 2, dp: 2, micro_batch: 2
gpt3-125m dgx1-v100 32 tp: 2, pp: 2, dp: 2, micro_batch: 2
gpt3-125m a100-pcie-8x 32 tp: 4, pp: 1, dp: 2, micro_batch: 2
gpt3-125m h100-2node-ib 64 tp: 1, pp: 4, dp: 4, micro_batch: 4, recompute: full
gpt3-350m h100-2node-ib 64 tp: 2, pp: 2, dp: 4, micro_batch: 2
gpt3-350m h100-2node-ib 2 tp: 2, pp: 4, dp: 2, micro_batch: 1
gpt3-2.7b h100-2node-ib 16 tp: 1, pp: 16, dp: 1, micro_batch: 1
gpt3-350m h100-2node-ib 32 tp: 8, pp: 2, dp: 1, micro_batch: 4, schedule: gpipe
gpt3-350m h100-2node-ib 64 tp: 2, pp: 1, dp: 8, micro_batch: 2, zero: 3
gpt3-350m h100-2node-ib 64 tp: 4, pp: 2, dp: 2, micro_batch: 2, recompute: selective, zero: 1, sequence_parallel: true
bert-large h100-2node-ib 64 tp: 2, pp: 2, dp: 4, micro_batch: 4, zero: 3
gpt3-350m dgx-a100-4node-ib 64 tp: 4, pp: 4, dp: 2, micro_batch: 2, sequence_parallel: true, zero: 1
gpt3-6.7b dgx-a100-4node-ib 16 tp: 4, pp: 8, dp: 1, micro_batch: 1, recompute: full, schedule: gpipe
gpt3-350m h100-16node-ib 64 tp: 2, pp: 4, dp: 4, micro_batch: 2, mode: infer
gpt3-125m dgx-a100-4node-ib 64 tp: 4, pp: 2, dp: 8, micro_batch: 2
gpt3-1.3b dgx-a100-4node-ib 64 tp: 8, pp: 4, dp: 2, micro_batch: 1, recompute: full, zero: 1
gpt3-1.3b h100-16node-ib 64 tp: 8, pp: 4, dp: 4, micro_batch: 1, recompute: selective, sequence_parallel: true
EOF
}

# Scenario files to replay: given ones, or one per case line.
scenarios=()
if [ $# -gt 0 ] && [[ $1 != *.yaml ]]; then cases=$(cat "$1"); shift; else cases=""; fi
[ $# -eq 0 ] && [ -z "$cases" ] && cases=$(default_cases)
n=0
while read -r w p b rest; do
    [ -z "$w" ] && continue
    n=$((n + 1))
    f=$work/case$n.yaml
    printf 'kind: scenario\nname: "%s -- %s -- %s"\nworkload: %s\nplatform: %s\nglobal_batch: %s\nparallel: { %s }\n' \
        "$w" "$p" "$rest" "$here/inputs/workloads/$w.yaml" "$here/inputs/platforms/$p.yaml" "$b" \
        "$rest" > "$f"
    scenarios+=("$f")
done <<< "$cases"
scenarios+=("$@")

printf '%-100s %5s %14s %14s %14s %9s\n' case ranks iteration_ms et_path_ms astra_ms diff_pct
for f in "${scenarios[@]}"; do
    name=$(sed -n 's/^name: //p' "$f" | tr -d '"'); name=${name:-$f}
    out=$work/$(basename "$f" .yaml)
    row=$("$exe" export-et "$f" -o "$out" --format csv | tail -1) || { echo "$name: export-et failed"; continue; }
    IFS=, read -r _ ranks iter path <<< "$row"
    # (ASTRA-sim 518bd51 may abort on exit after every rank has finished: the log decides.)
    ( cd "$out" && ./replay.sh > astra.log 2>&1 ) 2> /dev/null
    t=$(grep -o 'sys\[[0-9]*\] finished, [0-9]* cycles' "$out/astra.log" | awk '{print $3}' | sort -n | tail -1)
    if [ -z "$t" ] || [ "$(grep -c 'finished,' "$out/astra.log")" -ne "$ranks" ]; then
        echo "$name: ASTRA-sim did not finish: $(tail -2 "$out/astra.log")"
        continue
    fi
    awk -v n="$name" -v r="$ranks" -v i="$iter" -v p="$path" -v t="$t" 'BEGIN {
        printf "%-100s %5d %14.6f %14.6f %14.6f %+8.3f%%\n", n, r, i, p, t * 1e-6, 100 * (t * 1e-6 - i) / i }'
done
