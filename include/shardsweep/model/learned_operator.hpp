#pragma once
//! \file learned_operator.hpp
//! \brief Learned single-operator latencies: GEMM (bmm, linear) and non-GEMM operators (softmax,
//! layer norm, element-wise) as an MLP correction kept above the roofline with the wave count.
//!
//!   GEMM:  latency = max(bound, analytic · exp(MLP(x)))    analytic = predictGemm (gemm.hpp)
//!   ops:   latency = bound · exp(max(0, MLP(x)))
//!
//! `bound` is the roofline with the wave count (gemmWaveBoundMs, operatorBoundMs), so no
//! prediction is ever faster than the hardware allows. The MLP sees what the analytic model
//! cannot: the shape, the analytic model's own estimate, wave counts and the GPU's spec features
//! (NeuSight's idea: Lee et al., ASPLOS'25, arXiv 2407.13853). The features below must match
//! postprocess/train_operator_model.py, which trains the MLPs and writes the model files; the
//! file lists the feature names and the reader (io/mlp_file.hpp) rejects any other list, and its
//! `check` records pin the arithmetic. Design and errors: docs/model/learned_operators.md.
//! Everything here is a pure function callable inside Kokkos kernels.

#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/model/gemm.hpp>
#include <shardsweep/model/math.hpp>
#include <shardsweep/model/mlp.hpp>

