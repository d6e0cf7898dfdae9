// Fitting a GPU calibration (gpu_calibration_fit.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <shardsweep/calibration/gpu_calibration_fit.hpp>
#include <shardsweep/calibration/nelder_mead.hpp>
#include <shardsweep/calibration/operator_fit.hpp>

namespace shardsweep
{

namespace
{

constexpr int kTileWeightEvaluations = 3000;
//! A call this many times the fastest one measured is bound by the GPU, not by its launch.
constexpr double kGpuBoundFactor = 10.0;
constexpr int kOperatorEvaluations = 2000;
constexpr int kCrossValidationFolds = 5;

//! w = softmax(z): weights on the simplex for any z.
void tileWeightsFromLogits( const std::vector<double>& z, double* w )
{
    const double top = *std::max_element( z.begin(), z.end() );
    double sum = 0.0;
    for ( int t = 0; t < kGemmNumTiles; ++t )
        sum += w[t] = std::exp( z[t] - top );
    for ( int t = 0; t < kGemmNumTiles; ++t )
        w[t] /= sum;
}

//! The measured log latencies and the log tile times of each sample (as gemmTileMixtureLog prices
//! them).
struct TileTable
{
    std::vector<double> log_tile; //!< kGemmNumTiles per sample
    std::vector<double> log_measured;
    std::vector<bool> linear;
};

TileTable tileTable( const GpuSpec& gpu, DataType dtype, const std::vector<GemmSample>& samples,
                     const GemmConstants& constants )
{
    GemmCalibration one_tile;
    one_tile.dtype = dtype;
    one_tile.constants = constants;
    TileTable t;
    for ( const GemmSample& s : samples )
    {
        for ( int i = 0; i < kGemmNumTiles; ++i )
        {
            std::fill( std::begin( one_tile.mixture.tile_weight ),
                       std::end( one_tile.mixture.tile_weight ), 0.0 );
            one_tile.mixture.tile_weight[i] = 1.0;
            t.log_tile.push_back( gemmTileMixtureLog( one_tile, gpu, s.B, s.M, s.N, s.K, s.op ) );
        }
        t.log_measured.push_back( std::log( s.latency_ms ) );
        t.linear.push_back( s.op == GemmOp::linear );
    }
    return t;
}

//! Log errors up to this size weigh quadratically in the tile mixture's fit, larger ones linearly
//! (Huber's loss): a few shapes that cuBLAS runs far slower than their tile counts say (on
//! NeuSight's P100, linear layers with a reduction of 32,768 or more run at 0.4 of the rate of
//! those under 4,096) no longer pull the mixture away from every other shape. With squared errors
//! its 150-shape mixture priced the P100's transformer-layer GEMMs 1-11 % too slow
//! (scripts/neusight_step_consistency.py); docs/model/calibration.md has the figures.
constexpr double kMixtureHuberDelta = 0.05;

double huberLoss( double e )
{
    const double a = std::fabs( e );
    return a <= kMixtureHuberDelta ? 0.5 * e * e
                                   : kMixtureHuberDelta * ( a - 0.5 * kMixtureHuberDelta );
}

//! The offset m minimising Σ huberLoss(r_i − m): iteratively reweighted means from the median.
double huberLocation( std::vector<double> r )
{
    if ( r.empty() )
        return 0.0;
    std::nth_element( r.begin(), r.begin() + r.size() / 2, r.end() );
    double m = r[r.size() / 2];
    for ( int iteration = 0; iteration < 100; ++iteration )
    {
        double sum = 0.0, weights = 0.0;
        for ( double x : r )
        {
            const double a = std::fabs( x - m );
            const double w = a <= kMixtureHuberDelta ? 1.0 : kMixtureHuberDelta / a;
            sum += w * x;
            weights += w;
        }
        const double next = sum / weights;
        const bool converged = std::fabs( next - m ) <= 1e-12;
        m = next;
        if ( converged )
            break;
    }
    return m;
}

//! For weights w, the offsets of each op and the mean Huber loss of the log errors.
double tileMixtureError( const TileTable& t, const double* w, double& offset,
                         double& linear_offset )
{
    const std::size_t n = t.log_measured.size();
    std::vector<double> r( n ), by_op[2];
    for ( std::size_t s = 0; s < n; ++s )
    {
        double mix = 0.0;
        for ( int i = 0; i < kGemmNumTiles; ++i )
            mix += w[i] * t.log_tile[s * kGemmNumTiles + i];
        r[s] = t.log_measured[s] - mix;
        by_op[t.linear[s]].push_back( r[s] );
    }
    const double bmm = huberLocation( by_op[0] );
    const double linear = huberLocation( by_op[1] );
    offset = by_op[0].empty() ? linear : bmm;
    linear_offset = !by_op[0].empty() && !by_op[1].empty() ? linear - bmm : 0.0;
    double loss = 0.0;
    for ( std::size_t s = 0; s < n; ++s )
        loss += huberLoss( r[s] - offset - ( t.linear[s] ? linear_offset : 0.0 ) );
    return loss / n;
}

//! The tile weights (and their offsets) that minimise the mean Huber loss of the log errors on
//! `table`, by Nelder–Mead on their logits from `start`.
void fitTileWeights( const TileTable& table, std::vector<double> start, double* weight,
                     double& offset, double& linear_offset )
{
    double w[kGemmNumTiles];
    const FitObjective error = [&]( const std::vector<double>& z )
    {
        tileWeightsFromLogits( z, w );
        return tileMixtureError( table, w, offset, linear_offset );
    };
    double best = error( start );
    int used = 1;
    start = nelderMeadWithRestarts( error, start, kTileWeightEvaluations, used, best );
    tileWeightsFromLogits( start, weight );
    tileMixtureError( table, weight, offset, linear_offset );
}

double ape( double predicted, double measured )
{
    return std::fabs( predicted - measured ) / measured * 100.0;
}

//! Rows of fold `f` (held out) or of the other folds.
template <class T>
std::vector<T> foldRows( const std::vector<T>& rows, int fold, bool held_out )
{
    std::vector<T> out;
    for ( std::size_t i = 0; i < rows.size(); ++i )
        if ( ( static_cast<int>( i % kCrossValidationFolds ) == fold ) == held_out )
            out.push_back( rows[i] );
    return out;
}

template <class Sample>
std::map<DataType, std::vector<Sample>> byDtype( const std::vector<Sample>& s )
{
    std::map<DataType, std::vector<Sample>> groups;
    for ( const Sample& x : s )
        groups[x.dtype].push_back( x );
    return groups;
}

//! MAPE of `predict` on each fold's held-out rows, fitted by `fit` on the other folds.
template <class Sample, class Fit, class Predict>
double crossValidatedMape( const std::vector<Sample>& rows, const Fit& fit, const Predict& predict )
{
    double sum = 0.0;
    std::size_t held = 0;
    for ( int f = 0; f < kCrossValidationFolds; ++f )
    {
        const std::vector<Sample> train = foldRows( rows, f, false );
        const std::vector<Sample> test = foldRows( rows, f, true );
        if ( train.empty() || test.empty() )
            continue;
        const auto c = fit( train );
        for ( const Sample& s : test )
        {
            sum += ape( predict( c, s ), s.latency_ms );
            ++held;
        }
    }
    return held ? sum / held : 0.0;
}

//! The shortest latency measured in `rows`.
template <class Sample>
double fastestOf( const std::vector<Sample>& rows )
{
    double fastest = std::numeric_limits<double>::infinity();
    for ( const Sample& s : rows )
        fastest = std::min( fastest, s.latency_ms );
    return fastest;
}

//! The rows bound by the GPU rather than by their launch: kGpuBoundFactor times `fastest` or more.
template <class Sample>
std::vector<Sample> gpuBoundRows( const std::vector<Sample>& rows, double fastest )
{
    std::vector<Sample> gpu_bound;
    for ( const Sample& s : rows )
        if ( s.latency_ms >= kGpuBoundFactor * fastest )
            gpu_bound.push_back( s );
    return gpu_bound;
}

//! MAPE of `predict` on `rows`, fitted by `fit` on all of them and, per fold, on the others.
template <class Sample, class Fit, class Predict>
CalibrationFitStats fitStats( const std::vector<Sample>& rows, const Fit& fit,
                              const Predict& predict, double uncalibrated_sum )
{
    CalibrationFitStats st;
    st.rows = rows.size();
    st.uncalibrated_mape = uncalibrated_sum / rows.size();
    const auto all = fit( rows );
    for ( const Sample& s : rows )
        st.fit_mape += ape( predict( all, s ), s.latency_ms ) / rows.size();
    // Every row is its own nearest neighbour: what is left is rounding (~1e-15 %).
    if ( st.fit_mape < 1e-9 )
        st.fit_mape = 0.0;
    st.cv_mape = crossValidatedMape( rows, fit, predict );
    return st;
}

//! The rows a tile mixture is fitted to: the GPU-bound ones (kGpuBoundFactor times the fastest
//! call or more) when there are enough. A short call's time is the host's launch and varies
//! between runs (13-40 % on an H100, docs/model/calibration.md), and the batched models, which
//! price launches as the framework's kernel gap, use the mixture alone. The residuals, over every
//! row, still make the measured shapes exact in predict gemm.
std::vector<GemmSample> mixtureRows( const std::vector<GemmSample>& rows, double fastest )
{
    std::vector<GemmSample> gpu_bound = gpuBoundRows( rows, fastest );
    return gpu_bound.size() >= kMinCalibrationRows ? gpu_bound : rows;
}

//! The calibration with one tile mixture for both ops, or (`own_linear_tiles`, where both ops have
//! kMinCalibrationRows rows) a mixture per op.
GemmCalibration fitGemmVariant( const GpuSpec& gpu, DataType dtype,
                                const std::vector<GemmSample>& samples,
                                const GemmConstants& constants, bool own_linear_tiles )
{
    GemmCalibration c;
    c.dtype = dtype;
    c.constants = constants;
    c.mixture.valid = true;
    const double fastest = fastestOf( samples );
    // Every fit starts from uniform logits, the uncalibrated geometric mean (a start where one
    // tile has nearly all the weight leaves the simplex too little gradient to move it).
    const std::vector<double> uniform( kGemmNumTiles, 0.0 );
    std::vector<GemmSample> by_op[2];
    for ( const GemmSample& s : samples )
        by_op[s.op == GemmOp::linear].push_back( s );
    if ( own_linear_tiles && by_op[0].size() >= kMinCalibrationRows &&
         by_op[1].size() >= kMinCalibrationRows )
    {
        double unused = 0.0, linear_offset = 0.0;
        fitTileWeights( tileTable( gpu, dtype, mixtureRows( by_op[0], fastest ), constants ),
                        uniform, c.mixture.tile_weight, c.mixture.offset, unused );
        fitTileWeights( tileTable( gpu, dtype, mixtureRows( by_op[1], fastest ), constants ),
                        uniform, c.mixture.linear_tile_weight, linear_offset, unused );
        c.mixture.linear_tiles = true;
        c.mixture.linear_offset = linear_offset - c.mixture.offset;
    }
    else
        fitTileWeights( tileTable( gpu, dtype, mixtureRows( samples, fastest ), constants ),
                        uniform, c.mixture.tile_weight, c.mixture.offset, c.mixture.linear_offset );

    c.residuals.dims = kGemmCalibrationFeatures;
    for ( const GemmSample& s : samples )
    {
        double x[kGemmCalibrationFeatures];
        gemmCalibrationFeatures( s.B, s.M, s.N, s.K, s.op, x );
        c.residuals.add( x, std::log( s.latency_ms ) -
                                gemmTileMixtureLog( c, gpu, s.B, s.M, s.N, s.K, s.op ) );
        c.mixture.max_matmul_TFLOPs = std::max(
            c.mixture.max_matmul_TFLOPs, 2.0 * s.B * s.M * s.N * s.K / s.latency_ms * 1.0e-9 );
    }
    return c;
}

//! The cross-validated MAPE of one variant (fitGemmVariant's `own_linear_tiles`).
double variantCvMape( const GpuSpec& gpu, DataType dtype, const std::vector<GemmSample>& samples,
                      const GemmConstants& constants, bool own_linear_tiles )
{
    return crossValidatedMape(
        samples,
        [&]( const std::vector<GemmSample>& train )
        { return fitGemmVariant( gpu, dtype, train, constants, own_linear_tiles ); },
        [&]( const GemmCalibration& c, const GemmSample& s )
        { return calibratedGemmMs( c, gpu, s.B, s.M, s.N, s.K, s.op ); } );
}

//! Sum over the rows of every dtype with kMinCalibrationRows rows of the absolute percentage error
//! of one tile mixture for both ops, fitted to all rows of the other folds; and how many rows.
//! All rows, not only the GPU-bound ones the calibration's mixture is fitted to: the launch-bound
//! rows follow the tile count too, and with them the wrong reading errs by 1.33 times the right
//! one at least on NeuSight's GPUs (bench calibrate --table reduction).
void tileMixtureCvErrors( const GpuSpec& gpu, const std::vector<GemmSample>& samples,
                          const GemmConstants& constants, double& ape_sum, std::size_t& rows )
{
    for ( const auto& [dtype, group] : byDtype( samples ) )
    {
        if ( group.size() < kMinCalibrationRows )
            continue;
        const DataType d = dtype;
        const double mape = crossValidatedMape(
            group,
            [&]( const std::vector<GemmSample>& train )
            {
                GemmCalibration c;
                c.dtype = d;
                c.constants = constants;
                c.mixture.valid = true;
                fitTileWeights( tileTable( gpu, d, train, constants ),
                                std::vector<double>( kGemmNumTiles, 0.0 ), c.mixture.tile_weight,
                                c.mixture.offset, c.mixture.linear_offset );
                return c;
            },
            [&]( const GemmCalibration& c, const GemmSample& s )
            { return std::exp( gemmTileMixtureLog( c, gpu, s.B, s.M, s.N, s.K, s.op ) ); } );
        ape_sum += mape * group.size();
        rows += group.size();
    }
}

} // namespace

GemmReductionDetection detectGemmReductionDim( const GpuSpec& gpu,
                                               const std::vector<GemmSample>& samples,
                                               const GemmConstants& constants )
{
    const std::vector<GemmSample> swapped = withReductionK( samples, GemmReductionDim::N );
    double sum_k = 0.0, sum_n = 0.0;
    std::size_t rows_k = 0, rows_n = 0;
    tileMixtureCvErrors( gpu, samples, constants, sum_k, rows_k );
    tileMixtureCvErrors( gpu, swapped, constants, sum_n, rows_n );
    GemmReductionDetection d;
    d.mape_as_k = rows_k ? sum_k / rows_k : 0.0;
    d.mape_as_n = rows_n ? sum_n / rows_n : 0.0;
    if ( rows_k > 0 && rows_n > 0 && d.mape_as_n <= kReductionDimMargin * d.mape_as_k )
        d.dim = GemmReductionDim::N;
    return d;
}

GemmCalibration fitGemmCalibration( const GpuSpec& gpu, DataType dtype,
                                    const std::vector<GemmSample>& samples,
                                    const GemmConstants& constants )
{
    // cuBLAS chooses the kernel of a linear layer (x·Wᵀ: NeuSight's GPUs run "tn" kernels there)
    // apart from a plain matmul's, so a mixture per op can follow both; but it doubles the
    // weights, and on NeuSight's T4 it generalises worse than one mixture (14.0 against 13.8 %
    // MAPE, scripts/calibration_alternatives.py). The rows held out of a 5-fold split decide.
    const GemmCalibration shared = fitGemmVariant( gpu, dtype, samples, constants, false );
    const GemmCalibration own = fitGemmVariant( gpu, dtype, samples, constants, true );
    if ( !own.mixture.linear_tiles )
        return shared;
    return variantCvMape( gpu, dtype, samples, constants, true ) <
                   variantCvMape( gpu, dtype, samples, constants, false )
               ? own
               : shared;
}

OperatorCalibration fitOperatorCalibration( const GpuSpec& gpu, DataType dtype,
                                            const std::vector<OperatorMeasurement>& samples )
{
    OperatorCalibration c;
    c.dtype = dtype;
    std::vector<OperatorSample> fit_samples;
    for ( const OperatorMeasurement& m : samples )
        fit_samples.push_back( { operatorDtypeGpu( gpu, dtype ), m.kind, m.B, m.H, m.latency_ms } );
    c.constants =
        fitOperatorConstants( kOperatorFitStart, fit_samples, kOperatorEvaluations ).constants;
    // The launch comes from every row, the bandwidth and the softmax and layer-norm factors from
    // the GPU-bound ones where there are any (a factor with fewer than 5 of its op keeps its
    // start). Fitted to every row, a factor follows the short calls: an H100's layer norms of few
    // rows, or of short ones, run at a fraction of its bandwidth, which pushed ln_factor up and
    // priced its long layer norms far too slow (bench calibrate --table measured: GPU-bound bf16
    // operators at 150 shapes went from 92 to 22 % MAPE; calibration_fits_operator_throughput_on_
    // gpu_bound_rows shows the mechanism).
    const std::vector<OperatorSample> gpu_bound =
        gpuBoundRows( fit_samples, fastestOf( fit_samples ) );
    if ( !gpu_bound.empty() )
    {
        OperatorConstants start = kOperatorFitStart;
        start.launch_ms = c.constants.launch_ms;
        c.constants =
            fitOperatorConstants( start, gpu_bound, kOperatorEvaluations, false ).constants;
    }
    c.residuals.dims = kOperatorCalibrationFeatures;
    for ( const OperatorMeasurement& m : samples )
    {
        double x[kOperatorCalibrationFeatures];
        operatorCalibrationFeatures( m.kind, m.B, m.H, x );
        c.residuals.add( x,
                         std::log( m.latency_ms / operatorRefitMs( c, gpu, m.kind, m.B, m.H ) ) );
    }
    return c;
}

GpuCalibration calibrateGpu( const std::string& gpu_name, const GpuSpec& gpu,
                             const std::vector<GemmSample>& gemms,
                             const std::vector<OperatorMeasurement>& ops,
                             std::vector<std::string>& notes, GemmReductionDim gemm_reduction )
{
    GpuCalibration cal;
    cal.gpu = gpu_name;
    cal.gemm_reduction_dim = gemm_reduction;
    const auto skipped = [&]( const char* what, DataType d, std::size_t n )
    {
        notes.push_back( std::string( what ) + " " + std::string( nameOf( d ) ) + ": " +
                         std::to_string( n ) + " rows, fewer than " +
                         std::to_string( kMinCalibrationRows ) +
                         ": not calibrated (the shipped model prices it)" );
    };
    for ( const auto& [dtype, rows] : byDtype( withReductionK( gemms, gemm_reduction ) ) )
    {
        if ( rows.size() < kMinCalibrationRows )
        {
            skipped( "GEMM", dtype, rows.size() );
            continue;
        }
        const DataType d = dtype;
        const auto fit = [&]( const std::vector<GemmSample>& r )
        { return fitGemmCalibration( gpu, d, r ); };
        const auto predict = [&]( const GemmCalibration& c, const GemmSample& s )
        { return calibratedGemmMs( c, gpu, s.B, s.M, s.N, s.K, s.op ); };
        double shipped = 0.0;
        for ( const GemmSample& s : rows )
            shipped +=
                ape( predictGemm( gpu, s.B, s.M, s.N, s.K, d, s.op ).latency_ms, s.latency_ms );
        GemmCalibration c = fit( rows );
        c.stats = fitStats( rows, fit, predict, shipped );
        cal.gemm.push_back( std::move( c ) );
    }
    for ( const auto& [dtype, rows] : byDtype( ops ) )
    {
        if ( rows.size() < kMinCalibrationRows )
        {
            skipped( "operator", dtype, rows.size() );
            continue;
        }
        const DataType d = dtype;
        const auto fit = [&]( const std::vector<OperatorMeasurement>& r )
        { return fitOperatorCalibration( gpu, d, r ); };
        const auto predict = [&]( const OperatorCalibration& c, const OperatorMeasurement& m )
        { return calibratedOperatorMs( c, gpu, m.kind, m.B, m.H ); };
        double shipped = 0.0;
        for ( const OperatorMeasurement& m : rows )
            shipped += ape( predictOperatorAnalytic( operatorDtypeGpu( gpu, d ), m.kind, m.B, m.H ),
                            m.latency_ms );
        OperatorCalibration c = fit( rows );
        c.stats = fitStats( rows, fit, predict, shipped );
        cal.ops.push_back( std::move( c ) );
    }
    return cal;
}

} // namespace shardsweep
