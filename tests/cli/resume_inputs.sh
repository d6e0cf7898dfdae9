# A finished or partial results file is resumed only with the inputs it was computed from: the
# configuration hash covers the text of every file the sweep's inputs were read from (platforms,
# workloads, the network/system/calibration files a platform names, models), not only the sweep
# file. Changing the platform, or the calibration file it names, between two runs of the same
# command is refused (exit 2, file untouched) instead of mixing rows of two models; the same
# inputs moved to another folder still resume.
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$scratch"
mkdir -p "$scratch/a"
cp "$src/inputs/platforms/dgx-a100-4node-ib.yaml" "$scratch/a/platform.yaml"
"$exe" calibrate gpu --gpu A100-SXM4-80GB --gemm "$src/inputs/calibration/samples/gemm_A100-PCIe-40GB.csv" \
    -o "$scratch/a/gpu.yaml" >/dev/null 2>&1 || fail "calibrate gpu"
sed -i 's|^kind: platform$|kind: platform\ncalibration: gpu.yaml|' "$scratch/a/platform.yaml"
sed -e "s#\.\./workloads/#$src/inputs/workloads/#g" \
    -e "s#\.\./platforms/dgx-a100-4node-ib.yaml#platform.yaml#" \
    "$src/inputs/sweeps/transformer_grid.yaml" >"$scratch/a/grid.yaml"
grep -q "platforms: \[platform.yaml\]" "$scratch/a/grid.yaml" || fail "sweep copy: $(cat "$scratch/a/grid.yaml")"
run() { "$exe" run "$1/grid.yaml" -o "$scratch/out.h5" --max-scenarios 16 --progress-interval 0 2>&1; }
out=$(run "$scratch/a") || fail "first run: $out"
cp "$scratch/out.h5" "$scratch/first.h5"
out=$(run "$scratch/a") || fail "rerun with the same inputs: $out"
# The same files in another folder: the same inputs.
cp -r "$scratch/a" "$scratch/b"
out=$(run "$scratch/b") || fail "moved inputs: $out"
cmp -s "$scratch/out.h5" "$scratch/first.h5" || fail "a complete file was rewritten"
# A changed platform, then a changed calibration file it names: refused, the file untouched.
sed -i 's/^hbm_reserve_GiB: 2.0$/hbm_reserve_GiB: 3.0/' "$scratch/b/platform.yaml"
out=$(run "$scratch/b"); rc=$?
[ $rc -eq 2 ] && grep -q "refusing to resume .*out.h5: it holds another sweep" <<<"$out" ||
    fail "changed platform: exit $rc: $out"
sed -i 's/^    offset: .*/    offset: 0.125/' "$scratch/a/gpu.yaml"
grep -q "^    offset: 0.125$" "$scratch/a/gpu.yaml" || fail "could not change the calibration"
out=$(run "$scratch/a"); rc=$?
[ $rc -eq 2 ] && grep -q "holds another sweep" <<<"$out" || fail "changed calibration: exit $rc: $out"
cmp -s "$scratch/out.h5" "$scratch/first.h5" || fail "a refused resume changed the file"
echo "resume with changed inputs refused OK"
