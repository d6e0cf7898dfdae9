#!/usr/bin/python3
"""Trains shardsweep's learned operator models (GEMM and non-GEMM) on NeuSight's measured kernels.

    /usr/bin/python3 postprocess/train_operator_model.py [--family gemm|ops|all] [--out-dir inputs/models]
        [--gemm-dir inputs/measured/gemm] [--ops-dir inputs/measured/ops] [--gpus inputs/gpus]
        [--gemm-stride 4] [--max-iter 80] [--no-logo] [--seed 0] [--subset N]

Writes, in the shardsweep-mlp text format (docs/model/learned_operators.md):
  <out-dir>/gemm.mlp, <out-dir>/ops.mlp                  trained on every GPU of the data
  <out-dir>/logo/<family>_without_<GPU>.mlp              leave-one-GPU-out folds (unless --no-logo)
  <out-dir>/logo/<family>_unseen_shapes.mlp              without the rows whose dims add up to a multiple of 5
  <out-dir>/logo/<family>_without_largest.mlp            without each GPU's largest shapes (the top 20 % by
                                                         B*M*N*K or B*H): the out-of-distribution test
and prints the MAPE of each fold per GPU (and per operator family) next to the analytic model.
`shardsweep bench gemm --table learned` / `bench ops` recompute the same tables in C++ from the fold files.

Out of distribution. Every model file records the range of each input over its training rows
(input_min / input_max) and the evaluator clamps the inputs into it, so a shape beyond the training
shapes gets the correction of the nearest trained shape instead of an extrapolated one. A model is the
default (`predict gemm|op --model auto`) only on the GPUs listed in its default_for line: those where
the fold without the largest shapes beats the analytic model on them. With --no-logo that test is not
run and default_for is empty.

Design (the C++ evaluator, model/learned_operator.hpp, computes the same features):
  GEMM  latency = max(bound, analytic * exp(MLP(x))): the MLP predicts the log ratio of the measured
        latency to the analytic tile/wave model (model/gemm.hpp, ported below with the shipped
        constants); x = the shape (log2 B, M, N, K, linear), the analytic model's log2 time and
        log2 time over the bound, the wave count and last-wave fill of 128x128 and 64x64 tiles, and
        the GPU's spec features (log2 SMs, clock, FP32 peak, bandwidth, L2, peak/bandwidth, board
        power per FLOP scaled by the process node).
  ops   latency = bound * exp(max(0, MLP(x))): the MLP predicts the log ratio of the measured latency
        to the roofline (bytes / bandwidth, FLOPs / peak); x = the op (one-hot over 13 ops), log2 of
        compute-over-memory time, tensor bytes over L2, elements per SM and the memory time in ms.
  bound = the roofline with the wave count: for GEMM max(ceil(B*ceil(M/32)*ceil(N/32)*ceil(K/32)/SMs)
        * 2*32^3 / (peak/SMs), bytes/bandwidth); every prediction is >= it.
Shapes follow shardsweep: C[B,M,N] = A[B,M,K] W[B,K,N], K the reduction (NeuSight's N and K swap).
GPU specs come from the GPU catalog (inputs/gpus), matched by the device name as in C++.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
import time
import warnings

import numpy as np
import pandas as pd
import yaml
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPRegressor
from threadpoolctl import threadpool_limits

FORMAT_VERSION = 1
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# The analytic model's shipped constants (model/gemm.hpp shippedGemmConstants(), same order).
GEMM_CONSTANTS = [0.027053, 1.0, 16.135, 4.2137, 23616.0, 0.5977, 0.018288, 1.3374, 42.0, 0.80804]
TILE_M = [128, 128, 64, 128, 32, 64, 64, 32]
TILE_N = [128, 64, 128, 32, 128, 64, 32, 32]

# Operator names in the C++ enum's order (model/learned_operator.hpp OperatorKind).
OPS = ["softmax", "ln", "add", "addu", "mul", "mulu", "div", "divu", "pow", "powu", "gelu", "relu", "tanh"]
# fp32 tensors of B*H elements read + written: binary ops read two, unary ops one.
OP_TENSORS = {"softmax": 2, "ln": 2, "add": 3, "addu": 2, "mul": 3, "mulu": 2, "div": 3, "divu": 2,
              "pow": 3, "powu": 2, "gelu": 2, "relu": 2, "tanh": 2}
# FLOPs per element (roofline only; NeuSight's OpsPerO where it lists them).
OP_FLOPS = {"softmax": 5, "ln": 6, "add": 1, "addu": 1, "mul": 1, "mulu": 1, "div": 1, "divu": 1,
            "pow": 1, "powu": 1, "gelu": 8, "relu": 1, "tanh": 4}

GEMM_FEATURES = ["log2_B", "log2_M", "log2_N", "log2_K", "linear", "log2_analytic_over_bound",
                 "log2_analytic_ms", "log2_waves_128x128", "log2_fill_128x128", "log2_waves_64x64",
                 "log2_fill_64x64", "log2_sm_count", "log2_clock_MHz", "log2_peak_TFLOPs",
                 "log2_bandwidth_GBps", "log2_l2_MiB", "log2_balance", "log2_power_per_flop"]
OPS_FEATURES = ["op_" + o for o in OPS] + ["log2_compute_over_memory", "log2_bytes_over_l2",
                                           "log2_elements_per_sm", "log2_memory_ms", "log2_sm_count",
                                           "log2_clock_MHz", "log2_peak_TFLOPs", "log2_bandwidth_GBps",
                                           "log2_l2_MiB"]
SPEC_KEYS = ["sm_count", "boost_clock_MHz", "fp32_TFLOPs", "memory_bandwidth_GBps", "l2_cache_MiB",
             "tdp_W", "process_nm", "max_matmul_fp32_TFLOPs"]
# model/gemm.hpp kMaxMeasuredFp32MatmulFraction: the FP32 ceiling of a GPU without its own measurement.
MAX_MEASURED_FP32_MATMUL_FRACTION = 13.40 / 14.0


def norm(name: str) -> str:
    return "".join(c for c in name.lower() if c.isalnum())


def read_catalog(folder: str) -> dict:
    """Normalised name or alias -> catalog entry (dict with 'name' and the spec keys)."""
    cat = {}
    for f in sorted(glob.glob(os.path.join(folder, "*.yaml"))):
        with open(f) as fh:
            d = yaml.safe_load(fh)
        for n in [d["name"]] + list(d.get("aliases", [])):
            cat[norm(str(n))] = d
    return cat


def attach_specs(df: pd.DataFrame, cat: dict) -> pd.DataFrame:
    missing = sorted({d for d in df["device"].unique() if norm(d) not in cat})
    if missing:
        raise SystemExit(f"train_operator_model.py: GPU(s) not in the catalog: {missing}")
    entries = df["device"].map(lambda d: cat[norm(d)])
    df["gpu"] = entries.map(lambda e: e["name"]).values
    for k in SPEC_KEYS:
        df[k] = entries.map(lambda e, k=k: float(e.get(k, 0) or 0)).values
    return df


# ---- GEMM --------------------------------------------------------------------------------------

def analytic_gemm(B, M, N, K, linear, sm, peak_T, bw, tdp, nm, c=GEMM_CONSTANTS):
    """model/gemm.hpp predictGemmWith (fp32), vectorised; same arithmetic, same order."""
    launch, pe, kov, ih, occ, ebw, skms, llr, fpj, boost = c
    peak = peak_T * 1.0e12
    cap = np.where((tdp > 0) & (nm > 0), tdp * fpj * 1.0e9 * 16.0 / np.where(nm > 0, nm, 1.0), 0.0)
    frac = np.where((cap > 0) & (peak > 0), np.minimum(1.0, cap / peak), 1.0)
    sustained = peak * frac
    band = bw * 1.0e9 * ebw
    mem = 4.0 * B * (M * K + K * N + M * N) / band * 1.0e3
    lms = np.where(linear, launch * llr, launch)
    sum_log = 0.0
    for t in range(len(TILE_M)):
        tm, tn = TILE_M[t], TILE_N[t]
        per = min(8.0, max(1.0, np.floor(occ / (float(tm) * float(tn)))))
        base = B * np.ceil(M / tm) * np.ceil(N / tn)
        area = float(tm) * float(tn)
        inten = area / float(tm + tn)
        eff = pe * inten / (inten + ih)

        def cand(split):
            waves = np.ceil(base * split / (sm * per))
            work = waves * per * 2.0 * area * (np.ceil(K / split) + kov) * sm
            b_ms = work / (peak * eff) * 1.0e3
            c_ms = work / (sustained * eff) * 1.0e3
            w = b_ms / (b_ms + boost)
            comp = (1.0 - w) * b_ms + w * c_ms
            red = skms + 4.0 * (split + 1.0) * B * M * N / band * 1.0e3 if split > 1.0 else 0.0
            return lms + np.maximum(comp, mem) + red

        best = cand(1.0)
        active = np.ones(np.shape(B), dtype=bool)
        split = 2.0
        for _ in range(1, 7):
            active &= ~((split * 32.0 > K) | (base >= sm * per))
            p = cand(split)
            best = np.where(active & (p < best), p, best)
            split *= 2.0
        sum_log = sum_log + np.log(best)
    return np.exp(sum_log / len(TILE_M))


def gemm_bound(B, M, N, K, sm, peak_T, bw):
    """The roofline with the wave count (32^3 blocks; model/learned_operator.hpp gemmWaveBoundMs)."""
    blocks = B * np.ceil(M / 32.0) * np.ceil(N / 32.0) * np.ceil(K / 32.0)
    compute = np.ceil(blocks / sm) * (2.0 * 32.0 * 32.0 * 32.0) / (peak_T * 1.0e12 / sm) * 1.0e3
    memory = 4.0 * B * (M * K + K * N + M * N) / (bw * 1.0e9) * 1.0e3
    return np.maximum(compute, memory)


def gemm_ceiling(df: pd.DataFrame):
    """model/gemm.hpp gemmMaxMatmulMs (FP32): the time at the highest matmul rate measured on the GPU."""
    B, M, N, K = (df[c].values.astype(float) for c in "BMNK")
    measured = df["max_matmul_fp32_TFLOPs"].values
    tflops = np.where(measured > 0, measured, df["fp32_TFLOPs"].values * MAX_MEASURED_FP32_MATMUL_FRACTION)
    return 2.0 * B * M * N * K / (tflops * 1.0e12) * 1.0e3


def gemm_features(df: pd.DataFrame):
    B, M, N, K = (df[c].values.astype(float) for c in "BMNK")
    lin = df["linear"].values.astype(bool)
    sm, peak, bw = df["sm_count"].values, df["fp32_TFLOPs"].values, df["memory_bandwidth_GBps"].values
    l2, tdp, nm, clk = df["l2_cache_MiB"].values, df["tdp_W"].values, df["process_nm"].values, \
        df["boost_clock_MHz"].values
    # predictGemmWith: never faster than the measured matmul maximum
    analytic = np.maximum(analytic_gemm(B, M, N, K, lin, sm, peak, bw, tdp, nm), gemm_ceiling(df))
    bound = gemm_bound(B, M, N, K, sm, peak, bw)
    cols = [np.log2(B), np.log2(M), np.log2(N), np.log2(K), lin.astype(float),
            np.log2(analytic / bound), np.log2(analytic)]
    for tm, tn in ((128, 128), (64, 64)):
        tiles = B * np.ceil(M / tm) * np.ceil(N / tn)
        waves = np.ceil(tiles / sm)
        cols += [np.log2(waves), np.log2(tiles / (waves * sm))]
    power = np.where((tdp > 0) & (nm > 0), tdp / peak * 16.0 / np.where(nm > 0, nm, 1.0), 1.0)
    cols += [np.log2(sm), np.log2(clk), np.log2(peak), np.log2(bw), np.log2(l2), np.log2(peak * 1000.0 / bw),
             np.log2(power)]
    return np.column_stack(cols), analytic, bound


def load_gemm(folder: str, cat: dict) -> pd.DataFrame:
    files = sorted(glob.glob(os.path.join(folder, "train", "*.csv")))
    if not files:
        raise SystemExit(f"train_operator_model.py: no train/*.csv under {folder}")
    parts = []
    for f in files:
        d = pd.read_csv(f, usecols=["op", "device", "latency_ms", "B", "M", "N", "K"])
        parts.append(d)
    d = pd.concat(parts, ignore_index=True)
    # NeuSight's N is the reduction: shardsweep's K.
    d = d.rename(columns={"N": "K_", "K": "N"}).rename(columns={"K_": "K"})
    d["linear"] = d["op"] == "linear"
    return attach_specs(d, cat)


# ---- non-GEMM operators ------------------------------------------------------------------------

def ops_bound_parts(op, B, H, peak_T, bw):
    elems = B * H
    tensors = np.array([OP_TENSORS[o] for o in op], dtype=float)
    flops = np.array([OP_FLOPS[o] for o in op], dtype=float)
    memory = 4.0 * tensors * elems / (bw * 1.0e9) * 1.0e3
    compute = flops * elems / (peak_T * 1.0e12) * 1.0e3
    return memory, compute


def ops_features(df: pd.DataFrame):
    op = df["op"].values
    B, H = df["B"].values.astype(float), df["H"].values.astype(float)
    sm, peak, bw, l2 = df["sm_count"].values, df["fp32_TFLOPs"].values, df["memory_bandwidth_GBps"].values, \
        df["l2_cache_MiB"].values
    memory, compute = ops_bound_parts(op, B, H, peak, bw)
    bound = np.maximum(memory, compute)
    tensors = np.array([OP_TENSORS[o] for o in op], dtype=float)
    cols = [(op == o).astype(float) for o in OPS]
    cols += [np.log2(compute / memory), np.log2(4.0 * tensors * B * H / (l2 * 1048576.0)), np.log2(B * H / sm),
             np.log2(memory), np.log2(sm), np.log2(df["boost_clock_MHz"].values), np.log2(peak), np.log2(bw),
             np.log2(l2)]
    return np.column_stack(cols), bound


def load_ops(folder: str, cat: dict) -> pd.DataFrame:
    files = sorted(glob.glob(os.path.join(folder, "train", "*.csv")))
    if not files:
        raise SystemExit(f"train_operator_model.py: no train/*.csv under {folder}")
    d = pd.concat([pd.read_csv(f, usecols=["OPName", "Latency", "Device", "B", "H"]) for f in files],
                  ignore_index=True)
    d.columns = ["op", "latency_ms", "device", "B", "H"]
    bad = sorted(set(d["op"]) - set(OPS))
    if bad:
        raise SystemExit(f"train_operator_model.py: unknown ops {bad}")
    return attach_specs(d, cat)


# ---- MLP, file format --------------------------------------------------------------------------

def fit_mlp(X, y, hidden, alpha, max_iter, seed):
    """The MLP, the z-score of its inputs and their range over the training rows (lo, hi)."""
    mean = X.mean(axis=0)
    scale = X.std(axis=0)
    scale[scale == 0.0] = 1.0
    with warnings.catch_warnings(), threadpool_limits(1):
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp = MLPRegressor(hidden, activation="relu", alpha=alpha, max_iter=max_iter, early_stopping=True,
                           random_state=seed).fit((X - mean) / scale, y)
    return mlp, mean, scale, X.min(axis=0), X.max(axis=0)


def mlp_eval(mlp, mean, scale, lo, hi, X):
    """The C++ evaluator's arithmetic (model/mlp.hpp): inputs clamped into [lo, hi], z-score, dense
    layers, ReLU between. lo = hi = None: no clamp."""
    if lo is not None:
        X = np.minimum(np.maximum(X, lo), hi)
    h = (X - mean) / scale
    for i, (W, b) in enumerate(zip(mlp.coefs_, mlp.intercepts_)):
        h = h @ W + b
        if i + 1 < len(mlp.coefs_):
            h = np.maximum(h, 0.0)
    return h[:, 0]


def write_model(path, family, target, names, model, output_min, trained_on, X_check, default_for=(),
                writer="postprocess/train_operator_model.py"):
    mlp, mean, scale, lo, hi = model
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    f = lambda v: " ".join(repr(float(x)) for x in np.ravel(v))  # noqa: E731
    lines = [f"shardsweep-mlp {FORMAT_VERSION}",
             f"# written by {writer} ({time.strftime('%Y-%m-%d')})",
             f"family {family}", f"target {target}", f"inputs {len(names)}", "names " + " ".join(names),
             "mean " + f(mean), "scale " + f(scale)]
    if lo is not None:
        lines += ["input_min " + f(lo), "input_max " + f(hi)]
    lines += [f"output_min {repr(float(output_min))}", "trained_on " + " ".join(trained_on)]
    if default_for:
        lines.append("default_for " + " ".join(default_for))
    lines.append(f"layers {len(mlp.coefs_)}")
    for i, (W, b) in enumerate(zip(mlp.coefs_, mlp.intercepts_)):
        act = "relu" if i + 1 < len(mlp.coefs_) else "identity"
        lines.append(f"layer {act} {W.shape[0]} {W.shape[1]}")
        lines.append("weights " + f(W.T))  # row-major [output][input]
        lines.append("bias " + f(b))
    y = mlp_eval(*model, X_check)
    for x, v in zip(X_check, y):
        lines.append("check " + f(x) + " " + repr(float(v)))
    lines.append("end")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


# ---- training and leave-one-GPU-out ------------------------------------------------------------

def ape(pred, meas):
    return np.abs(pred - meas) / meas * 100.0


def main(argv) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    measured = os.path.join(ROOT, "inputs", "measured")
    p.add_argument("--family", choices=["gemm", "ops", "all"], default="all")
    p.add_argument("--out-dir", default=os.path.join(ROOT, "inputs", "models"))
    p.add_argument("--gemm-dir", default=os.path.join(measured, "gemm"))
    p.add_argument("--ops-dir", default=os.path.join(measured, "ops"))
    p.add_argument("--gpus", default=os.path.join(ROOT, "inputs", "gpus"), help="GPU catalog folder")
    p.add_argument("--gemm-stride", type=int, default=4, help="train GEMM on every n-th row (default 4)")
    p.add_argument("--max-iter", type=int, default=80, help="MLP epochs at most (default 80)")
    p.add_argument("--subset", type=int, default=0, help="keep only N random rows per family (CI)")
    p.add_argument("--no-logo", action="store_true",
                   help="skip the folds (leave-one-GPU-out, unseen and largest shapes); default_for is then empty")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dump-predictions", metavar="PREFIX", default=None,
                   help="write PREFIX<family>.csv: the final model's predictions of 3 rows per GPU "
                        "(columns of `predict gemm` / `predict op` plus gpu and latency_ms), to check the "
                        "C++ evaluator against this script")
    a = p.parse_args(argv)
    cat = read_catalog(a.gpus)
    t0 = time.time()
    for fam in (["gemm", "ops"] if a.family == "all" else [a.family]):
        d = load_gemm(a.gemm_dir, cat) if fam == "gemm" else load_ops(a.ops_dir, cat)
        if a.subset:
            d = d.sample(n=min(a.subset, len(d)), random_state=a.seed).reset_index(drop=True)
        train_family(Family(fam, d, a), a)
    print(f"done in {time.time() - t0:.1f} s")
    return 0


# The analytic operator model (model/learned_operator.hpp shippedOperatorConstants(): kernel time ms,
# bandwidth efficiency, softmax and layer-norm factors): the baseline the out-of-distribution test
# compares with, as in C++.
OPS_CONSTANTS = (0.0086411, 0.75080, 1.2618, 1.5117)


def analytic_ops(op, bound):
    """model/learned_operator.hpp predictOperatorAnalytic: launch + bound / efficiency * factor."""
    launch, eff, softmax, ln = OPS_CONSTANTS
    factor = np.where(op == "softmax", softmax, np.where(op == "ln", ln, 1.0))
    return launch + bound / eff * factor


# A GPU's largest shapes: size (B*M*N*K or B*H) at or above the value at index floor(0.8 n) of its
# sorted sizes; `bench gemm --table learned` and `bench ops` select the same rows in C++.
LARGEST_QUANTILE = 0.8


class Family:
    """One model family's rows, features, target and training settings."""

    def __init__(self, fam, d, a):
        self.fam, self.d = fam, d
        if fam == "gemm":
            self.X, self.base, bound = gemm_features(d)
            # no prediction faster than the measured matmul maximum (predictGemmLearned)
            self.bound = np.maximum(bound, gemm_ceiling(d))
            self.analytic = self.base
            self.names, self.target, self.hidden, self.out_min, self.stride = \
                GEMM_FEATURES, "log_latency_over_analytic", (32, 32), -1.0e300, a.gemm_stride
            self.dims = ["B", "M", "N", "K"]
        else:
            self.X, self.bound = ops_features(d)
            self.base = self.bound
            self.analytic = analytic_ops(d["op"].values, self.bound)
            self.names, self.target, self.hidden, self.out_min, self.stride = \
                OPS_FEATURES, "log_latency_over_bound", (16, 16), 0.0, 1
            self.dims = ["B", "H"]
        self.meas = d["latency_ms"].values
        self.y = np.log(self.meas / self.base)
        self.gpus = sorted(d["gpu"].unique())
        rng = np.random.default_rng(a.seed)
        check = self.X[rng.choice(len(self.X), size=min(4, len(self.X)), replace=False)]
        # one record beyond every input's range: the reader checks the clamp against this script
        self.check = np.vstack([check, self.X.max(axis=0) + 1.0])
        self.max_iter, self.seed = a.max_iter, a.seed

    def train(self, rows):
        idx = np.where(rows)[0][::self.stride]
        return fit_mlp(self.X[idx], self.y[idx], self.hidden, 1e-1, self.max_iter, self.seed)

    def predict(self, model, rows):
        z = np.maximum(mlp_eval(*model, self.X[rows]), self.out_min)
        return np.maximum(self.bound[rows], self.base[rows] * np.exp(z))

    def write(self, path, model, trained_on, default_for=()):
        write_model(path, self.fam, self.target, self.names, model, self.out_min, trained_on, self.check,
                    default_for)

    def largest(self):
        size = np.ones(len(self.d))
        for c in self.dims:
            size = size * self.d[c].values.astype(float)
        held = np.zeros(len(self.d), dtype=bool)
        for g in self.gpus:
            rows = self.d["gpu"].values == g
            s = np.sort(size[rows])
            held[rows] = size[rows] >= s[int(np.floor(LARGEST_QUANTILE * len(s)))]
        return held


