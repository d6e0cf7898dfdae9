#pragma once
// The A100 that the unit tests price on (datasheet rates, PCIe 4 x16), with its memory size and
// bandwidth as parameters: 40 GB / 1555 GB/s (SXM4-40GB) or 80 GB / 2039 GB/s (SXM4-80GB).
#include <shardsweep/domain/hardware.hpp>

namespace Test
{

inline shardsweep::GpuSpec a100Gpu( double memory_GiB, double memory_bandwidth_GBps )
{
    shardsweep::GpuSpec gpu;
    gpu.sm_count = 108;
    gpu.boost_clock_MHz = 1410;
    gpu.fp32_TFLOPs = 19.5;
    gpu.tf32_TFLOPs = 156;
    gpu.fp16_TFLOPs = 312;
    gpu.bf16_TFLOPs = 312;
    gpu.memory_GiB = memory_GiB;
    gpu.memory_bandwidth_GBps = memory_bandwidth_GBps;
    gpu.l2_cache_MiB = 40;
    gpu.pcie_generation = 4;
    gpu.pcie_bandwidth_GBps = 32;
    return gpu;
}

} // namespace Test
