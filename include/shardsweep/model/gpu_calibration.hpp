#pragma once
//! \file gpu_calibration.hpp
//! \brief A GPU calibrated from the user's own measurements (`shardsweep calibrate gpu`): the GEMM
//! and operator models corrected by what that GPU was measured to do.
//!
//! GEMM, per dtype (fitted by calibration/gpu_calibration_fit.hpp):
//!
//!   log t = Σ_i w_op,i·log t_i(shape) + offset + linear_offset·[op = linear] + r(shape)
//!   t     = max(t, 2·B·M·N·K / max_matmul)
//!
//! t_i is the analytic model's time with tile i (model/gemm.hpp, shipped constants). The
//! uncalibrated model takes the geometric mean over the tiles (w_i = 1/8) because which tile
//! cuBLAS picks cannot be read from a spec sheet; a GPU's measurements show it (an A100 runs most
//! FP32 GEMMs with 128x128 tiles, and the fit puts ~0.9 of its matmuls' weight there). The weights
//! stay on the simplex (w_i ≥ 0, Σ w_i = 1), so every calibrated time still scales with the shape
//! as the tile/wave model does. Linear layers (x·Wᵀ) may have weights of their own, where the
//! calibration rows say that generalises (cuBLAS runs them with other kernels than a plain
//! matmul). r is the distance-weighted mean log residual of the
//! kCalibrationNeighbours nearest measured shapes (natural logs of B, M, N, K and of the FLOPs,
//! the op as a coordinate of weight kOpCoordinate): what the tile model misses locally (cuBLAS'
//! kernel choice, wave tails). max_matmul is the highest FLOP rate measured in the calibration
//! data, so no shape is predicted faster than anything measured.
//!
//! Operators, per dtype: the analytic operator model (model/learned_operator.hpp) with its four
//! constants refitted to the GPU (the launch on every row, the bandwidth share and the softmax
//! and layer-norm factors on the GPU-bound rows), and the same neighbour residual over (log B,
//! log H), per op.
//!
//! These are host functions (the residual keeps its points in std::vector). The batched kernels
//! see a calibration through the GpuSpec it implies (calibratedGpuSpec): its measured matmul
//! ceilings and effective memory bandwidth.

#include <limits>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/model/gemm.hpp>
#include <shardsweep/model/learned_operator.hpp>
#include <string>
#include <utility>
#include <vector>

namespace shardsweep
{

//! Neighbours whose residuals a prediction averages.
constexpr int kCalibrationNeighbours = 7;
//! Coordinate distance between a bmm and a linear GEMM of the same shape (in natural-log units of
//! the dimensions): 3 ≈ a factor 20 in one dimension, so neighbours are taken across ops only when
//! the same op has nothing close.
constexpr double kOpCoordinate = 3.0;
//! Weight of ln(FLOPs) as a coordinate of the GEMM neighbour search: a shape's neighbours are
//! those of about its work, so a GPU-bound GEMM does not borrow the residual of a short call
//! whose time was its launch (on the measured H100, GPU-bound GEMMs at 150 shapes: fp32 18.7 to
//! 16.6 %, bf16 5.2 to 4.3 %; docs/model/calibration.md).
constexpr double kFlopsCoordinate = 1.0;
//! Operators borrow residuals only from measured shapes within this distance in (ln B, ln H):
//! an operator's 7 nearest rows of its op are often short calls far away (a 150-row calibration
//! has about 11 rows per op), whose launch noise would otherwise price a long call.
constexpr double kOperatorNeighbourRadius = 2.0;

//! Measured residuals at points of a feature space: the correction at x is the 1/distance-weighted
//! mean residual of the kCalibrationNeighbours nearest points (the residual itself at a measured
//! point).
struct NeighbourResiduals
{
    int dims = 0;
    std::vector<double> points;    //!< dims coordinates per point, point after point
    std::vector<double> residuals; //!< log(measured / model) per point

