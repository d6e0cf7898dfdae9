#!/usr/bin/python3
"""Can any GEMM calibration from NeuSight's GEMM measurements price NeuSight's measured inference
steps within 5 %? (docs/model/calibration.md, "NeuSight's end-to-end steps".)

For each inference step of inputs/measured/transformer/neusight_e2e_dev.csv, the GEMMs of its
transformer layers (QKV, attention projection, both FFN layers; QK^T and attention·V) are priced
by the GPU's own measurements: the FLOP rate of the 7 nearest measured shapes of the same op
(1/distance-weighted, in log B, M, N, K) over all of that GPU's rows in inputs/measured/gemm/train.
That is as close to the measurements as a calibration can get. The layers' GEMMs are a lower
bound of the step: it also runs softmax, layer norms and element-wise kernels, and GPT's and OPT's
the LM head (NeuSight runs BERT inference as sequence classification, without one). Where
this lower bound exceeds the measured step, the GEMM and the step measurements disagree, and no
GEMM model fitted to the former can price the latter within that margin.

The last two columns price the same GEMMs as `shardsweep bench transformer --table errors` does
for `calibrated_mape_pct`: by the tile mixture alone (the batched model has no per-shape residual),
one per op, fitted with Huber's loss to the GPU-bound rows (ten times the fastest or more) of
150 rows, never faster than the fastest rate among those rows; here one fixed sample, every
ceil(n/150)-th measured row of the GPU (the bench averages 10 random draws). The tile model is
calibration_alternatives.py's numpy port with the shipped constants (bench transformer refits the
constants without the GPU first, so its figures differ a little). The ratio shows how far the
mixture is from the GPU's own measurements at the shapes a step runs. The last column adds what
`predict gemm` adds and the batched model lacks: the 1/distance-weighted mean log residual of the 7
nearest of those rows (log B, M, N, K, 3·[linear], log FLOPs, as in model/gpu_calibration.hpp).

The last table is why the mixture is fitted with Huber's loss: per band of the reduction
dimension, the median FLOP rate of the larger half (by FLOPs) of each GPU's GPU-bound linear rows
(ten times its fastest or more). The P100 runs a reduction of 32,768 or more at 0.4 of its rate
below 4,096; a few such rows in a sample pulled a squared-error mixture off every other shape.

    /usr/bin/python3 scripts/neusight_step_consistency.py      # a few seconds

NeuSight's GEMM convention (inputs/measured/README.md): N is the reduction dimension; bmm is
[B,M,N]x[B,N,K], linear is x[B,M,N]·W(N->K).
"""
import os

import numpy as np
import pandas as pd
from sklearn.neighbors import KNeighborsRegressor

import calibration_alternatives as tile_model

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEMM = os.path.join(ROOT, "inputs", "measured", "gemm", "train")
STEPS = os.path.join(ROOT, "inputs", "measured", "transformer", "neusight_e2e_dev.csv")
# layers, hidden, heads, FFN hidden (src/calibration/transformer_fit.cpp, neusightModel)
MODELS = {"bert_large": (24, 1024, 16, 4096), "gpt2_large": (36, 1280, 20, 5120),
          "opt_13": (24, 2048, 32, 8192)}


def rate_model(gpu, op):
    d = pd.read_csv(os.path.join(GEMM, f"{op}_{gpu}.csv"))
    x = np.log(d[["B", "M", "N", "K"]].to_numpy(float))
    flops = 2.0 * d.B * d.M * d.N * d.K
    y = np.log(flops / d.latency_ms.to_numpy())
    return KNeighborsRegressor(n_neighbors=7, weights="distance").fit(x, y)


