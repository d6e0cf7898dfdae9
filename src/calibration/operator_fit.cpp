// The analytic operator model's fit (operator_fit.hpp).
#include <algorithm>
#include <cmath>
#include <shardsweep/calibration/nelder_mead.hpp>
#include <shardsweep/calibration/operator_fit.hpp>

namespace shardsweep
{

double operatorFitObjective( const OperatorConstants& c,
                             const std::vector<OperatorSample>& samples )
{
    double sum = 0.0;
    for ( const OperatorSample& s : samples )
        sum += std::fabs(
            std::log( predictOperatorAnalyticWith( c, s.gpu, s.kind, s.B, s.H ) / s.latency_ms ) );
    return samples.empty() ? 0.0 : sum / samples.size();
}

namespace
{
constexpr long kMinFactorSamples = 5;

// All constants are positive: the fit moves their logarithms; the efficiency is a fraction.
OperatorConstants fromLog( const std::vector<double>& y )
{
    return { std::exp( y[0] ), std::min( std::exp( y[1] ), 1.0 ), std::exp( y[2] ),
             std::exp( y[3] ) };
}

// The simplex's coordinates: all four logs, or the last three after a fixed launch.
std::vector<double> withLaunch( const std::vector<double>& z, bool fit_launch, double log_launch )
{
    if ( fit_launch )
        return z;
    std::vector<double> y = { log_launch };
    y.insert( y.end(), z.begin(), z.end() );
    return y;
}
} // namespace

OperatorFitResult fitOperatorConstants( const OperatorConstants& start,
                                        const std::vector<OperatorSample>& samples,
                                        int max_evaluations, bool fit_launch )
{
    const double log_launch = std::log( start.launch_ms );
    std::vector<double> y = { std::log( start.bandwidth_efficiency ),
                              std::log( start.softmax_factor ), std::log( start.ln_factor ) };
    if ( fit_launch )
        y.insert( y.begin(), log_launch );
    OperatorFitResult result;
    double best = operatorFitObjective( start, samples );
    result.evaluations = 1;
    const FitObjective f = [&]( const std::vector<double>& z )
    { return operatorFitObjective( fromLog( withLaunch( z, fit_launch, log_launch ) ), samples ); };
    y = nelderMeadWithRestarts( f, y, max_evaluations, result.evaluations, best );
    result.constants = fromLog( withLaunch( y, fit_launch, log_launch ) );
    // A factor priced by few samples follows their noise: the objective is flat along a factor
    // no sample prices, so the simplex's restarts can carry it anywhere, and one softmax row
    // timed at the launch floor set it to 151 (an H100 calibration from 25 rows then priced
    // softmax 130 times too slow). With fewer than kMinFactorSamples rows of its op a factor
    // keeps its starting value, and the calibration's residuals correct the rows it has.
    const auto rows = [&]( OperatorKind k )
    {
        return std::count_if( samples.begin(), samples.end(),
                              [k]( const OperatorSample& s ) { return s.kind == k; } );
    };
    if ( rows( OperatorKind::softmax ) < kMinFactorSamples )
        result.constants.softmax_factor = start.softmax_factor;
    if ( rows( OperatorKind::ln ) < kMinFactorSamples )
        result.constants.ln_factor = start.ln_factor;
    result.objective = best;
    return result;
}

} // namespace shardsweep
