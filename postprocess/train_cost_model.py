#!/usr/bin/python3
"""Trains a learned embedding cost model on the /shards training rows of shardsweep results.

    /usr/bin/python3 postprocess/train_cost_model.py OUT.h5 [MORE.h5 ...] [-o model.joblib]
                     [--model gbt|mlp] [--test-share 0.2] [--seed 0] [--csv errors.csv]

The model follows NeuroShard's compute-cost model (Zha et al., NeuroShard, MLSys'23): a per-table model
maps a table's features to a cost and the costs of the tables a GPU holds are sum-pooled into the
GPU's embedding cost. Here the per-table model regresses each shard's predicted cost
(fwd_ms + bwd_ms, the kernel's lookup + backward + optimizer time), and a GPU's embedding time is
the sum over its shards, which is exactly how the kernel composes it (/gpus embedding_fwd_ms +
embedding_bwd_ms), so per-GPU errors measure the pooled model.

Features of a shard (one row of /shards joined with its /tables row and its scenario):
  NeuroShard's 20 table features: bin_0..bin_16, dim, pooling_factor, rows;
  the placement decision: num_rows, num_cols, sharding_type, compute_kernel, cache_fraction;
  the table's encoding: dtype, distribution, zipf_alpha;
  the context the shard is priced in: global_batch, gpu_count, platform (code).
The target is log(fwd_ms + bwd_ms): shard costs span orders of magnitude and the error that
matters is relative.

--features neuroshard keeps only NeuroShard's 20 table features: the baseline that shows what the
placement and context features add (docs/model/learned_cost_model.md).

Models (--model):
  gbt  (default) sklearn HistGradientBoostingRegressor: tabular features of mixed scale and a
       few categorical codes need no scaling, it trains in seconds on two cores, and it is
       deterministic for a given --seed;
  mlp  sklearn MLPRegressor with NeuroShard's table-MLP widths (128, 32), z-scored features
       (NeuroShard z-scores with the training set's mean and std); slower, usually less exact
       on this data.

Two held-out evaluations, each trained on its own training split:
  held-out tasks   --test-share of the tasks (a task = workload x platform x GPU count x batch x
                   cost model x generated task, all its planners together) never seen in training;
                   errors per shard and per GPU (sum-pooled);
  unseen tables    --test-share of the distinct tables (identified by their features) removed from
                   training entirely, as in NeuroShard's split of the 856 tables into train and
                   test pools; errors on the shards of those tables.
Errors: MAPE (mean absolute percentage error), median and p90 APE, R^2 of log cost. The final
model is trained on all rows and saved with joblib together with its feature list and errors.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import List

import joblib
import numpy as np
import pandas as pd
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import GroupShuffleSplit
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shardsweep_results import load  # noqa: E402
from summarize import TASK_KEY  # noqa: E402

BINS = [f"bin_{j}" for j in range(17)]
NEUROSHARD = BINS + ["dim", "pooling_factor", "rows"]
FEATURES = NEUROSHARD + ["num_rows", "num_cols", "sharding_type", "compute_kernel", "cache_fraction",
                         "dtype", "distribution", "zipf_alpha", "global_batch", "gpu_count", "platform"]
CATEGORICAL = ["sharding_type", "compute_kernel", "dtype", "distribution", "platform"]
TABLE_ID = NEUROSHARD + ["distribution", "zipf_alpha", "dtype"]


def training_rows(r, cost_model: str = "all") -> pd.DataFrame:
    """One row per shard with its features, target and the keys of its task, GPU and table
    (only scenarios priced with `cost_model` unless "all")."""
    if r.shards.empty:
        raise ValueError("the file has no /shards rows (run with --detail all)")
    scen = r.scenarios[r.scenarios["status"] == 0]
    if cost_model != "all":
        scen = scen[scen["cost_model_name"] == cost_model]
        if scen.empty:
            raise ValueError(f"no scenario of the file was priced with cost model {cost_model}")
    context = scen[["global_batch", "gpu_count", "platform"] + [k for k in TASK_KEY if k not in
                                                                  ("global_batch", "gpu_count", "platform")]]
    df = r.shards.join(context, on="scenario_id", how="inner")
    df["cost_ms"] = df["fwd_ms"] + df["bwd_ms"]
    df = df[np.isfinite(df["cost_ms"]) & (df["cost_ms"] > 0)].reset_index(drop=True)
    df["task"] = df.groupby(TASK_KEY, dropna=False).ngroup()
    df["table_id"] = df.groupby(TABLE_ID, dropna=False).ngroup()
    return df


MLP_MAX_ITER = 300
MLP_HIDDEN = (128, 32)  # NeuroShard's table-MLP widths


def make_model(kind: str, seed: int):
    if kind == "gbt":
        mask = [f in CATEGORICAL for f in FEATURES]
        if not any(mask):
            mask = None
        return HistGradientBoostingRegressor(max_iter=200, learning_rate=0.1, max_leaf_nodes=31,
                                             categorical_features=mask, random_state=seed)
    return make_pipeline(StandardScaler(),
                         MLPRegressor(hidden_layer_sizes=MLP_HIDDEN, max_iter=MLP_MAX_ITER, early_stopping=True,
                                      random_state=seed))


def matrix(df: pd.DataFrame) -> np.ndarray:
    x = df[FEATURES].to_numpy(dtype=np.float64)
    return x


def fit(kind: str, seed: int, df: pd.DataFrame):
    model = make_model(kind, seed)
    model.fit(matrix(df), np.log(df["cost_ms"].to_numpy()))
    return model


def errors(pred: np.ndarray, true: np.ndarray) -> dict:
    ape = 100.0 * np.abs(pred - true) / true
    lt, lp = np.log(true), np.log(pred)
    r2 = 1.0 - np.sum((lp - lt) ** 2) / np.sum((lt - lt.mean()) ** 2) if len(lt) > 1 else float("nan")
    return {"rows": len(true), "mape_pct": float(ape.mean()), "median_ape_pct": float(np.median(ape)),
            "p90_ape_pct": float(np.percentile(ape, 90)), "r2_log": float(r2)}


def per_gpu(df: pd.DataFrame, pred: np.ndarray):
    """Sum-pools shard costs per (scenario, GPU): (predicted, true) per GPU."""
    g = df.assign(pred=pred).groupby(["scenario_id", "gpu"])[["pred", "cost_ms"]].sum()
    return g["pred"].to_numpy(), g["cost_ms"].to_numpy()


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="train_cost_model.py", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="results files (HDF5, --detail all) of one sweep")
    parser.add_argument("-o", "--output", default="cost_model.joblib", help="saved model (joblib)")
    parser.add_argument("--model", choices=["gbt", "mlp"], default="gbt", help="regressor (default gbt)")
    parser.add_argument("--test-share", type=float, default=0.2, help="held-out share of tasks / tables")
    parser.add_argument("--seed", type=int, default=0, help="seed of the splits and the model")
    parser.add_argument("--features", choices=["full", "neuroshard"], default="full",
                        help="full (default): table, placement and context features; neuroshard: "
                             "only NeuroShard's 20 table features (the baseline: no shard size, "
                             "kernel, batch or GPU)")
    parser.add_argument("--csv", default=None, help="also write the error table as CSV")
    parser.add_argument("--cost-model", default="all", metavar="NAME",
                        help="train only on the shards of scenarios priced with this cost model "
                             "(native | torchrec | learned; default all). The model that "
                             "`cost_model: learned` uses should learn the native costs (or measured "
                             "ones), not its own")
    parser.add_argument("--mlp-max-iter", type=int, default=300,
                        help="epochs of --model mlp at most (default 300; CI uses a few)")
    parser.add_argument("--mlp-hidden", default="128,32", metavar="W1,W2,...",
                        help="hidden layer widths of --model mlp (default 128,32, NeuroShard's; the "
                             "C++ evaluator takes up to 5 layers of up to 128 units, and a smaller "
                             "network prices shards faster inside the kernel)")
    parser.add_argument("--export-mlp", default=None, metavar="FILE",
                        help="also write the final model (--model mlp only) as a shardsweep-mlp text "
                             "file (family dlrm; docs/model/learned_operators.md §3), which "
                             "`shardsweep validate FILE` checks and the C++ evaluator loads")
    parser.add_argument("--threads", type=int, default=1,
                        help="OpenMP threads of the regressor (default 1: on a shared machine more "
                             "threads than free cores make OpenMP spin; 1.3 s vs 14.6 s for one fit "
                             "of the test data on a loaded 2-core machine)")
    args = parser.parse_args(argv[1:])
    global MLP_MAX_ITER
    MLP_MAX_ITER = max(1, args.mlp_max_iter)
    global MLP_HIDDEN
    try:
        MLP_HIDDEN = tuple(int(w) for w in args.mlp_hidden.split(","))
    except ValueError:
        MLP_HIDDEN = ()
    if not MLP_HIDDEN or len(MLP_HIDDEN) > 5 or not all(1 <= w <= 128 for w in MLP_HIDDEN):
        print(f"train_cost_model.py: --mlp-hidden: expected 1 to 5 widths in 1..128, found '{args.mlp_hidden}'",
              file=sys.stderr)
        return 2
    if args.export_mlp and args.model != "mlp":
        print("train_cost_model.py: --export-mlp needs --model mlp", file=sys.stderr)
        return 2
    if not 0.0 < args.test_share < 1.0:
        print("train_cost_model.py: --test-share must be in (0, 1)", file=sys.stderr)
        return 2
    with threadpool_limits(limits=max(1, args.threads)):
        return train(args)


def train(args) -> int:
    global FEATURES
    if args.features == "neuroshard":
        FEATURES = list(NEUROSHARD)
    try:
        results = load(args.files)
        df = training_rows(results, args.cost_model)
    except (OSError, ValueError) as e:
        print(f"train_cost_model.py: {e}", file=sys.stderr)
        return 2
    n_tasks, n_tables = df["task"].nunique(), df["table_id"].nunique()
    print(f"{len(df)} shards of {df['scenario_id'].nunique()} scenarios, {n_tasks} tasks, "
          f"{n_tables} distinct tables; model {args.model}, {len(FEATURES)} features ({args.features})")
    if n_tasks < 5 or n_tables < 5:
        print("train_cost_model.py: need at least 5 tasks and 5 distinct tables", file=sys.stderr)
        return 2
    rows = []
    t0 = time.time()

    # Held-out tasks.
    split = GroupShuffleSplit(n_splits=1, test_size=args.test_share, random_state=args.seed)
    train_i, test_i = next(split.split(df, groups=df["task"]))
    train, test = df.iloc[train_i], df.iloc[test_i]
    model = fit(args.model, args.seed, train)
    pred = np.exp(model.predict(matrix(test)))
    rows.append({"split": "held-out tasks", "level": "shard", "train_rows": len(train),
                 **errors(pred, test["cost_ms"].to_numpy())})
    rows.append({"split": "held-out tasks", "level": "gpu (sum-pooled)", "train_rows": len(train),
                 **errors(*per_gpu(test, pred))})

    # Unseen tables: their shards never appear in training.
    rng = np.random.default_rng(args.seed)
    tables = df["table_id"].unique()
    held = rng.choice(tables, size=max(1, int(round(args.test_share * len(tables)))), replace=False)
    unseen = df["table_id"].isin(held)
    train, test = df[~unseen], df[unseen]
    model = fit(args.model, args.seed, train)
    pred = np.exp(model.predict(matrix(test)))
    rows.append({"split": "unseen tables", "level": "shard", "train_rows": len(train),
                 **errors(pred, test["cost_ms"].to_numpy())})

    # Training error of the final model (all rows), for comparison; then save it.
    model = fit(args.model, args.seed, df)
    pred = np.exp(model.predict(matrix(df)))
    rows.append({"split": "training (all rows)", "level": "shard", "train_rows": len(df),
                 **errors(pred, df["cost_ms"].to_numpy())})
    table = pd.DataFrame(rows).rename(columns={"rows": "test_rows"})
    joblib.dump({"model": model, "kind": args.model, "features": FEATURES, "categorical": CATEGORICAL,
                 "target": "log(fwd_ms + bwd_ms) per shard; sum over a GPU's shards = its embedding ms",
                 "errors": table.to_dict("records"), "sources": list(args.files)}, args.output)
    if args.export_mlp:
        from train_operator_model import write_model  # noqa: E402 (same folder)
        scaler, mlp = model.steps[0][1], model.steps[-1][1]
        x = matrix(df)
        check = x[np.random.default_rng(args.seed).choice(len(x), size=min(4, len(x)), replace=False)]
        # The platform feature is the code of /names/platforms: the exported file lists those names
        # (trained_on) in code order, so that `cost_model: learned` finds a platform's code by name.
        platforms = list(results.names.get("platforms", [])) if "platform" in FEATURES else []
        if any(not p or any(c.isspace() for c in p) for p in platforms):
            print(f"train_cost_model.py: platform names with blanks cannot be exported: {platforms}",
                  file=sys.stderr)
            return 2
        # no input range: the shard model is evaluated on the shards of the sweeps it came from
        write_model(args.export_mlp, "dlrm", "log_shard_cost_ms", FEATURES,
                    (mlp, scaler.mean_, scaler.scale_, None, None), -1.0e300, platforms, check,
                    writer="postprocess/train_cost_model.py")
        print(f"exported {args.export_mlp}")
    pd.set_option("display.width", 160)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"trained 3 models in {time.time() - t0:.1f} s; saved {args.output}")
    if args.csv:
        table.to_csv(args.csv, index=False, float_format="%.9g")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
