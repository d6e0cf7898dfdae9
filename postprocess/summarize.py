#!/usr/bin/python3
"""Summary tables of a shardsweep results file: per planner, per platform, per workload.

    /usr/bin/python3 postprocess/summarize.py OUT.h5 [MORE.h5 ...] [--csv-dir DIR]

Feasibility first: a plan that does not fit in memory is no plan, however fast. Every table
starts with the share of scenarios without a plan that fits and the mean time of the plans that
fit, side by side, and its rows are ranked by them (fewest failures, then fastest).

For every group (planner, platform, workload; --by adds others, e.g. planner,platform):
  no_feasible_plan_pct
                  100 * (1 - feasible / scenarios): scenarios with no plan that fits (the planner
                  found none, a planning error, or the kernel found a GPU's memory overflowing)
  invalid_configs explicit configurations of a grid (planner none) that are no valid layout
                  (e.g. tp not dividing the heads): slots of the grid, not scenarios, so they
                  count neither as scenarios nor as infeasible
  mean_ms         predicted iteration time, mean over the feasible scenarios
  scenarios       computed scenarios in the group (done = 1)
  feasible        of those, evaluated with a plan that fits every GPU (status 0, feasible 1)
  p50_ms, p90_ms, p99_ms
                  predicted iteration time over the feasible scenarios (numpy's linear
                  percentiles)
  gap_mean_pct, gap_p90_pct
                  gap to the best plan of the same task: 100 * (iteration_ms / best - 1), where a
                  task is one (workload, platform, GPU count, batch, cost model, generated task)
                  and best is the fastest feasible plan any planner of the sweep found for it
  best_pct        share of the group's scenarios whose plan is the task's best (a scenario
                  without a plan that fits is never best)
Schema 1 files store no lower bound (docs/HDF5_LAYOUT.md), so there is no gap-to-bound column;
`shardsweep plan` prints the bound for a single scenario.

Transformer sweeps also get best_configurations.csv: per workload, platform and GPU count the
fastest configuration that fits (planner, tp, pp, dp, micro-batch, recompute, ZeRO, sequence
parallelism; MoE: ep, etp) with its phases (compute, tp_comm, pp_comm, dp_comm, bubble, optimizer, ep_comm ms: the
phase stack of the critical path) and its model-FLOPs rate per GPU. Keys tp, pp, dp, micro_batch,
recompute, schedule, zero group transformer rows by their configuration.

Tables are printed and written as CSV files summary_by_<key>.csv into --csv-dir (default: the
current directory). Several files (the slices of a job array) are loaded together.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import List

import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shardsweep_results import load  # noqa: E402

# The columns that identify a task: the same task planned by different planners.
TASK_KEY = ["workload", "platform", "gpu_count", "global_batch", "cost_model", "task_protocol",
            "generator", "task_index", "task_seed", "memory_cap_GiB"]
KEYS = {"planner": "planner_name", "platform": "platform_name", "workload": "workload_name",
        "cost_model": "cost_model_name", "protocol": "task_protocol_name",
        "gpu_count": "gpu_count", "batch": "global_batch", "tp": "tp", "pp": "pp", "dp": "dp",
        "micro_batch": "micro_batch", "recompute": "recompute_name", "schedule": "schedule_name",
        "zero": "zero", "ep": "ep", "etp": "etp"}
# ep_comm_ms (MoE all-to-alls) is absent from files written before 2026-11-27: phases a file lacks
# are left out (present_phases).
TRANSFORMER_PHASES = ["compute_ms", "tp_comm_ms", "pp_comm_ms", "dp_comm_ms", "bubble_ms",
                      "optimizer_ms", "ep_comm_ms"]


def present_phases(df: pd.DataFrame) -> List[str]:
    """The transformer phases `df` has columns for, in TRANSFORMER_PHASES' order."""
    return [p for p in TRANSFORMER_PHASES if p in df]


def with_gaps(scen: pd.DataFrame) -> pd.DataFrame:
    """Adds ok (evaluated and fits) and gap_pct (to the task's best feasible plan) columns."""
    df = scen.copy()
    df["ok"] = (df["status"] == 0) & (df["feasible"] == 1)
    # An explicit configuration (planner none) without a plan is a grid slot that is no layout.
    names = df["planner_name"] if "planner_name" in df else pd.Series("", index=df.index)
    df["invalid"] = (names == "none") & (df["status"] == 1)
    time = df["iteration_ms"].where(df["ok"])
    best = time.groupby([df[k] for k in TASK_KEY], dropna=False).transform("min")
    df["gap_pct"] = 100.0 * (time / best - 1.0)
    df["is_best"] = df["ok"] & (time == best)
    return df


