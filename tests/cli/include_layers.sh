# The layers of docs/ARCHITECTURE.md: no file of include/shardsweep/ or src/ includes a higher
# layer or a sibling of its own layer (scripts/check_layers.py). The checker itself is shown to
# fail on a tree with an upward and a sideways include.
set -u
src=$(cd "$2" && pwd)
scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
check=$src/scripts/check_layers.py

/usr/bin/python3 "$check" "$src" || fail "the checkout's includes break the layers (above)"

rm -rf "$scratch" && mkdir -p "$scratch/include/shardsweep/kernel" "$scratch/src/io" "$scratch/src/cli"
printf '#pragma once\n#include <Kokkos_Core.hpp>\n#include <shardsweep/model/gemm.hpp>\n#include <shardsweep/sweep/rows.hpp>\n' \
    >"$scratch/include/shardsweep/kernel/bad.hpp"
printf '#include "local.hpp"\n#include <shardsweep/parallel/mpi_comm.hpp>\n' >"$scratch/src/io/bad.cpp"
printf '#include <shardsweep/io/csv.hpp>\n#include <sweep/window_layout.hpp>\n' >"$scratch/src/cli/good.cpp"
out=$(/usr/bin/python3 "$check" "$scratch")
rc=$?
[ $rc -eq 1 ] || fail "a tree with bad includes: exit $rc ($out)"
grep -q '^include/shardsweep/kernel/bad.hpp:4: kernel includes shardsweep/sweep/rows.hpp (up' <<<"$out" ||
    fail "upward include not named: $out"
grep -q '^src/io/bad.cpp:2: io includes shardsweep/parallel/mpi_comm.hpp (sideways' <<<"$out" ||
    fail "sideways include not named: $out"
[ "$(grep -c ': .* includes ' <<<"$out")" -eq 2 ] || fail "allowed includes reported: $out"
echo "include layers OK"
