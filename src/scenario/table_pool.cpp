#include <algorithm>
#include <array>
#include <cmath>
#include <shardsweep/model/rng.hpp>
#include <shardsweep/scenario/table_pool.hpp>
#include <stdexcept>

namespace shardsweep
{

namespace
{
std::array<double, kReuseBins> computeBinMeans()
{
    std::array<double, kReuseBins> means{};
    means[0] = 1.0;
    for ( int j = 1; j < kReuseBins; ++j )
    {
        // Integers k in (2^(j-1), 2^j], weighted by k^-2: the aggregate unique-row histogram of
        // the 2021 file falls by a factor of about 2 per doubling of the count, i.e. a density
        // close to k^-2 (docs/model/table_pool.md compares exponents).
        const long lo = ( 1L << ( j - 1 ) ) + 1;
        const long hi = 1L << j;
        double num = 0.0, den = 0.0;
        for ( long k = lo; k <= hi; ++k )
        {
            const double w = 1.0 / ( double( k ) * double( k ) );
            num += double( k ) * w;
            den += w;
        }
        means[j] = num / den;
    }
    return means;
}

double histogramMeanCount( const TableSpec& table )
{
    double mass = 0.0, count = 0.0;
    for ( int j = 0; j < kReuseBins; ++j )
    {
        mass += table.reuse_histogram[j];
        count += table.reuse_histogram[j] * reuseBinMeanCount( j );
    }
    return mass > 0.0 ? count / mass : 1.0;
}
} // namespace

double reuseBinMeanCount( int bin )
{
    static const std::array<double, kReuseBins> means = computeBinMeans();
    if ( bin < 0 || bin >= kReuseBins )
        throw std::out_of_range( "reuse bin out of range" );
    return means[bin];
}

void impliedUniqueHistogram( const LocalityTarget& target, double out[kReuseBins] )
{
    double sum = 0.0;
    for ( int j = 0; j < kReuseBins; ++j )
    {
        out[j] = target.access_hist[j] / reuseBinMeanCount( j );
        sum += out[j];
    }
    if ( !( sum > 0.0 ) )
        throw std::invalid_argument( "locality target has an empty access histogram" );
    for ( int j = 0; j < kReuseBins; ++j )
        out[j] /= sum;
}

double uniqueRowsPerBatch( const TableSpec& table, std::int64_t batch_size )
{
    const double lookups = double( batch_size ) * table.pooling_factor;
    const double rows = double( table.rows );
    if ( table.distribution == AccessDistribution::histogram )
        return std::min( rows, lookups / histogramMeanCount( table ) );
    // Uniform ids: rows never touched follow (1 - 1/rows)^lookups (Lin et al., HiPC'22, §IV).
    return rows * -std::expm1( lookups * std::log1p( -1.0 / rows ) );
}

PoolAggregate aggregateLocality( const TablePool& pool, std::int64_t batch_size )
{
    PoolAggregate agg;
    double access_sum = 0.0;
    for ( const TableSpec& t : pool.tables )
    {
        if ( t.distribution != AccessDistribution::histogram )
            continue;
        const double unique = uniqueRowsPerBatch( t, batch_size );
        double mass = 0.0;
        for ( int j = 0; j < kReuseBins; ++j )
            mass += t.reuse_histogram[j];
        if ( !( mass > 0.0 ) )
            continue;
        agg.total_indices += double( batch_size ) * t.pooling_factor;
        agg.total_unique += unique;
        for ( int j = 0; j < kReuseBins; ++j )
        {
            const double rows_in_bin = unique * t.reuse_histogram[j] / mass;
            agg.unique_hist[j] += rows_in_bin;
            agg.access_hist[j] += rows_in_bin * reuseBinMeanCount( j );
            access_sum += rows_in_bin * reuseBinMeanCount( j );
        }
    }
    for ( int j = 0; j < kReuseBins; ++j )
    {
        agg.unique_hist[j] = agg.total_unique > 0.0 ? agg.unique_hist[j] / agg.total_unique : 0.0;
        agg.access_hist[j] = access_sum > 0.0 ? agg.access_hist[j] / access_sum : 0.0;
    }
    return agg;
}

TablePool syntheticTablePool( const LocalityTarget& target, const SyntheticPoolOptions& options )
{
    const int n = options.num_tables;
    if ( n <= 0 )
        throw std::invalid_argument( "a synthetic pool needs at least one table" );
    const double batch = double( target.batch_size );

    // Per-table draws, each from its own (seed, table) stream: table t does not depend on n.
    std::vector<double> pooling( n ), tilt( n ), touched( n );
    const double rho = options.tilt_pooling_correlation;
    for ( int t = 0; t < n; ++t )
    {
        CounterRng rng( options.seed, std::uint64_t( t ), kStreamPoolTable );
        const double z_pool = rng.normal();
        const double z_tilt = rng.normal();
        const double u_touch = rng.uniform();
        pooling[t] = std::exp( options.pooling_sigma * z_pool );
        tilt[t] = options.tilt_sigma * ( rho * z_pool + std::sqrt( 1.0 - rho * rho ) * z_tilt );
        touched[t] = std::exp( std::log( options.min_touched_fraction ) * u_touch );
    }
    // The batch's mean pooling factor (indices / (T · B)) is matched exactly.
    double mean = 0.0;
    for ( double p : pooling )
        mean += p;
    mean /= n;
    for ( double& p : pooling )
        p *= target.meanPooling() / mean;

    // Per-table histogram: base shape h tilted by exp(tilt · j). The base is calibrated by a
    // multiplicative fixed point so that the unique-row-weighted aggregate equals the target.
    double goal[kReuseBins];
    impliedUniqueHistogram( target, goal );
    std::vector<double> base( goal, goal + kReuseBins );
    std::vector<double> hist( std::size_t( n ) * kReuseBins );
    std::vector<double> unique( n );
    auto shape = [&]()
    {
        double agg[kReuseBins] = {};
        double total = 0.0;
        for ( int t = 0; t < n; ++t )
        {
            double* h = &hist[std::size_t( t ) * kReuseBins];
            double sum = 0.0, count = 0.0;
            for ( int j = 0; j < kReuseBins; ++j )
            {
                h[j] = base[j] * std::exp( tilt[t] * j );
                sum += h[j];
            }
            for ( int j = 0; j < kReuseBins; ++j )
            {
                h[j] /= sum;
                count += h[j] * reuseBinMeanCount( j );
            }
            unique[t] = batch * pooling[t] / count;
            total += unique[t];
            for ( int j = 0; j < kReuseBins; ++j )
                agg[j] += unique[t] * h[j];
        }
        double worst = 0.0;
        for ( int j = 0; j < kReuseBins; ++j )
        {
            const double a = agg[j] / total;
            worst = std::max( worst, std::fabs( a / goal[j] - 1.0 ) );
            base[j] *= goal[j] / a;
        }
        return worst;
    };
    for ( int it = 0; it < options.calibration_iterations; ++it )
        if ( shape() < 1e-13 )
            break;
    shape(); // hist and unique for the final base

    TablePool pool;
    pool.name = "synthetic(" + target.source + ")";
    pool.names.reserve( n );
    pool.tables.reserve( n );
    for ( int t = 0; t < n; ++t )
    {
        TableSpec spec;
        const double need = std::ceil( unique[t] );
        const double rows = std::max( 100.0, std::ceil( unique[t] / touched[t] ) );
        spec.rows = std::int64_t( std::min( rows, std::max( double( options.max_rows ), need ) ) );
        spec.dim = options.default_dim;
        spec.pooling_factor = pooling[t];
        spec.dtype = options.dtype;
        spec.distribution = AccessDistribution::histogram;
        for ( int j = 0; j < kReuseBins; ++j )
            spec.reuse_histogram[j] = hist[std::size_t( t ) * kReuseBins + j];
        spec.histogram_batch = target.batch_size;
        char name[32];
        std::snprintf( name, sizeof( name ), "syn%04d", t );
        pool.names.emplace_back( name );
        pool.tables.push_back( spec );
    }
    return pool;
}

} // namespace shardsweep
