#!/usr/bin/python3
"""The transformer model against published training runs that no constant was fitted on.

Runs `shardsweep predict transformer` on inputs/predict/published_<set>.csv (each published run's
configuration) and prints, per run, the predicted and the measured tokens/s per GPU
(inputs/measured/transformer/published_<set>.csv, with each figure's source) and the model's
signed error (+: the model is too fast):

    /usr/bin/python3 postprocess/published_runs.py --set moe|selene [--shardsweep build/src/shardsweep]
        [--platform PLATFORM.yaml]

--platform prices every run on that platform file instead of the one its row names (for instance
the datasheet-valued dgx-a100-4node-ib.yaml against the measured dgx-a100-selene.yaml).
"""
import argparse
import csv
import io
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SETS = {"moe": "DeepSeek-V3 runs (H800 and H100)",
        "selene": "Megatron-LM and MT-NLG runs on NVIDIA's Selene (A100)"}


def predict(shardsweep, cases, platform):
    """predict transformer's rows by case; with `platform`, every row priced on that file."""
    path = cases
    if platform:
        with open(cases, newline="") as f:
            rows = list(csv.DictReader(f))
        tmp = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False, newline="")
        with tmp:
            writer = csv.DictWriter(tmp, fieldnames=list(rows[0].keys()), lineterminator="\n")
            writer.writeheader()
            for row in rows:
                writer.writerow(dict(row, platform=os.path.abspath(platform)))
        path = tmp.name
    try:
        run = subprocess.run([shardsweep, "predict", "transformer", "--input", path, "-f", "csv"],
                             capture_output=True, text=True, check=False)
    finally:
        if platform:
            os.unlink(path)
    if run.returncode != 0:
        sys.exit(f"published_runs.py: predict transformer failed ({run.returncode}):\n{run.stderr}")
    return {row["case"]: row for row in csv.DictReader(io.StringIO(run.stdout))}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", required=True, choices=sorted(SETS),
                        help="; ".join(f"{k}: {v}" for k, v in sorted(SETS.items())))
    parser.add_argument("--shardsweep", default=os.path.join(ROOT, "build", "src", "shardsweep"),
                        help="the shardsweep executable (default: build/src/shardsweep)")
    parser.add_argument("--platform", help="price every run on this platform file")
    args = parser.parse_args()
    if args.platform and not os.path.isfile(args.platform):
        parser.error(f"--platform {args.platform}: no such file")
    cases = os.path.join(ROOT, "inputs", "predict", f"published_{args.set}.csv")
    measured_path = os.path.join(ROOT, "inputs", "measured", "transformer",
                                 f"published_{args.set}.csv")
    predicted = predict(args.shardsweep, cases, args.platform)
    with open(measured_path, newline="") as f:
        measured = list(csv.DictReader(f))
    print(f"{'case':<44} {'gpus':>5} {'predicted':>10} {'measured':>9} {'error':>8} "
          f"{'tp_comm_s':>9} {'ep_comm_s':>9} {'peak_GiB':>8} fits")
    errors = []
    for row in measured:
        p = predicted.get(row["case"])
        if p is None:
            sys.exit(f"published_runs.py: {measured_path}: case {row['case']} is not in {cases}")
        gpus = int(p["gpus"])
        tokens = float(p["tokens_per_s"]) / gpus
        want = float(row["measured_tokens_per_gpu_s"])
        error = tokens / want - 1.0
        errors.append(error)
        print(f"{row['case']:<44} {gpus:>5} {tokens:>10.1f} {want:>9.1f} {100 * error:>+7.1f}% "
              f"{float(p['tp_comm_ms']) / 1000:>9.2f} {float(p['ep_comm_ms']) / 1000:>9.2f} "
              f"{float(p['peak_memory_GiB']):>8.1f} {'yes' if p['feasible'] == '1' else 'no'}")
    print(f"mean |error| {100 * sum(abs(e) for e in errors) / len(errors):.1f} %, "
          f"mean error {100 * sum(errors) / len(errors):+.1f} % over {len(errors)} runs")


if __name__ == "__main__":
    main()
