#pragma once
//! \file neusight_data.hpp
//! \brief Reads NeuSight's measured GEMM latencies and GPU spec files (inputs/measured/gemm/).
//!
//! NeuSight's files use N as the reduction: bmm is [B,M,N]·[B,N,K], linear is x[B,M,N]·W(N→K)
//! with bias. Rows are converted on reading to shardsweep's convention C[B,M,N] = A[B,M,K]·W[B,K,N]
//! (K the reduction), i.e. NeuSight's (N, K) become (K, N). Device JSON keys map to GpuSpec as
//! Num_Sm → sm_count, Freq (MHz) → boost_clock_MHz, SingleFLOPs (GFLOPS) → fp32_TFLOPs,
//! Mem_Bw (GB/s) → memory_bandwidth_GBps, L2Cache (MB) → l2_cache_MiB, Dev_Mem (GB) → memory_GiB.
//! loadNeuSightGemmDataset replaces them by the GPU catalog entry whose alias is the JSON's
//! "Device" name (what `predict gemm` uses), keeping the JSON only for GPUs the catalog lacks.

#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/kernel/operator_batch.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! One measured GEMM, in shardsweep's convention (K is the reduction).
struct GemmMeasurement
{
    int gpu = 0;         //!< index into GemmDataset::gpus
    bool linear = false; //!< NeuSight "linear" (with bias) rather than "bmm"
    int kernels = 1;     //!< kernels launched (2: split-K with a reduction kernel)
    double B = 0.0, M = 0.0, N = 0.0, K = 0.0;
    double latency_ms = 0.0;

    //! The row as the GEMM model's shape (fp32, NeuSight's only dtype).
    GemmShape shape() const
    {
        GemmShape s;
        s.B = B;
        s.M = M;
        s.N = N;
        s.K = K;
        s.op = linear ? GemmOp::linear : GemmOp::bmm;
        return s;
    }
};

struct GemmDataset
{
    std::vector<std::string> gpus;         //!< file stems, e.g. "Tesla_T4"
    std::vector<std::string> device_names; //!< "Device" of the spec file, e.g. "Tesla T4"
    std::vector<GpuSpec> specs;
    std::vector<GemmMeasurement> rows;
};

//! Reads one NeuSight device JSON (flat object with the keys above); throws InputError.
GpuSpec readNeuSightDevice( const std::string& path, std::string* device_name = nullptr );

//! Appends the rows of one NeuSight GEMM CSV (op,device,latency_ms,kernel,kernels,B,M,N,K).
void readNeuSightGemm( const std::string& path, int gpu, std::vector<GemmMeasurement>& rows );

//! Loads every GPU that has devices/<stem>.json and train/bmm_<stem>.csv or linear_<stem>.csv
//! under `dir` (inputs/measured/gemm), GPUs sorted by stem; specs from the catalog (see above).
GemmDataset loadNeuSightGemmDataset( const std::string& dir );

//! One of NeuSight's measured non-GEMM operators (inputs/measured/ops/train/*.csv).
struct NeuSightOperatorRow
{
    int gpu = 0;
    OperatorShape shape;
    double latency_ms = 0.0;
};

//! NeuSight's measured operator rows and their GPUs (by catalog name, in order of appearance).
struct NeuSightOperatorData
{
    std::vector<std::string> gpus;
    std::vector<GpuSpec> specs;
    std::vector<NeuSightOperatorRow> rows;
};

//! Rows of every train/*.csv of `data_dir` (inputs/measured/ops; files in name order), GPUs by
//! catalog name; throws InputError naming the file, line and column.
NeuSightOperatorData loadNeuSightOperatorData( const std::string& data_dir );

} // namespace shardsweep