    void add( const double* x, double residual );
    std::size_t size() const { return residuals.size(); }
    //! Neighbours farther than `radius` are left out (none left: 0).
    double correction( const double* x,
                       double radius = std::numeric_limits<double>::infinity() ) const;
};

//! One measured GEMM (C[B,M,N] = A[B,M,K]·W[B,K,N]) of the calibration data.
struct GemmSample
{
    double B = 0.0, M = 0.0, N = 0.0, K = 0.0;
    DataType dtype = DataType::fp32;
    GemmOp op = GemmOp::bmm;
    double latency_ms = 0.0;
};

//! Which column of a GEMM file (B,M,N,K) is the reduction dimension. shardsweep, PyTorch's
//! torch.bmm(A[B,M,K], W[B,K,N]) and `shapes` write K; NeuSight's measurements (and files copied
//! from them) write N: its bmm is [B,M,N]×[B,N,K] and its linear x[B,M,N]·W(N→K). The two cannot
//! be told apart by the header, and read the wrong way NeuSight's files calibrate 1.15 to 2.4
//! times less accurately (bench calibrate --table reduction), so `calibrate gpu` tells them apart
//! by the data (detectGemmReductionDim).
enum class GemmReductionDim : unsigned char
{
    K = 0,
    N = 1,
};

SHARDSWEEP_ENUM_NAMES( GemmReductionDim, "GEMM reduction dimension",
                       { GemmReductionDim::K, "K",
                         "C[B,M,N] = A[B,M,K]·W[B,K,N] (shardsweep, torch.bmm)" },
                       { GemmReductionDim::N, "N",
                         "[B,M,N]×[B,N,K] (NeuSight's measurement files)" } );

//! `dim`'s B,M,N,K as shardsweep's (K the reduction): N and K swap places for NeuSight's. The
//! swap is its own inverse, so it also turns shardsweep's shapes back into `dim`'s.
inline void toReductionK( GemmReductionDim dim, double& N, double& K )
{
    if ( dim == GemmReductionDim::N )
        std::swap( N, K );
}

//! `rows` of a file with `dim` as its reduction column, as shardsweep's (toReductionK per row).
inline std::vector<GemmSample> withReductionK( std::vector<GemmSample> rows, GemmReductionDim dim )
{
    for ( GemmSample& s : rows )
        toReductionK( dim, s.N, s.K );
    return rows;
}

//! One measured operator on a [B,H] tensor.
struct OperatorMeasurement
{
    OperatorKind kind = OperatorKind::add;
    double B = 0.0, H = 0.0;
    DataType dtype = DataType::fp32;
    double latency_ms = 0.0;
};

//! How well a calibration reproduces its data: in-sample and 5-fold cross-validated MAPE, %.
struct CalibrationFitStats
{
    std::size_t rows = 0;
    double fit_mape = 0.0;
    double cv_mape = 0.0;
    double uncalibrated_mape = 0.0; //!< the shipped model on the same rows
};

struct GemmCalibration
{
    DataType dtype = DataType::fp32;
    //! The tile model's constants: the shipped ones (a calibration file always uses them; bench
    //! calibrate sets those fitted without the GPU, to calibrate a model that never saw it).
    GemmConstants constants = shippedGemmConstants();
    GemmTileCalibration mixture;  //!< tile weights, offsets, measured ceiling (valid = true)
    NeighbourResiduals residuals; //!< features: gemmCalibrationFeatures
    CalibrationFitStats stats;
};

struct OperatorCalibration
{
    DataType dtype = DataType::fp32;
    OperatorConstants constants = shippedOperatorConstants();
    NeighbourResiduals residuals; //!< features: operatorCalibrationFeatures
    CalibrationFitStats stats;
};

//! Everything `calibrate gpu` learned about one GPU.
struct GpuCalibration
{
    std::string gpu; //!< catalog name
    //! The reduction column of the GEMM file it was fitted on (its points are stored with K the
    //! reduction); `predict gemm --calibration` reads its --input the same way by default.
    GemmReductionDim gemm_reduction_dim = GemmReductionDim::K;
    std::vector<GemmCalibration> gemm;
    std::vector<OperatorCalibration> ops;

    const GemmCalibration* gemmFor( DataType dtype ) const;
    const OperatorCalibration* opsFor( DataType dtype ) const;
};

//! Feature vectors of the neighbour search.
constexpr int kGemmCalibrationFeatures = 6;
void gemmCalibrationFeatures( double B, double M, double N, double K, GemmOp op, double* x );
constexpr int kOperatorCalibrationFeatures = 3;
void operatorCalibrationFeatures( OperatorKind kind, double B, double H, double* x );

//! The tile mixture without the residual: Σ w_i·log t_i + offsets (natural log of ms).
double gemmTileMixtureLog( const GemmCalibration& c, const GpuSpec& gpu, double B, double M,
                           double N, double K, GemmOp op );
//! The calibrated GEMM latency, ms (formula above).
double calibratedGemmMs( const GemmCalibration& c, const GpuSpec& gpu, double B, double M, double N,
                         double K, GemmOp op );

//! The operator model's view of a dtype: the element size enters as a bandwidth scaled by
//! 4 / bytes (the operator formulas count fp32 elements).
GpuSpec operatorDtypeGpu( const GpuSpec& gpu, DataType dtype );
//! The refitted operator model without the residual, ms.
double operatorRefitMs( const OperatorCalibration& c, const GpuSpec& gpu, OperatorKind kind,
                        double B, double H );
//! The calibrated operator latency, ms.
double calibratedOperatorMs( const OperatorCalibration& c, const GpuSpec& gpu, OperatorKind kind,
                             double B, double H );

//! The GpuSpec the batched models see under a calibration: the measured matmul ceilings (fp32;
//! bf16, else fp16, for the 16-bit tensor-core ceiling) replace the spec's.
GpuSpec calibratedGpuSpec( const GpuSpec& gpu, const GpuCalibration& calibration );

} // namespace shardsweep