def train_family(f: Family, a) -> None:
    model = f.train(np.ones(len(f.d), dtype=bool))
    default_for = [] if a.no_logo else validate(f, a)
    path = os.path.join(a.out_dir, f"{f.fam}.mlp")
    f.write(path, model, f.gpus, default_for)
    print(f"{f.fam}: {len(f.d)} rows, {len(f.gpus)} GPUs -> {path}; default for: {' '.join(default_for) or '-'}")
    if a.dump_predictions:
        sel = np.zeros(len(f.d), dtype=bool)
        sel[f.d.groupby("gpu").head(3).index.values] = True
        dump = f.d.loc[sel, ["gpu", "op"] + f.dims].copy()
        dump["latency_ms"] = f.predict(model, sel)
        dump.to_csv(f"{a.dump_predictions}{f.fam}.csv", index=False, float_format="%.17g")


def validate(f: Family, a) -> list:
    """Writes the folds, prints their errors; returns the GPUs on which the learned model beats the
    analytic one on the largest shapes when trained without them (its default_for line)."""
    fam, d = f.fam, f.d
    # Unseen shapes of the training GPUs: the rows whose dims add up to a multiple of 5
    # (content-based, so `bench` selects the same rows in C++).
    held = (d[f.dims].astype(np.int64).sum(axis=1).values % 5) == 0
    fold_shapes = f.train(~held)
    f.write(os.path.join(a.out_dir, "logo", f"{fam}_unseen_shapes.mlp"), fold_shapes, f.gpus)
    print(f"{'gpu':<16} {'subset':<10} {'rows':>6} {'logo_learned':>13} {'logo_analytic':>14} "
          f"{'shapes_rows':>12} {'shapes_learned':>15} {'shapes_analytic':>16}")
    for g in f.gpus:
        out = d["gpu"].values == g
        fold = f.train(~out)
        f.write(os.path.join(a.out_dir, "logo", f"{fam}_without_{g}.mlp"), fold, [x for x in f.gpus if x != g])
        pl, ps, pa = f.predict(fold, out), f.predict(fold_shapes, out), f.analytic[out]
        if fam == "gemm":
            groups = [("bmm", ~d["linear"].values[out]), ("linear", d["linear"].values[out])]
        else:
            groups = [(o, d["op"].values[out] == o) for o in OPS]
        groups = [("all", np.ones(out.sum(), dtype=bool))] + groups
        m_out, h_out = f.meas[out], held[out]
        for name, sel in groups:
            if sel.any():
                hs = sel & h_out
                print(f"{g:<16} {name:<10} {sel.sum():>6} {ape(pl[sel], m_out[sel]).mean():>13.1f} "
                      f"{ape(pa[sel], m_out[sel]).mean():>14.1f} {hs.sum():>12} "
                      f"{ape(ps[hs], m_out[hs]).mean() if hs.any() else float('nan'):>15.1f} "
                      f"{ape(pa[hs], m_out[hs]).mean() if hs.any() else float('nan'):>16.1f}")
    # Out of distribution: each GPU's largest shapes, predicted by a model trained without them.
    largest = f.largest()
    fold_large = f.train(~largest)
    f.write(os.path.join(a.out_dir, "logo", f"{fam}_without_largest.mlp"), fold_large, f.gpus)
    unclamped = fold_large[:3] + (None, None)
    print(f"{'gpu':<16} {'largest_rows':>12} {'learned':>9} {'unclamped':>10} {'analytic':>9} default")
    default_for = []
    for g in f.gpus:
        rows = largest & (d["gpu"].values == g)
        m = f.meas[rows]
        learned = ape(f.predict(fold_large, rows), m).mean()
        analytic = ape(f.analytic[rows], m).mean()
        if learned < analytic:
            default_for.append(g)
        print(f"{g:<16} {rows.sum():>12} {learned:>9.1f} {ape(f.predict(unclamped, rows), m).mean():>10.1f} "
              f"{analytic:>9.1f} {'learned' if learned < analytic else 'analytic'}")
    return default_for


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
