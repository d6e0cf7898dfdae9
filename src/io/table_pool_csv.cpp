#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/table_fields.hpp>
#include <shardsweep/io/table_pool_csv.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

TablePool tablePoolFromCsv( const CsvTable& csv )
{
    const bool has_bins = checkTableCsvColumns( csv, { "rows", "pooling_factor" } );
    TablePool pool;
    pool.name = csv.name();
    TableSpec defaults;
    defaults.dim = 16; // NeuroShard's pools give no dim: the protocols set one per task
    for ( std::size_t r = 0; r < csv.numRows(); ++r )
    {
        if ( csv.isEmpty( r, "pooling_factor" ) )
            csv.fail( r, "pooling_factor", "a number" );
        TableSpec t = defaults;
        readTableCsvRow( csv, r, has_bins, t );
        // The pools' histograms were measured at dlrm_datasets' batch of 65536 samples.
        if ( t.distribution == AccessDistribution::histogram &&
             csv.isEmpty( r, "histogram_batch" ) )
            t.histogram_batch = 65536;
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
