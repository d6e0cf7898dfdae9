#pragma once
//! \file calibration_csv.hpp
//! \brief The measurement files `shardsweep calibrate gpu` fits on, as scripts/microbench writes
//! them:
//!
//!   GEMM:      B,M,N,K,dtype,latency_ms[,op]   C[B,M,N] = A[B,M,K]·W[B,K,N]; op bmm|mm|linear
//!   operators: op,B,H,dtype,latency_ms         op: NeuSight's names (softmax, ln, add, ...)
//!
//! NeuSight's own files read as they are: its GEMM files have the columns above (N the
//! reduction: GemmReductionDim), its operator files name op and latency_ms OPName and Latency.
//! dtype is fp32, tf32, fp16, bf16 or, for GEMMs on a GPU with FP8 tensor cores, fp8 (empty or
//! no such column: fp32), or PyTorch's name of one (float32, torch.bfloat16, half, float8_e4m3fn,
//! ...). Operator rows in fp8 are counted and skipped: FP8 training (Transformer Engine) keeps
//! softmax, norms and element-wise ops in 16 bits, and the model prices them so. Columns of other
//! tools (NeuSight's kernel, a device) are listed as unused; a bad cell, or a column a typo away
//! from a known one, exits 2 naming the file, line and column.

#include <cstddef>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/model/gpu_calibration.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! A GemmOp name, or PyTorch's call: mm, matmul (bmm), addmm (linear); an empty or absent cell
//! is bmm.
GemmOp gemmOpCell( const CsvTable& t, std::size_t row );

//! An OperatorKind name (NeuSight's: softmax, ln, add, ...; also layer_norm, layernorm) in column
//! `column`; fails naming the cell otherwise.
OperatorKind operatorKindCell( const CsvTable& t, std::size_t row, const std::string& column );

//! The `dtype` cell: a name of computeDataTypeNames() or PyTorch's name of one, in any case, with
//! or without "torch."; an empty or absent cell is fp32.
DataType dtypeCell( const CsvTable& t, std::size_t row );

//! The `latency_ms` cell: a measured time > 0.
double measuredLatencyCell( const CsvTable& t, std::size_t row );

//! "PATH: not used: the column(s) a, b and c": what a reader says of the columns of other tools
//! it ignored (CsvTable::checkColumnsIgnoringOthers); "" for none.
std::string unusedColumnsNote( const std::string& path, const std::vector<std::string>& unused );

struct GemmMeasurements
{
    std::vector<GemmSample> rows;
    std::vector<std::string> unused_columns; //!< columns of other tools, ignored
};
//! The GEMM rows of `path`; a dtype `gpu` does not compute in (fp8 without fp8_TFLOPs) fails.
GemmMeasurements readGemmMeasurements( const std::string& path, const GpuSpec& gpu );

//! NeuSight's names of the operator files' columns: {OPName, op}, {Latency, latency_ms}
//! (CsvTable::readColumnsAs).
const std::vector<std::pair<std::string, std::string>>& neusightOperatorColumns();

struct OperatorMeasurements
{
    std::vector<OperatorMeasurement> rows;
    std::size_t skipped_fp8 = 0;
    std::vector<std::string> unused_columns; //!< columns of other tools, ignored
};
OperatorMeasurements readOperatorMeasurements( const std::string& path );

} // namespace shardsweep
