"""Read shardsweep results files (docs/HDF5_LAYOUT.md) into pandas DataFrames.

    from shardsweep_results import load
    r = load("out/quickstart.h5")            # or load(["slice0.h5", "slice1.h5"])
    r.scenarios, r.gpus, r.shards, r.tables, r.names

One call per file and group. Each shard row gets its table's access features (rows,
pooling_factor, distribution, zipf_alpha, bin_0..bin_16) from its own file's /tables row
`table_row` (schema 4 stores them once per table), so `r.shards` holds everything a learned cost
model trains on; `r.tables` is the catalogue of the first file. Several files are combined:
files of one sweep (same config hash, e.g. slices of the scenario space) by scenario id, each
scenario taken from the file in which it is done (a scenario done in two files with different
results is an error); files of different sweeps (e.g. the per-task sweeps of
jobs/sweep_array.sbatch) are appended, with scenario ids offset and codes remapped onto the union
of the name tables (columns `file`, `file_scenario_id`). Coded columns gain a `<column>_name`
companion.
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

# Coded /scenarios and /shards columns and the /names table each one indexes.
# Which /names table each code column indexes comes from the column's `codes` attribute; files
# written before the columns carried it fall back to this map.
LEGACY_CODED = {
    "workload": "workloads",
    "platform": "platforms",
    "planner": "planners",
    "cost_model": "cost_models",
    "task_protocol": "task_protocols",
    "sharding_type": "sharding_types",
    "compute_kernel": "compute_kernels",
    "generator": "generators",
}


@dataclasses.dataclass
class Results:
    scenarios: pd.DataFrame  # one row per computed scenario, indexed by scenario id
    gpus: pd.DataFrame  # one row per (scenario, GPU)
    shards: pd.DataFrame  # one row per (scenario, shard), table features joined; empty if none
    names: Dict[str, List[str]]
    attrs: Dict[str, object]
    tables: pd.DataFrame = dataclasses.field(default_factory=pd.DataFrame)  # /tables

    @property
    def phases(self) -> List[str]:
        """The DLRM step's phases in execution order, as the file lists them (/names/phases): the
        /gpus columns are these names + "_ms"."""
        return self.names.get("phases", [])


# The /tables columns joined into every shard row (the catalogue's own bookkeeping columns,
# workload, generator and index, stay in Results.tables).
TABLE_FEATURES = ["rows", "pooling_factor", "distribution", "zipf_alpha"] + [f"bin_{j}" for j in range(17)]


def _join_table_features(path: str, shards: pd.DataFrame, tables: pd.DataFrame) -> pd.DataFrame:
    """The shard rows with their /tables features (files of schema < 4 hold them already)."""
    if shards.empty or tables.empty or "table_row" not in shards.columns:
        return shards
    at = shards["table_row"].to_numpy()
    if at.min() < 0 or at.max() >= len(tables):
        raise ValueError(f"{path}: /shards/table_row outside /tables (0..{len(tables) - 1})")
    for column in TABLE_FEATURES:
        shards[column] = tables[column].to_numpy()[at]
    return shards


def _group(f: h5py.File, name: str) -> pd.DataFrame:
    if name not in f:
        return pd.DataFrame()
    return pd.DataFrame({k: f[name][k][...] for k in f[name]})


def _attr(value):
    return value.decode() if isinstance(value, bytes) else value


def _coded_columns(f: h5py.File) -> Dict[str, str]:
    """column -> /names table, from the `codes` attributes of the row groups' datasets."""
    coded: Dict[str, str] = {}
    for group in ("scenarios", "gpus", "shards"):
        if group in f:
            for column, dataset in f[group].items():
                if "codes" in dataset.attrs:
                    coded[column] = _attr(dataset.attrs["codes"]).rsplit("/", 1)[-1]
    return coded or dict(LEGACY_CODED)


def _read_one(path: str):
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: no such results file")
    with h5py.File(path, "r") as f:
        if "scenarios" not in f:
            raise ValueError(f"{path}: not a shardsweep results file (no /scenarios group)")
        attrs = {k: _attr(v) for k, v in f.attrs.items()}
        scenarios = _group(f, "scenarios")
        gpus = _group(f, "gpus")
        tables = _group(f, "tables")
        shards = _join_table_features(path, _group(f, "shards"), tables)
        names = {k: [_attr(s) for s in f["names"][k][...]] for k in f["names"]} if "names" in f else {}
        coded = _coded_columns(f)
    scenarios.index.name = "scenario_id"
    scenarios = scenarios[scenarios["done"] == 1]
    return scenarios, gpus, shards, names, attrs, tables, coded


