#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/table_pool_csv.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

TablePool tablePoolFromCsv( const CsvTable& csv )
{
    std::vector<std::string> bins;
    for ( int j = 0; j < kReuseBins; ++j )
        bins.push_back( "bin_" + std::to_string( j ) );
    std::vector<std::string> optional = {
        "name", "dim", "dtype", "zipf_alpha", "histogram_batch", "weighted" };
    optional.insert( optional.end(), bins.begin(), bins.end() );
    csv.checkColumns( { "rows", "pooling_factor" }, optional );
    int bin_columns = 0;
    for ( const std::string& b : bins )
        bin_columns += csv.hasColumn( b ) ? 1 : 0;
    if ( bin_columns != 0 && bin_columns != kReuseBins )
        throw InputError( csv.name(), 1, 1, "bin_*", "all 17 columns bin_0..bin_16 or none",
                          std::to_string( bin_columns ) + " of them" );

    TablePool pool;
    pool.name = csv.name();
    for ( std::size_t r = 0; r < csv.numRows(); ++r )
    {
        TableSpec t;
        t.rows = csv.getInt( r, "rows" );
        if ( t.rows <= 0 )
            csv.fail( r, "rows", "an integer > 0" );
        t.pooling_factor = csv.getDouble( r, "pooling_factor" );
        if ( !( t.pooling_factor >= 0.0 ) )
            csv.fail( r, "pooling_factor", "a number >= 0" );
        t.dim = csv.isEmpty( r, "dim" ) ? 16 : int( csv.getInt( r, "dim" ) );
        if ( t.dim <= 0 )
            csv.fail( r, "dim", "an integer > 0" );
        if ( !csv.isEmpty( r, "dtype" ) )
        {
            const std::string d = csv.text( r, "dtype" );
            if ( d == "fp32" )
                t.dtype = DataType::fp32;
            else if ( d == "fp16" )
                t.dtype = DataType::fp16;
            else if ( d == "bf16" )
                t.dtype = DataType::bf16;
            else if ( d == "int8" )
                t.dtype = DataType::int8;
            else if ( d == "tf32" )
                t.dtype = DataType::tf32;
            else
                csv.fail( r, "dtype", "one of fp32, fp16, bf16, int8, tf32" );
        }
        const bool has_bins = bin_columns == kReuseBins && !csv.isEmpty( r, "bin_0" );
        if ( !csv.isEmpty( r, "zipf_alpha" ) )
        {
            if ( has_bins )
                csv.fail( r, "zipf_alpha", "either zipf_alpha or bin_0..bin_16, not both" );
            t.distribution = AccessDistribution::zipf;
            t.zipf_alpha = csv.getDouble( r, "zipf_alpha" );
            if ( !( t.zipf_alpha >= 0.0 ) )
                csv.fail( r, "zipf_alpha", "a number >= 0" );
        }
        if ( has_bins )
        {
            double sum = 0.0;
            for ( int j = 0; j < kReuseBins; ++j )
            {
                t.reuse_histogram[j] = csv.getDouble( r, bins[j] );
                if ( !( t.reuse_histogram[j] >= 0.0 && t.reuse_histogram[j] <= 1.0 ) )
                    csv.fail( r, bins[j], "a fraction in [0, 1]" );
                sum += t.reuse_histogram[j];
            }
            // Tables never accessed have all-zero bins (the NeuroShard table features); keep them
            // uniform. Otherwise the bins are fractions of unique rows and must sum to 1.
            if ( sum > 0.0 )
            {
                if ( sum < 0.98 || sum > 1.02 )
                    csv.fail( r, "bin_16", "bins bin_0..bin_16 summing to 1 (within 0.02)" );
                t.distribution = AccessDistribution::histogram;
                t.histogram_batch = csv.isEmpty( r, "histogram_batch" )
                                        ? 65536
                                        : csv.getInt( r, "histogram_batch" );
                if ( t.histogram_batch <= 0 )
                    csv.fail( r, "histogram_batch", "an integer > 0" );
            }
        }
        if ( !csv.isEmpty( r, "weighted" ) )
            t.weighted = csv.getBool( r, "weighted" );
        pool.names.push_back( csv.isEmpty( r, "name" ) ? "t" + std::to_string( r )
                                                       : csv.text( r, "name" ) );
        pool.tables.push_back( t );
    }
    if ( pool.tables.empty() )
        throw InputError( csv.name(), "the table pool has no rows" );
    return pool;
}

TablePool readTablePoolCsv( const std::string& path )
{
    return tablePoolFromCsv( CsvTable::read( path ) );
}

} // namespace shardsweep
