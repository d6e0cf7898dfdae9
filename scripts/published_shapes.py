#!/usr/bin/python3
"""The GEMM shapes of the published H100 runs that `bench transformer --table published` prices,
as one --shapes file for scripts/microbench/microbench.py, so that an H100 calibration measures
the GEMMs those runs execute.

    /usr/bin/python3 scripts/published_shapes.py SHARDSWEEP PUBLISHED.csv -o shapes.csv

Each row of PUBLISHED.csv (the columns of src/calibration/published_runs.cpp's reader) becomes a
scenario file as that reader builds it (GPT, vocab 50257 when empty, micro-batch 1 when empty,
sequence parallelism with tp > 1, fp8 when gpu_type names FP8, else bf16); `shardsweep shapes`
lists its GEMMs, and the union is written, each shape once, in first-seen order.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scenario_text(row, workload_path):
    tp, pp, dp = int(row["tp"]), int(row["pp"]), int(row["dp"])
    return "\n".join([
        "kind: scenario",
        f"name: {row['model']}",
        f"workload: {workload_path}",
        f"platform: {os.path.join(REPO, 'inputs/platforms/h100-16node-ib.yaml')}",
        f"global_batch: {row['global_batch']}",
        "parallel:",
        f"  tp: {tp}",
        f"  pp: {pp}",
        f"  dp: {dp}",
        f"  micro_batch: {row['micro_batch'] or 1}",
        "  recompute: full",
        f"  sequence_parallel: {'true' if tp > 1 else 'false'}",
        "  fused: true",
        "",
    ])


def workload_text(row):
    dtype = "fp8" if "FP8" in row["gpu_type"] else "bf16"
    return "\n".join([
        "kind: transformer",
        f"name: {row['model']}",
        "arch: gpt",
        f"layers: {row['layers']}",
        f"hidden: {row['hidden']}",
        f"heads: {row['heads']}",
        f"seq_len: {row['seq_len']}",
        f"vocab: {row['vocab'] or 50257}",
        f"dtype: {dtype}",
        f"global_batch: {row['global_batch']}",
        "",
    ])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("shardsweep", help="the shardsweep program")
    parser.add_argument("published", help="published runs CSV")
    parser.add_argument("-o", "--output", required=True, help="shapes CSV to write")
    args = parser.parse_args()
    seen, shapes, header = set(), [], None
    with open(args.published, newline="") as f, tempfile.TemporaryDirectory() as tmp:
        for index, row in enumerate(csv.DictReader(f)):
            workload = os.path.join(tmp, f"w{index}.yaml")
            scenario = os.path.join(tmp, f"s{index}.yaml")
            out = os.path.join(tmp, f"shapes{index}.csv")
            with open(workload, "w") as w:
                w.write(workload_text(row))
            with open(scenario, "w") as s:
                s.write(scenario_text(row, workload))
            subprocess.run([args.shardsweep, "shapes", scenario, "-o", out], check=True)
            with open(out, newline="") as s:
                reader = csv.reader(s)
                header = next(reader)
                for shape in reader:
                    if tuple(shape) not in seen:
                        seen.add(tuple(shape))
                        shapes.append(shape)
    with open(args.output + ".tmp", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(header)
        writer.writerows(shapes)
    os.replace(args.output + ".tmp", args.output)
    print(f"{len(shapes)} distinct GEMM shapes -> {args.output}", file=sys.stderr)


if __name__ == "__main__":
    main()