def summary(df: pd.DataFrame, columns: List[str]) -> pd.DataFrame:
    rows = []
    by = columns[0] if len(columns) == 1 else columns
    for key, g in df.groupby(by, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        invalid = int(g["invalid"].sum())
        g = g[~g["invalid"]]
        if g.empty:
            continue
        ok = g[g["ok"]]
        t = ok["iteration_ms"].to_numpy()
        gap = ok["gap_pct"].to_numpy()
        pct = (lambda a, q: float(np.percentile(a, q)) if len(a) else float("nan"))
        row = dict(zip(columns, key))
        row.update(
            no_feasible_plan_pct=100.0 * (1.0 - len(ok) / len(g)),
            mean_ms=float(t.mean()) if len(t) else float("nan"),
            scenarios=len(g),
            feasible=len(ok),
            p50_ms=pct(t, 50),
            p90_ms=pct(t, 90),
            p99_ms=pct(t, 99),
            gap_mean_pct=float(gap.mean()) if len(gap) else float("nan"),
            gap_p90_pct=pct(gap, 90),
            best_pct=100.0 * float(g["is_best"].mean()),
            invalid_configs=invalid,
        )
        rows.append(row)
    # Feasibility first: fewest scenarios without a plan that fits, then the fastest.
    table = pd.DataFrame(rows)
    return table.sort_values(["no_feasible_plan_pct", "mean_ms"], kind="stable",
                             na_position="last").reset_index(drop=True)


def best_configurations(df: pd.DataFrame) -> pd.DataFrame:
    """Per workload, platform and GPU count of the transformer rows: the fastest configuration
    that fits, its phases and its model TFLOP/s per GPU."""
    t = df[df["ok"] & (df["workload_kind_name"] == "transformer")]
    if t.empty:
        return pd.DataFrame()
    best = t.loc[t.groupby(["workload_name", "platform_name", "gpu_count"])["iteration_ms"].idxmin()]
    out = pd.DataFrame({
        "workload": best["workload_name"], "platform": best["platform_name"],
        "gpus": best["gpu_count"], "planner": best["planner_name"],
        "iteration_ms": best["iteration_ms"],
        "tflops_per_gpu": best["model_flops"] / (best["iteration_ms"] * 1e-3) / best["gpu_count"] / 1e12,
        "tp": best["tp"], "pp": best["pp"], "dp": best["dp"], "micro_batch": best["micro_batch"],
        "recompute": best["recompute_name"], "zero": best["zero"],
        "sequence_parallel": best["sequence_parallel"]})
    for knob in ("ep", "etp"):  # MoE expert layout (files since 2026-11-27)
        if knob in best:
            out[knob] = best[knob]
    for phase in present_phases(best):
        out[phase] = best[phase]
    return out.sort_values(["workload", "platform", "gpus"]).reset_index(drop=True)


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="summarize.py", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="results files (HDF5) of one sweep")
    parser.add_argument("--csv-dir", default=".", help="where summary_by_<key>.csv go (default .)")
    parser.add_argument("--by", action="append", default=None, metavar="KEY[,KEY]",
                        help="group keys, comma-separated for a cross table; repeatable "
                             f"(default: planner, platform, workload; keys: {', '.join(KEYS)})")
    args = parser.parse_args(argv[1:])

    try:
        r = load(args.files)
    except (OSError, ValueError) as e:
        print(f"summarize.py: {e}", file=sys.stderr)
        return 2
    if r.scenarios.empty:
        print("summarize.py: no computed scenario in the file(s)", file=sys.stderr)
        return 2
    df = with_gaps(r.scenarios)
    os.makedirs(args.csv_dir, exist_ok=True)
    attrs = r.attrs
    print(f"{len(df)} scenarios computed of {attrs.get('num_scenarios', '?')} "
          f"(sweep config {attrs.get('config_hash', '?')}, {len(args.files)} file(s)); "
          f"times in ms, gaps and shares in %")
    pd.set_option("display.width", 160)
    pd.set_option("display.max_columns", 20)
    for by in args.by or ["planner", "platform", "workload"]:
        keys = [k.strip() for k in by.split(",")]
        unknown = [k for k in keys if k not in KEYS]
        if unknown:
            print(f"summarize.py: unknown key {unknown[0]} (keys: {', '.join(KEYS)})", file=sys.stderr)
            return 2
        table = summary(df, [KEYS[k] for k in keys]).rename(columns={KEYS[k]: k for k in keys})
        path = os.path.join(args.csv_dir, f"summary_by_{'_'.join(keys)}.csv")
        table.to_csv(path, index=False, float_format="%.9g")
        print(f"\n== by {', '.join(keys)} ({path})")
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if "workload_kind_name" in df:
        best = best_configurations(df)
        if not best.empty:
            path = os.path.join(args.csv_dir, "best_configurations.csv")
            best.to_csv(path, index=False)  # full precision: numbers read back exactly
            print(f"\n== best configuration per workload, platform and GPU count, with its phases "
                  f"({path})")
            print(best.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
