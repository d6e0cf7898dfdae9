#pragma once
//! \file gpu_calibration_fit.hpp
//! \brief Fitting a GpuCalibration (model/gpu_calibration.hpp) to one GPU's measured GEMMs and
//! operators: `shardsweep calibrate gpu`. Deterministic and single-threaded.
//!
//! GEMM, per dtype: the tile weights minimise the mean Huber loss of the log error over the
//! GPU-bound measurements (quadratic up to 0.05, linear beyond, so that a few shapes cuBLAS runs
//! far off their tile counts do not pull the mixture; Nelder–Mead on w = softmax(z), so they stay
//! on the simplex; for given weights the bmm and linear offsets are the Huber locations of their
//! log residuals). The residuals of every row left over become the neighbour correction.
//! Operators, per dtype: the analytic operator constants refitted (calibration/operator_fit.hpp;
//! the launch on every row, the rest on the GPU-bound rows), then the same residual correction.
//! Why this and not a per-GPU refit of the ten GEMM constants or a regression on the shape: on
//! NeuSight's five GPUs, calibrated with 150 random shapes, the constant refit left 12–27 % MAPE
//! on the other shapes, a free linear regression on the tile times 9–21 % and extrapolated badly to
//! larger shapes; the tile mixture with the residual correction was the best (docs/MODEL.md,
//! "Calibrating a GPU"; `shardsweep bench calibrate`).

#include <shardsweep/model/gpu_calibration.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! A dtype with fewer measurements is not calibrated (the shipped model keeps pricing it).
constexpr std::size_t kMinCalibrationRows = 10;

//! The tile mixture and residuals for `samples` (all of `dtype`; at least one), on the tile model
//! with `constants`.
GemmCalibration fitGemmCalibration( const GpuSpec& gpu, DataType dtype,
                                    const std::vector<GemmSample>& samples,
                                    const GemmConstants& constants = shippedGemmConstants() );
//! The refitted operator model and residuals for `samples` (all of `dtype`; at least one).
OperatorCalibration fitOperatorCalibration( const GpuSpec& gpu, DataType dtype,
                                            const std::vector<OperatorMeasurement>& samples );

//! What detectGemmReductionDim found: the reduction dimension of the file, and the tile mixture's
//! 5-fold cross-validated MAPE (%) with each reading of it.
struct GemmReductionDetection
{
    GemmReductionDim dim = GemmReductionDim::K;
    double mape_as_k = 0.0, mape_as_n = 0.0;
};

//! A file is read with N as the reduction only where that prices held-out rows with this share of
//! K's error or less: on NeuSight's five GPUs (150 random shapes, 10 draws) the wrong reading errs
//! by 1.33 times the right one's at least (bench calibrate --table reduction). A file whose shapes
//! cannot tell stays K: N = K on every row, or the H100 microbenchmark's grid (ratio 1.02, where
//! the reading moves the calibrated MAPE by one point).
constexpr double kReductionDimMargin = 0.9;

//! Which column of `samples` (B,M,N,K as the file has them) is the reduction: one tile mixture
//! alone (no residuals, which would fit either reading) per dtype with kMinCalibrationRows rows,
//! fitted to all its rows and 5-fold cross-validated with each reading of the file, on the tile
//! model with `constants`.
GemmReductionDetection
detectGemmReductionDim( const GpuSpec& gpu, const std::vector<GemmSample>& samples,
                        const GemmConstants& constants = shippedGemmConstants() );

//! Calibrates every dtype with at least kMinCalibrationRows rows, with fit statistics (in-sample,
//! 5-fold cross-validated by row index modulo 5, and the shipped model's MAPE on the same rows).
//! `notes` receives one line per dtype skipped.
//! `gemms` are as their file has them, with `gemm_reduction` its reduction column: read as
//! shardsweep's, and the calibration records it.
GpuCalibration calibrateGpu( const std::string& gpu_name, const GpuSpec& gpu,
                             const std::vector<GemmSample>& gemms,
                             const std::vector<OperatorMeasurement>& ops,
                             std::vector<std::string>& notes,
                             GemmReductionDim gemm_reduction = GemmReductionDim::K );

} // namespace shardsweep