def _decode(df: pd.DataFrame, names: Dict[str, List[str]], coded: Dict[str, str]) -> pd.DataFrame:
    for column, table in coded.items():
        if column in df.columns and table in names:
            labels = np.asarray(names[table], dtype=object)
            codes = df[column].to_numpy()
            valid = (codes >= 0) & (codes < len(labels))
            decoded = np.full(len(codes), None, dtype=object)
            decoded[valid] = labels[codes[valid]]
            df[column + "_name"] = decoded
    return df


def _concat_sweeps(parts, paths):
    """Files of different sweeps (e.g. one sweep file per job-array task) as one set of frames:
    the code columns are remapped onto the union of the name tables, scenario ids are offset by
    the scenario counts of the files before (`file` and `file_scenario_id` keep the origin)."""
    names: Dict[str, List[str]] = {}
    coded: Dict[str, str] = {}
    for p in parts:
        coded.update(p[6])
        for table, labels in p[3].items():
            union = names.setdefault(table, [])
            union.extend(label for label in labels if label not in union)
    out = ([], [], [])
    offset = 0
    for index, (scen, gpus, shards, file_names, attrs, _, _) in enumerate(parts):
        scen, gpus, shards = scen.copy(), gpus.copy(), shards.copy()
        for df in (scen, shards):
            for column, table in coded.items():
                if column in df.columns and table in file_names:
                    lut = np.array([names[table].index(x) for x in file_names[table]] or [0], dtype=np.int64)
                    codes = df[column].to_numpy()
                    valid = (codes >= 0) & (codes < len(file_names[table]))
                    df[column] = np.where(valid, lut[np.where(valid, codes, 0)], codes).astype(codes.dtype)
        scen["file"] = index
        scen["file_scenario_id"] = scen.index
        scen.index = scen.index + offset
        scen.index.name = "scenario_id"
        for df in (gpus, shards):
            if len(df):
                df["scenario_id"] = df["scenario_id"] + offset
        for i, df in enumerate((scen, gpus, shards)):
            if len(df):
                out[i].append(df)
        offset += int(attrs.get("num_scenarios", len(scen)))
    frames = [pd.concat(f, ignore_index=(i > 0)) if f else pd.DataFrame() for i, f in enumerate(out)]
    attrs = {"files": paths, "config_hash": [p[4].get("config_hash") for p in parts],
             "num_scenarios": offset, "num_done": len(frames[0]),
             "complete": int(all(int(p[4].get("complete", 0)) == 1 for p in parts)),
             "combine": "concat"}
    return Results(scenarios=_decode(frames[0].sort_index(), names, coded), gpus=frames[1],
                   shards=_decode(frames[2], names, coded), names=names, attrs=attrs, tables=parts[0][5])


def load(paths: Union[str, Iterable[str]], combine: str = "auto") -> Results:
    """Loads one results file, or several, into DataFrames.

    combine="slices": the files are parts of one sweep (same config hash), e.g. a run split over
    several outputs; a scenario id is the same scenario in every file. combine="concat": the files
    are different sweeps, appended with offset scenario ids. "auto" (default): slices when every
    file has the same config hash, else concat.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    paths = [os.fspath(p) for p in paths]
    if combine not in ("auto", "slices", "concat"):
        raise ValueError(f"combine must be auto, slices or concat, not {combine}")
    parts = [_read_one(p) for p in paths]
    hashes = {p[4].get("config_hash") for p in parts}
    if combine == "concat" or (combine == "auto" and len(hashes) > 1):
        return _concat_sweeps(parts, paths)
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
        scenarios=_decode(scenarios.sort_index(), names, parts[0][6]),
        gpus=rows(1),
        shards=_decode(rows(2), names, parts[0][6]),
        names=names,
        attrs=attrs,
        tables=parts[0][5],
    )


def main(argv: List[str]) -> int:
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print("usage: shardsweep_results.py RESULTS.h5 [MORE.h5 ...]\n"
              "Prints the size of each DataFrame the reader builds from the files.")
        return 0 if len(argv) >= 2 else 2
    r = load(argv[1:])
    print(f"scenarios: {len(r.scenarios)} rows, gpus: {len(r.gpus)} rows, shards: {len(r.shards)} rows"
          f" ({r.attrs.get('combine', 'slices') if len(argv) > 2 else 'one file'})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
