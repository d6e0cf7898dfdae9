#!/usr/bin/python3
"""Splits a sweep file into N smaller sweep files of about equal size, for a job array.

    /usr/bin/python3 jobs/split_sweep.py SWEEP.yaml N OUTDIR
    sbatch --array=0-$((N - 1)) jobs/sweep_array.sbatch OUTDIR/parts.txt results/

Writes OUTDIR/<sweep>.part<k>.yaml (k = 0..N-1) and OUTDIR/parts.txt (their paths, one per line,
the SWEEP_LIST of jobs/sweep_array.sbatch), and prints the scenario count of every part.

How the scenario space is cut (docs/SWEEPS.md):
  grid        cut along its longest list (workloads, platforms, planners, batches, GPU counts or
              cost models) into at most N contiguous groups; every grid scenario lands in exactly
              one part, with the same workload, platform, GPU count, batch, planner and cost model;
  generators  cut into chunks of tasks (count) that fill the parts up to an equal scenario count;
              chunk k of a generator gets its own seed (derived from the generator's seed, or from
              the sweep seed and the generator's position when it has none) and the name
              <name>.<k>, and its planners, batches and cost models are written out explicitly.
What is kept and what is not: the union of the parts has exactly the original's grid scenarios
and the same number of tasks of every generator with the same protocol, pool, platform, planners,
batches and cost models; grid results are the same for deterministic planners. Generated tasks
are other random draws than the unsplit sweep's (a task is a function of its generator's seed
and index), and a scenario's planner seed (used by the random and shardsweep planners) follows
its id in the part. Relative paths are rewritten as absolute ones.
Combine the parts' results with postprocess/ (the reader appends files of different sweeps).
"""

import argparse
import math
import os
import sys

try:
    import yaml
except ImportError:  # Debian: python3-yaml
    sys.exit("split_sweep.py needs PyYAML: apt-get install python3-yaml")

AXES = ["workloads", "platforms", "planners", "batches", "gpu_counts", "cost_models"]


def expand(values):
    """The integers of a batches / gpu_counts value (a list of ints and ranges, or one range)."""
    items = values if isinstance(values, list) else [values]
    out = []
    for item in items:
        if isinstance(item, dict):
            lo, hi = int(item["from"]), int(item["to"])
            if "factor" in item:
                v = lo
                while v <= hi:
                    out.append(v)
                    v *= int(item["factor"])
            else:
                out.extend(range(lo, hi + 1, int(item.get("step", 1))))
        else:
            out.append(int(item))
    return out


def absolute(path, base):
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(base, path))


