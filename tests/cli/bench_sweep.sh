# `shardsweep bench sweep` on a tiny case: the CSV has the issue's columns, one row per case and
# rank count with the scenario counts asked for, the efficiency only on the multi-rank row, no
# temporary file is left behind; bad options exit 2.
# Usage: bash bench_sweep.sh <shardsweep> <source-dir> <scratch-dir>   (env: MPIEXEC)
set -u
exe=$1
scratch=$3
fail() {
    echo "FAIL: $*"
    exit 1
}
mpiexec=${MPIEXEC:-mpirun}
rm -rf "$scratch"
mkdir -p "$scratch"

OMP_NUM_THREADS=1 $mpiexec --oversubscribe -np 2 "$exe" bench sweep --format csv --scenarios 300 \
    --repeats 1 --rss-scenarios 400,200 --batch-size 64 --dir "$scratch" >"$scratch/out.csv" \
    2>"$scratch/err.txt" || fail "bench sweep exit $?: $(cat "$scratch/err.txt")"
# Column positions from the header (the CSV may gain columns).
col() { head -1 "$scratch/out.csv" | tr ',' '\n' | grep -nx "$1" | cut -d: -f1; }
for c in case ranks scenarios scenarios_per_s_per_core io_fraction parallel_efficiency \
    peak_rss_MiB written_MB_per_s disk_MB_per_s disk_share; do
    [ -n "$(col "$c")" ] || fail "no column '$c' in: $(head -1 "$scratch/out.csv")"
done
rows() { tail -n +2 "$scratch/out.csv" | awk -F, -v c="$(col case)" -v r="$(col ranks)" \
    -v n="$(col scenarios)" -v e="$(col parallel_efficiency)" -v m="$(col peak_rss_MiB)" \
    -v p="$(col scenarios_per_s_per_core)" -v w="$(col written_MB_per_s)" \
    -v d="$(col disk_MB_per_s)" '{ print $c, $r, $n, $e, ($m > 10), ($p > 0), ($w > 0 && $d > 0) }'; }
# Every run writes (journals and file), and the disk baseline is a positive speed.
expected="rss 2 200 nan 1 1 1
rss 2 400 nan 1 1 1
throughput_all 1 300 nan 1 1 1
throughput_all 2 300 EFF 1 1 1
throughput_scenarios 1 300 nan 1 1 1
throughput_scenarios 2 300 EFF 1 1 1"
# The efficiency is a measurement: only its presence (a positive number) is checked.
got=$(rows | awk '{ if ($4 != "nan" && $4 > 0) $4 = "EFF"; print }')
[ "$got" = "$expected" ] || fail "rows:
$got
expected:
$expected"
[ -z "$(ls "$scratch" | grep -v -e out.csv -e err.txt)" ] ||
    fail "temporary files left: $(ls "$scratch")"

"$exe" bench sweep --help | grep -q "parallel_efficiency" || fail "bench sweep --help"
"$exe" bench sweep --rss-scenarios 1e5,x >/dev/null 2>&1
[ $? -eq 2 ] || fail "a bad --rss-scenarios must exit 2"
"$exe" bench sweep --dir "$scratch/nowhere" >/dev/null 2>&1
[ $? -eq 2 ] || fail "a missing --dir must exit 2"
echo "bench sweep OK"
