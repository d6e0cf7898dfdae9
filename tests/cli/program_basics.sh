# --help, --version and exit codes of the program itself; every subcommand's option errors are
# usage errors (exit 2, naming the subcommand), and -f is --format everywhere.
set -u
exe=$1
src=$(cd "$2" && pwd)
fail() { echo "FAIL: $*"; exit 1; }

out=$("$exe" --help) || fail "--help exit $?"
for sub in run plan evaluate predict validate bench; do
    grep -q "^  $sub " <<<"$out" || fail "--help does not list '$sub'"
done
"$exe" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no subcommand must exit 2"
err=$("$exe" frobnicate 2>&1); rc=$?
[ $rc -eq 2 ] || fail "unknown subcommand exit $rc"
grep -q "unknown subcommand 'frobnicate'" <<<"$err" || fail "message: $err"
ver=$("$exe" --version) || fail "--version"
grep -Eq "^shardsweep [0-9]+\.[0-9]+\.[0-9]+ \(git [0-9a-f]{7,}" <<<"$ver" || fail "version line: $ver"
grep -Eq "^Kokkos [0-9.]+, backends [a-z, ]+, default (serial|openmp|cuda) \(execution space [A-Za-z]+\)" <<<"$ver" ||
    fail "no Kokkos backends in: $ver"
grep -q "MPI" <<<"$ver" || fail "no MPI library in: $ver"
# --backend takes a backend of this build only; the message lists the build's ones.
err=$("$exe" bench kernel --backend nope 2>&1); rc=$?
[ $rc -eq 2 ] || fail "--backend nope: exit $rc"
grep -Eq "bench kernel: --backend: unknown backend 'nope'; this build has serial (and openmp|, openmp and cuda)$" <<<"$err" ||
    fail "--backend nope message: $err"
# --team-size: shapes as TxG, checked before any work; one row per shape and case.
err=$("$exe" bench kernel --team-size 2x0 2>&1); rc=$?
[ $rc -eq 2 ] || fail "--team-size 2x0: exit $rc"
grep -q "bench kernel: --team-size takes auto, T or TxG (whole numbers, T >= 0, G >= 1), found '2x0'" <<<"$err" ||
    fail "--team-size 2x0 message: $err"
err=$("$exe" bench kernel --backend serial --team-size 2 2>&1); rc=$?
[ $rc -eq 2 ] || fail "--team-size 2 on serial: exit $rc"
grep -q "bench kernel: --team-size 2 exceeds the 1 threads a team of backend serial can have" <<<"$err" ||
    fail "--team-size 2 message: $err"
out=$("$exe" bench kernel --backend serial --batch 16 --min-seconds 0.001 --team-size 0,1x3 -f csv) ||
    fail "bench kernel --team-size 0,1x3 exit $?"
[ "$(grep -c '^50-table/4-GPU,analytic,native,Serial,1,0,16,' <<<"$out")" = 1 ] &&
    [ "$(grep -c '^50-table/4-GPU,analytic,native,Serial,1,1x3,16,' <<<"$out")" = 1 ] &&
    [ "$(grep -c '^GPT-3 175B/1024-GPU' <<<"$out")" = 2 ] ||
    fail "bench kernel rows per team size: $out"
grep -q "step_scenarios [0-9.]*" <<<"$out" || fail "no stage times in: $out"
if ! grep -q "and cuda" <<<"$ver"; then
    err=$("$exe" run no.yaml -o no.h5 --backend cuda 2>&1); rc=$?
    [ $rc -eq 2 ] || fail "run --backend cuda without CUDA: exit $rc"
    grep -q "run: --backend: not compiled: 'cuda'; this build has serial and openmp" <<<"$err" ||
        fail "--backend cuda message: $err"
fi
grep -q "predict gemm" <<<"$("$exe" predict --help)" || fail "predict --help"
err=$("$exe" predict nope 2>&1); [ $? -eq 2 ] || fail "unknown predict kind must exit 2"
for sub in run plan evaluate export-et inspect-et validate "bench kernel" "bench planners" \
    "bench sweep" "predict gemm"; do
    err=$("$exe" $sub --bogus 2>&1)
    rc=$?
    [ $rc -eq 2 ] || fail "$sub --bogus: exit $rc, expected 2: $err"
    grep -q "usage error: ${sub%% *}.*unrecognised option '--bogus'" <<<"$err" ||
        fail "$sub --bogus: message: $err"
done
# bench planners --detail-task: a task outside --tasks is a usage error; the plan's terms (its
# critical-path phases) add up to plan_ms, and gap_pct is (plan - bound) / bound.
err=$("$exe" bench planners --tasks 2 --detail-task 2 2>&1); rc=$?
[ $rc -eq 2 ] || fail "--detail-task 2 of 2 tasks: exit $rc"
grep -q "usage error: --detail-task: expected a task from 0 to 1 (--tasks 2), found 2" <<<"$err" ||
    fail "--detail-task message: $err"
out=$(OMP_NUM_THREADS=1 "$exe" bench planners --tasks 1 --large-tasks 0 --budget-s 0.05 \
    --detail-task 0 -f csv) || fail "bench planners --detail-task exit $?"
awk -F, '$2 == "0" && $1 ~ /shard$/ { n++
    s = $6 + $7 + $8 + $9; g = 100 * ($4 - $3) / $3
    if (s < $4 * (1 - 1e-9) || s > $4 * (1 + 1e-9) || g - $5 > 1e-9 || $5 - g > 1e-9) bad++ }
    END { exit !(n == 3 && bad == 0) }' <<<"$out" || fail "--detail-task rows: $out"
wl=$src/inputs/workloads/mlperf-dlrm-criteo-1tb.yaml
pf=$src/inputs/platforms/dgx-a100.yaml
err=$("$exe" plan "$wl" "$pf" --top abc 2>&1)
[ $? -eq 2 ] || fail "plan --top abc must exit 2: $err"
out=$("$exe" plan "$wl" "$pf" -f csv) || fail "plan -f csv exit $?"
[ "$(head -1 <<<"$out" | cut -d, -f1-3)" = "planner,feasible,iteration_ms" ] ||
    fail "plan -f csv header: $(head -1 <<<"$out")"
echo "program basics OK"
