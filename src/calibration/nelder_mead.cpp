// Nelder–Mead for the calibration fits (nelder_mead.hpp).
#include <algorithm>
#include <numeric>
#include <shardsweep/calibration/nelder_mead.hpp>

namespace shardsweep
{

namespace
{
struct Simplex
{
    std::vector<std::vector<double>> points;
    std::vector<double> values;
};

} // namespace

std::vector<double> nelderMead( const FitObjective& objective, const std::vector<double>& y0,
                                double step, int budget, int& used, double& best_value )
{
    const int n = static_cast<int>( y0.size() );
    auto f = [&]( const std::vector<double>& y )
    {
        ++used;
        return objective( y );
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

std::vector<double> nelderMeadWithRestarts( const FitObjective& f, std::vector<double> y0,
                                            int budget, int& used, double& best_value )
{
    for ( double step : { 0.5, 0.25, 0.1, 0.05 } )
    {
        double value = 0.0;
        const std::vector<double> z = nelderMead( f, y0, step, budget, used, value );
        if ( value < best_value )
            best_value = value, y0 = z;
        if ( used >= budget )
            break;
    }
    return y0;
}

} // namespace shardsweep