def split(total, parts):
    """Sizes of `parts` contiguous groups of `total` items, as equal as possible."""
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def main(argv):
    parser = argparse.ArgumentParser(
        prog="split_sweep.py", description=__doc__.split("\n\n")[0],
        epilog="\n\n".join(__doc__.split("\n\n")[1:]), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sweep", help="the sweep file (kind: sweep)")
    parser.add_argument("parts", type=int, help="number of parts N (>= 1)")
    parser.add_argument("outdir", help="directory for the part files and parts.txt")
    args = parser.parse_args(argv[1:])
    if args.parts < 1:
        print("split_sweep.py: N must be >= 1", file=sys.stderr)
        return 2
    try:
        with open(args.sweep) as f:
            sweep = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        print(f"split_sweep.py: {args.sweep}: {e}", file=sys.stderr)
        return 2
    if not isinstance(sweep, dict) or sweep.get("kind") != "sweep":
        print(f"split_sweep.py: {args.sweep}: not a sweep file (kind: sweep)", file=sys.stderr)
        return 2
    base = os.path.dirname(os.path.abspath(args.sweep))
    name = sweep.get("name", "sweep")
    seed = int(sweep.get("seed", 0))
    grid = dict(sweep["grid"]) if sweep.get("grid") else None
    default_planners, default_models = ["round_robin"], ["native"]

    # ---- the grid: one group per part along the longest axis ---------------------------------
    groups = []  # (grid mapping, scenarios)
    if grid is not None:
        grid["workloads"] = [absolute(p, base) for p in grid["workloads"]]
        grid["platforms"] = [absolute(p, base) for p in grid["platforms"]]
        values = {a: (expand(grid[a]) if a in ("batches", "gpu_counts") else list(grid[a]))
                  if a in grid else None for a in AXES}
        sizes = {a: len(v) if v is not None else 1 for a, v in values.items()}
        grid_total = math.prod(sizes.values())
        axis = max((a for a in AXES if values[a] is not None), key=lambda a: sizes[a])
        start = 0
        for n in split(sizes[axis], min(args.parts, sizes[axis])):
            g = dict(grid)
            g[axis] = values[axis][start:start + n]
            start += n
            groups.append((g, grid_total // sizes[axis] * n))
        default_planners = list(grid.get("planners", default_planners))
        default_models = list(grid.get("cost_models", default_models))
    loads = [0] * args.parts
    files = [{"grid": None, "generators": []} for _ in range(args.parts)]
    for i, (g, n) in enumerate(groups):
        files[i]["grid"] = g
        loads[i] = n

    # ---- generators: chunks of tasks fill the parts up to the mean ------------------------------
    gens = sweep.get("generators") or []
    per_task = []
    for j, g in enumerate(gens):
        g = dict(g)
        g["platform"] = absolute(g["platform"], base)
        pool = g.get("pool")
        if isinstance(pool, dict) and "csv" in pool:
            g["pool"] = {"csv": absolute(pool["csv"], base)}
        g.setdefault("planners", default_planners)
        g.setdefault("cost_models", default_models)
        g.setdefault("batches", [65536])
        g.setdefault("name", g["protocol"])
        gens[j] = g
        per_task.append(len(expand(g["batches"])) * len(g["planners"]) * len(g["cost_models"]))
    total = sum(loads) + sum(int(g["count"]) * m for g, m in zip(gens, per_task))
    target = total / args.parts
    for j, (g, m) in enumerate(zip(gens, per_task)):
        remaining = int(g["count"])
        chunks = {}
        for i in range(args.parts):
            take = min(remaining, max(0, int((target - loads[i]) // m)))
            if take:
                chunks[i] = take
                loads[i] += take * m
                remaining -= take
        while remaining:  # rounding leftovers: to the least loaded parts
            i = min(range(args.parts), key=lambda k: loads[k])
            chunks[i] = chunks.get(i, 0) + 1
            loads[i] += m
            remaining -= 1
        gen_seed = int(g["seed"]) if "seed" in g else seed * 1000 + j
        for k, (i, count) in enumerate(sorted(chunks.items())):
            c = dict(g)
            c["count"] = count
            c["name"] = f"{g['name']}.{k}"
            c["seed"] = (gen_seed * 1000003 + k + 1) % (1 << 62)
            files[i]["generators"].append(c)

    # ---- write ---------------------------------------------------------------------------------
    os.makedirs(args.outdir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.sweep))[0]
    written = []
    print(f"{args.sweep}: {total} scenarios in {args.parts} parts")
    print(f"{'part':>4}  {'grid':>8}  {'tasks':>8}  {'scenarios':>10}  file")
    for i, f in enumerate(files):
        if f["grid"] is None and not f["generators"]:
            print(f"{i:>4}  (empty: fewer units than parts)")
            continue
        doc = {"kind": "sweep", "name": f"{name}.part{i}",
               "description": f"part {i} of {args.parts} of {os.path.abspath(args.sweep)} (split_sweep.py)",
               "seed": seed}
        if f["grid"] is not None:
            doc["grid"] = f["grid"]
        if f["generators"]:
            doc["generators"] = f["generators"]
        path = os.path.abspath(os.path.join(args.outdir, f"{stem}.part{i}.yaml"))
        with open(path, "w") as out:
            yaml.safe_dump(doc, out, sort_keys=False, default_flow_style=None, width=100)
        written.append(path)
        grid_n = groups[i][1] if i < len(groups) else 0
        tasks = sum(c["count"] for c in f["generators"])
        print(f"{i:>4}  {grid_n:>8}  {tasks:>8}  {loads[i]:>10}  {path}")
    with open(os.path.join(args.outdir, "parts.txt"), "w") as out:
        out.write("".join(p + "\n" for p in written))
    print(f"wrote {len(written)} sweep files and {os.path.join(args.outdir, 'parts.txt')}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
