#pragma once
//! \file gpu_calibration_yaml.hpp
//! \brief The calibration file `shardsweep calibrate gpu` writes and `--calibration` (or a
//! platform's `calibration:` key) reads: a GpuCalibration (model/gpu_calibration.hpp) as YAML.
//!
//!   kind: gpu_calibration
//!   gpu: A100-PCIe-40GB                  # catalog name
//!   gemm:                                # one entry per calibrated dtype
//!     - dtype: fp32
//!       tile_weights: [8 numbers ≥ 0, sum 1]     # model/gemm.hpp's tile order
//!       linear_tile_weights: [8 numbers]  # optional: linear GEMMs' own (else tile_weights)
//!       offset: -0.01                    # natural log
//!       linear_offset: 0.2
//!       max_matmul_TFLOPs: 18.1          # highest rate measured (the ceiling)
//!       stats: {rows: 150, fit_mape: 4.1, cv_mape: 8.0, uncalibrated_mape: 17.2}
//!       points:                          # measured shape and log(measured / tile mixture)
//!         - [B, M, N, K, op, residual]
//!   ops:
//!     - dtype: fp32
//!       constants: {launch_ms: .., bandwidth_efficiency: .., softmax_factor: .., ln_factor: ..}
//!       stats: {...}
//!       points:
//!         - [op, B, H, residual]
//!
//! Numbers are written in the shortest form that reads back to the same double, so a file
//! reproduces the calibration bit for bit. Errors name the file, line and field (exit 2).

#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/io/text_file.hpp>
#include <shardsweep/model/gpu_calibration.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! Reads a calibration file; throws InputError.
GpuCalibration readGpuCalibration( const std::string& path );

//! Whether `calibration` was made for the GPU of catalog name `gpu_name` (its `gpu:` may be any
//! alias of it).
bool calibratesGpu( const GpuCalibration& calibration, const std::string& gpu_name );

//! A calibration file read once, with its path.
struct CalibrationFile
{
    std::string path;
    GpuCalibration calibration;
};

//! Applies `file` to `platform` when both name the same GPU (catalog names; calibratedGpuSpec)
//! and records its path; returns whether it applied. A platform calibrated with another file
//! already (its `calibration:` key) throws UsageError: two calibrations of one GPU do not stack.
bool applyGpuCalibration( NamedPlatform& platform, const CalibrationFile& file );

//! The file's text; `comments` become leading '# ' lines (what it was fitted on).
std::string gpuCalibrationYaml( const GpuCalibration& calibration,
                                const std::vector<std::string>& comments );

} // namespace shardsweep
