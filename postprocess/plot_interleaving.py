#!/usr/bin/python3
"""Iteration time against model chunks per pipeline stage (interleaved 1F1B), with and without
communication overlap, from a grid sweep over `virtual_stages` and `overlap`
(inputs/sweeps/llama3_interleaving.yaml).

    /usr/bin/python3 postprocess/plot_interleaving.py OUT.h5 [-o DIR]

One panel per (workload, GPU count), one colour per pipeline depth pp, solid with overlap, dashed
without. Configurations the sweep could not run (status != 0) are left out. Writes
DIR/interleaving.png and prints the points as CSV (workload, gpus, pp, virtual_stages, overlap,
iteration_ms, peak_memory_GiB).
"""

from __future__ import annotations

import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from shardsweep_results import load  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", help="results file of a sweep over virtual_stages and overlap")
    parser.add_argument("-o", "--output-dir", default=".", help="folder of interleaving.png")
    args = parser.parse_args(argv)
    df = load([args.results]).scenarios
    df = df[(df["status"] == 0) & (df["workload_kind_name"] == "transformer")]
    if df.empty:
        print(f"{args.results}: no evaluated transformer scenarios", file=sys.stderr)
        return 2
    panels = sorted(df.groupby(["workload_name", "gpu_count"]).groups)
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
    print("workload,gpus,pp,virtual_stages,overlap,iteration_ms,peak_memory_GiB")
    for ax, (workload, gpus) in zip(axes[0], panels):
        part = df[(df["workload_name"] == workload) & (df["gpu_count"] == gpus)]
        for i, pp in enumerate(sorted(part["pp"].unique())):
            for overlap, style in ((1, "-"), (0, "--")):
                line = part[(part["pp"] == pp) & (part["overlap"] == overlap)]
                line = line.sort_values("virtual_stages")
                if line.empty:
                    continue
                ax.plot(line["virtual_stages"], line["iteration_ms"] / 1e3, style, marker="o",
                        color=f"C{i}", label=f"pp {pp}" + (", overlap" if overlap else ""))
                for _, r in line.iterrows():
                    print(f"{workload},{gpus},{pp},{int(r['virtual_stages'])},{overlap},"
                          f"{r['iteration_ms']!r},{r['max_memory_GiB']!r}")
        ax.set_title(f"{workload} on {gpus} GPUs")
        ax.set_xlabel("model chunks per pipeline stage (virtual_stages)")
        ax.set_ylabel("iteration time (s)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    os.makedirs(args.output_dir, exist_ok=True)
    fig.savefig(os.path.join(args.output_dir, "interleaving.png"), dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
