#pragma once
//! \file bench_neusight_calibration.hpp
//! \brief `bench transformer`'s NeuSight steps with a GPU calibrated from its own GEMM
//! measurements (issue 24): the calibration a user of that GPU would run, on the GEMM model that
//! never saw the GPU.
#include <cstddef>
#include <functional>
#include <limits>
#include <shardsweep/calibration/transformer_fit.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/neusight_data.hpp>
#include <shardsweep/model/gpu_calibration.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! A NeuSight GEMM measurement as a calibration sample (fp32, the dtype NeuSight measured).
GemmSample gemmSampleOf( const GemmMeasurement& m );

//! The GEMM constants fitted on every 8th row of the other GPUs than `gpu` (leave-one-GPU-out).
GemmConstants gemmConstantsWithoutGpu( const GpuCatalog& catalog, const GemmDataset& gemm_data,
                                       const std::string& gpu );

//! Draws of calibration shapes per GPU in `bench transformer --table errors`: which 150 shapes
//! a GPU is calibrated with moves its calibrated steps by several points (NeuSight's P100: 2.7
//! to 12.1 % MAPE over these draws), so the table gives the mean and the range over them.
constexpr int kNeusightCalibrationDraws = 10;
//! Shapes per draw: issue 24's calibration budget.
constexpr std::size_t kNeusightCalibrationShapes = 150;

//! MAPE of NeuSight steps over the calibration draws (NaN without calibration rows).
struct CalibratedMape
{
    double mean = std::numeric_limits<double>::quiet_NaN();
    double least = std::numeric_limits<double>::quiet_NaN();
    double largest = std::numeric_limits<double>::quiet_NaN();
    //! Calibrated instead with the measured shapes nearest to the steps' own GEMMs: what a user
    //! gets who measures the shapes `shardsweep shapes` lists (NeuSight measured a grid, not these
    //! shapes, so its nearest rows stand in for them).
    double own_shapes = std::numeric_limits<double>::quiet_NaN();
};

//! The MAPE `score` gives `rows` (one GPU's NeuSight steps) with their GPU calibrated in fp32
//! (fitGemmCalibration, calibratedGpuSpec) on the tile model with `constants`, from each of
//! kNeusightCalibrationDraws draws of kNeusightCalibrationShapes of its NeuSight GEMM rows in
//! `data` (draw d: the first rows of a shuffle seeded by d, the same every run); and
//! (`own_shapes`) from the kNeusightCalibrationShapes rows nearest to the GEMMs the model prices
//! for `rows` (nearestGemmSamples). NaN when `data` holds fewer than kMinCalibrationRows rows of
//! the GPU.
CalibratedMape neusightCalibratedMape(
    const std::vector<TransformerMeasurement>& rows, const std::string& gpu_name,
    const GpuCatalog& catalog, const GemmDataset& data, const GemmConstants& constants,
    const std::function<double( const std::vector<TransformerMeasurement>& )>& score );

} // namespace shardsweep
