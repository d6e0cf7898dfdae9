#pragma once
//! \file a100_switch_platform.hpp
//! \brief A platform built by hand for the planner tests (tstBaselinePlanners,
//! tstShardsweepPlanner): independent of the shipped platform files, so that their hand-checked
//! values do not move when those files do.
#include <shardsweep/domain/hardware.hpp>

namespace Test
{
//! `gpus` A100-40GB-like GPUs (`memory_GiB` each) on one switch of 150 GB/s and 500 ns.
inline shardsweep::Platform a100Switch( int gpus, double memory_GiB )
{
    using namespace shardsweep;
    Platform p;
    p.gpu.sm_count = 108;
    p.gpu.boost_clock_MHz = 1410;
    p.gpu.fp32_TFLOPs = 19.5;
    p.gpu.tf32_TFLOPs = 156;
    p.gpu.memory_GiB = memory_GiB;
    p.gpu.memory_bandwidth_GBps = 1555;
    p.gpu.l2_cache_MiB = 40;
    p.gpus_per_node = gpus;
    p.host_to_gpu_GBps = 25;
    p.network.num_dims = 1;
    p.network.dims[0] = { Topology::Switch, gpus, 150.0, 500.0 };
    return p;
}
} // namespace Test
