# postprocess/train_operator_model.py on a small subset (seconds): it writes the model files and the
# leave-one-GPU-out folds, the C++ reader accepts them, and `predict gemm` / `predict op` with
# --model-file reproduce the script's own predictions (same features, same MLP) to 1e-9.
set -u
exe=$1
src=$(cd "$2" && pwd)
scratch=$3
py=/usr/bin/python3
fail() { echo "FAIL: $*"; exit 1; }
measured=$src/inputs/measured
$py -c "import sklearn, pandas, yaml" 2>/dev/null || fail "$py lacks sklearn/pandas/yaml"
rm -rf "$scratch"
mkdir -p "$scratch"
$py "$src/postprocess/train_operator_model.py" --subset 1500 --max-iter 15 --out-dir "$scratch/models" \
    --gemm-dir "$measured/gemm" --ops-dir "$measured/ops" --dump-predictions "$scratch/pred_" \
    >"$scratch/train.log" 2>&1 || fail "trainer exit $?: $(tail -5 "$scratch/train.log")"
for f in gemm ops logo/gemm_unseen_shapes logo/ops_unseen_shapes logo/gemm_without_T4 logo/ops_without_P4 \
    logo/gemm_without_largest logo/ops_without_largest; do
    [ -s "$scratch/models/$f.mlp" ] || fail "missing $f.mlp"
done
grep -q "^T4 .* all " "$scratch/train.log" || fail "no leave-one-GPU-out table: $(cat "$scratch/train.log")"
# The largest-shapes table decides default_for: the GPUs whose row of that table ends in "learned".
awk 'NF == 6 && ($6 == "learned" || $6 == "analytic") && $2 ~ /^[0-9]+$/ { if ($6 == "learned") w = w " " $1 }
    /^(gemm|ops): / { print substr($1, 1, length($1) - 1) " default_for" w; w = "" }' \
    "$scratch/train.log" >"$scratch/default_for.txt"
[ "$(wc -l <"$scratch/default_for.txt")" -eq 2 ] || fail "largest-shapes tables: $(cat "$scratch/train.log")"
while read -r fam want; do
    got=$(grep "^default_for" "$scratch/models/$fam.mlp" || echo "default_for")
    [ "$got" = "$want" ] || fail "$fam: the file says '$got', the largest-shapes table '$want'"
done <"$scratch/default_for.txt"

# C++ against Python, per GPU of the dump.
check() { # family, command, columns of the input
    local fam=$1 cmd=$2 cols=$3
    for gpu in $(tail -n +2 "$scratch/pred_$fam.csv" | cut -d, -f1 | sort -u); do
        awk -F, -v g="$gpu" -v c="$cols" 'NR == 1 { print c; next } $1 == g {
            if (c == "op,B,H") print $2 "," $3 "," $4; else print $3 "," $4 "," $5 "," $6 "," $2 }' \
            "$scratch/pred_$fam.csv" >"$scratch/in.csv"
        out=$("$exe" predict "$cmd" --gpu "$gpu" --input "$scratch/in.csv" --format csv \
            --model learned --model-file "$scratch/models/$fam.mlp") || fail "predict $cmd $gpu exit $?"
        want=$(awk -F, -v g="$gpu" '$1 == g { print $NF }' "$scratch/pred_$fam.csv")
        paste -d, <(cut -d, -f7 <<<"$out" | tail -n +2) <(echo "$want") >"$scratch/cmp.csv"
        [ "$cmd" = op ] && paste -d, <(cut -d, -f4 <<<"$out" | tail -n +2) <(echo "$want") >"$scratch/cmp.csv"
        awk -F, '{ d = $1 - $2; if (d < 0) d = -d; if (!(d <= 1e-9 * $2)) { print "C++ " $1 " Python " $2; bad = 1 } }
            END { exit bad }' "$scratch/cmp.csv" || fail "$fam $gpu: C++ differs from Python"
        grep -q ",learned" <<<"$out" || fail "$fam $gpu not learned: $out"
    done
}
check gemm gemm "B,M,N,K,op"
check ops op "op,B,H"

# A truncated model file is rejected naming the file and the line.
head -n 9 "$scratch/models/ops.mlp" >"$scratch/cut.mlp"
err=$("$exe" predict op --gpu T4 --input "$scratch/in.csv" --model-file "$scratch/cut.mlp" 2>&1)
[ $? -eq 2 ] || fail "truncated model exit"
grep -q "cut.mlp:.*field" <<<"$err" || fail "truncated model message: $err"
"$py" "$src/postprocess/train_operator_model.py" --help | grep -q -- "--dump-predictions" || fail "--help"
echo "train_operator_model OK"
