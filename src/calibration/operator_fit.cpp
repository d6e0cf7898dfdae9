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
// All constants are positive: the fit moves their logarithms; the efficiency is a fraction.
OperatorConstants fromLog( const std::vector<double>& y )
{
    return { std::exp( y[0] ), std::min( std::exp( y[1] ), 1.0 ), std::exp( y[2] ),
             std::exp( y[3] ) };
}
} // namespace

OperatorFitResult fitOperatorConstants( const OperatorConstants& start,
                                        const std::vector<OperatorSample>& samples,
                                        int max_evaluations )
{
    std::vector<double> y = { std::log( start.launch_ms ), std::log( start.bandwidth_efficiency ),
                              std::log( start.softmax_factor ), std::log( start.ln_factor ) };
    OperatorFitResult result;
    double best = operatorFitObjective( start, samples );
    result.evaluations = 1;
    const FitObjective f = [&]( const std::vector<double>& z )
    { return operatorFitObjective( fromLog( z ), samples ); };
    y = nelderMeadWithRestarts( f, y, max_evaluations, result.evaluations, best );
    result.constants = fromLog( y );
    result.objective = best;
    return result;
}

} // namespace shardsweep
