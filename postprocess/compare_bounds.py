#!/usr/bin/python3
"""The lower bounds of two results files of the same sweep (e.g. before and after a change to
the bound, docs/PERFORMANCE.md): how many are identical, higher or lower in the second file, and
whether any plan that fits lies below its bound there.

    /usr/bin/python3 postprocess/compare_bounds.py OLD.h5 NEW.h5
"""
import sys

import h5py
import numpy as np


def read(path):
    with h5py.File(path, "r") as f:
        g = f["scenarios"]
        return {k: g[k][...] for k in ("lower_bound_ms", "iteration_ms", "feasible")}


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    old, new = read(argv[1]), read(argv[2])
    if len(old["lower_bound_ms"]) != len(new["lower_bound_ms"]):
        sys.exit(f"{argv[1]} and {argv[2]} hold different numbers of scenarios")
    a, b = old["lower_bound_ms"], new["lower_bound_ms"]
    both = np.isfinite(a) & np.isfinite(b)
    ratio = b[both] / a[both]
    print(f"bounds compared: {both.sum()}")
    print(f"identical: {(b[both] == a[both]).sum()}")
    higher, lower = ratio > 1 + 1e-12, ratio < 1 - 1e-12
    print(f"higher in the second: {higher.sum()}"
          + (f" (by up to {100 * (ratio.max() - 1):.1f} %)" if higher.any() else ""))
    print(f"lower in the second: {lower.sum()}"
          + (f" (by up to {100 * (1 - ratio.min()):.3f} %)" if lower.any() else ""))
    fits = (new["feasible"] == 1) & np.isfinite(b)
    q = new["iteration_ms"][fits] / b[fits]
    print(f"plans that fit: {fits.sum()}, below their bound: {(q < 1).sum()}, "
          f"smallest iteration / bound: {q.min():.4f}")


if __name__ == "__main__":
    main(sys.argv)
