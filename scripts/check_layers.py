#!/usr/bin/python3
"""Checks that every #include in include/shardsweep/ and src/ goes down the layers of
docs/ARCHITECTURE.md, never up or sideways, and prints each include that does not.

    scripts/check_layers.py [REPO_DIR]      exit 0: clean, 1: violations (listed), 2: usage

A folder may include its own files and those of any lower layer. Folders of one layer are
independent of each other (io and parallel, calibration and sweep). The ctest cli.include_layers
runs this on the checkout; docs/ARCHITECTURE.md says why each layer sits where it does.
"""
import os
import re
import sys

# Bottom up. Folders on one line share a layer and may not include each other.
LAYERS = [
    ["core"],  # errors and the version: no shardsweep dependency
    ["domain"],  # the vocabulary: plain types and the enum descriptor tables
    ["model"],  # pure cost functions on the domain's structs (KOKKOS_INLINE_FUNCTION)
    ["kernel"],  # the batched cost kernel over Views
    ["plan"],  # planners: DLRM sharding, transformer configurations
    ["scenario"],  # the scenario space: tasks, grids, step graphs
    ["io", "parallel"],  # files to structs (YAML, CSV, HDF5, Chakra); MPI wrappers
    ["calibration", "sweep"],  # model fitting; the sweep driver (MPI + HDF5 + kernel)
    ["cli"],  # subcommands
    ["app"],  # main()
]
LEVEL = {folder: level for level, folders in enumerate(LAYERS) for folder in folders}
TOP_LEVEL_HEADERS = {"version.hpp": "core"}  # include/shardsweep/version.hpp

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]')


def folder_of(path, root):
    """The layer folder of a file under include/shardsweep/ or src/, or None."""
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[:2] == ["include", "shardsweep"]:
        rest = rel[2:]
    elif rel[0] == "src":
        rest = rel[1:]
    else:
        return None
    if len(rest) == 1:
        return TOP_LEVEL_HEADERS.get(rest[0])
    return rest[0]


def included_folder(target, including_folder):
    """The layer folder an include names: <shardsweep/F/...>, <F/...> (src/, internal headers)
    or "file.hpp" next to the including file."""
    parts = target.split("/")
    if parts[0] == "shardsweep":
        parts = parts[1:]
        if len(parts) == 1:
            return TOP_LEVEL_HEADERS.get(parts[0])
    if len(parts) > 1 and parts[0] in LEVEL:
        return parts[0]
    if len(parts) == 1 and target.endswith(".hpp"):
        return including_folder
    return None  # a system or third-party header


def violations(root):
    found = []
    for base in (os.path.join(root, "include", "shardsweep"), os.path.join(root, "src")):
        for directory, _, files in os.walk(base):
            for name in sorted(files):
                if not name.endswith((".hpp", ".cpp")):
                    continue
                path = os.path.join(directory, name)
                folder = folder_of(path, root)
                if folder is None:
                    continue
                if folder not in LEVEL:
                    found.append(f"{os.path.relpath(path, root)}: folder '{folder}' is in no layer "
                                 "(add it to LAYERS in scripts/check_layers.py and to docs/ARCHITECTURE.md)")
                    continue
                with open(path, encoding="utf-8") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = included_folder(m.group(1), folder)
                        if target is None or target == folder:
                            continue
                        if target not in LEVEL or LEVEL[target] >= LEVEL[folder]:
                            how = "up" if LEVEL.get(target, 99) > LEVEL[folder] else "sideways"
                            found.append(f"{os.path.relpath(path, root)}:{number}: {folder} includes "
                                         f"{m.group(1)} ({how}: {folder} may include only "
                                         f"{', '.join(lower(folder)) or 'nothing'})")
    return found


def lower(folder):
    return [f for level in LAYERS[: LEVEL[folder]] for f in level]


def main(argv):
    if len(argv) > 2 or (len(argv) == 2 and argv[1] in ("-h", "--help")):
        print(__doc__)
        return 2
    root = argv[1] if len(argv) == 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    found = violations(root)
    for v in found:
        print(v)
    if found:
        print(f"{len(found)} include(s) against the layers of docs/ARCHITECTURE.md")
        return 1
    print("includes follow the layers: " + " < ".join("/".join(level) for level in LAYERS))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
