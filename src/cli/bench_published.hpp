#pragma once
// `bench transformer --table published`: the model against published H100 runs.
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/io/table_output.hpp>
#include <string>

namespace shardsweep
{

//! Every row of <data_dir>/published_h100_dev.csv on `h100` (calibration/published_runs.hpp):
//! measured and predicted TFLOP/s per GPU and step time, the signed error and the peak memory;
//! then the MAPE per source; then fp8_gemm_eff fitted on the runs, and from the fp8 GEMMs of the
//! runs' shapes measured on an H100 (<h100_gemms_dir>/gemm_aligned_a.csv, the shapes of
//! published_shapes.csv there).
void printPublishedTable( const CommandContext& ctx, OutputFormat format,
                          const std::string& data_dir, const Platform& h100,
                          const std::string& h100_gemms_dir );

} // namespace shardsweep
