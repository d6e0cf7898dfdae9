"""Read shardsweep results files (docs/HDF5_LAYOUT.md) into pandas DataFrames.

    from shardsweep_results import load
    r = load("out/quickstart.h5")            # or load(["slice0.h5", "slice1.h5"])
    r.scenarios, r.gpus, r.shards, r.names

One call per file and group; several files (e.g. the slices of a Slurm job array) are combined:
each scenario id is taken from the file in which it is done, and a scenario done in two files
with different results is an error. Coded columns gain a `<column>_name` companion.
Run with Debian's interpreter: /usr/bin/python3 (it sees python3-h5py and python3-pandas).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from typing import Dict, Iterable, List, Union

import h5py
import numpy as np
import pandas as pd

PHASES = [
    "input_dist",
    "embedding_fwd",
    "bottom_mlp_fwd",
    "embedding_comm_fwd",
    "top_fwd",
    "top_bwd",
    "embedding_comm_bwd",
    "bottom_mlp_bwd",
    "embedding_bwd",
    "dense_allreduce",
]

# Coded /scenarios and /shards columns and the /names table each one indexes.
CODED = {
    "workload": "workloads",
    "platform": "platforms",
    "planner": "planners",
    "cost_model": "cost_models",
    "task_protocol": "task_protocols",
    "sharding_type": "sharding_types",
    "compute_kernel": "compute_kernels",
}


@dataclasses.dataclass
class Results:
    scenarios: pd.DataFrame  # one row per computed scenario, indexed by scenario id
    gpus: pd.DataFrame  # one row per (scenario, GPU)
    shards: pd.DataFrame  # one row per (scenario, shard); empty if the run wrote no shards
    names: Dict[str, List[str]]
    attrs: Dict[str, object]


def _group(f: h5py.File, name: str) -> pd.DataFrame:
    if name not in f:
        return pd.DataFrame()
    return pd.DataFrame({k: f[name][k][...] for k in f[name]})


def _attr(value):
    return value.decode() if isinstance(value, bytes) else value


def _read_one(path: str):
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such results file")
    with h5py.File(path, "r") as f:
        if "scenarios" not in f:
            raise ValueError(f"{path}: not a shardsweep results file (no /scenarios group)")
        attrs = {k: _attr(v) for k, v in f.attrs.items()}
        scenarios = _group(f, "scenarios")
        gpus = _group(f, "gpus")
        shards = _group(f, "shards")
        names = {k: [_attr(s) for s in f["names"][k][...]] for k in f["names"]} if "names" in f else {}
    scenarios.index.name = "scenario_id"
    scenarios = scenarios[scenarios["done"] == 1]
    return scenarios, gpus, shards, names, attrs


def _decode(df: pd.DataFrame, names: Dict[str, List[str]]) -> pd.DataFrame:
    for column, table in CODED.items():
        if column in df.columns and table in names:
            labels = np.asarray(names[table], dtype=object)
            codes = df[column].to_numpy()
            valid = (codes >= 0) & (codes < len(labels))
            decoded = np.full(len(codes), None, dtype=object)
            decoded[valid] = labels[codes[valid]]
            df[column + "_name"] = decoded
    return df


def load(paths: Union[str, Iterable[str]]) -> Results:
    """Loads one results file, or several with the same configuration, into DataFrames."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    parts = [_read_one(p) for p in paths]
    hashes = {p[4].get("config_hash") for p in parts}
    if len(hashes) > 1:
        raise ValueError(f"files come from different sweeps (config hashes {sorted(map(str, hashes))})")
    scenarios = pd.concat([p[0] for p in parts])
    duplicated = scenarios.index.duplicated(keep=False)
    if duplicated.any():
        # Every copy of a scenario done in several files must hold the same results (NaN == NaN).
        dup = scenarios[duplicated]
        first = dup[~dup.index.duplicated(keep="first")]
        for _, copy in dup[dup.index.duplicated(keep="first")].groupby(level=0):
            a, b = first.loc[copy.index[:1]], copy.iloc[:1]
            if not a.reset_index(drop=True).equals(b.reset_index(drop=True)):
                raise ValueError(f"scenario {copy.index[0]} is done in two files with different results")
        scenarios = scenarios[~scenarios.index.duplicated()]
    done = set(scenarios.index)

    def rows(i: int) -> pd.DataFrame:
        frames = [p[i] for p in parts if len(p[i])]
        if not frames:
            return pd.DataFrame()
        df = pd.concat(frames, ignore_index=True)
        df = df.drop_duplicates(subset=[c for c in ("scenario_id", "gpu", "shard") if c in df.columns])
        return df[df["scenario_id"].isin(done)].reset_index(drop=True)

    names = parts[0][3]
    attrs = dict(parts[0][4])
    if len(parts) > 1:
        # The file-level counts describe the union; per-file attributes stay in `files`.
        attrs["files"] = paths
        attrs["num_done"] = len(scenarios)
        attrs["complete"] = int(len(scenarios) == int(attrs.get("num_scenarios", -1)))
    return Results(
        scenarios=_decode(scenarios.sort_index(), names),
        gpus=rows(1),
        shards=_decode(rows(2), names),
        names=names,
        attrs=attrs,
    )


def main(argv: List[str]) -> int:
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print("usage: shardsweep_results.py RESULTS.h5 [MORE.h5 ...]\n"
              "Prints the size of each DataFrame the reader builds from the files.")
        return 0 if len(argv) >= 2 else 2
    r = load(argv[1:])
    print(f"scenarios: {len(r.scenarios)} rows, gpus: {len(r.gpus)} rows, shards: {len(r.shards)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
