#pragma once
//! \file gpu_fields.hpp
//! \brief The field table of a GPU's spec sheet (GpuSpec): the GPU reader (io/gpu_catalog: catalog
//! files and inline `gpu:` mappings) takes keys, ranges and defaults from it, and the cost
//! caches' keys (gpuKey) take every field from it (and a word for the GEMM calibration, which is
//! no spec-sheet number). A new spec-sheet number (e.g. an FP8 rate) is
//! one row here plus the model code that uses it.

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <shardsweep/core/hash.hpp>
#include <shardsweep/domain/field_table.hpp>
#include <shardsweep/domain/hardware.hpp>

namespace shardsweep
{

using GpuField = Field<GpuSpec, double>;

//! The spec sheet's fields in declaration order. Ranges are generous physical bounds: they catch
//! unit mistakes (MHz vs GHz, GB vs MB), not unusual GPUs. A fallback outside the range
//! (pcie_bandwidth_GBps 0) is derived: from pcie_generation (pcieX16BandwidthGBps).
inline constexpr GpuField kGpuFields[] = {
    { "sm_count", GpuField::integer, 1, 10000, 0, true, "1", "", "streaming multiprocessors",
      []( const GpuSpec& g ) { return double( g.sm_count ); },
      []( GpuSpec& g, double v ) { g.sm_count = int( v ); }, nullptr },
    { "boost_clock_MHz", GpuField::real, 100, 10000, 0, true, "MHz", "", "boost clock",
      []( const GpuSpec& g ) { return g.boost_clock_MHz; },
      []( GpuSpec& g, double v ) { g.boost_clock_MHz = v; }, nullptr },
    { "fp32_TFLOPs", GpuField::real, 0, 100000, 0, true, "TFLOP/s", "", "dense FP32 peak",
      []( const GpuSpec& g ) { return g.fp32_TFLOPs; },
      []( GpuSpec& g, double v ) { g.fp32_TFLOPs = v; }, nullptr, true },
    { "tf32_TFLOPs", GpuField::real, 0, 100000, 0, false, "TFLOP/s", "",
      "dense TF32 tensor-core peak (0: no TF32 tensor cores)",
      []( const GpuSpec& g ) { return g.tf32_TFLOPs; },
      []( GpuSpec& g, double v ) { g.tf32_TFLOPs = v; }, nullptr },
    { "fp16_TFLOPs", GpuField::real, 0, 100000, 0, true, "TFLOP/s", "",
      "dense FP16 peak, tensor cores where present",
      []( const GpuSpec& g ) { return g.fp16_TFLOPs; },
      []( GpuSpec& g, double v ) { g.fp16_TFLOPs = v; }, nullptr },
    { "bf16_TFLOPs", GpuField::real, 0, 100000, 0, false, "TFLOP/s", "",
      "dense BF16 tensor-core peak (0: unsupported)",
      []( const GpuSpec& g ) { return g.bf16_TFLOPs; },
      []( GpuSpec& g, double v ) { g.bf16_TFLOPs = v; }, nullptr },
    { "fp8_TFLOPs", GpuField::real, 0, 100000, 0, false, "TFLOP/s", "",
      "dense FP8 tensor-core peak (0: no FP8 tensor cores; dtype fp8 is refused on it)",
      []( const GpuSpec& g ) { return g.fp8_TFLOPs; },
      []( GpuSpec& g, double v ) { g.fp8_TFLOPs = v; }, nullptr },
    { "memory_GiB", GpuField::real, 0, 65536, 0, true, "GiB", "", "device memory",
      []( const GpuSpec& g ) { return g.memory_GiB; },
      []( GpuSpec& g, double v ) { g.memory_GiB = v; }, nullptr, true },
    { "memory_bandwidth_GBps", GpuField::real, 0, 1.0e6, 0, true, "GB/s", "",
      "device-memory bandwidth (GB = 1e9 B, as on datasheets)",
      []( const GpuSpec& g ) { return g.memory_bandwidth_GBps; },
      []( GpuSpec& g, double v ) { g.memory_bandwidth_GBps = v; }, nullptr, true },
    { "l2_cache_MiB", GpuField::real, 0, 65536, 0, true, "MiB", "", "L2 cache",
      []( const GpuSpec& g ) { return g.l2_cache_MiB; },
      []( GpuSpec& g, double v ) { g.l2_cache_MiB = v; }, nullptr, true },
    { "pcie_generation", GpuField::integer, 1, 6, 3, true, "1", "",
      "PCIe generation of the host link",
      []( const GpuSpec& g ) { return double( g.pcie_generation ); },
      []( GpuSpec& g, double v ) { g.pcie_generation = int( v ); }, nullptr },
    { "pcie_bandwidth_GBps", GpuField::real, 0, 10000, 0, false, "GB/s", "",
      "host-link bandwidth per direction (default: PCIe x16 of pcie_generation)",
      []( const GpuSpec& g ) { return g.pcie_bandwidth_GBps; },
      []( GpuSpec& g, double v ) { g.pcie_bandwidth_GBps = v; }, nullptr, true },
    { "tdp_W", GpuField::real, 0, 10000, 0, false, "W", "",
      "board power limit (0: unknown, no power cap in the GEMM model)",
      []( const GpuSpec& g ) { return g.tdp_W; }, []( GpuSpec& g, double v ) { g.tdp_W = v; },
      nullptr },
    { "process_nm", GpuField::real, 0, 1000, 0, false, "nm", "",
      "fabrication node (0: unknown, no power cap in the GEMM model)",
      []( const GpuSpec& g ) { return g.process_nm; },
      []( GpuSpec& g, double v ) { g.process_nm = v; }, nullptr },
    { "max_matmul_fp32_TFLOPs", GpuField::real, 0, 100000, 0, false, "TFLOP/s", "",
      "highest FP32 matmul rate measured on this GPU: the GEMM model's ceiling (0: not "
      "measured, the highest fraction of the FP32 peak measured on any GPU)",
      []( const GpuSpec& g ) { return g.max_matmul_fp32_TFLOPs; },
      []( GpuSpec& g, double v ) { g.max_matmul_fp32_TFLOPs = v; }, nullptr },
    { "max_matmul_bf16_TFLOPs", GpuField::real, 0, 100000, 0, false, "TFLOP/s", "",
      "highest BF16 matmul rate measured on this GPU (maximum achievable matmul FLOPS): the "
      "ceiling of every tensor-core GEMM, as that fraction of the dtype's peak (0: not "
      "measured, the highest fraction measured on any GPU)",
      []( const GpuSpec& g ) { return g.max_matmul_bf16_TFLOPs; },
      []( GpuSpec& g, double v ) { g.max_matmul_bf16_TFLOPs = v; }, nullptr },
};
//! A key's words for a GpuSpec: its fields, then one for its GEMM calibration.
constexpr std::size_t kGpuSpecWords = std::size( kGpuFields ) + 1;

//! The GEMM calibration a GpuSpec carries as one key word: 0 without one, else a 52-bit hash of
//! every number in it, as an exact integer (never NaN, so keys compare with ==).
inline double gemmCalibrationKeyWord( const GpuSpec& g )
{
    // valid, offsets, ceiling, weights, whether linear GEMMs have their own, theirs
    constexpr int kWords = 5 + 2 * kGemmCalibrationTiles;
    double words[kCalibratedDataTypes * kWords] = {};
    bool any = false;
    for ( int d = 0; d < kCalibratedDataTypes; ++d )
    {
        const GemmTileCalibration& c = g.gemm_calibration[d];
        if ( !c.valid )
            continue;
        any = true;
        double* w = words + d * kWords;
        w[0] = 1.0;
        w[1] = c.offset;
        w[2] = c.linear_offset;
        w[3] = c.max_matmul_TFLOPs;
        std::copy( c.tile_weight, c.tile_weight + kGemmCalibrationTiles, w + 4 );
        w[4 + kGemmCalibrationTiles] = c.linear_tiles ? 1.0 : 0.0;
        std::copy( c.linear_tile_weight, c.linear_tile_weight + kGemmCalibrationTiles,
                   w + 5 + kGemmCalibrationTiles );
    }
    const std::uint64_t h = hashWords( words, std::size( words ) );
    return any ? static_cast<double>( ( h >> 12 ) | 1u ) : 0.0;
}

//! A cost cache's key: every field of a GpuSpec as a double, in table order, its calibration's
//! word, then `rest`, then zeros up to N (a struct with padding can be neither compared nor
//! hashed bytewise). Host code.
template <std::size_t N, std::size_t R>
std::array<double, N> gpuKey( const GpuSpec& g, const double ( &rest )[R] )
{
    static_assert( kGpuSpecWords + R <= N, "the key has no room for its words" );
    std::array<double, N> key = {};
    for ( std::size_t k = 0; k + 1 < kGpuSpecWords; ++k )
        key[k] = kGpuFields[k].get( g );
    key[kGpuSpecWords - 1] = gemmCalibrationKeyWord( g );
    for ( std::size_t k = 0; k < R; ++k )
        key[kGpuSpecWords + k] = rest[k];
    return key;
}

} // namespace shardsweep
