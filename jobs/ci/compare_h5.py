#!/usr/bin/python3
"""Checks that shardsweep results files hold identical data (the Slurm job tests).

    compare_h5.py REFERENCE.h5 CANDIDATE.h5
        every dataset of /scenarios, /gpus, /shards and /names equal (exact; NaN == NaN), the
        candidate complete (root attribute complete = 1, num_done = num_scenarios);
    compare_h5.py --union REFERENCE.h5 PART.h5 [PART.h5 ...]
        the parts (e.g. the files of a job array) loaded together by postprocess's reader equal
        the reference: every scenario done exactly once over the parts, same values everywhere.

Prints one line per group and exits 1 on the first difference.
"""
import os
import sys

import h5py
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "postprocess"))

GROUPS = ("scenarios", "gpus", "shards", "names")


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def same(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def compare_files(ref_path, cand_path):
    with h5py.File(ref_path, "r") as ref, h5py.File(cand_path, "r") as cand:
        if int(cand.attrs.get("complete", 0)) != 1:
            fail(f"{cand_path}: attribute complete != 1")
        if int(cand.attrs["num_done"]) != int(cand.attrs["num_scenarios"]):
            fail(f"{cand_path}: num_done {cand.attrs['num_done']} != {cand.attrs['num_scenarios']}")
        for attr in ("config_hash", "num_scenarios", "schema_version", "detail"):
            if ref.attrs.get(attr) != cand.attrs.get(attr):
                fail(f"attribute {attr}: {ref.attrs.get(attr)} != {cand.attrs.get(attr)}")
        for g in GROUPS:
            if (g in ref) != (g in cand):
                fail(f"group /{g} present in only one file")
            if g not in ref:
                continue
            if sorted(ref[g]) != sorted(cand[g]):
                fail(f"/{g}: columns differ: {sorted(ref[g])} vs {sorted(cand[g])}")
            values = 0
            for k in ref[g]:
                a, b = ref[g][k][...], cand[g][k][...]
                if not same(a, b):
                    where = "shape/dtype" if a.shape != b.shape or a.dtype != b.dtype else \
                        f"first difference at row {int(np.argmax(~((a == b) | (a != a) & (b != b))))}"
                    fail(f"/{g}/{k} differs ({where})")
                values += len(a)
            print(f"/{g}: {len(ref[g])} columns, {values} values identical")


def compare_union(ref_path, parts):
    from shardsweep_results import load

    ref = load(ref_path)
    union = load(parts)
    with h5py.File(ref_path, "r") as f:
        total = int(f.attrs["num_scenarios"])
    done = 0
    for p in parts:
        with h5py.File(p, "r") as f:
            done += int(np.sum(f["scenarios"]["done"][...]))
    if done != total:
        fail(f"the parts compute {done} scenarios in all, the sweep has {total} (each exactly once)")
    for name in ("scenarios", "gpus", "shards"):
        a, b = getattr(ref, name), getattr(union, name)
        if list(a.columns) != list(b.columns) or len(a) != len(b):
            fail(f"{name}: {len(b)} rows / {len(b.columns)} columns, reference {len(a)} / {len(a.columns)}")
        for c in a.columns:
            x, y = a[c].to_numpy(), b[c].to_numpy()
            if x.dtype == object:
                ok = all(u == v for u, v in zip(x, y))
            else:
                ok = same(x, y)
            if not ok:
                fail(f"{name}.{c} differs between the reference and the union of the parts")
        print(f"{name}: {len(a.columns)} columns x {len(a)} rows identical (union of {len(parts)} files)")


def main(argv):
    if len(argv) >= 2 and argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0
    if len(argv) >= 4 and argv[1] == "--union":
        compare_union(argv[2], argv[3:])
    elif len(argv) == 3:
        compare_files(argv[1], argv[2])
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
