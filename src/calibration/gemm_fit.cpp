#include <algorithm>
#include <cmath>
#include <numeric>
#include <shardsweep/calibration/gemm_fit.hpp>
#include <shardsweep/calibration/nelder_mead.hpp>

namespace shardsweep
{

void gemmConstantsToArray( const GemmConstants& c, double* x )
{
    x[0] = c.launch_ms;
    x[1] = c.peak_efficiency;
    x[2] = c.k_overhead;
    x[3] = c.intensity_half;
    x[4] = c.occupancy_area;
    x[5] = c.bandwidth_efficiency;
    x[6] = c.splitk_ms;
    x[7] = c.linear_launch_ratio;
    x[8] = c.flops_per_joule;
    x[9] = c.boost_ms;
}

GemmConstants gemmConstantsFromArray( const double* x )
{
    return GemmConstants{ x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9] };
}

double gemmPredictRow( const GemmConstants& c, const GpuSpec& gpu, const GemmMeasurement& m )
{
    return predictGemmWith( c, gpu, m.B, m.M, m.N, m.K, DataType::fp32, m.shape().op ).latency_ms;
}

double gemmFitObjective( const GemmConstants& c, const GemmDataset& data,
                         const std::vector<std::size_t>& rows )
{
    double sum = 0.0;
    for ( std::size_t i : rows )
    {
        const GemmMeasurement& m = data.rows[i];
        sum += std::fabs( std::log( gemmPredictRow( c, data.specs[m.gpu], m ) / m.latency_ms ) );
    }
    return rows.empty() ? 0.0 : sum / rows.size();
}

namespace
{
// Efficiencies are fractions: keep them in (0, 1] whatever the simplex proposes.
GemmConstants fromLog( const std::vector<double>& y )
{
    double x[kGemmNumConstants];
    for ( int i = 0; i < kGemmNumConstants; ++i )
        x[i] = std::exp( y[i] );
    x[1] = std::min( x[1], 1.0 );
    x[5] = std::min( x[5], 1.0 );
    return gemmConstantsFromArray( x );
}

} // namespace

GemmFitResult fitGemmConstants( const GemmConstants& start, const GemmDataset& data,
                                const std::vector<std::size_t>& rows, int max_evaluations )
{
    double x[kGemmNumConstants];
    gemmConstantsToArray( start, x );
    std::vector<double> y( kGemmNumConstants );
    for ( int i = 0; i < kGemmNumConstants; ++i )
        y[i] = std::log( x[i] );
    GemmFitResult result;
    double best = gemmFitObjective( start, data, rows );
    result.evaluations = 1;
    const FitObjective f = [&]( const std::vector<double>& z )
    { return gemmFitObjective( fromLog( z ), data, rows ); };
    y = nelderMeadWithRestarts( f, y, max_evaluations, result.evaluations, best );
    result.constants = fromLog( y );
    result.objective = best;
    return result;
}

GemmErrorStats gemmErrorStats( const std::vector<double>& pred, const GemmDataset& data,
                               const std::vector<std::size_t>& rows )
{
    GemmErrorStats s;
    s.rows = rows.size();
    if ( rows.empty() )
        return s;
    std::vector<double> ape( rows.size() );
    double sum = 0.0, sum_log = 0.0;
    for ( std::size_t i = 0; i < rows.size(); ++i )
    {
        const double meas = data.rows[rows[i]].latency_ms;
        ape[i] = 100.0 * std::fabs( pred[i] - meas ) / meas;
        sum += ape[i];
        sum_log += std::fabs( std::log( pred[i] / meas ) );
    }
    s.mape = sum / rows.size();
    s.mean_log = sum_log / rows.size();
    const std::size_t mid = ape.size() / 2;
    std::nth_element( ape.begin(), ape.begin() + mid, ape.end() );
    double median = ape[mid];
    if ( ape.size() % 2 == 0 )
        median = 0.5 * ( median + *std::max_element( ape.begin(), ape.begin() + mid ) );
    s.median_ape = median;
    return s;
}

} // namespace shardsweep