namespace shardsweep
{

//! NeuSight's non-GEMM operators on a [B,H] tensor (names: NeuSight's, in the table below).
enum class OperatorKind : unsigned char
{
    softmax = 0,
    ln = 1,
    add = 2,
    addu = 3, //!< "u": with a scalar (one tensor operand)
    mul = 4,
    mulu = 5,
    div = 6,
    divu = 7,
    pow = 8,
    powu = 9,
    gelu = 10,
    relu = 11,
    tanh = 12,
};
constexpr int kNumOperatorKinds = 13;

// NeuSight's operator names: predict op's `op` column, NeuSight's OPName.
SHARDSWEEP_ENUM_NAMES( OperatorKind, "operator",
                       { OperatorKind::softmax, "softmax", "softmax over H" },
                       { OperatorKind::ln, "ln", "layer norm over H" },
                       { OperatorKind::add, "add", "add of two tensors" },
                       { OperatorKind::addu, "addu", "add of a tensor and a scalar" },
                       { OperatorKind::mul, "mul", "multiply of two tensors" },
                       { OperatorKind::mulu, "mulu", "multiply of a tensor and a scalar" },
                       { OperatorKind::div, "div", "divide of two tensors" },
                       { OperatorKind::divu, "divu", "divide of a tensor and a scalar" },
                       { OperatorKind::pow, "pow", "power of two tensors" },
                       { OperatorKind::powu, "powu", "power of a tensor and a scalar" },
                       { OperatorKind::gelu, "gelu", "GELU activation" },
                       { OperatorKind::relu, "relu", "ReLU activation" },
                       { OperatorKind::tanh, "tanh", "tanh activation" } );

//! Feature names, in order, of the two model families (the files must list exactly these).
constexpr int kGemmLearnedFeatures = 18;
constexpr const char* kGemmLearnedFeatureNames[kGemmLearnedFeatures] = { "log2_B",
                                                                         "log2_M",
                                                                         "log2_N",
                                                                         "log2_K",
                                                                         "linear",
                                                                         "log2_analytic_over_bound",
                                                                         "log2_analytic_ms",
                                                                         "log2_waves_128x128",
                                                                         "log2_fill_128x128",
                                                                         "log2_waves_64x64",
                                                                         "log2_fill_64x64",
                                                                         "log2_sm_count",
                                                                         "log2_clock_MHz",
                                                                         "log2_peak_TFLOPs",
                                                                         "log2_bandwidth_GBps",
                                                                         "log2_l2_MiB",
                                                                         "log2_balance",
                                                                         "log2_power_per_flop" };
constexpr int kOperatorLearnedFeatures = kNumOperatorKinds + 9;
constexpr const char* kOperatorLearnedFeatureNames[kOperatorLearnedFeatures] = {
    "op_softmax",
    "op_ln",
    "op_add",
    "op_addu",
    "op_mul",
    "op_mulu",
    "op_div",
    "op_divu",
    "op_pow",
    "op_powu",
    "op_gelu",
    "op_relu",
    "op_tanh",
    "log2_compute_over_memory",
    "log2_bytes_over_l2",
    "log2_elements_per_sm",
    "log2_memory_ms",
    "log2_sm_count",
    "log2_clock_MHz",
    "log2_peak_TFLOPs",
    "log2_bandwidth_GBps",
    "log2_l2_MiB" };

//! The analytic operator model's constants (predictOperatorAnalytic).
struct OperatorConstants
{
    double launch_ms;            //!< fixed time of one kernel (launch, ramp-up, tail), ms
    double bandwidth_efficiency; //!< fraction of the datasheet bandwidth element-wise kernels reach
    double softmax_factor;       //!< softmax / element-wise time for the same bytes (reductions)
    double ln_factor;            //!< layer norm / element-wise time for the same bytes
};

//! Fitted on all five GPUs of inputs/measured/ops/train (11,255 rows) by Nelder–Mead on the mean
//! |log(predicted/measured)| from kOperatorFitStart (calibration/operator_fit.hpp), 5 digits:
//! `shardsweep bench ops --table constants` reproduces them and the leave-one-GPU-out folds.
KOKKOS_INLINE_FUNCTION constexpr OperatorConstants shippedOperatorConstants()
{
    return { 0.0086411, 0.75080, 1.2618, 1.5117 };
}

//! Tensors of B·H elements read plus written: binary ops read two, unary ops and the scalar
//! ("u") forms one; all write one. Layer norm's weight and bias (2·H) are negligible.
KOKKOS_INLINE_FUNCTION double operatorTensors( OperatorKind k )
{
    switch ( k )
    {
    case OperatorKind::add:
    case OperatorKind::mul:
    case OperatorKind::div:
    case OperatorKind::pow:
        return 3.0;
    default:
        return 2.0;
    }
}

//! FLOPs per element (NeuSight's OpsPerO where it lists them): only the roofline uses them.
KOKKOS_INLINE_FUNCTION double operatorFlopsPerElement( OperatorKind k )
{
    switch ( k )
    {
    case OperatorKind::softmax:
        return 5.0;
    case OperatorKind::ln:
        return 6.0;
    case OperatorKind::gelu:
        return 8.0;
    case OperatorKind::tanh:
        return 4.0;
    default:
        return 1.0;
    }
}

//! DRAM time of an operator on a [B,H] fp32 tensor at the datasheet bandwidth, ms.
KOKKOS_INLINE_FUNCTION double operatorMemoryMs( const GpuSpec& gpu, OperatorKind k, double B,
                                                double H )
{
    return 4.0 * operatorTensors( k ) * B * H / ( gpu.memory_bandwidth_GBps * 1.0e9 ) * 1.0e3;
}

//! FP32 compute time at peak, ms.
KOKKOS_INLINE_FUNCTION double operatorComputeMs( const GpuSpec& gpu, OperatorKind k, double B,
                                                 double H )
{
    return operatorFlopsPerElement( k ) * B * H / ( gpu.fp32_TFLOPs * 1.0e12 ) * 1.0e3;
}

//! The roofline of an operator: no prediction may be faster.
KOKKOS_INLINE_FUNCTION double operatorBoundMs( const GpuSpec& gpu, OperatorKind k, double B,
                                               double H )
{
    return math::fmax( operatorMemoryMs( gpu, k, B, H ), operatorComputeMs( gpu, k, B, H ) );
}

//! The analytic operator model with explicit constants (the fit varies them): a fixed kernel
//! time plus the roofline at a share of the bandwidth, softmax and layer norm slower by a factor
//! (their reductions and second pass).
KOKKOS_INLINE_FUNCTION double predictOperatorAnalyticWith( const OperatorConstants& c,
                                                           const GpuSpec& gpu, OperatorKind k,
                                                           double B, double H )
{
    const double factor = k == OperatorKind::softmax ? c.softmax_factor
                          : k == OperatorKind::ln    ? c.ln_factor
                                                     : 1.0;
    return c.launch_ms + operatorBoundMs( gpu, k, B, H ) / c.bandwidth_efficiency * factor;
}

//! The analytic operator model (the fallback and the baseline) with the shipped constants.
KOKKOS_INLINE_FUNCTION double predictOperatorAnalytic( const GpuSpec& gpu, OperatorKind k, double B,
                                                       double H )
{
    return predictOperatorAnalyticWith( shippedOperatorConstants(), gpu, k, B, H );
}

//! Writes the kOperatorLearnedFeatures features of one operator into x.
KOKKOS_INLINE_FUNCTION void operatorLearnedFeatures( const GpuSpec& gpu, OperatorKind k, double B,
                                                     double H, double* x )
{
    for ( int i = 0; i < kNumOperatorKinds; ++i )
        x[i] = i == static_cast<int>( k ) ? 1.0 : 0.0;
    const double memory = operatorMemoryMs( gpu, k, B, H );
    const double compute = operatorComputeMs( gpu, k, B, H );
    x[kNumOperatorKinds + 0] = math::log2( compute / memory );
    x[kNumOperatorKinds + 1] =
        math::log2( 4.0 * operatorTensors( k ) * B * H / ( gpu.l2_cache_MiB * 1048576.0 ) );
    x[kNumOperatorKinds + 2] = math::log2( B * H / gpu.sm_count );
    x[kNumOperatorKinds + 3] = math::log2( memory );
    x[kNumOperatorKinds + 4] = math::log2( double( gpu.sm_count ) );
    x[kNumOperatorKinds + 5] = math::log2( gpu.boost_clock_MHz );
    x[kNumOperatorKinds + 6] = math::log2( gpu.fp32_TFLOPs );
    x[kNumOperatorKinds + 7] = math::log2( gpu.memory_bandwidth_GBps );
    x[kNumOperatorKinds + 8] = math::log2( gpu.l2_cache_MiB );
}

//! Learned latency of one operator (ms): bound · exp(max(0, MLP)).
KOKKOS_INLINE_FUNCTION double predictOperatorLearned( const MlpLayout& mlp, const double* params,
                                                      const GpuSpec& gpu, OperatorKind k, double B,
                                                      double H )
{
    double x[kMlpMaxInputs];
    operatorLearnedFeatures( gpu, k, B, H, x );
    const double z = math::fmax( 0.0, mlpEvaluate( mlp, params, x ) );
    return operatorBoundMs( gpu, k, B, H ) * math::exp( z );
}

//! The roofline with the wave count: the GEMM is cut into 32×32×32 blocks (the finest tile and
//! K slice cuBLAS uses, so split-K cannot beat it), an SM runs one block per wave at its share of
//! the peak, and every operand crosses DRAM once. ms.
KOKKOS_INLINE_FUNCTION double gemmWaveBoundMs( const GpuSpec& gpu, double B, double M, double N,
                                               double K, DataType dtype )
{
    const double sms = gpu.sm_count;
    const double blocks =
        B * math::ceil( M / 32.0 ) * math::ceil( N / 32.0 ) * math::ceil( K / 32.0 );
    const double per_sm_flops = gemmPeakTFLOPs( gpu, dtype ) * 1.0e12 / sms;
    const double compute = math::ceil( blocks / sms ) * ( 2.0 * 32.0 * 32.0 * 32.0 ) / per_sm_flops;
    const double bytes = dataTypeBytes( dtype ) * B * ( M * K + K * N + M * N );
    const double memory = bytes / ( gpu.memory_bandwidth_GBps * 1.0e9 );
    return math::fmax( compute, memory ) * 1.0e3;
}

//! Writes the kGemmLearnedFeatures features of one GEMM into x; `analytic_ms` and `bound_ms` are
//! predictGemm's latency and gemmWaveBoundMs.
KOKKOS_INLINE_FUNCTION void gemmLearnedFeatures( const GpuSpec& gpu, double B, double M, double N,
                                                 double K, GemmOp op, double analytic_ms,
                                                 double bound_ms, double* x )
{
    const double sms = gpu.sm_count;
    x[0] = math::log2( B );
    x[1] = math::log2( M );
    x[2] = math::log2( N );
    x[3] = math::log2( K );
    x[4] = op == GemmOp::linear ? 1.0 : 0.0;
    x[5] = math::log2( analytic_ms / bound_ms );
    x[6] = math::log2( analytic_ms );
    const double tiles128 = B * math::ceil( M / 128.0 ) * math::ceil( N / 128.0 );
    const double waves128 = math::ceil( tiles128 / sms );
    x[7] = math::log2( waves128 );
    x[8] = math::log2( tiles128 / ( waves128 * sms ) );
    const double tiles64 = B * math::ceil( M / 64.0 ) * math::ceil( N / 64.0 );
    const double waves64 = math::ceil( tiles64 / sms );
    x[9] = math::log2( waves64 );
    x[10] = math::log2( tiles64 / ( waves64 * sms ) );
    const double peak = gpu.fp32_TFLOPs;
    x[11] = math::log2( sms );
    x[12] = math::log2( gpu.boost_clock_MHz );
    x[13] = math::log2( peak );
    x[14] = math::log2( gpu.memory_bandwidth_GBps );
    x[15] = math::log2( gpu.l2_cache_MiB );
    x[16] = math::log2( peak * 1000.0 / gpu.memory_bandwidth_GBps );
    const double power =
        gpu.tdp_W > 0.0 && gpu.process_nm > 0.0 ? gpu.tdp_W / peak * 16.0 / gpu.process_nm : 1.0;
    x[17] = math::log2( power );
}

//! Learned GEMM latency: the analytic prediction (tile, waves, bound of gemm.hpp) with its
//! latency replaced by max(bound, measured matmul maximum, analytic · exp(MLP)). Trained on FP32
//! (TF32 off); other dtypes reuse the FP32 correction on their own peak (unvalidated).
KOKKOS_INLINE_FUNCTION GemmPrediction predictGemmLearned( const MlpLayout& mlp,
                                                          const double* params, const GpuSpec& gpu,
                                                          double B, double M, double N, double K,
                                                          DataType dtype, GemmOp op = GemmOp::bmm )
{
    GemmPrediction p = predictGemm( gpu, B, M, N, K, dtype, op );
    if ( !( p.latency_ms > 0.0 ) )
        return p;
    const double bound = gemmWaveBoundMs( gpu, B, M, N, K, dtype );
    double x[kMlpMaxInputs];
    gemmLearnedFeatures( gpu, B, M, N, K, op, p.latency_ms, bound, x );
    p.latency_ms = math::fmax( math::fmax( bound, gemmMaxMatmulMs( gpu, B, M, N, K, dtype ) ),
                               p.latency_ms * math::exp( mlpEvaluate( mlp, params, x ) ) );
    return p;
}

//! Which GEMM model prices a GEMM inside a kernel: a GPU calibration of the dtype where `gpu`
//! carries one (its measured tile mixture, model/gemm.hpp calibratedTileGemmMs: the GPU's own
//! measurements beat either model), else analytic (params == nullptr, the default) or learned
//! (an MLP whose parameters `params` points at, e.g. a View's data()). Plain data, copied into
//! kernels by value.
struct GemmPricer
{
    MlpLayout layout;
    const double* params = nullptr;

    KOKKOS_INLINE_FUNCTION GemmPrediction operator()( const GpuSpec& gpu, double B, double M,
                                                      double N, double K, DataType dtype,
                                                      GemmOp op = GemmOp::bmm ) const
    {
        if ( const GemmTileCalibration* cal = gemmCalibrationOf( gpu, dtype ) )
        {
            // Tile, waves and bound stay the analytic model's (as predict gemm --calibration).
            GemmPrediction p = predictGemm( gpu, B, M, N, K, dtype, op );
            if ( p.latency_ms > 0.0 )
                p.latency_ms = calibratedTileGemmMs( *cal, shippedGemmConstants(), gpu, B, M, N, K,
                                                     dtype, op );
            return p;
        }
        return params ? predictGemmLearned( layout, params, gpu, B, M, N, K, dtype, op )
                      : predictGemm( gpu, B, M, N, K, dtype, op );
    }
};

} // namespace shardsweep
