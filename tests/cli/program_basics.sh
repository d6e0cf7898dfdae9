# --help, --version and exit codes of the program itself.
set -u
exe=$1
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
grep -q "default execution space" <<<"$ver" || fail "no Kokkos backend in: $ver"
grep -q "MPI" <<<"$ver" || fail "no MPI library in: $ver"
grep -q "predict gemm" <<<"$("$exe" predict --help)" || fail "predict --help"
err=$("$exe" predict nope 2>&1); [ $? -eq 2 ] || fail "unknown predict kind must exit 2"
echo "program basics OK"
