#pragma once
//! \file bench_neusight_calibration.hpp
//! \brief `bench transformer`'s NeuSight steps with a GPU calibrated from its own GEMM
//! measurements (issue 24): the calibration a user of that GPU would run, on the GEMM model that
//! never saw the GPU.
#include <cstddef>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/neusight_data.hpp>
#include <shardsweep/model/gpu_calibration.hpp>
#include <string>

namespace shardsweep
{

//! A NeuSight GEMM measurement as a calibration sample (fp32, the dtype NeuSight measured).
GemmSample gemmSampleOf( const GemmMeasurement& m );

//! The GEMM constants fitted on every 8th row of the other GPUs than `gpu` (leave-one-GPU-out).
GemmConstants gemmConstantsWithoutGpu( const GpuCatalog& catalog, const GemmDataset& gemm_data,
                                       const std::string& gpu );

//! `gpu` with an fp32 GEMM calibration (fitGemmCalibration, calibratedGpuSpec) fitted on
//! `shapes` of the GPU's NeuSight GEMM rows in `data` (every ⌈n/shapes⌉-th of its n rows: the
//! same sample every run), on the tile model with `constants`. `gpu` unchanged when the data
//! holds fewer than kMinCalibrationRows of its rows.
GpuSpec neusightCalibratedGpu( const GpuSpec& gpu, const std::string& gpu_name,
                               const GpuCatalog& catalog, const GemmDataset& data,
                               const GemmConstants& constants, std::size_t shapes );

} // namespace shardsweep
