#pragma once
//! \file operator_fit.hpp
//! \brief Fitting the analytic operator model's constants (model/learned_operator.hpp
//! OperatorConstants) to measured softmax, layer-norm and element-wise latencies: Nelder–Mead on
//! the logarithms of the constants, minimising the mean |log(predicted / measured)|, as the GEMM
//! fit does (gemm_fit.hpp). Deterministic and single-threaded.

#include <shardsweep/model/learned_operator.hpp>
#include <vector>

namespace shardsweep
{

//! One measured operator and the GPU it ran on.
struct OperatorSample
{
    GpuSpec gpu;
    OperatorKind kind = OperatorKind::add;
    double B = 0.0, H = 0.0;
    double latency_ms = 0.0;
};

//! Where every fit starts: 5 µs per kernel, 75 % of the bandwidth, softmax 1.3 and layer norm
//! 1.5 times an element-wise kernel moving the same bytes.
constexpr OperatorConstants kOperatorFitStart = { 0.005, 0.75, 1.3, 1.5 };

//! Mean |log(predicted / measured)| over `samples`.
double operatorFitObjective( const OperatorConstants& c,
                             const std::vector<OperatorSample>& samples );

struct OperatorFitResult
{
    OperatorConstants constants;
    double objective = 0.0; //!< mean |log error| at the optimum
    int evaluations = 0;
};

//! Nelder–Mead with restarts from `start`; at most `max_evaluations` objective evaluations. The
//! bandwidth efficiency stays in (0, 1]. `fit_launch` false keeps start.launch_ms and fits the
//! other three (rows bound by the GPU say little about the launch).
OperatorFitResult fitOperatorConstants( const OperatorConstants& start,
                                        const std::vector<OperatorSample>& samples,
                                        int max_evaluations, bool fit_launch = true );

} // namespace shardsweep
