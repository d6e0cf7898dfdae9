#!/usr/bin/python3
"""Leave-one-GPU-out experiment (issue 12, item 3; docs/model/learned_operators.md "What I tried"):
can a correction on top of the analytic GEMM model, learned from roofline-normalised
(dimensionless) features, beat the analytic model on GPUs left out of training? Prints the LOGO
MAPE % of the analytic model, a ridge and a gradient-boosting residual (log measured/analytic)
on dimensionless features, the boosting correction halved, boosting on the 18 shipped features,
and an oracle that removes the held-out GPU's own median ratio (how much of the error is a
per-GPU bias). About 30 s on one core:

    /usr/bin/python3 postprocess/gemm_residual_experiment.py [GEMM_DIR (default inputs/measured/gemm)]
"""
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "postprocess"))
import train_operator_model as t  # noqa: E402
from sklearn.ensemble import HistGradientBoostingRegressor  # noqa: E402
from sklearn.linear_model import Ridge  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402
cat = t.read_catalog(os.path.join(ROOT, "inputs", "gpus"))
d = t.load_gemm(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "inputs", "measured", "gemm"), cat)
X, base, bound = t.gemm_features(d)
B, M, N, K = (d[c].values.astype(float) for c in "BMNK")
sm, peak, bw = d["sm_count"].values, d["fp32_TFLOPs"].values, d["memory_bandwidth_GBps"].values
flops = 2*B*M*N*K; byts = 4*B*(M*K+K*N+M*N)
balance = np.log2((flops/byts)/(peak*1e3/bw))
# dimensionless: analytic/bound, waves & fill, intensity/balance, linear, log dims relative to tile
Xd = np.column_stack([X[:, 4], X[:, 5], X[:, 7], X[:, 8], X[:, 9], X[:, 10], balance,
                      np.log2(M/128), np.log2(N/128), np.log2(K/128), np.log2(B)])
meas = d["latency_ms"].values
y = np.log(meas/base)
gpus = sorted(d["gpu"].unique())
def mape(p, m): return 100*np.mean(np.abs(p-m)/m)
print("gpu analytic | ridge_dimless gbt_dimless gbt_dimless_half gbt_full")
for g in gpus:
    out = d["gpu"].values == g
    tr = np.where(~out)[0][::4]
    res = [mape(base[out], meas[out])]
    r = make_pipeline(StandardScaler(), Ridge(alpha=10.0)).fit(Xd[tr], y[tr])
    res.append(mape(np.maximum(bound[out], base[out]*np.exp(r.predict(Xd[out]))), meas[out]))
    gb = HistGradientBoostingRegressor(max_iter=200, max_leaf_nodes=15, l2_regularization=1.0, random_state=0).fit(Xd[tr], y[tr])
    z = gb.predict(Xd[out])
    res.append(mape(np.maximum(bound[out], base[out]*np.exp(z)), meas[out]))
    res.append(mape(np.maximum(bound[out], base[out]*np.exp(0.5*z)), meas[out]))
    gf = HistGradientBoostingRegressor(max_iter=200, max_leaf_nodes=15, l2_regularization=1.0, random_state=0).fit(X[tr], y[tr])
    res.append(mape(np.maximum(bound[out], base[out]*np.exp(gf.predict(X[out]))), meas[out]))
    print(g, " ".join(f"{v:.1f}" for v in res), flush=True)
print("oracle: analytic with the held-out GPU's own median ratio removed (GPU-level bias vs shape-level)")
for g in gpus:
    out = d["gpu"].values == g
    bias = np.median(y[out])
    print(g, f"median ratio {np.exp(bias):.3f}", f"analytic {mape(base[out], meas[out]):.1f}", f"bias-removed {mape(base[out]*np.exp(bias), meas[out]):.1f}")
