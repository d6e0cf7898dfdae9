# export-et with issue 23's knobs: uneven stages, the distributed optimizer, the interleaved
# schedule and overlapped communication are written as traces whose replayed critical path
# matches evaluate's iteration within 0.1 % (the stage table has the uneven layers); a
# context-parallel scenario counts cp among its GPUs and is written with its ring exchange.
# (tests/cli/export_et.sh decodes interleaved, overlapped, MoE and CP traces node by node.)
set -u
exe=$1 src=$2 scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch" && mkdir -p "$scratch" && cd "$scratch" || exit 1
scenario() { # $1 = file, $2 = the plan's parallel mapping
    printf '%s\n' "kind: scenario" "workload: $src/inputs/workloads/gpt3-1.3b.yaml" \
        "platform: $src/inputs/platforms/dgx-a100.yaml" "plan:" "  kind: plan" "  parallel: $2" >"$1"
}
scenario uneven.yaml "{ tp: 2, pp: 4, dp: 1, first_stage_layers: 3, last_stage_layers: 3 }"
scenario distopt.yaml "{ tp: 2, pp: 2, dp: 2, distributed_optimizer: true, recompute: selective }"
scenario interleaved.yaml "{ tp: 2, pp: 2, dp: 2, virtual_stages: 2 }"
scenario overlap.yaml "{ tp: 2, pp: 2, dp: 2, virtual_stages: 4, sequence_parallel: true, distributed_optimizer: true, overlap: true }"
for s in uneven distopt interleaved overlap; do
    "$exe" export-et $s.yaml -o et_$s -f csv >$s.csv || fail "export-et $s exit $?"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
        { it = $c["iteration_ms"]; cp = $c["critical_path_ms"]; d = cp - it; if (d < 0) d = -d
          if ($c["ranks"] != 8 || !(d <= 1e-3 * it)) { print; exit 1 } }' $s.csv ||
        fail "$s: replay $(cat $s.csv)"
done
layers=$("$exe" evaluate uneven.yaml -f csv | awk -F, '$1 ~ /^[0-9]+$/ { printf "%s ", $2 }')
[ "$layers" = "3 9 9 3 " ] || fail "uneven stage layers: $layers"
# A context-parallel scenario counts cp among its GPUs (tp 2 x cp 2 x pp 2 = the node's 8).
scenario cp.yaml "{ tp: 2, pp: 2, dp: 1, cp: 2 }"
"$exe" evaluate cp.yaml | grep -q "context parallel x2" || fail "evaluate cp: $("$exe" evaluate cp.yaml 2>&1)"
# A context-parallel scenario is written too: its ring exchange on the cp groups, replayed to
# evaluate's iteration.
scenario cpx.yaml "{ tp: 2, pp: 2, dp: 1, cp: 2 }"
"$exe" export-et cpx.yaml -o et_cp -f csv >cpx.csv || fail "export-et cp exit $?"
awk -F, 'NR == 2 { d = $4 - $3; if (d < 0) d = -d; exit !($2 == 8 && d <= 1e-3 * $3) }' cpx.csv ||
    fail "cp: replay $(cat cpx.csv)"
# Interleaving: a micro-batch crosses the first stage once per chunk. With 2 chunks its rank 0
# sends the activations of both chunks and the gradient of chunk 1 (to the last stage's chunk
# 0, the wrap-around message; chunk 0's gradient has no receiver): 3 sends per micro-batch
# against 1 without interleaving.
sends() { "$exe" inspect-et "$1" -f csv | awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i }
    NR == 2 { print $c["send_nodes"] }'; }
[ "$(sends et_interleaved)" = "$(( 3 * $(sends et_distopt) ))" ] ||
    fail "interleaved sends: $(sends et_interleaved) vs $(sends et_distopt)"
echo OK
