#pragma once
//! \file calibration_csv.hpp
//! \brief The measurement files `shardsweep calibrate gpu` fits on, as scripts/microbench writes
//! them:
//!
//!   GEMM:      B,M,N,K,dtype,latency_ms[,op]   C[B,M,N] = A[B,M,K]·W[B,K,N]; op bmm|mm|linear
//!   operators: op,B,H,dtype,latency_ms         op: NeuSight's names (softmax, ln, add, ...)
//!
//! dtype is fp32, tf32, fp16, bf16 or, for GEMMs on a GPU with FP8 tensor cores, fp8 (empty:
//! fp32). Operator rows in fp8 are counted and skipped: FP8 training (Transformer Engine) keeps
//! softmax, norms and element-wise ops in 16 bits, and the model prices them so. A bad cell exits
//! 2 naming the file, line and column.

#include <cstddef>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/model/gpu_calibration.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! A GemmOp name, or "mm" (torch.mm: a bmm); an empty or absent cell is bmm.
GemmOp gemmOpCell( const CsvTable& t, std::size_t row );

//! An OperatorKind name (NeuSight's: softmax, ln, add, ...) in column `column`; fails naming the
//! cell otherwise.
OperatorKind operatorKindCell( const CsvTable& t, std::size_t row, const std::string& column );

//! The GEMM rows of `path`; a dtype `gpu` does not compute in (fp8 without fp8_TFLOPs) fails.
std::vector<GemmSample> readGemmMeasurements( const std::string& path, const GpuSpec& gpu );

struct OperatorMeasurements
{
    std::vector<OperatorMeasurement> rows;
    std::size_t skipped_fp8 = 0;
};
OperatorMeasurements readOperatorMeasurements( const std::string& path );

} // namespace shardsweep
