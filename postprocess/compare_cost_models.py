#!/usr/bin/python3
"""Errors of one cost model against another on the same scenarios of a sweep.

    /usr/bin/python3 postprocess/compare_cost_models.py OUT.h5 [--model learned] [--reference native]

The sweep must list both cost models (`cost_models: [native, learned]`) and planners whose plans
do not depend on the scenario seed (round_robin, the greedy baselines, torchrec), so that two
scenarios that differ only in the cost model price the same plan. Pairs are matched on every other
task key (workload, platform, GPU count, batch, planner, generator, task). Prints, per workload
kind of task (grid / generator), the MAPE, median and p90 absolute percentage error of the
iteration time and of each GPU's embedding time (embedding_fwd_ms + embedding_bwd_ms, the part the
learned model replaces; needs --detail gpus).
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shardsweep_results import load  # noqa: E402

KEY = ["workload", "platform", "gpu_count", "global_batch", "planner", "generator", "task_index",
       "task_seed", "memory_cap_GiB"]


def ape_stats(pred, ref) -> dict:
    ape = 100.0 * np.abs(pred - ref) / ref
    return {"pairs": len(ape), "mape_pct": ape.mean(), "median_ape_pct": np.median(ape),
            "p90_ape_pct": np.percentile(ape, 90)}


def main(argv) -> int:
    p = argparse.ArgumentParser(prog="compare_cost_models.py", description=__doc__.split("\n\n")[0],
                                epilog="\n\n".join(__doc__.split("\n\n")[1:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+")
    p.add_argument("--model", default="learned")
    p.add_argument("--reference", default="native")
    args = p.parse_args(argv[1:])
    r = load(args.files)
    s = r.scenarios[r.scenarios["status"] == 0].reset_index()
    a = s[s["cost_model_name"] == args.model]
    b = s[s["cost_model_name"] == args.reference]
    if a.empty or b.empty:
        print(f"compare_cost_models.py: the file needs scenarios of both {args.model} and {args.reference}",
              file=sys.stderr)
        return 2
    pairs = a.merge(b, on=KEY, suffixes=("", "_ref"))
    pairs["set"] = np.where(pairs["generator"] < 0, "grid", "generated tasks")
    rows = []
    for name, g in list(pairs.groupby("set")) + [("all", pairs)]:
        rows.append({"set": name, "level": "iteration", **ape_stats(g["iteration_ms"].to_numpy(),
                                                                     g["iteration_ms_ref"].to_numpy())})
        if not r.gpus.empty:
            emb = r.gpus.assign(emb=r.gpus["embedding_fwd_ms"] + r.gpus["embedding_bwd_ms"])
            e = emb.set_index(["scenario_id", "gpu"])["emb"]
            ga = e.loc[g["scenario_id"].to_numpy()].reset_index()
            gb = e.loc[g["scenario_id_ref"].to_numpy()].reset_index()
            ok = gb["emb"].to_numpy() > 0
            rows.append({"set": name, "level": "gpu embedding",
                         **ape_stats(ga["emb"].to_numpy()[ok], gb["emb"].to_numpy()[ok])})
    pd.set_option("display.width", 160)
    print(f"{args.model} vs {args.reference}: {len(pairs)} scenario pairs")
    print(pd.DataFrame(rows).to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
