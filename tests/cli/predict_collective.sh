# shardsweep predict collective: goldens of the congestion-unaware ASTRA-sim backend (astra-sim 518bd51, run by hand) through the command line
# with unchanged ASTRA-sim files (inputs/astra-sim/), hand-derived values, formats and errors.
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
mkdir -p "$scratch"
fail() { echo "FAIL: $*"; exit 1; }
cd "$scratch" || fail "scratch dir"
astra=$src/inputs/astra-sim
pc() { "$exe" predict collective "$@"; }

# upstream examples/network/analytical/Ring_8npus.yml (astra-sim 518bd51).
printf 'topology: [ Ring ]\nnpus_count: [ 8 ]\nbandwidth: [ 50.0 ]  # GB/s\nlatency: [ 500.0 ]  # ns\n' \
    >Ring_8npus.yml
# One chunk, local-mem-bw 3350 (the §12 worked examples).
cat >one_chunk.json <<'JSON'
{
    "scheduling-policy": "LIFO",
    "endpoint-delay": 10,
    "active-chunks-per-dimension": 1,
    "preferred-dataset-splits": 1,
    "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"],
    "reduce-scatter-implementation": ["ring"],
    "all-to-all-implementation": ["ring"],
    "collective-optimization": "localBWAware",
    "local-mem-bw": 3350,
    "boost-mode": 0
}
JSON
# Upstream's regression config (tests/rt_template): 4 splits, 1 active chunk, local-mem-bw 50.
sed -e 's/"preferred-dataset-splits": 1/"preferred-dataset-splits": 4/' \
    -e 's/"local-mem-bw": 3350/"local-mem-bw": 50/' one_chunk.json >regression.json
# The documented defaults written out: must equal running without --system.
sed -e 's/"local-mem-bw": 3350/"local-mem-bw": 50/' one_chunk.json >defaults.json

# Ring_8npus, one chunk: AR 42143, AG 140297, A2A 82638 (§12), RS 21486 (hand-derived in
# tstCollectives); "all" prints the four in this order.
out=$(pc --network Ring_8npus.yml --system one_chunk.json --collective all --bytes 1MiB \
    --format csv) || fail "ring8 exit $?"
want="collective,bytes,time_ns
all_reduce,1048576,42143
all_gather,1048576,140297
reduce_scatter,1048576,21486
all_to_all,1048576,82638"
[ "$out" = "$want" ] || fail "ring8 one chunk:
$out"

# Upstream's regression reference: 117780 ns.
out=$(pc --network Ring_8npus.yml --system regression.json --collective all_reduce \
    --bytes 1048576 --format csv) || fail "regression exit $?"
[ "$out" = "$(printf 'collective,bytes,time_ns\nall_reduce,1048576,117780')" ] ||
    fail "regression: $out"

# Shipped, unchanged HGX-H100-validated pair (4 splits, 2 active): AR 1 MiB = 55222; with one
# chunk 31447 (§12).
out=$(pc --network "$astra/HGX-H100-validated.yml" --system "$astra/HGX-H100-validated.json" \
    --collective all_reduce --bytes 1MiB --format csv) || fail "hgx exit $?"
[ "$(head -1 <<<"$out")" = "collective,bytes,time_ns" ] || fail "csv header: $out"
[ "$(tail -n +2 <<<"$out")" = "all_reduce,1048576,55222" ] || fail "hgx: $out"
out=$(pc --network "$astra/HGX-H100-validated.yml" --system one_chunk.json \
    --collective all_reduce --bytes 1MiB --format csv) || fail "hgx 1 chunk exit $?"
[ "$(tail -n +2 <<<"$out")" = "all_reduce,1048576,31447" ] || fail "hgx one chunk: $out"

# Defaults without --system (ring, localBWAware, 1 split, 1 active, δ 10, local-mem-bw 50):
# AR 1 MiB on Ring_8npus = 10 + 7·(2·2941 + 20 + 3·⌊131072/50⌋) = 10 + 7·13765 = 96365, the same
# as the defaults written out in a file.
a=$(pc --network Ring_8npus.yml --collective all_reduce --bytes 1MiB --format csv) ||
    fail "defaults exit $?"
