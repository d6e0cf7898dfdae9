#include <algorithm>
#include <cmath>
#include <numeric>
#include <shardsweep/calibration/gemm_fit.hpp>

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
    return predictGemmWith( c, gpu, m.B, m.M, m.N, m.K, DataType::fp32,
                            m.linear ? GemmOp::linear : GemmOp::bmm )
        .latency_ms;
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

struct Simplex
{
    std::vector<std::vector<double>> points;
    std::vector<double> values;
};

// One Nelder–Mead run (standard coefficients 1, 2, 0.5, 0.5) from `y0` with initial step `step`
// in log space; returns the best point.
std::vector<double> nelderMead( const std::vector<double>& y0, double step, const GemmDataset& data,
                                const std::vector<std::size_t>& rows, int budget, int& used,
                                double& best_value )
{
    const int n = static_cast<int>( y0.size() );
    auto f = [&]( const std::vector<double>& y )
    {
        ++used;
        return gemmFitObjective( fromLog( y ), data, rows );
    };
    Simplex s;
    s.points.push_back( y0 );
    for ( int i = 0; i < n; ++i )
    {
        std::vector<double> y = y0;
        y[i] += step;
        s.points.push_back( y );
    }
    for ( const auto& p : s.points )
        s.values.push_back( f( p ) );
    std::vector<int> order( n + 1 );
    while ( used < budget )
    {
        std::iota( order.begin(), order.end(), 0 );
        std::sort( order.begin(), order.end(),
                   [&]( int a, int b ) { return s.values[a] < s.values[b]; } );
        const int best = order[0], worst = order[n], second = order[n - 1];
        if ( s.values[worst] - s.values[best] < 1e-7 )
            break;
        std::vector<double> centroid( n, 0.0 );
        for ( int i = 0; i <= n; ++i )
            if ( i != worst )
                for ( int d = 0; d < n; ++d )
                    centroid[d] += s.points[i][d] / n;
        auto along = [&]( double t )
        {
            std::vector<double> y( n );
            for ( int d = 0; d < n; ++d )
                y[d] = centroid[d] + t * ( s.points[worst][d] - centroid[d] );
            return y;
        };
        const std::vector<double> r = along( -1.0 );
        const double fr = f( r );
        if ( fr < s.values[best] )
        {
            const std::vector<double> e = along( -2.0 );
            const double fe = f( e );
            if ( fe < fr )
                s.points[worst] = e, s.values[worst] = fe;
            else
                s.points[worst] = r, s.values[worst] = fr;
        }
        else if ( fr < s.values[second] )
        {
            s.points[worst] = r, s.values[worst] = fr;
        }
        else
        {
            const std::vector<double> c = along( fr < s.values[worst] ? -0.5 : 0.5 );
            const double fc = f( c );
            if ( fc < std::min( fr, s.values[worst] ) )
            {
                s.points[worst] = c, s.values[worst] = fc;
            }
            else
            {
                for ( int i = 0; i <= n; ++i )
                {
                    if ( i == best )
                        continue;
                    for ( int d = 0; d < n; ++d )
                        s.points[i][d] =
                            s.points[best][d] + 0.5 * ( s.points[i][d] - s.points[best][d] );
                    s.values[i] = f( s.points[i] );
                }
            }
        }
    }
    const int b =
        static_cast<int>( std::min_element( s.values.begin(), s.values.end() ) - s.values.begin() );
    best_value = s.values[b];
    return s.points[b];
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
    // Restarts with a shrinking simplex escape the premature collapse Nelder–Mead is known for.
    for ( double step : { 0.5, 0.25, 0.1, 0.05 } )
    {
        double value = 0.0;
        const std::vector<double> z =
            nelderMead( y, step, data, rows, max_evaluations, result.evaluations, value );
        if ( value < best )
            best = value, y = z;
        if ( result.evaluations >= max_evaluations )
            break;
    }
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
