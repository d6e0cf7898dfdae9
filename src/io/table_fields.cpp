// Reading a DLRM table through its field table (see table_fields.hpp).
#include <cmath>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/input_text.hpp>
#include <shardsweep/io/table_fields.hpp>
#include <shardsweep/io/yaml_util.hpp>

namespace shardsweep
{

namespace
{
// Histograms are fractions of unique rows; measured ones are rounded (dlrm_datasets'
// locality_stats.txt), so their sum may miss 1 by this much.
constexpr double kHistogramTolerance = 0.02;

Range fieldRange( const TableField& f )
{
    return Range{ f.min, f.max, !f.above_min, true };
}

const char* fieldNoun( const TableField& f )
{
    return f.kind == TableField::integer ? "an integer" : "a number";
}

//! Sets t's reuse histogram from `bins` and returns their sum. An all-zero histogram is a table
//! the batch never touched: it stays uniform.
double setReuseHistogram( const std::vector<double>& bins, TableSpec& t )
{
    double sum = 0.0;
    for ( int j = 0; j < kReuseBins; ++j )
        sum += t.reuse_histogram[j] = bins[std::size_t( j )];
    t.zipf_alpha = 0.0;
    t.distribution = sum > 0.0 ? AccessDistribution::histogram : AccessDistribution::uniform;
    return sum;
}

bool histogramSumOk( double sum )
{
    return !( sum > 0.0 && std::fabs( sum - 1.0 ) > kHistogramTolerance );
}
} // namespace

const std::vector<std::string>& reuseBinColumns()
{
    static const std::vector<std::string> bins = []
    {
        std::vector<std::string> b;
        for ( int j = 0; j < kReuseBins; ++j )
            b.push_back( "bin_" + std::to_string( j ) );
        return b;
    }();
    return bins;
}

bool checkTableCsvColumns( const CsvTable& csv, const std::vector<std::string>& required )
{
    std::vector<std::string> optional = { "name" };
    for ( const TableField& f : kTableFields )
        optional.emplace_back( f.key );
    optional.insert( optional.end(), reuseBinColumns().begin(), reuseBinColumns().end() );
    csv.checkColumns( required, optional );
    int bin_columns = 0;
    for ( const std::string& b : reuseBinColumns() )
        bin_columns += csv.hasColumn( b ) ? 1 : 0;
    if ( bin_columns != 0 && bin_columns != kReuseBins )
        throw InputError( csv.name(), 1, 1, "bin_*", "all 17 columns bin_0..bin_16 or none",
                          std::to_string( bin_columns ) + " of them" );
    return bin_columns == kReuseBins;
}

double tableFieldCell( const CsvTable& csv, std::size_t r, const TableField& f )
{
    switch ( f.kind )
    {
    case TableField::flag:
        return csv.getBool( r, f.key ) ? 1.0 : 0.0;
    case TableField::choice:
        return csv.getEnumOr( r, f.key, fieldChoices( f ), -1 );
    case TableField::integer:
    case TableField::real:
        break;
    }
    const double x = f.kind == TableField::integer ? double( csv.getInt( r, f.key ) )
                                                   : csv.getDouble( r, f.key );
    if ( !fieldRange( f ).contains( x ) )
        csv.fail( r, f.key, fieldRange( f ).describe( fieldNoun( f ) ) );
    return x;
}

void readTableCsvRow( const CsvTable& csv, std::size_t r, bool has_bins, TableSpec& t )
{
    for ( const TableField& f : kTableFields )
    {
        if ( !csv.isEmpty( r, f.key ) )
            f.set( t, tableFieldCell( csv, r, f ) );
        else if ( f.kind == TableField::integer && !fieldRange( f ).contains( f.get( t ) ) )
            csv.fail( r, f.key, fieldRange( f ).describe( fieldNoun( f ) ) );
    }
    if ( !has_bins || csv.isEmpty( r, "bin_0" ) )
        return;
    if ( !csv.isEmpty( r, "zipf_alpha" ) )
        csv.fail( r, "zipf_alpha", "either zipf_alpha or bin_0..bin_16, not both" );
    std::vector<double> bins;
    for ( const std::string& b : reuseBinColumns() )
    {
        bins.push_back( csv.getDouble( r, b ) );
        if ( !Range::fraction().contains( bins.back() ) )
            csv.fail( r, b, Range::fraction().describe( "a number" ) );
    }
    if ( !histogramSumOk( setReuseHistogram( bins, t ) ) )
        csv.fail( r, "bin_16", "bins bin_0..bin_16 summing to 1 (within 0.02)" );
}

std::vector<std::string> tableYamlKeys( bool defaults )
{
    std::vector<std::string> keys;
    if ( !defaults )
        keys.emplace_back( "name" );
    for ( const TableField& f : kTableFields )
        if ( !defaults || !f.required )
            keys.emplace_back( f.key );
    if ( !defaults )
        keys.emplace_back( "reuse_histogram" );
    return keys;
}

void readTableYaml( const YamlView& node, TableSpec& t )
{
    auto alpha = node.find( "zipf_alpha" );
    auto hist = node.find( "reuse_histogram" );
    if ( alpha && hist )
        hist->fail( "either zipf_alpha or reuse_histogram, not both", "both" );
    for ( const TableField& f : kTableFields )
    {
        auto v = node.find( f.key );
        if ( !v )
            continue;
        switch ( f.kind )
        {
        case TableField::flag:
            f.set( t, v->asBool() ? 1.0 : 0.0 );
            break;
        case TableField::choice:
            f.set( t, v->asEnum( fieldChoices( f ) ) );
            break;
        case TableField::integer:
            f.set( t, double( v->asInt( fieldRange( f ) ) ) );
            break;
        case TableField::real:
            f.set( t, v->asDouble( fieldRange( f ) ) );
            break;
        }
    }
    if ( !hist )
        return;
    const std::vector<double> bins = hist->asDoubleList( Range::fraction() );
    if ( bins.size() != static_cast<std::size_t>( kReuseBins ) )
        hist->fail( "17 fractions (bins (0,1], (1,2], ..., (32768,inf))",
                    std::to_string( bins.size() ) + " values" );
    const double sum = setReuseHistogram( bins, t );
    if ( !histogramSumOk( sum ) )
        hist->fail( "fractions summing to 1 (within 0.02)", "a sum of " + formatNumber( sum ) );
}

} // namespace shardsweep