b=$(pc --network Ring_8npus.yml --system defaults.json --collective all_reduce --bytes 1MiB \
    --format csv) || fail "defaults.json exit $?"
[ "$a" = "$b" ] || fail "defaults differ: $a / $b"
[ "$(tail -n +2 <<<"$a")" = "all_reduce,1048576,96365" ] || fail "defaults: $a"

# Two dimensions, unchanged hgx_h100_16gpu.yml ([Switch 8, 400 GB/s, 936.25 ns] x
# [Ring 2, 50 GB/s, 1000 ns]) with the one-entry algorithm lists repeated, one chunk, 1 MiB:
# RS dim 0: t(131072, 2 hops) = ⌊1872.5 + 305.17578125⌋ = 2177, R = 117:
#   10 + 7·(2177 + 10 + 117) = 16138;
# AR dim 1 on 131072 B: t(65536, 1) = ⌊1000 + 1220.703125⌋ = 2220, R(65536) = 57:
#   10 + 2·2220 + 20 + 57 = 4527;
# AG dim 0 of the 131072-B shard: 10 + 7·(2177 + 10) = 15319.  Total 35984.
# --dims 0:1 (the 8 GPUs of one node) is the HGX-H100-validated case: 55222 with its system;
# --dims 1 alone: Ring 2 AR of 1 MiB = 10 + 2·⌊1000 + 9765.625⌋ + 20 + 468 = 22028.
out=$(pc --network "$astra/hgx_h100_16gpu.yml" --system one_chunk.json --collective all_reduce \
    --bytes 1MiB --format csv) || fail "16gpu exit $?"
[ "$(tail -n +2 <<<"$out")" = "all_reduce,1048576,35984" ] || fail "16gpu: $out"
out=$(pc --network "$astra/hgx_h100_16gpu.yml" --system "$astra/HGX-H100-validated.json" \
    --collective all_reduce --bytes 1MiB --dims 0:1 --format csv) || fail "dims 0:1 exit $?"
[ "$(tail -n +2 <<<"$out")" = "all_reduce,1048576,55222" ] || fail "dims 0:1: $out"
out=$(pc --network "$astra/hgx_h100_16gpu.yml" --system one_chunk.json --collective all_reduce \
    --bytes 1MiB --dims 1 --format csv) || fail "dims 1 exit $?"
[ "$(tail -n +2 <<<"$out")" = "all_reduce,1048576,22028" ] || fail "dims 1: $out"

# Several --bytes and --collective values, collective-major; unit suffixes (KiB = 1024,
# GB = 1e9); AG grows with its input shard.
out=$(pc --network Ring_8npus.yml --system one_chunk.json --collective all_gather \
    --collective reduce-scatter --bytes 4KiB --bytes 1MiB --bytes 2GB --bytes 1.5e3 \
    --format csv) || fail "multi exit $?"
[ "$(wc -l <<<"$out")" -eq 9 ] || fail "multi rows: $out"
[ "$(cut -d, -f1,2 <<<"$out" | tail -n +2 | tr '\n' ' ')" = "all_gather,4096 all_gather,1048576 \
all_gather,2000000000 all_gather,1500 reduce_scatter,4096 reduce_scatter,1048576 \
reduce_scatter,2000000000 reduce_scatter,1500 " ] || fail "multi order/units: $out"
grep -qx "all_gather,1048576,140297" <<<"$out" || fail "multi AG 1MiB: $out"
awk -F, 'NR == 2 { a = $3 } NR == 3 { b = $3 } NR == 4 { c = $3 }
    END { exit !(a < b && b < c) }' <<<"$out" || fail "AG not increasing: $out"

# Table (adds time_us) and json.
out=$(pc --network Ring_8npus.yml --system one_chunk.json --collective all_reduce --bytes 1MiB) ||
    fail "table exit $?"
head -1 <<<"$out" | grep -q "collective *bytes *time_ns *time_us" || fail "table header: $out"
grep -q "42143 *42.143" <<<"$out" || fail "table row: $out"
out=$(pc --network Ring_8npus.yml --system one_chunk.json --collective all_reduce --bytes 1MiB \
    --format json) || fail "json exit $?"
