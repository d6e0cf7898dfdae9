#!/usr/bin/python3
"""PNG figures of a shardsweep results file.

    /usr/bin/python3 postprocess/plot.py OUT.h5 [MORE.h5 ...] [-o DIR] [--scenario ID] [--log RUN.log]

Writes into DIR (default: figures/):
  planner_comparison.png  per planner: distribution of the gap to the best plan of the same task
                          (box plot) and the share of infeasible scenarios (bars)
  phase_breakdown.png     one DLRM scenario (--scenario, default: the evaluated DLRM scenario with
                          the most GPUs and the largest iteration time): busy time of every GPU in
                          each of the 10 phases, stacked, with the scenario's iteration time as a
                          line (needs /gpus rows: run --detail gpus or all)
  transformer_phases.png  transformer sweeps: per workload, platform and GPU count the fastest
                          configuration that fits (summarize.py's best_configurations), its
                          critical path stacked by phase (compute, tp/pp/dp communication,
                          bubble, optimizer), labelled with tp x pp x dp
  cost_vs_gpus.png        iteration time (median over the tasks of a point) vs GPU count, one line
                          per planner, one panel per platform; grid scenarios at the largest batch
  sweep_throughput.png    the sweep's own progress (scenarios/s over time) read from the progress
                          lines of the run's log (--log: the job's %x-%j.out or mpirun's output);
                          results files store no wall times (they would break bit-identical
                          files), so without --log this figure is skipped with a message
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from typing import List

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shardsweep_results import load  # noqa: E402
from summarize import best_configurations, present_phases, with_gaps  # noqa: E402


def planner_comparison(df, path):
    """Writes the figure; returns "all feasible" when no planner left a scenario infeasible (the
    bar panel then says so instead of drawing an empty axis), else None."""
    planners = sorted(df["planner_name"].dropna().unique())
    ok = df[df["ok"]]
    gaps = [ok.loc[ok["planner_name"] == p, "gap_pct"].to_numpy() for p in planners]
    infeasible = [100.0 * (1 - df.loc[df["planner_name"] == p, "ok"].mean()) for p in planners]
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 1.4]})
    a.boxplot([g if len(g) else [np.nan] for g in gaps], labels=planners, showfliers=False)
    a.set_ylabel("gap to the task's best plan (%)")
    a.set_title(f"iteration time vs best plan ({len(ok)} feasible scenarios)")
    a.tick_params(axis="x", rotation=30)
    a.grid(axis="y", alpha=0.3)
    all_feasible = max(infeasible, default=0.0) == 0.0
    if all_feasible:
        b.set_axis_off()
        b.text(0.5, 0.5, f"all feasible\n({len(df)} scenarios)", ha="center", va="center",
               transform=b.transAxes, fontsize=12)
    else:
        b.bar(planners, infeasible, color="tab:red")
        b.set_ylabel("infeasible scenarios (%)")
        b.set_title("no plan / memory overflow")
        b.tick_params(axis="x", rotation=60)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return "all feasible" if all_feasible else None


def choose_scenario(df):
    ok = df[df["ok"]]
    if "workload_kind_name" in ok:
        ok = ok[ok["workload_kind_name"] != "transformer"]
    if ok.empty:
        return None
    return int(ok.sort_values(["gpu_count", "iteration_ms"], ascending=False).index[0])


def phase_breakdown(r, df, sid, path):
    s = df.loc[sid]
    if r.gpus.empty:
        raise ValueError("the file has no /gpus rows (written with --detail scenarios)")
    g = r.gpus[r.gpus["scenario_id"] == sid].sort_values("gpu")
    if g.empty:
        raise ValueError(f"scenario {sid} has no /gpus rows (status {s['status']}, or --detail scenarios)")
    x = g["gpu"].to_numpy()
    fig, ax = plt.subplots(figsize=(max(9, 0.35 * len(x) + 6), 4.5))
    bottom = np.zeros(len(x))
    colors = plt.cm.tab10(np.linspace(0, 1, len(r.phases)))
    for phase, color in zip(r.phases, colors):
        v = g[f"{phase}_ms"].to_numpy()
        ax.bar(x, v, bottom=bottom, label=phase, color=color, width=0.8)
        bottom += v
    ax.axhline(s["iteration_ms"], color="k", ls="--", lw=1, label="iteration (critical path)")
    ax.set_xlabel("GPU")
    ax.set_ylabel("busy time (ms)")
    ax.set_title(f"scenario {sid}: {s['workload_name']} on {s['gpu_count']} x {s['platform_name']}\n"
                 f"planner {s['planner_name']}, global batch {s['global_batch']}", fontsize=9)
    if len(x) <= 32:
        ax.set_xticks(x)
    ax.legend(fontsize=7, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def transformer_phases(best, path):
    labels = [f"{w}\n{p}\n{g} GPUs: {tp}x{pp}x{dp}" for w, p, g, tp, pp, dp in
              zip(best["workload"], best["platform"], best["gpus"], best["tp"], best["pp"], best["dp"])]
    x = np.arange(len(best))
    fig, ax = plt.subplots(figsize=(max(8, 0.9 * len(x) + 4), 5))
    bottom = np.zeros(len(x))
    for phase, color in zip(present_phases(best), plt.cm.tab10(np.linspace(0, 1, 10))):
        v = best[phase].to_numpy()
        ax.bar(x, v, bottom=bottom, label=phase[:-3], color=color, width=0.7)
        bottom += v
    ax.set_xticks(x)
    ax.set_xticklabels(labels, fontsize=6, rotation=60, ha="right")
    ax.set_ylabel("critical path (ms)")
    ax.set_yscale("log" if bottom.max() > 100 * max(bottom.min(), 1e-9) else "linear")
    ax.set_title("fastest configuration per workload, platform and GPU count (tp x pp x dp)", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def cost_vs_gpus(df, path):
    grid = df[(df["task_protocol_name"] == "none") & df["ok"]]
    if grid.empty:
        grid = df[df["ok"]]
    platforms = sorted(grid["platform_name"].unique())
    fig, axes = plt.subplots(1, len(platforms), figsize=(5.5 * len(platforms), 4.2), squeeze=False)
    for ax, platform in zip(axes[0], platforms):
        p = grid[grid["platform_name"] == platform]
        batch = p["global_batch"].max()
        p = p[p["global_batch"] == batch]
        for planner, q in p.groupby("planner_name"):
            m = q.groupby("gpu_count")["iteration_ms"].median()
            ax.plot(m.index, m.to_numpy(), marker="o", label=planner)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("GPUs")
        ax.set_ylabel("iteration time (ms)")
        ax.set_title(f"{platform}, global batch {batch}", fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


PROGRESS = re.compile(r"\[\s*([\d.]+)%\]\s+(\d+)/(\d+) scenarios \| ([\d.]+) scen/s .*elapsed (\d+):(\d+):(\d+)")


def sweep_throughput(log_path, path):
    points = []  # (run, elapsed s, done, scen/s)
    run = 0
    with open(log_path, errors="replace") as f:
        for line in f:
            if line.startswith("shardsweep run:"):
                run += 1
            m = PROGRESS.search(line)
            if m:
                h, mi, se = int(m.group(5)), int(m.group(6)), int(m.group(7))
                points.append((run, 3600 * h + 60 * mi + se, int(m.group(2)), float(m.group(4))))
    if not points:
        return False
    fig, ax = plt.subplots(figsize=(7, 4))
    for k in sorted({p[0] for p in points}):
        pts = [p for p in points if p[0] == k]
        ax.plot([p[1] for p in pts], [p[3] for p in pts], marker="o", label=f"run {k}")
    ax.set_xlabel("elapsed (s)")
    ax.set_ylabel("scenarios / s (all ranks)")
    ax.set_title(f"sweep throughput ({os.path.basename(log_path)})")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="plot.py", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="results files (HDF5) of one sweep")
    parser.add_argument("-o", "--out-dir", default="figures", help="output directory (default figures/)")
    parser.add_argument("--scenario", type=int, default=None, help="scenario id of phase_breakdown.png")
    parser.add_argument("--log", default=None, help="the run's log, for sweep_throughput.png")
    args = parser.parse_args(argv[1:])
    try:
        r = load(args.files)
    except (OSError, ValueError) as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    if r.scenarios.empty:
        print("plot.py: no computed scenario in the file(s)", file=sys.stderr)
        return 2
    df = with_gaps(r.scenarios)
    os.makedirs(args.out_dir, exist_ok=True)
    out = lambda name: os.path.join(args.out_dir, name)  # noqa: E731

    note = planner_comparison(df, out("planner_comparison.png"))
    print(f"wrote {out('planner_comparison.png')}" + (f" ({note})" if note else ""))
    best = best_configurations(df) if "workload_kind_name" in df else None
    if best is not None and not best.empty:
        transformer_phases(best, out("transformer_phases.png"))
        print(f"wrote {out('transformer_phases.png')}")
    sid = args.scenario if args.scenario is not None else choose_scenario(df)
    if args.scenario is not None and sid not in df.index:
        print(f"plot.py: scenario {sid} is not a computed scenario", file=sys.stderr)
        return 2
    if sid is None:
        pass  # a transformer sweep: its phases are transformer_phases.png
    else:
        try:
            phase_breakdown(r, df, sid, out("phase_breakdown.png"))
            print(f"wrote {out('phase_breakdown.png')} (scenario {sid})")
        except ValueError as e:
            print(f"plot.py: phase_breakdown.png skipped: {e}")
    cost_vs_gpus(df, out("cost_vs_gpus.png"))
    print(f"wrote {out('cost_vs_gpus.png')}")
    if args.log is None:
        print("plot.py: sweep_throughput.png skipped: results files store no run timing; "
              "pass --log RUN.log (the run's progress lines)")
    elif sweep_throughput(args.log, out("sweep_throughput.png")):
        print(f"wrote {out('sweep_throughput.png')}")
    else:
        print(f"plot.py: sweep_throughput.png skipped: no progress lines in {args.log} "
              "(run with --progress-interval > 0)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
