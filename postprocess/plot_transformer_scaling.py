#!/usr/bin/python3
"""Best iteration time and model-FLOPs utilisation vs GPU count of a transformer sweep.

    /usr/bin/python3 postprocess/plot_transformer_scaling.py OUT.h5 [-o DIR] [--peak-tflops NAME=T ...]

For a results file of a sweep whose transformer scenarios were planned by the transformer
planners (inputs/sweeps/gpt3_scaling.yaml): one column per platform, iteration time (top) and
MFU (bottom) against the GPU count, one line per workload: solid the best configuration over the
planners of each point (shardsweep's search: exhaustive's optimum), dashed megatron's rule when
the sweep ran it. Writes DIR/transformer_scaling.png and prints the points as CSV (workload,
platform, gpus, best planner, iteration_ms, mfu_pct, tp, pp, dp, micro_batch).

MFU = model FLOPs per iteration / iteration time / GPUs / the GPU's dense peak in the workload's
dtype (bf16 for GPT-3). The peak of each platform comes from its platform file (named in the
sweep configuration stored in the results file) and the GPU catalog next to it
(inputs/gpus/*.yaml); --peak-tflops PLATFORM=TFLOPS overrides or supplies it.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from typing import Dict, List

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import yaml  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shardsweep_results import load  # noqa: E402


def platform_peaks(attrs) -> Dict[str, float]:
    """bf16 dense peak (TFLOP/s) per platform name, from the sweep's platform files."""
    peaks: Dict[str, float] = {}
    try:
        config = yaml.safe_load(attrs["config"])
        base = os.path.dirname(str(attrs.get("config_file", "")))
        paths = config["grid"]["platforms"]
    except (KeyError, TypeError, yaml.YAMLError):
        return peaks
    for rel in paths:
        path = os.path.join(base, rel)
        try:
            platform = yaml.safe_load(open(path))
        except OSError:
            continue
        for gpu_file in glob.glob(os.path.join(os.path.dirname(path), "..", "gpus", "*.yaml")):
            gpu = yaml.safe_load(open(gpu_file))
            if platform.get("gpu") in [gpu.get("name")] + list(gpu.get("aliases", [])):
                peaks[platform["name"]] = float(gpu["bf16_TFLOPs"])
    return peaks


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="plot_transformer_scaling.py", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="+", help="results files (HDF5) of one sweep")
    parser.add_argument("-o", "--out-dir", default="figures", help="output directory (default figures/)")
    parser.add_argument("--peak-tflops", action="append", default=[], metavar="PLATFORM=TFLOPS",
                        help="dense peak per GPU of a platform (overrides the platform files)")
    args = parser.parse_args(argv[1:])
    try:
        r = load(args.files)
    except (OSError, ValueError) as e:
        print(f"plot_transformer_scaling.py: {e}", file=sys.stderr)
        return 2
    df = r.scenarios
    if "workload_kind" in df.columns:
        df = df[df["workload_kind"] == 1]
    df = df[(df["status"] == 0) & (df["feasible"] == 1)]
    if df.empty:
        print("plot_transformer_scaling.py: no evaluated, feasible transformer scenario",
              file=sys.stderr)
        return 2
    peaks = platform_peaks(r.attrs)
    for item in args.peak_tflops:
        name, _, value = item.partition("=")
        try:
            peaks[name] = float(value)
        except ValueError:
            print(f"plot_transformer_scaling.py: --peak-tflops {item}: expected NAME=TFLOPS",
                  file=sys.stderr)
            return 2
    df = df.copy()
    df["mfu_pct"] = [100.0 * f / (t * 1e-3) / g / 1e12 / peaks[p] if p in peaks else float("nan")
                     for f, t, g, p in zip(df["model_flops"], df["iteration_ms"], df["gpu_count"],
                                           df["platform_name"])]
    keys = ["workload_name", "platform_name", "gpu_count"]
    best = df.sort_values(keys + ["iteration_ms"]).groupby(keys, as_index=False).first()
    megatron = df[df["planner_name"] == "megatron"]

    platforms = sorted(best["platform_name"].unique())
    workloads = sorted(best["workload_name"].unique(),
                       key=lambda w: best[best["workload_name"] == w]["model_flops"].max())
    fig, axes = plt.subplots(2, len(platforms), figsize=(6 * len(platforms), 8), squeeze=False)
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for col, platform in enumerate(platforms):
        for i, workload in enumerate(workloads):
            color = colors[i % len(colors)]
            b = best[(best["platform_name"] == platform) & (best["workload_name"] == workload)]
            m = megatron[(megatron["platform_name"] == platform) & (megatron["workload_name"] == workload)]
            m = m.sort_values("gpu_count")
            for row, column in ((0, "iteration_ms"), (1, "mfu_pct")):
                ax = axes[row][col]
                ax.plot(b["gpu_count"], b[column], marker="o", color=color, label=workload)
                if not m.empty:
                    ax.plot(m["gpu_count"], m[column], linestyle="--", color=color, alpha=0.6)
        for row, label in ((0, "best iteration time (ms)"), (1, "MFU (%)")):
            ax = axes[row][col]
            ax.set_xscale("log", base=2)
            if row == 0:
                ax.set_yscale("log")
            ax.set_xlabel("GPUs")
            ax.set_ylabel(label)
            ax.grid(alpha=0.3)
        axes[0][col].set_title(f"{platform} (dashed: megatron's rule)", fontsize=10)
        if platform not in peaks:
            axes[1][col].set_title(f"no peak for {platform}: pass --peak-tflops", fontsize=9)
        axes[0][col].legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(args.out_dir, exist_ok=True)
    path = os.path.join(args.out_dir, "transformer_scaling.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("workload,platform,gpus,planner,iteration_ms,mfu_pct,tp,pp,dp,micro_batch")
    for _, x in best.sort_values(["platform_name", "workload_name", "gpu_count"]).iterrows():
        print(f"{x.workload_name},{x.platform_name},{x.gpu_count},{x.planner_name},"
              f"{x.iteration_ms:.6g},{x.mfu_pct:.4g},{x.tp},{x.pp},{x.dp},{x.micro_batch}")
    print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