def mixture_model(gpu):
    """ms(op, B, M, N, K, residual) in NeuSight's convention, priced by a per-op tile mixture
    fitted as calibrate gpu fits it, with its neighbour residual if `residual` (module's text)."""
    spec = tile_model.SPECS[gpu]
    d, shape = tile_model.load(gpu)
    measured = d.latency_ms.to_numpy()
    rows = np.arange(0, len(d), -(-len(d) // 150))
    bound = rows[measured[rows] >= 10 * measured[rows].min()]
    B, M, N, K, linear = shape
    ceiling = np.max(2 * B[rows] * M[rows] * N[rows] * K[rows] / measured[rows])
    log_tiles = np.log(tile_model.tile_times(tile_model.SHIPPED, spec, *shape)[0])
    fitted = {}
    for op, is_linear in (("bmm", False), ("linear", True)):
        own = bound[linear[bound] == is_linear]
        fitted[op] = tile_model.fit_op_mixture(log_tiles[own], np.log(measured[own]))
    mixture = np.zeros(len(d))
    for op, is_linear in (("bmm", False), ("linear", True)):
        weights, offset = fitted[op]
        mixture[linear == is_linear] = log_tiles[linear == is_linear] @ weights + offset

    def coordinates(B, M, N, K, is_linear):
        return np.column_stack([np.log(B), np.log(M), np.log(N), np.log(K), 3.0 * is_linear,
                                np.log(2 * B * M * N * K)])
    neighbours = KNeighborsRegressor(n_neighbors=7, weights="distance").fit(
        coordinates(*(a[rows] for a in shape)), (np.log(measured) - mixture)[rows])

    def ms(op, B, M, N, K, residual=False):
        # NeuSight's N is the reduction dimension: the tile model's K.
        shape = tuple(np.array([float(v)]) for v in (B, M, K, N)) + (np.array([op == "linear"]),)
        weights, offset = fitted[op]
        log_t = np.log(tile_model.tile_times(tile_model.SHIPPED, spec, *shape)[0]) @ weights
        if residual:
            log_t = log_t + neighbours.predict(coordinates(*shape))
        return max(np.exp(log_t[0] + offset), 2.0 * B * M * N * K / ceiling)
    return ms


def layer_gemms_ms(ms, model, s, b):
    """The GEMMs of one step's transformer layers, ms(op, B, M, N, K) each."""
    layers, h, heads, ffn = MODELS[model]
    t, d = b * s, h // heads
    return layers * (ms("linear", 1, t, h, 3 * h) + ms("linear", 1, t, h, h) +
                     ms("linear", 1, t, h, ffn) + ms("linear", 1, t, ffn, h) +
                     ms("bmm", b * heads, s, d, s) + ms("bmm", b * heads, s, s, d))


def main():
    steps = pd.read_csv(STEPS)
    steps = steps[(steps["mode"] == "inf") & steps.model.isin(MODELS)]
    print(f"{'gpu':22} {'model':11} {'seq':>5} {'batch':>5} {'measured_ms':>12} "
          f"{'layer_gemms_ms':>15} {'gemms/step':>10} {'mixture_ms':>11} {'mixture/gemms':>13} "
          f"{'+residuals/gemms':>16}")
    exceed = {}
    for gpu, rows in steps.groupby("gpu", sort=True):
        rate = {op: rate_model(gpu, op) for op in ("bmm", "linear")}

        def ms(op, B, M, N, K):
            log_rate = rate[op].predict(np.log([[B, M, N, K]]))[0]
            return 2.0 * B * M * N * K / np.exp(log_rate)
        mixture = mixture_model(gpu)

        for _, r in rows.iterrows():
            s, b = int(r.seq_len), int(r.batch)
            gemms = layer_gemms_ms(ms, r.model, s, b)
            mixed = layer_gemms_ms(mixture, r.model, s, b)
            corrected = layer_gemms_ms(lambda *g: mixture(*g, residual=True), r.model, s, b)
            ratio = gemms / r.e2e_ms
            exceed.setdefault(gpu, []).append(ratio)
            print(f"{gpu:22} {r.model:11} {s:5d} {b:5d} {r.e2e_ms:12.1f} {gemms:15.1f} "
                  f"{ratio:10.2f} {mixed:11.1f} {mixed / gemms:13.2f} {corrected / gemms:16.2f}")
    print("\nper GPU: steps whose layers' GEMMs alone take longer than the measured step")
    for gpu, ratios in exceed.items():
        over = [x for x in ratios if x > 1.0]
        print(f"  {gpu:22} {len(over)} of {len(ratios)}"
              + (f" (by {100 * (max(over) - 1):.0f} % at most)" if over else ""))
    reduction_bands()


def reduction_bands():
    """The module's last table: linear layers' FLOP rate (TFLOP/s) by band of the reduction."""
    bands = ((0, 4096), (4096, 16384), (16384, 32768), (32768, np.inf))
    print("\nlinear layers, median TFLOP/s of the larger half of the GPU-bound rows, by reduction")
    print(f"{'gpu':22}" + "".join(f"{f'[{lo}, {hi})':>16}" for lo, hi in bands))
    for gpu in tile_model.SPECS:
        d = pd.read_csv(os.path.join(GEMM, f"linear_{gpu}.csv"))
        flops = 2.0 * d.B * d.M * d.N * d.K
        bound = d[d.latency_ms >= 10 * d.latency_ms.min()]
        large = bound[flops[bound.index] >= np.median(flops[bound.index])]
        rate = 2.0 * large.B * large.M * large.N * large.K / large.latency_ms / 1e9
        # NeuSight's N is the reduction dimension (the module's text).
        cells = [rate[(large.N >= lo) & (large.N < hi)].median() for lo, hi in bands]
        print(f"{gpu:22}" + "".join(f"{c:16.1f}" for c in cells))


if __name__ == "__main__":
    main()
