#pragma once
//! \file hardware.hpp
//! \brief Plain structs describing GPUs, networks and platforms (the model's hardware inputs).
//!
//! Plain-old-data only: these structs are copied by value into Kokkos kernels. Units are in the
//! field names. The network follows ASTRA-sim 2.0's analytical network YAML one-to-one
//! (ASTRA-sim's network YAML, common/network-parser/NetworkParser.cpp), the system block
//! ASTRA-sim's system JSON (astra-sim/system/Sys.cc).

#include <Kokkos_Macros.hpp>
#include <array>
#include <cstddef>
#include <cstdint>

namespace shardsweep
{

//! Element types the model distinguishes (bytes per element from dataTypeBytes()).
enum class DataType : std::uint8_t
{
    fp32 = 0,
    tf32 = 1, //!< fp32 storage, TF32 tensor-core math
    fp16 = 2,
    bf16 = 3,
    fp8 = 4,  //!< FP8 (E4M3/E5M2) tensor-core math as NVIDIA's Transformer Engine runs it
    int8 = 5, //!< quantised embedding tables; no model computes in it (the last code)
};

KOKKOS_INLINE_FUNCTION constexpr int dataTypeBytes( DataType t )
{
    return t == DataType::fp16 || t == DataType::bf16
               ? 2
               : ( t == DataType::int8 || t == DataType::fp8 ? 1 : 4 );
}

//! One GPU model from the catalog (inputs/gpus/). Peak rates are dense (no sparsity).
//! The GEMM model's tiles (model/gemm.hpp, 128x128 down to 32x32), which a calibration weighs.
constexpr int kGemmCalibrationTiles = 8;
//! The dtypes a GPU calibration carries: every DataType code below int8.
constexpr int kCalibratedDataTypes = 5;

//! What `shardsweep calibrate gpu` fitted to one dtype's measured GEMMs, in the form a kernel
//! can use: log t = offset (+ linear_offset) + Σ tile_weight_i · log t_i over the tile model's
//! single-tile times, never above max_matmul_TFLOPs (model/gpu_calibration.hpp). Its per-shape
//! residuals are a host-side neighbour search and stay on the host (`predict gemm` only).
struct GemmTileCalibration
{
    bool valid = false; //!< false: this dtype was not calibrated (the model prices it)
    double tile_weight[kGemmCalibrationTiles] = {};
    //! true: linear GEMMs (x·Wᵀ, which cuBLAS runs with other kernels than a plain matmul) have
    //! their own weights; false: they use tile_weight.
    bool linear_tiles = false;
    double linear_tile_weight[kGemmCalibrationTiles] = {};
    double offset = 0.0;
    double linear_offset = 0.0;
    double max_matmul_TFLOPs = 0.0; //!< highest rate measured; 0 = none (the model's ceiling)
};

struct GpuSpec
{
    int sm_count = 0;
    double boost_clock_MHz = 0.0;
    double fp32_TFLOPs = 0.0;
    double tf32_TFLOPs = 0.0; //!< 0 where the GPU has no TF32 tensor cores
    double fp16_TFLOPs = 0.0; //!< tensor-core rate where present
    double bf16_TFLOPs = 0.0; //!< 0 where unsupported
    double fp8_TFLOPs = 0.0;  //!< dense FP8 tensor-core peak; 0 where unsupported (before Hopper)
    double memory_GiB = 0.0;
    double memory_bandwidth_GBps = 0.0; //!< GB = 1e9 B, as on datasheets
    double l2_cache_MiB = 0.0;
    int pcie_generation = 3;
    double pcie_bandwidth_GBps = 0.0; //!< per direction, GB = 1e9 B
    double tdp_W = 0.0;      //!< board power limit (datasheet "max power"); 0 = unknown: no cap
    double process_nm = 0.0; //!< fabrication node (16, 12, 7, 4...); 0 = unknown: no power cap
    //! The highest matmul throughput measured on this GPU (FP32 SIMT; 16-bit tensor cores),
    //! TFLOP/s: no GEMM is predicted faster. 0 = not measured: the highest fraction of the peak
    //! measured on any GPU applies (model/gemm.hpp gemmMaxMatmulTFLOPs).
    double max_matmul_fp32_TFLOPs = 0.0;
    double max_matmul_bf16_TFLOPs = 0.0;
    //! A calibration of this GPU per DataType code (calibratedGpuSpec fills it from a platform's
    //! `calibration:` file or --calibration; none in a GPU file): the batched models' GEMMs in a
    //! calibrated dtype take its tile mixture. Not a spec-sheet field: gpuKey hashes it in.
    GemmTileCalibration gemm_calibration[kCalibratedDataTypes];
};

//! ASTRA-sim 2.0 analytical topologies (the only three names it accepts).
enum class Topology : std::uint8_t
{
    Ring = 0,
    FullyConnected = 1,
    Switch = 2,
};

//! One dimension of the network; dimension 0 is the innermost (fastest-varying NPU id).
struct NetworkDim
{
    Topology topology = Topology::Switch;
    int npus_count = 0;
    double bandwidth_GBps = 0.0; //!< per link and direction; ASTRA-sim converts with GB = 2^30 B
    double latency_ns = 0.0;     //!< per hop
};

constexpr int kMaxNetworkDims = 4;

struct Network
{
    int num_dims = 0;
    NetworkDim dims[kMaxNetworkDims];
};

//! Collective kinds, in the order used to index per-collective arrays.
enum class Collective : std::uint8_t
{
    all_reduce = 0,
    all_gather = 1,
    reduce_scatter = 2,
    all_to_all = 3,
};
constexpr int kNumCollectives = 4;

//! Per-dimension algorithms of ASTRA-sim's native collectives.
enum class CollectiveAlgorithm : std::uint8_t
{
    ring = 0,
    direct = 1,
    halving_doubling = 2,
    double_binary_tree = 3,
};

enum class CollectiveOptimization : std::uint8_t
{
    baseline = 0,
    local_bw_aware = 1,
};

//! ASTRA-sim's system configuration (the keys that change an analytical run's time).
struct SystemConfig
{
    int endpoint_delay_ns = 10; //!< ASTRA-sim "endpoint-delay" (cycles of 1 ns)
    int active_chunks_per_dimension = 1;
    int preferred_dataset_splits = 1;
    CollectiveAlgorithm algorithm[kNumCollectives][kMaxNetworkDims] = {};
    CollectiveOptimization optimization = CollectiveOptimization::local_bw_aware;
    double local_mem_bw_GBps = 50.0; //!< "local-mem-bw", GB = 1e9 B
    // Not ASTRA-sim's: what a collective library's call costs besides the network steps (zero
    // unless a platform sets them; `calibrate network` fits them to nccl-tests logs).
    double call_latency_ns = 0.0; //!< "call-latency-ns": fixed time per collective call
    double call_bw_GBps = 0.0;    //!< "call-bw": a pass over its bytes (callPassBytes); 0 = none
};

//! A machine: GPUs, their hosts and the network between them.
struct Platform
{
    GpuSpec gpu;
    int gpus_per_node = 1;
    int num_nodes = 1;
    double hbm_reserve_GiB = 0.0;  //!< memory kept free per GPU (runtime, fragmentation)
    double host_memory_GiB = 0.0;  //!< per node, for UVM tables
    double host_to_gpu_GBps = 0.0; //!< UVM path per GPU (PCIe / NVLink-C2C), GB = 1e9 B
    Network network;
    SystemConfig system;

    KOKKOS_INLINE_FUNCTION int numGpus() const { return gpus_per_node * num_nodes; }
};

} // namespace shardsweep