grep -q '"collective": "all_reduce", "bytes": 1048576, "time_ns": 42143' <<<"$out" ||
    fail "json: $out"
pc --help | grep -q "local-mem-bw 50" || fail "--help does not document the defaults"

# Errors: exit 2 with a message naming the problem.
expect2() {
    local what=$1 pattern=$2
    shift 2
    local err rc
    err=$(pc "$@" 2>&1 >/dev/null)
    rc=$?
    [ $rc -eq 2 ] || fail "$what: exit $rc ($err)"
    grep -q -- "$pattern" <<<"$err" || fail "$what: message '$err' lacks '$pattern'"
}
ok=(--network Ring_8npus.yml --collective all_reduce --bytes 1MiB)
expect2 "bad collective" "broadcast" --network Ring_8npus.yml --collective broadcast --bytes 1MiB
expect2 "bad bytes unit" "1MB/s" --network Ring_8npus.yml --collective all_reduce --bytes 1MB/s
expect2 "zero bytes" "--bytes" --network Ring_8npus.yml --collective all_reduce --bytes 0
expect2 "fractional bytes" "whole number" --network Ring_8npus.yml --collective all_reduce \
    --bytes 0.3KiB
expect2 "negative bytes" "--bytes" --network Ring_8npus.yml --collective all_reduce --bytes -1
expect2 "missing network file" "nope.yml" --network nope.yml --collective all_reduce --bytes 1
expect2 "missing system file" "nope.json" "${ok[@]}" --system nope.json
expect2 "no --bytes" "required" --network Ring_8npus.yml --collective all_reduce
expect2 "bad format" "format" "${ok[@]}" --format xml
expect2 "bad dims" "--dims" "${ok[@]}" --dims 1:1
expect2 "unknown option" "unrecognised\|unrecognized\|unknown" "${ok[@]}" --bogus 1
printf 'topology: [ Ring ]\nnpus_count: [ 1 ]\nbandwidth: [ 50.0 ]\nlatency: [ 500.0 ]\n' >bad.yml
expect2 "npus_count 1" "bad.yml" --network bad.yml --collective all_reduce --bytes 1
sed 's/"local-mem-bw": 3350/"local-mem-bw": -1/' one_chunk.json >bad.json
expect2 "negative local-mem-bw" "local-mem-bw" "${ok[@]}" --system bad.json
# --platform: a shardsweep platform's network: and system: sections give the numbers of the same
# keys written out as ASTRA-sim files; a platform file passed as --network gets a hint.
dgx=$src/inputs/platforms/dgx-a100.yaml
printf 'topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 300.0 ]\nlatency: [ 500.0 ]\n' >dgx.yml
cat >dgx.json <<'JSON'
{
    "endpoint-delay": 10,
    "active-chunks-per-dimension": 2,
    "preferred-dataset-splits": 4,
    "all-reduce-implementation": ["ring"],
    "all-gather-implementation": ["ring"],
    "reduce-scatter-implementation": ["ring"],
    "all-to-all-implementation": ["direct"],
    "collective-optimization": "localBWAware",
    "local-mem-bw": 2039
}
JSON
by_platform=$(pc --platform "$dgx" --collective all --bytes 1MiB --bytes 64MiB -f csv) ||
    fail "--platform exit $?"
by_files=$(pc --network dgx.yml --system dgx.json --collective all --bytes 1MiB --bytes 64MiB -f csv) ||
    fail "dgx.yml/dgx.json exit $?"
[ "$by_platform" = "$by_files" ] || fail "--platform: $by_platform, the same as files: $by_files"
[ "$(wc -l <<<"$by_platform")" = 9 ] || fail "--platform rows: $by_platform"
expect2 "platform file as --network" "pass it as --platform" --network "$dgx" \
    --collective all_reduce --bytes 1
expect2 "--platform and --network" "not both" --platform "$dgx" --network dgx.yml \
    --collective all_reduce --bytes 1
echo "predict collective OK"
