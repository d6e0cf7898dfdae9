# --help, --version and exit codes of the program itself; every subcommand's option errors are
# usage errors (exit 2, naming the subcommand), and -f is --format everywhere.
set -u
exe=$1
src=$2
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
wl=$src/inputs/workloads/mlperf-dlrm-criteo-1tb.yaml
pf=$src/inputs/platforms/dgx-a100.yaml
err=$("$exe" plan "$wl" "$pf" --top abc 2>&1)
[ $? -eq 2 ] || fail "plan --top abc must exit 2: $err"
out=$("$exe" plan "$wl" "$pf" -f csv) || fail "plan -f csv exit $?"
[ "$(head -1 <<<"$out" | cut -d, -f1-3)" = "planner,feasible,iteration_ms" ] ||
    fail "plan -f csv header: $(head -1 <<<"$out")"
echo "program basics OK"
