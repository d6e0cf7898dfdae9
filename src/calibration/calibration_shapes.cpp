// Which GEMMs to calibrate a GPU with (calibration_shapes.hpp).
#include <algorithm>
#include <array>
#include <set>
#include <shardsweep/calibration/calibration_shapes.hpp>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace shardsweep
{

namespace
{

using Features = std::array<double, kGemmCalibrationFeatures>;

Features featuresOf( const GemmSample& s )
{
    Features x{};
    gemmCalibrationFeatures( s.B, s.M, s.N, s.K, s.op, x.data() );
    return x;
}

} // namespace

std::vector<GemmSample> transformerGemmShapes( const std::vector<TransformerOperatorCase>& cases,
                                               const GemmConstants& constants )
{
    std::set<std::tuple<double, double, double, double, GemmOp, DataType>> seen;
    std::vector<GemmSample> shapes;
    for ( const TransformerOperatorCase& oc : cases )
    {
        GemmShapeLog log;
        transformerOperatorCostWith( shippedTransformerConstants(), oc, constants, &log );
        if ( log.count > GemmShapeLog::kCapacity )
            throw std::logic_error( "the transformer model priced more GEMMs than GemmShapeLog "
                                    "keeps" );
        for ( int i = 0; i < log.count; ++i )
            if ( seen.insert( { log.B[i], log.M[i], log.N[i], log.K[i], log.op[i], log.dtype } )
                     .second )
            {
                GemmSample s;
                s.B = log.B[i];
                s.M = log.M[i];
                s.N = log.N[i];
                s.K = log.K[i];
                s.op = log.op[i];
                s.dtype = log.dtype;
                shapes.push_back( s );
            }
    }
    return shapes;
}

std::vector<GemmSample> nearestGemmSamples( const std::vector<GemmSample>& pool,
                                            const std::vector<GemmSample>& targets,
                                            std::size_t count )
{
    count = std::min( count, pool.size() );
    std::vector<Features> x;
    for ( const GemmSample& s : pool )
        x.push_back( featuresOf( s ) );
    // Per target, its `count` nearest rows, nearest first. No more are needed: by round `count`
    // the first target alone has offered `count` distinct rows.
    std::vector<std::vector<std::size_t>> nearest;
    for ( const GemmSample& target : targets )
    {
        const Features t = featuresOf( target );
        std::vector<std::pair<double, std::size_t>> by_distance;
        for ( std::size_t j = 0; j < pool.size(); ++j )
        {
            double squared = 0.0;
            for ( int k = 0; k < kGemmCalibrationFeatures; ++k )
                squared += ( x[j][k] - t[k] ) * ( x[j][k] - t[k] );
            by_distance.emplace_back( squared, j );
        }
        std::partial_sort( by_distance.begin(), by_distance.begin() + count, by_distance.end() );
        nearest.emplace_back();
        for ( std::size_t r = 0; r < count; ++r )
            nearest.back().push_back( by_distance[r].second );
    }
    std::vector<bool> taken( pool.size(), false );
    std::vector<GemmSample> chosen;
    for ( std::size_t round = 0; round < count && chosen.size() < count; ++round )
        for ( std::size_t t = 0; t < nearest.size() && chosen.size() < count; ++t )
            if ( !taken[nearest[t][round]] )
            {
                taken[nearest[t][round]] = true;
                chosen.push_back( pool[nearest[t][round]] );
            }
    return chosen;
}

} // namespace shardsweep
