#pragma once
//! \file operator_batch.hpp
//! \brief Batched single-operator predictions (GEMM and non-GEMM) on an explicit execution space:
//! one Kokkos::parallel_for over the rows, each row the pure model functions of
//! model/learned_operator.hpp (learned MLP) or model/gemm.hpp (analytic). Rows are independent,
//! so every backend gives the same bits.

#include <Kokkos_Core.hpp>
#include <shardsweep/model/gemm.hpp>
#include <shardsweep/model/learned_operator.hpp>
#include <shardsweep/model/mlp.hpp>

namespace shardsweep
{

//! One GEMM to price: C[B,M,N] = A[B,M,K]·W[B,K,N].
struct GemmShape
{
    double B = 1.0, M = 1.0, N = 1.0, K = 1.0;
    DataType dtype = DataType::fp32;
    GemmOp op = GemmOp::bmm;
};

//! One non-GEMM operator on a [B,H] fp32 tensor.
struct OperatorShape
{
    OperatorKind kind = OperatorKind::add;
    double B = 1.0, H = 1.0;
};

//! out(i) = the prediction of shapes(i): learned when `learned` (an MLP whose parameters are
//! `params`), else analytic.
template <class ExecSpace>
void predictGemms( const ExecSpace& exec, bool learned, const MlpLayout& layout,
                   const Kokkos::View<const double*, typename ExecSpace::memory_space>& params,
                   const GpuSpec& gpu,
                   const Kokkos::View<const GemmShape*, typename ExecSpace::memory_space>& shapes,
                   const Kokkos::View<GemmPrediction*, typename ExecSpace::memory_space>& out )
{
    Kokkos::parallel_for(
        "shardsweep::predictGemms",
        Kokkos::RangePolicy<ExecSpace>( exec, 0, static_cast<int>( shapes.extent( 0 ) ) ),
        KOKKOS_LAMBDA( const int i ) {
            const GemmShape s = shapes( i );
            out( i ) = learned ? predictGemmLearned( layout, params.data(), gpu, s.B, s.M, s.N, s.K,
                                                     s.dtype, s.op )
                               : predictGemm( gpu, s.B, s.M, s.N, s.K, s.dtype, s.op );
        } );
}

//! out(i) = latency (ms) of shapes(i): learned when `learned`, else predictOperatorAnalytic.
template <class ExecSpace>
void predictOperators(
    const ExecSpace& exec, bool learned, const MlpLayout& layout,
    const Kokkos::View<const double*, typename ExecSpace::memory_space>& params, const GpuSpec& gpu,
    const Kokkos::View<const OperatorShape*, typename ExecSpace::memory_space>& shapes,
    const Kokkos::View<double*, typename ExecSpace::memory_space>& out )
{
    Kokkos::parallel_for(
        "shardsweep::predictOperators",
        Kokkos::RangePolicy<ExecSpace>( exec, 0, static_cast<int>( shapes.extent( 0 ) ) ),
        KOKKOS_LAMBDA( const int i ) {
            const OperatorShape s = shapes( i );
            out( i ) = learned
                           ? predictOperatorLearned( layout, params.data(), gpu, s.kind, s.B, s.H )
                           : predictOperatorAnalytic( gpu, s.kind, s.B, s.H );
        } );
}

} // namespace shardsweep
