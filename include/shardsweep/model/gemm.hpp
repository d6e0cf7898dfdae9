#pragma once
//! \file gemm.hpp
//! \brief Latency of one (batched) GEMM on one GPU: a tile/wave model bounded by the roofline.
//!
//! C[B,M,N] = A[B,M,K]·W[B,K,N]; K is the reduction (NeuSight's data files call it N, see
//! io/neusight_data.hpp, which swaps the two on reading). The model mimics how cuBLAS runs such a
//! GEMM: it cuts C into tiles of tm×tn (cuBLAS' SGEMM family), optionally splits the reduction
//! into `s` slices (split-K, followed by a reduction kernel), and schedules the tiles in waves:
//!
//!   tiles  = B·⌈M/tm⌉·⌈N/tn⌉·s,   tiles_per_SM = clamp(⌊occupancy_area/(tm·tn)⌋, 1, 8)
//!   waves  = ⌈tiles / (SMs·tiles_per_SM)⌉
//!   work   = waves · tiles_per_SM · 2·tm·tn·(⌈K/s⌉ + k_overhead)       (FLOPs per SM)
//!   rate   = r·e_max·I/(I + i_half),  I = tm·tn/(tm+tn)  (small tiles are less efficient)
//!   t_boost with r = peak/SMs;  t_cap with r = peak·min(1, P/peak_fp32)/SMs where the power
//!   cap P = tdp_W · flops_per_joule · 16/process_nm (FLOP per joule grows as the node shrinks)
//!   compute = (1-w)·t_boost + w·t_cap,  w = t_boost/(t_boost + boost_ms)  (short kernels run at
//!             boost clock, long ones settle at the power limit)
//!   memory = bytes(A, W, C) / (bandwidth · e_bw)
//!   time   = launch·(linear ? linear_launch_ratio : 1) + max(compute, memory)
//!            [+ splitk_ms + 4·(s+1)·B·M·N / (bandwidth · e_bw)]
//!
//! (split-K, s > 1, only when the unsplit tiles fill less than one wave, as cuBLAS does). For each
//! tile the fastest split is taken; the latency is the geometric mean over the tile family, because
//! which tile cuBLAS' heuristic picks differs between GPU generations (A100 runs batched GEMMs with
//! 128x128 tiles whatever the shape, Pascal with 128x64, Volta mixes four) and cannot be read from
//! a spec sheet: the log-average is the prediction with the smallest expected log error under that
//! uncertainty. `tile_m`, `tile_n`, `waves`, `memory_bound` describe the fastest tile.
//! Only the GPU's catalog spec enters (SM count, peak FLOP/s of the dtype, memory bandwidth, board
//! power and process node), never a per-GPU constant, so the model predicts GPUs it was not fitted
//! on. The global constants are in GemmConstants; shippedGemmConstants() holds the shipped values
//! (how they were fitted: see there and docs/model/gemm.md). Everything here is a pure function,
//! callable inside Kokkos kernels.

#include <Kokkos_Core.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/model/math.hpp>

