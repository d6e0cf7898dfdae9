# shardsweep predict collective on the ASTRA-sim files shipped in inputs/astra-sim/ (written from
# astra-sim 518bd51 inputs/network/): the goldens and hand-derived values, read unchanged.
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
mkdir -p "$scratch"
fail() { echo "FAIL: $*"; exit 1; }
A=$src/inputs/astra-sim
# time_ns of one collective: t NET SYS COLLECTIVE BYTES
t() {
    "$exe" predict collective --network "$A/$1" --system "$A/$2" --collective "$3" --bytes "$4" \
        --format csv | tail -n +2 | cut -d, -f3
}
check() { # what got want
    [ "$2" = "$3" ] || fail "$1: got '$2', want '$3'"
}

# §12 worked examples and upstream's regression value (Ring_8npus).
check "Ring_8npus AR 1 chunk" "$(t Ring_8npus.yml one_chunk.json all_reduce 1MiB)" 42143
check "Ring_8npus AG 1 chunk" "$(t Ring_8npus.yml one_chunk.json all_gather 1MiB)" 140297
check "Ring_8npus A2A 1 chunk" "$(t Ring_8npus.yml one_chunk.json all_to_all 1MiB)" 82638
check "Ring_8npus AR regression" "$(t Ring_8npus.yml regression_4splits.json all_reduce 1MiB)" \
    117780
# §12: HGX-H100 with one chunk 31447; hgx_h100_8gpu.json is the validated pair (+ roofline keys,
# which do not change a collective): 55222.
check "hgx 8gpu AR 1 chunk" "$(t hgx_h100_8gpu.yml one_chunk.json all_reduce 1MiB)" 31447
check "hgx 8gpu AR shipped" "$(t hgx_h100_8gpu.yml hgx_h100_8gpu.json all_reduce 1MiB)" 55222

# Hand-derived (δ 10; B = GBps·2^30/1e9 B/ns; t(m,h) = ⌊h·L + m/B⌋; R(m) = 3·⌊m/LMBW⌋):
# Ring_4chunks.json (4 splits, 1 active, LMBW 1600) on Ring_8npus, AR 1 MiB: chunk 262144,
#   m = 32768: t = ⌊500 + 610.35⌋ = 1110, R = 60: 10 + 7·(2220 + 20 + 60) = 16110; ×4 = 64440.
check "Ring_4chunks" "$(t Ring_8npus.yml Ring_4chunks.json all_reduce 1MiB)" 64440
# Ring_FullyConnected_Switch, one chunk (tstCollectives collectives_hand_derived_three_dims):
#   AR 2979 + 8249 + 25936 + 7850 + 2511 = 47525; A2A 2511 + 48450 + 53362 = 104323.
check "3-dim AR" "$(t Ring_FullyConnected_Switch.yml one_chunk.json all_reduce 1MiB)" 47525
check "3-dim A2A" "$(t Ring_FullyConnected_Switch.yml one_chunk.json all_to_all 1MiB)" 104323
# tpu_v3_8 (Ring 8, 80 GB/s, 1 µs), AR 1 MiB: m = 131072: t = ⌊1000 + 1525.88⌋ = 2525, R = 117:
#   10 + 7·(5050 + 20 + 117) = 36319.
check "tpu_v3_8" "$(t tpu_v3_8.yml one_chunk.json all_reduce 1MiB)" 36319
# tpu_v3_32_2dtorus ([Ring 4, Ring 8], 80 GB/s, 1 µs), AR 1 MiB: RS dim 0 (m 262144: t 4051,
#   R 234): 10 + 3·4295 = 12895; AR dim 1 on 262144 (m 32768: t = ⌊1000 + 381.47⌋ = 1381, R 27):
#   10 + 7·(2762 + 20 + 27) = 19673; AG dim 0 of 262144: 10 + 3·(4051 + 10) = 12193. 44761.
check "tpu_v3_32_2dtorus" "$(t tpu_v3_32_2dtorus.yml one_chunk.json all_reduce 1MiB)" 44761
# dgx_v100_4gpu (Ring 4, 3.125 GB/s, 3.39 ns), AR 1 MiB: m = 262144: t = ⌊3.39 + 78125⌋ = 78128,
#   R = 234: 10 + 3·(156256 + 20 + 234) = 469540.
check "dgx_v100_4gpu" "$(t dgx_v100_4gpu.yml one_chunk.json all_reduce 1MiB)" 469540
# hgx_h100_2gpu (Switch 2, 741.34 GB/s, 936.25 ns) with hgx_h100_1chunk.json (LMBW 50), AR 1 MiB:
#   m = 524288: t = ⌊1872.5 + 658.65⌋ = 2531, R = 3·10485 = 31455: 10 + 5062 + 20 + 31455 = 36547.
check "hgx_h100_2gpu" "$(t hgx_h100_2gpu.yml hgx_h100_1chunk.json all_reduce 1MiB)" 36547

