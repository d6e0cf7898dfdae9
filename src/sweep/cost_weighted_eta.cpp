// The sweep's ETA weighted by what its remaining scenarios cost (cost_weighted_eta.hpp).
#include "cost_weighted_eta.hpp"

#include <algorithm>
#include <numeric>

namespace shardsweep
{
namespace detail
{

std::int64_t ClassWork::total() const
{
    return std::accumulate( count.begin(), count.end(), std::int64_t( 0 ) );
}

ClassWork& ClassWork::operator+=( const ClassWork& other )
{
    for ( int c = 0; c < kNumCostClasses; ++c )
    {
        count[c] += other.count[c];
        seconds[c] += other.seconds[c];
    }
    evaluate_seconds += other.evaluate_seconds;
    return *this;
}

CostWeightedEta::CostWeightedEta( std::vector<int> sample, std::uint64_t pending )
    : _sample( std::move( sample ) ), _pending( pending )
{
}

CostWeightedEta::Estimate CostWeightedEta::estimate( const ClassWork& done, double elapsed_s ) const
{
    Estimate out;
    const std::int64_t done_count = done.total();
    const double done_cost =
        std::accumulate( done.seconds.begin(), done.seconds.end(), done.evaluate_seconds );
    if ( done_count <= 0 || !( done_cost > 0.0 ) || !( elapsed_s > 0.0 ) )
        return out;
    out.known = true;
    const double evaluate_each = done.evaluate_seconds / double( done_count );
    const std::uint64_t position = std::uint64_t( done_count );
    const std::uint64_t samples = _sample.size();
    double cost_ahead = 0.0;
    for ( std::uint64_t j = 0; j < samples; ++j )
    {
        // The pending positions sample j stands for, and how many of them lie ahead.
        const std::uint64_t first = j * _pending / samples, end = ( j + 1 ) * _pending / samples;
        const std::uint64_t ahead =
            end > std::max( first, position ) ? end - std::max( first, position ) : 0;
        if ( ahead == 0 )
            continue;
        const int c = _sample[j];
        double plan_each = 0.0;
        if ( c >= 0 && c < int( done.count.size() ) && done.count[c] > 0 )
            plan_each = done.seconds[c] / double( done.count[c] );
        else
            out.lower_bound = true;
        cost_ahead += double( ahead ) * ( plan_each + evaluate_each );
    }
    out.seconds = elapsed_s * cost_ahead / done_cost;
    return out;
}

} // namespace detail
} // namespace shardsweep