namespace shardsweep
{

struct GemmPrediction
{
    double latency_ms = 0.0;
    int tile_m = 0;
    int tile_n = 0;
    double waves = 0.0;        //!< ⌈tiles / (SMs·tiles_per_SM)⌉ of the chosen tile
    bool memory_bound = false; //!< the memory time exceeded the compute time
};

//! Which PyTorch op the GEMM is: `bmm`/`mm` (plain matmul) or `linear` (addmm with a bias; its
//! host path costs more per call).
enum class GemmOp : unsigned char
{
    bmm = 0,
    linear = 1,
};

// The `op` column of predict gemm's input and NeuSight's GEMM files.
SHARDSWEEP_ENUM_NAMES( GemmOp, "GEMM op",
                       { GemmOp::bmm, "bmm", "plain (batched) matmul: bmm or mm" },
                       { GemmOp::linear, "linear",
                         "addmm with a bias: its host path costs more per call" } );

//! The global constants of the model (the same for every GPU).
struct GemmConstants
{
    double launch_ms;            //!< per-call overhead of bmm (launch + event timing), ms
    double peak_efficiency;      //!< e_max: fraction of peak FLOP/s a large tile sustains
    double k_overhead;           //!< per-tile prologue/epilogue, in reduction elements
    double intensity_half;       //!< i_half: tile intensity at which efficiency halves
    double occupancy_area;       //!< accumulator elements one SM holds (tiles resident per SM)
    double bandwidth_efficiency; //!< e_bw: fraction of the datasheet bandwidth reached
    double splitk_ms;            //!< extra cost of split-K's reduction kernel, ms
    double linear_launch_ratio;  //!< per-call overhead of linear / that of bmm
    double flops_per_joule;      //!< sustained GFLOP per joule at a 16 nm node (power cap)
    double boost_ms;             //!< kernel time at which the clock is halfway down to the cap, ms
};

//! Shipped constants, fitted on all five GPUs of inputs/measured/gemm/train (119,847 FP32 bmm and
//! linear rows; the fit uses every 8th row) by Nelder–Mead on the mean |log(predicted/measured)|
//! from kGemmFitStart (src/calibration/gemm_fit.cpp), rounded to 5 digits: `shardsweep bench gemm
//! --table constants` re-runs this fit (row "all"). See docs/model/gemm.md.
//! A function, not a constexpr variable: device code cannot read a namespace-scope constant of
//! class type (CUDA C++ Programming Guide, "constexpr variables").
KOKKOS_INLINE_FUNCTION constexpr GemmConstants shippedGemmConstants()
{
    return { 0.027053, 1.0, 16.135, 4.2137, 23616.0, 0.5977, 0.018288, 1.3374, 42.0, 0.80804 };
}

//! Number of tile shapes the model chooses from (a calibration weighs each, domain/hardware.hpp).
constexpr int kGemmNumTiles = kGemmCalibrationTiles;
//! Split-K factors tried: 1, 2, 4, ..., 2^(kGemmNumSplits-1).
constexpr int kGemmNumSplits = 7;

//! Tile shape `i` (rows of C, columns of C): cuBLAS SGEMM's 128x128 ... 32x32 family.
KOKKOS_INLINE_FUNCTION int gemmTileM( int i )
{
    switch ( i )
    {
    case 0:
        return 128;
    case 1:
        return 128;
    case 2:
        return 64;
    case 3:
        return 128;
    case 4:
        return 32;
    case 5:
        return 64;
    case 6:
        return 64;
    default:
        return 32;
    }
}
KOKKOS_INLINE_FUNCTION int gemmTileN( int i )
{
    switch ( i )
    {
    case 0:
        return 128;
    case 1:
        return 64;
    case 2:
        return 128;
    case 3:
        return 32;
    case 4:
        return 128;
    case 5:
        return 64;
    case 6:
        return 32;
    default:
        return 32;
    }
}

//! Peak FLOP/s (in TFLOP/s) for a dtype; falls back to FP32 where the GPU lists no such rate.
KOKKOS_INLINE_FUNCTION double gemmPeakTFLOPs( const GpuSpec& gpu, DataType dtype )
{
    double peak = gpu.fp32_TFLOPs;
    if ( dtype == DataType::tf32 && gpu.tf32_TFLOPs > 0.0 )
        peak = gpu.tf32_TFLOPs;
    else if ( dtype == DataType::fp16 && gpu.fp16_TFLOPs > 0.0 )
        peak = gpu.fp16_TFLOPs;
    else if ( dtype == DataType::bf16 && gpu.bf16_TFLOPs > 0.0 )
        peak = gpu.bf16_TFLOPs;
    else if ( dtype == DataType::fp8 && gpu.fp8_TFLOPs > 0.0 )
        peak = gpu.fp8_TFLOPs;
    return peak;
}

//! The highest fraction of the peak a matmul was measured to reach on any GPU: the ceiling of a GPU
//! without its own measurement (GpuSpec::max_matmul_*). FP32: V100-PCIe-32GB, 13.40 of 14.0
//! TFLOP/s in NeuSight's measured GEMMs (inputs/measured/gemm); 16-bit tensor cores: A100 SXM,
//! 271.2 of 312 TFLOP/s BF16 (S. Bekman, Machine Learning Engineering Open Book,
//! compute/accelerator/README.md, "Maximum Achievable Matmul FLOPS comparison table").
constexpr double kMaxMeasuredFp32MatmulFraction = 13.40 / 14.0;
constexpr double kMaxMeasuredTensorMatmulFraction = 271.2 / 312.0;

//! The fastest a matmul of `dtype` runs on `gpu`, TFLOP/s: the measured maximum (FP32), or the
//! measured BF16 fraction of the dtype's tensor-core peak (TF32, FP16, BF16); where the GPU has no
//! measurement, the highest fraction measured on any GPU. No GEMM prediction exceeds it.
KOKKOS_INLINE_FUNCTION double gemmMaxMatmulTFLOPs( const GpuSpec& gpu, DataType dtype )
{
    const double peak = gemmPeakTFLOPs( gpu, dtype );
    // A dtype the GPU lists no rate for runs at the FP32 rate (gemmPeakTFLOPs), on the FP32 units.
    const bool tensor = dtype != DataType::fp32 && peak != gpu.fp32_TFLOPs;
    if ( !tensor )
        return gpu.max_matmul_fp32_TFLOPs > 0.0 ? gpu.max_matmul_fp32_TFLOPs
                                                : peak * kMaxMeasuredFp32MatmulFraction;
    const double fraction = gpu.max_matmul_bf16_TFLOPs > 0.0 && gpu.bf16_TFLOPs > 0.0
                                ? gpu.max_matmul_bf16_TFLOPs / gpu.bf16_TFLOPs
                                : kMaxMeasuredTensorMatmulFraction;
    return peak * fraction;
}

//! The time of a GEMM at gemmMaxMatmulTFLOPs, ms: the floor of every GEMM prediction.
KOKKOS_INLINE_FUNCTION double gemmMaxMatmulMs( const GpuSpec& gpu, double B, double M, double N,
                                               double K, DataType dtype )
{
    return 2.0 * B * M * N * K / ( gemmMaxMatmulTFLOPs( gpu, dtype ) * 1.0e12 ) * 1.0e3;
}

//! Tiles resident per SM for a tm×tn tile.
KOKKOS_INLINE_FUNCTION double gemmTilesPerSm( const GemmConstants& c, int tm, int tn )
{
    const double t = math::floor( c.occupancy_area / ( double( tm ) * double( tn ) ) );
    return math::fmin( 8.0, math::fmax( 1.0, t ) );
}

//! Sustained FP32 FLOP/s of the whole GPU under its power limit; 0 when tdp_W or process_nm is
//! unknown.
KOKKOS_INLINE_FUNCTION double gemmPowerCapFlops( const GemmConstants& c, const GpuSpec& gpu )
{
    if ( !( gpu.tdp_W > 0.0 ) || !( gpu.process_nm > 0.0 ) )
        return 0.0;
    return gpu.tdp_W * c.flops_per_joule * 1.0e9 * 16.0 / gpu.process_nm;
}

//! Fraction of the peak a power-limited GPU sustains: min(1, cap / FP32 peak). The limiter lowers
//! the clock, so the same fraction applies to every dtype (the cap was fitted on FP32 SIMT work;
//! tensor-core FLOPs cost less energy, so for them this is pessimistic — unvalidated).
KOKKOS_INLINE_FUNCTION double gemmPowerFraction( const GemmConstants& c, const GpuSpec& gpu )
{
    const double cap = gemmPowerCapFlops( c, gpu );
    const double fp32 = gpu.fp32_TFLOPs * 1.0e12;
    return cap > 0.0 && fp32 > 0.0 ? math::fmin( 1.0, cap / fp32 ) : 1.0;
}

//! Time of one candidate: tile shape `tile`, reduction split `split` ways.
KOKKOS_INLINE_FUNCTION GemmPrediction gemmCandidate( const GemmConstants& c, const GpuSpec& gpu,
                                                     double B, double M, double N, double K,
                                                     DataType dtype, int tile, double split,
                                                     GemmOp op = GemmOp::bmm )
{
    const int tm = gemmTileM( tile );
    const int tn = gemmTileN( tile );
    const double sms = gpu.sm_count;
    const double tiles = B * math::ceil( M / tm ) * math::ceil( N / tn ) * split;
    const double per_sm = gemmTilesPerSm( c, tm, tn );
    const double waves = math::ceil( tiles / ( sms * per_sm ) );
    const double area = double( tm ) * double( tn );
    const double intensity = area / double( tm + tn );
    const double tile_eff = c.peak_efficiency * intensity / ( intensity + c.intensity_half );
    const double peak = gemmPeakTFLOPs( gpu, dtype ) * 1.0e12;
    const double sustained = peak * gemmPowerFraction( c, gpu );
    const double k_slice = math::ceil( K / split );
    const double work = waves * per_sm * 2.0 * area * ( k_slice + c.k_overhead ) * sms;
    const double boost_ms = work / ( peak * tile_eff ) * 1.0e3;
    const double capped_ms = work / ( sustained * tile_eff ) * 1.0e3;
    // Short kernels finish before the power limiter pulls the clock down; long ones run capped.
    const double w = boost_ms / ( boost_ms + c.boost_ms );
    const double compute_ms = ( 1.0 - w ) * boost_ms + w * capped_ms;

    const double elem = dataTypeBytes( dtype );
    // Each operand crosses DRAM once (L2 and shared memory serve the re-reads of tiles).
    const double bytes = elem * B * ( M * K + K * N + M * N );
    const double bandwidth = gpu.memory_bandwidth_GBps * 1.0e9 * c.bandwidth_efficiency;
    const double memory_ms = bytes / bandwidth * 1.0e3;
    // Split-K: the GEMM writes `split` FP32 partial products, a second kernel reads and sums them.
    const double reduce_ms =
        split > 1.0 ? c.splitk_ms + 4.0 * ( split + 1.0 ) * B * M * N / bandwidth * 1.0e3 : 0.0;
    const double launch_ms =
        op == GemmOp::linear ? c.launch_ms * c.linear_launch_ratio : c.launch_ms;

    GemmPrediction p;
    p.latency_ms = launch_ms + math::fmax( compute_ms, memory_ms ) + reduce_ms;
    p.tile_m = tm;
    p.tile_n = tn;
    p.waves = waves;
    p.memory_bound = memory_ms > compute_ms;
    return p;
}

//! The fastest split-K candidate of tile `tile`.
KOKKOS_INLINE_FUNCTION GemmPrediction gemmBestSplit( const GemmConstants& c, const GpuSpec& gpu,
                                                     double B, double M, double N, double K,
                                                     DataType dtype, int tile, GemmOp op )
{
    // Like cuBLAS, split the reduction only when the tiles do not fill the GPU once.
    const double tiles =
        B * math::ceil( M / gemmTileM( tile ) ) * math::ceil( N / gemmTileN( tile ) );
    const double slots = gpu.sm_count * gemmTilesPerSm( c, gemmTileM( tile ), gemmTileN( tile ) );
    GemmPrediction best = gemmCandidate( c, gpu, B, M, N, K, dtype, tile, 1.0, op );
    double split = 2.0;
    for ( int s = 1; s < kGemmNumSplits; ++s, split *= 2.0 )
    {
        // A slice keeps at least 32 reduction elements.
        if ( split * 32.0 > K || tiles >= slots )
            break;
        const GemmPrediction p = gemmCandidate( c, gpu, B, M, N, K, dtype, tile, split, op );
        if ( p.latency_ms < best.latency_ms )
            best = p;
    }
    return best;
}

//! The model with explicit constants (the fit varies them): geometric mean over the tiles of each
//! tile's fastest split, never faster than the measured matmul maximum (gemmMaxMatmulMs); tile,
//! waves and bound of the fastest tile.
KOKKOS_INLINE_FUNCTION GemmPrediction predictGemmWith( const GemmConstants& c, const GpuSpec& gpu,
                                                       double B, double M, double N, double K,
                                                       DataType dtype, GemmOp op = GemmOp::bmm )
{
    GemmPrediction best;
    if ( B <= 0.0 || M <= 0.0 || N <= 0.0 || K <= 0.0 )
        return best;
    double sum_log = 0.0;
    for ( int t = 0; t < kGemmNumTiles; ++t )
    {
        const GemmPrediction p = gemmBestSplit( c, gpu, B, M, N, K, dtype, t, op );
        sum_log += math::log( p.latency_ms );
        if ( t == 0 || p.latency_ms < best.latency_ms )
            best = p;
    }
    best.latency_ms = math::fmax( math::exp( sum_log / kGemmNumTiles ),
                                  gemmMaxMatmulMs( gpu, B, M, N, K, dtype ) );
    return best;
}

//! Predicted latency of C[B,M,N] = A[B,M,K]·W[B,K,N] with the shipped constants.
KOKKOS_INLINE_FUNCTION GemmPrediction predictGemm( const GpuSpec& gpu, double B, double M, double N,
                                                   double K, DataType dtype,
                                                   GemmOp op = GemmOp::bmm )
{
    return predictGemmWith( shippedGemmConstants(), gpu, B, M, N, K, dtype, op );
}

//! A calibration's tile mixture (calibrate gpu, docs/model/calibration.md), natural log of ms:
//! offset (+ linear_offset) + Σ w_i · log t_i, t_i tile i's fastest split with `c` on `gpu` and
//! w the op's weights (linear GEMMs may have their own).
//! No ceiling inside: the offsets would scale it (a linear offset of +0.34 held the P100's linear
//! layers at 5.2 TFLOP/s where it measured 7.3); the callers bound the mixture's time by the
//! measured ceiling itself (calibratedTileGemmMs).
KOKKOS_INLINE_FUNCTION double gemmTileMixtureLogWith( const GemmTileCalibration& m,
                                                      const GemmConstants& c, const GpuSpec& gpu,
                                                      double B, double M, double N, double K,
                                                      DataType dtype, GemmOp op )
{
    const bool linear = op == GemmOp::linear;
    const double* weight = linear && m.linear_tiles ? m.linear_tile_weight : m.tile_weight;
    double log_ms = m.offset + ( linear ? m.linear_offset : 0.0 );
    for ( int t = 0; t < kGemmNumTiles; ++t )
    {
        if ( weight[t] == 0.0 )
            continue;
        const double ms = gemmBestSplit( c, gpu, B, M, N, K, dtype, t, op ).latency_ms;
        log_ms += weight[t] * math::log( ms );
    }
    return log_ms;
}

//! The calibration of `dtype` that `gpu` carries (calibratedGpuSpec), or null.
KOKKOS_INLINE_FUNCTION const GemmTileCalibration* gemmCalibrationOf( const GpuSpec& gpu,
                                                                     DataType dtype )
{
    const int code = static_cast<int>( dtype );
    return code < kCalibratedDataTypes && gpu.gemm_calibration[code].valid
               ? &gpu.gemm_calibration[code]
               : nullptr;
}

//! The time of a GEMM at the highest rate a calibration measured (0 without one), ms: no
//! calibrated price is faster.
KOKKOS_INLINE_FUNCTION double gemmCalibrationCeilingMs( const GemmTileCalibration& m, double B,
                                                        double M, double N, double K )
{
    return m.max_matmul_TFLOPs > 0.0
               ? 2.0 * B * M * N * K / ( m.max_matmul_TFLOPs * 1.0e12 ) * 1.0e3
               : 0.0;
}

//! A GEMM priced by a calibration's tile mixture (without the per-shape residuals, which only
//! `predict gemm` applies), never faster than the highest rate measured nor than `gpu`'s ceiling.
KOKKOS_INLINE_FUNCTION double calibratedTileGemmMs( const GemmTileCalibration& m,
                                                    const GemmConstants& c, const GpuSpec& gpu,
                                                    double B, double M, double N, double K,
                                                    DataType dtype, GemmOp op )
{
    return math::fmax( math::exp( gemmTileMixtureLogWith( m, c, gpu, B, M, N, K, dtype, op ) ),
                       math::fmax( gemmCalibrationCeilingMs( m, B, M, N, K ),
                                   gemmMaxMatmulMs( gpu, B, M, N, K, dtype ) ) );
}

//! The plain roofline: max(FLOPs / peak, minimal bytes / bandwidth), no overhead (a baseline).
KOKKOS_INLINE_FUNCTION double gemmRooflineMs( const GpuSpec& gpu, double B, double M, double N,
                                              double K, DataType dtype )
{
    const double flops = 2.0 * B * M * N * K;
    const double bytes = dataTypeBytes( dtype ) * B * ( M * K + K * N + M * N );
    return math::fmax( flops / ( gemmPeakTFLOPs( gpu, dtype ) * 1.0e12 ),
                       bytes / ( gpu.memory_bandwidth_GBps * 1.0e9 ) ) *
           1.0e3;
}

} // namespace shardsweep