# Every shipped network parses (with one_chunk.json) and every shipped system (on Ring_8npus.yml)
# and gives a positive time for each collective; a 16-NPU Ring and FullyConnected ring
# all-reduce are the same (1 hop each), the Switch (2 hops) is slower.
pairs=()
for n in "$A"/*.yml; do pairs+=("$n $A/one_chunk.json"); done
for s in "$A"/*.json; do pairs+=("$A/Ring_8npus.yml $s"); done
for pair in "${pairs[@]}"; do
    read -r n s <<<"$pair"
    out=$("$exe" predict collective --network "$n" --system "$s" --collective all --bytes 4MiB \
        --format csv) || fail "$(basename "$n") + $(basename "$s"): exit $?"
    [ "$(tail -n +2 <<<"$out" | awk -F, '$3 > 0' | wc -l)" -eq 4 ] ||
        fail "$(basename "$n") + $(basename "$s"): $out"
done
r=$(t Ring_16npus.yml one_chunk.json all_reduce 1MiB)
f=$(t FullyConnected_16npus.yml one_chunk.json all_reduce 1MiB)
s=$(t Switch_16npus.yml one_chunk.json all_reduce 1MiB)
[ "$r" = "$f" ] && [ "$s" -gt "$r" ] || fail "16-NPU ring/fc/switch: $r $f $s"
# Per-GPU all-to-all (--volumes; tstCollectives collectives_hand_derived_all_to_all_per_dimension):
# [Ring 4 100 GB/s 200 ns, Switch 2 25 GB/s 1 µs], one chunk, u = 64 KiB. GPU 0 sends 14u, the
# others 7u, everyone receives 7.875u: dim 0 carries 16u (15916), dim 1 10u (14227): 30143.
# The mirrored receive skew: 33807. Equal volumes v = 917504 = 7/8 · 1 MiB on every GPU give the
# balanced all_to_all of S = v · 8/7 = 1 MiB (37467).
cd "$scratch" || fail "scratch"
printf 'topology: [ Ring, Switch ]\nnpus_count: [ 4, 2 ]\nbandwidth: [ 100.0, 25.0 ]\nlatency: [ 200.0, 1000.0 ]\n' >rs.yml
{ echo "gpu,send_bytes,recv_bytes"; echo "0,917504,516096"
  for g in 1 2 3 4 5 6 7; do echo "$g,458752,516096"; done; } >send_skew.csv
{ echo "recv_bytes,send_bytes"; echo "917504,516096"
  for g in 1 2 3 4 5 6 7; do echo "458752,516096"; done; } >recv_skew.csv
{ echo "send_bytes,recv_bytes"; for g in 0 1 2 3 4 5 6 7; do echo "917504,917504"; done; } >even.csv
v() { "$exe" predict collective --network rs.yml --system "$A/one_chunk.json" --volumes "$1" \
    --format csv | tail -n +2; }
check "a2av send skew" "$(v send_skew.csv)" "all_to_allv,4128768,30143"
check "a2av recv skew" "$(v recv_skew.csv)" "all_to_allv,4128768,33807"
even=$(v even.csv | cut -d, -f3)
bal=$("$exe" predict collective --network rs.yml --system "$A/one_chunk.json" \
    --collective all_to_all --bytes 1048576 --format csv | tail -1 | cut -d, -f3)
check "a2av equal volumes = balanced all_to_all of v·P/(P-1)" "$even" "$bal"
check "balanced all_to_all on rs.yml" "$bal" 37467
head -4 send_skew.csv >short.csv
err=$("$exe" predict collective --network rs.yml --volumes short.csv 2>&1 >/dev/null)
[ $? -eq 2 ] && grep -q "short.csv:4:1: field 'rows'" <<<"$err" || fail "short volumes: $err"
sed 's/^2,458752/2,-4/' send_skew.csv >neg.csv
err=$("$exe" predict collective --network rs.yml --volumes neg.csv 2>&1 >/dev/null)
[ $? -eq 2 ] && grep -q "neg.csv:4:.*send_bytes" <<<"$err" || fail "negative volume: $err"
err=$("$exe" predict collective --network rs.yml --volumes even.csv --dims 0 2>&1 >/dev/null)
[ $? -eq 2 ] && grep -q -- "--dims" <<<"$err" || fail "--dims with --volumes: $err"
echo "shipped ASTRA-sim files OK"
