#pragma once
//! \file transformer_test_support.hpp
//! \brief Constants and hardware that make the transformer model's terms countable by hand
//! (tstTransformerModel, tstTransformerModern): pure constants, a GPU whose memory moves 1 GB/s,
//! one Switch dimension.
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/model/transformer.hpp>

namespace Test
{
using namespace shardsweep;

//! Constants that make every kernel pure traffic: no host time, no gaps, full bandwidth, no
//! framework extras; everything else shipped.
inline TransformerConstants pureConstants()
{
    TransformerConstants c = shippedTransformerConstants();
    c.kernel_gap_ms = 0.0;
    c.host_ms_per_kernel = 0.0;
    c.elementwise_bw_eff = 1.0;
    c.tp_sync_ms = 0.0;
    c.p2p_bw_eff = 1.0;
    c.p2p_ms = 0.0;
    c.dp_bw_eff = 1.0;
    return c;
}

//! 1 GB/s: a memory-bound kernel of n bytes takes n·1e-6 ms.
inline GpuSpec slowMemoryGpu()
{
    GpuSpec g;
    g.sm_count = 10;
    g.fp32_TFLOPs = 10.0;
    g.fp16_TFLOPs = 100.0;
    g.bf16_TFLOPs = 100.0;
    g.memory_bandwidth_GBps = 1.0;
    g.memory_GiB = 80.0;
    return g;
}

//! One Switch dimension of n GPUs `gpu` at 100 GB/s, 1 µs per hop, ring, one chunk; the GPUs'
//! memory at 2000 GB/s.
inline Platform switchPlatform( int n, const GpuSpec& gpu = slowMemoryGpu() )
{
    Platform p;
    p.gpu = gpu;
    p.gpu.memory_bandwidth_GBps = 2000.0;
    p.gpus_per_node = n;
    p.network.num_dims = 1;
    p.network.dims[0].topology = Topology::Switch;
    p.network.dims[0].npus_count = n;
    p.network.dims[0].bandwidth_GBps = 100.0;
    p.network.dims[0].latency_ns = 1000.0;
    p.system.preferred_dataset_splits = 1;
    p.system.active_chunks_per_dimension = 1;
    p.system.local_mem_bw_GBps = 2000.0;
    return p;
}

//! A small GPT (8 layers, hidden 1024, 16 heads, s = 1024, global batch 64) as a workload, for
//! tests that mix transformer scenarios into a batch.
inline Workload smallGptWorkload()
{
    Workload w;
    w.name = "small-gpt";
    w.kind = WorkloadKind::transformer;
    w.transformer.arch = TransformerArch::gpt;
    w.transformer.layers = 8;
    w.transformer.hidden = 1024;
    w.transformer.heads = 16;
    w.transformer.seq_len = 1024;
    w.transformer.vocab = 32000;
    w.global_batch = 64;
    return w;
}

} // namespace Test
