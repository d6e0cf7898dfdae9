#!/usr/bin/python3
"""What the H100 microbenchmark files (inputs/measured/h100, scripts/microbench) say about the
measurement itself, the figures of docs/model/calibration.md and scripts/microbench/README.md:

  repeat     two runs of the same shapes: mean |second / first - 1| % per latency band, for the
             timing before --repeats (one group of 20 calls), after it, and the aligned grid;
  align      the same grid draws rounded to multiples of 8 against not rounded: median TFLOP/s
             ratio over the shapes measured at 0.2 ms or more (rounded run), per dtype;
  ops        operators: GPU-bound (>= 0.2 ms) bandwidth range per op, and the median latency of
             small ones (below 1e5 elements) per op and dtype.

    /usr/bin/python3 postprocess/h100_microbench_summary.py [DIR]      # DIR: inputs/measured/h100
"""
import os
import sys

import pandas as pd

GEMM_KEYS = ["B", "M", "N", "K", "dtype", "op"]
OP_KEYS = ["op", "B", "H", "dtype"]
BANDS = [(0.0, 0.02), (0.02, 0.05), (0.05, 0.2), (0.2, 1.0), (1.0, float("inf"))]
ELEMENT_BYTES = {"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2, "fp8": 1}
GRID_ROWS = 300  # per dtype, after the published shapes that open each GEMM file


def repeat_table(d):
    pairs = [("gemm", "one group of 20 calls", "gemm_unaligned_1group_run1", "gemm_unaligned_1group_run2"),
             ("gemm", "median of 5 groups", "gemm_unaligned_a", "gemm_unaligned_b"),
             ("gemm", "aligned grid", "gemm_aligned_a", "gemm_aligned_b"),
             ("ops", "one group of 20 calls", "ops_1group_run1", "ops_1group_run2"),
             ("ops", "median of 5 groups", "ops_a", "ops_b")]
    rows = []
    for family, timing, a, b in pairs:
        keys = GEMM_KEYS if family == "gemm" else OP_KEYS
        m = pd.read_csv(os.path.join(d, a + ".csv")).merge(
            pd.read_csv(os.path.join(d, b + ".csv")), on=keys, suffixes=("_a", "_b"))
        diff = (m.latency_ms_b / m.latency_ms_a - 1).abs() * 100
        row = {"family": family, "timing": timing}
        for lo, hi in BANDS:
            k = (m.latency_ms_a >= lo) & (m.latency_ms_a < hi)
            row["%g-%g ms" % (lo, hi)] = round(diff[k].mean(), 1) if k.any() else None
        rows.append(row)
    return pd.DataFrame(rows)


def align_table(d):
    a = pd.read_csv(os.path.join(d, "gemm_aligned_a.csv"))
    u = pd.read_csv(os.path.join(d, "gemm_unaligned_a.csv"))
    rows = []
    for dtype in ["fp32", "tf32", "fp16", "bf16"]:
        ga = a[a.dtype == dtype].iloc[-GRID_ROWS:].reset_index(drop=True)
        gu = u[u.dtype == dtype].iloc[-GRID_ROWS:].reset_index(drop=True)
        assert (ga.op == gu.op).all() and (ga.B == gu.B).all(), "not the same grid draws"
        tf = lambda g: 2.0 * g.B * g.M * g.N * g.K / g.latency_ms * 1e-9
        k = ga.latency_ms >= 0.2
        rows.append({"dtype": dtype, "shapes": int(k.sum()),
                     "aligned_TFLOPs": round(tf(ga)[k].median()),
                     "unaligned_TFLOPs": round(tf(gu)[k].median()),
                     "median_ratio": round((tf(ga) / tf(gu))[k].median(), 2)})
    return pd.DataFrame(rows)


def ops_table(d):
    o = pd.read_csv(os.path.join(d, "ops_a.csv"))
    inputs = {"add": 2, "mul": 2, "div": 2, "pow": 2}
    o["GBps"] = [(inputs.get(op, 1) + 1) * b * h * ELEMENT_BYTES[t] / ms / 1e6
                 for op, b, h, t, ms in zip(o.op, o.B, o.H, o.dtype, o.latency_ms)]
    big = o[o.latency_ms >= 0.2].groupby("op").GBps.agg(["count", "min", "median", "max"]).round(0)
    small = o[o.B * o.H < 1e5].groupby(["op", "dtype"]).latency_ms.median().unstack() * 1e3
    return big, small.round(1)


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "inputs", "measured", "h100")
    pd.set_option("display.width", 200)
    print("repeat: mean |second run / first - 1| %, by the first run's latency")
    print(repeat_table(d).to_string(index=False))
    print("\nalign: grid draws rounded to multiples of 8 vs not, shapes >= 0.2 ms")
    print(align_table(d).to_string(index=False))
    big, small = ops_table(d)
    print("\nops >= 0.2 ms: GB/s (bytes read and written)")
    print(big.to_string())
    print("\nops below 1e5 elements: median latency, us")
    print(small.to_string())


if __name__ == "__main__":
    main()
