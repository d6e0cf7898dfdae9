#!/usr/bin/python3
"""The transformer model against published mixture-of-experts training throughputs.

Runs `shardsweep predict transformer` on inputs/predict/published_moe.csv (each published run's
configuration) and prints, per run, the predicted and the measured tokens/s per GPU
(inputs/measured/transformer/published_moe.csv) and the model's signed error:

    /usr/bin/python3 postprocess/published_moe.py [--shardsweep build/src/shardsweep]
"""
import argparse
import csv
import io
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shardsweep", default=os.path.join(ROOT, "build", "src", "shardsweep"),
                        help="the shardsweep executable (default: build/src/shardsweep)")
    args = parser.parse_args()
    cases = os.path.join(ROOT, "inputs", "predict", "published_moe.csv")
    measured_path = os.path.join(ROOT, "inputs", "measured", "transformer", "published_moe.csv")
    run = subprocess.run([args.shardsweep, "predict", "transformer", "--input", cases, "-f", "csv"],
                         capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"published_moe.py: predict transformer failed ({run.returncode}):\n{run.stderr}")
    predicted = {row["case"]: row for row in csv.DictReader(io.StringIO(run.stdout))}
    with open(measured_path, newline="") as f:
        measured = list(csv.DictReader(f))
    print(f"{'case':<44} {'gpus':>5} {'predicted':>10} {'measured':>9} {'error':>8} "
          f"{'ep_comm_s':>9} {'peak_GiB':>8} fits")
    errors = []
    for row in measured:
        p = predicted.get(row["case"])
        if p is None:
            sys.exit(f"published_moe.py: {measured_path}: case {row['case']} is not in {cases}")
        gpus = int(p["gpus"])
        tokens = float(p["tokens_per_s"]) / gpus
        want = float(row["measured_tokens_per_gpu_s"])
        error = tokens / want - 1.0
        errors.append(abs(error))
        print(f"{row['case']:<44} {gpus:>5} {tokens:>10.1f} {want:>9.1f} {100 * error:>+7.1f}% "
              f"{float(p['ep_comm_ms']) / 1000:>9.2f} {float(p['peak_memory_GiB']):>8.1f} "
              f"{'yes' if p['feasible'] == '1' else 'no'}")
    print(f"mean |error| {100 * sum(errors) / len(errors):.1f} % over {len(errors)} runs")


if __name__ == "__main__":
    main()
