# Sourced by predict_gemm.sh and predict_op.sh (not a test of its own): the shipped model's default
# is the out-of-distribution winner. For every GPU of `shardsweep bench <bench...>` (subset "all"):
# default_model is "learned" exactly when the model trained without each GPU's largest shapes beat
# the analytic model on them, and `predict <cmd>` without --model uses that model on that GPU.
# Arguments: the predict subcommand (gemm | op), its input CSV, then the bench words. Needs exe,
# scratch and fail().
checkLearnedDefault() {
    local cmd=$1 input=$2
    shift 2
    "$exe" bench "$@" --format csv >"$scratch/bench_learned.csv" || fail "bench $* exit $?"
    awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) c[$i] = i; next }
        $c["subset"] == "all" {
            want = ($c["largest_learned_mape_pct"] < $c["largest_analytic_mape_pct"]) ? "learned" : "analytic"
            if ($c["default_model"] != want) { print $1 ": default " $c["default_model"] ", OOD winner " want; bad = 1 }
            print $1 "," $c["default_model"] > "'"$scratch/defaults.csv"'"
            n++ }
        END { if (n < 5) { print "only " n " GPUs"; bad = 1 }; exit bad }' "$scratch/bench_learned.csv" ||
        fail "bench $*: default_model is not the out-of-distribution winner"
    local learned=0 analytic=0 gpu want out
    while IFS=, read -r gpu want; do
        out=$("$exe" predict "$cmd" --gpu "$gpu" --input "$input" --format csv) || fail "predict $cmd $gpu"
        awk -F, -v w="$want" 'NR > 1 && $NF != w { exit 1 }' <<<"$out" ||
            fail "predict $cmd on $gpu: want the $want model: $out"
        [ "$want" = learned ] && learned=$((learned + 1)) || analytic=$((analytic + 1))
    done <"$scratch/defaults.csv"
    echo "predict $cmd defaults: learned on $learned GPUs, analytic on $analytic"
}
