#pragma once
//! \file bench_calibrate.hpp
//! \brief What the tables of `shardsweep bench calibrate` share: random draws of calibration rows
//! and the error summary, and the tables kept in files of their own.
#include <cstddef>
#include <cstdint>
#include <shardsweep/io/table_output.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! Mean and median absolute percentage error.
struct Ape
{
    double mape = 0.0, median = 0.0;
};
Ape apeOf( std::vector<double> ape );

//! `rows` in a random order (Fisher–Yates on a counter-based stream: the same for every run).
std::vector<std::size_t> shuffled( std::vector<std::size_t> rows, std::uint64_t seed,
                                   std::uint64_t id );

//! --table reduction: whether `calibrate gpu` tells which column of a GEMM file is the reduction
//! (detectGemmReductionDim), on NeuSight's five GPUs (`gemm_dir`; tile constants fitted without
//! the GPU) and one GPU's microbenchmark file (`measured_gpu`, `measured_file`), each file
//! presented with K and with N as the reduction; 150 random rows per draw, `seeds` draws.
ResultTable reductionDimTable( const std::string& gemm_dir, const std::string& measured_gpu,
                               const std::string& measured_file, int seeds );

} // namespace shardsweep
