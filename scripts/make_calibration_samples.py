#!/usr/bin/python3
"""Writes inputs/calibration/samples/ (see its README.md) from the measurements in inputs/measured/.

    /usr/bin/python3 scripts/make_calibration_samples.py
"""
import pandas as pd, numpy as np
import os
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
out = ROOT + '/inputs/calibration/samples/'
# GEMM: 150 random measured rows of NeuSight's A100-PCIE-40GB (bmm + linear), in shardsweep's
# convention (NeuSight's N is the reduction: swap N and K).
dfs=[]
for op in ['bmm','linear']:
    d=pd.read_csv(ROOT + f'/inputs/measured/gemm/train/{op}_NVIDIA_A100-PCIE-40GB.csv').rename(columns={'N':'K','K':'N'})
    d['op']=op; dfs.append(d)
d=pd.concat(dfs,ignore_index=True)
rng=np.random.default_rng(2026)
s=d.iloc[rng.choice(len(d),150,replace=False)].copy()
s['dtype']='fp32'
s[['B','M','N','K','dtype','op','latency_ms']].to_csv(out+'gemm_A100-PCIe-40GB.csv',index=False,float_format='%.6g')
# Operators: 150 random measured rows of the same GPU.
dfs=[]
for f in ['elem','ln','softmax']:
    o=pd.read_csv(ROOT + f'/inputs/measured/ops/train/{f}.csv')
    o=o[o.Device=='NVIDIA A100-PCIE-40GB']
    dfs.append(o[['OPName','B','H','Latency']])
o=pd.concat(dfs,ignore_index=True)
s=o.iloc[rng.choice(len(o),150,replace=False)].copy()
s=s.rename(columns={'OPName':'op','Latency':'latency_ms'}); s['dtype']='fp32'
s[['op','B','H','dtype','latency_ms']].to_csv(out+'ops_A100-PCIe-40GB.csv',index=False,float_format='%.6g')
# nccl-tests stdout from vTrain's all-reduce tables (A100-SXM4 node), power-of-two sizes.
for n in [2,4,8]:
    t=pd.read_csv(ROOT + f'/inputs/measured/transformer/nccl_tests_a100/all_reduce_{n}gpu.csv')
    t.columns=['size','count','type','t_out','bw_out','t_in','bw_in']
    t=t[t['size'].isin([2**k for k in range(20,31)])]
    L=[f"# Reformatted by shardsweep from vTrain's nccl-tests all-reduce table all_reduce_{n}gpu.csv",
       "# (measured on one A100-SXM4 node; times converted from ns to us). Test fixture and sample.",
       f"# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",
       "#","# Using devices"]
    for r in range(n):
        L.append(f"#  Rank {r:2d} Group  0 Pid {4000+r:6d} on    a100-node device {r:2d} [0x{r:02x}] NVIDIA A100-SXM4-80GB")
    L+=["#","#                                                              out-of-place                       in-place          ",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "]
    f=2*(n-1)/n
    for _,r in t.iterrows():
        to=r.t_out/1000; ti=r.t_in/1000; ao=r['size']/to/1e3; ai=r['size']/ti/1e3
        L.append(f"{int(r['size']):12d}  {int(r['count']):12d}     float     sum      -1  {to:7.1f}  {ao:6.2f}  {ao*f:6.2f}      0  {ti:7.1f}  {ai:6.2f}  {ai*f:6.2f}      0")
    L+=["# Out of bounds values : 0 OK","# Avg bus bandwidth    : %.3f"%(t.bw_out.mean()),"#"]
    open(out+f'all_reduce_perf_{n}gpu.log','w').write('\n'.join(L)+'\n')
