#include <cmath>
#include <filesystem>
#include <map>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/domain/transformer_fields.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/workload_yaml.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>

namespace shardsweep
{

namespace
{
// Physical bounds: catch unit slips and typos, not unusual but real models.
const Range kRows = Range::between( 1, 1.0e13 );
const Range kDim = Range::between( 1, 65536 );
const Range kPooling = Range{ 0.0, 1.0e5, false, true };
const Range kAlpha = Range::between( 0, 10 );
const Range kBatch = Range::between( 0, 1.0e9 );
// Histograms are fractions of unique rows; measured ones are rounded (dlrm_datasets'
// locality_stats.txt).
constexpr double kHistogramTolerance = 0.02;

const std::vector<std::string> kDefaultKeys = {
    "dim", "pooling_factor", "zipf_alpha", "histogram_batch", "dtype", "optimizer", "weighted" };

template <class E>
E enumFromCsv( const CsvTable& csv, std::size_t r, const std::string& column,
               const std::vector<std::pair<std::string, E>>& names )
{
    const std::string& s = csv.text( r, column );
    std::vector<std::string> keys;
    for ( const auto& n : names )
    {
        if ( n.first == s )
            return n.second;
        keys.push_back( n.first );
    }
    csv.fail( r, column, "one of " + joinNames( keys ) );
}

// Fields shared by a table entry and table_defaults. Returns whether a distribution was given.
void parseTableFields( const YamlView& node, TableSpec& t )
{
    if ( auto v = node.find( "dim" ) )
        t.dim = v->asInt32( kDim );
    if ( auto v = node.find( "pooling_factor" ) )
        t.pooling_factor = v->asDouble( kPooling );
    if ( auto v = node.find( "dtype" ) )
        t.dtype = v->asEnum( enumPairs<DataType>() );
    if ( auto v = node.find( "optimizer" ) )
        t.optimizer = v->asEnum( enumPairs<Optimizer>() );
    if ( auto v = node.find( "weighted" ) )
        t.weighted = v->asBool();
    if ( auto v = node.find( "histogram_batch" ) )
        t.histogram_batch = v->asInt( kBatch );
    auto alpha = node.find( "zipf_alpha" );
    auto hist = node.find( "reuse_histogram" );
    if ( alpha && hist )
        hist->fail( "either zipf_alpha or reuse_histogram, not both", "both" );
    if ( alpha )
    {
        t.zipf_alpha = alpha->asDouble( kAlpha );
        t.distribution = AccessDistribution::zipf;
    }
    if ( hist )
    {
        std::vector<double> bins = hist->asDoubleList( Range::fraction() );
        if ( bins.size() != static_cast<std::size_t>( kReuseBins ) )
            hist->fail( "17 fractions (bins (0,1], (1,2], ..., (32768,inf))",
                        std::to_string( bins.size() ) + " values" );
        double sum = 0.0;
        for ( int j = 0; j < kReuseBins; ++j )
            sum += t.reuse_histogram[j] = bins[j];
        // An all-zero histogram is a table the batch never touched: keep it uniform.
        if ( sum > 0.0 && std::fabs( sum - 1.0 ) > kHistogramTolerance )
            hist->fail( "fractions summing to 1 (within 0.02)", "a sum of " + formatNumber( sum ) );
        t.zipf_alpha = 0.0;
        t.distribution = sum > 0.0 ? AccessDistribution::histogram : AccessDistribution::uniform;
    }
}

std::vector<std::string> tableKeys()
{
    std::vector<std::string> keys = kDefaultKeys;
    keys.insert( keys.begin(), "name" );
    keys.push_back( "reuse_histogram" );
    return keys;
}

void parseDense( const YamlView& node, DenseModel& d )
{
    node.checkKeys( { "bottom_mlp", "top_mlp" },
                    { "num_dense_features", "interaction", "dtype", "optimizer" } );
    d.num_dense_features =
        node.getInt32Or( "num_dense_features", d.num_dense_features, Range::between( 0, 1e6 ) );
    auto widths = [&]( const char* key, int* out, int& count, bool allow_empty )
    {
        YamlView list = node.at( key );
        std::vector<std::int64_t> w = list.asIntList( Range::between( 1, 1e7 ) );
        if ( w.size() > static_cast<std::size_t>( kMaxMlpLayers ) || ( w.empty() && !allow_empty ) )
            list.fail( "a list of 1 to " + std::to_string( kMaxMlpLayers ) + " layer widths",
                       std::to_string( w.size() ) + " entries" );
        count = static_cast<int>( w.size() );
        for ( std::size_t i = 0; i < w.size(); ++i )
            out[i] = static_cast<int>( w[i] );
    };
    widths( "bottom_mlp", d.bottom_mlp, d.bottom_mlp_layers, d.num_dense_features == 0 );
    widths( "top_mlp", d.top_mlp, d.top_mlp_layers, false );
    d.interaction = node.getEnumOr( "interaction", d.interaction, enumPairs<Interaction>() );
    d.dtype = node.getEnumOr( "dtype", d.dtype, computeDataTypeNames() );
    d.optimizer = node.getEnumOr( "optimizer", d.optimizer, enumPairs<Optimizer>() );
}
} // namespace

void readTablesCsv( const std::string& path, const TableSpec& defaults,
                    std::vector<std::string>& names, std::vector<TableSpec>& tables )
{
    CsvTable csv = CsvTable::read( path );
    std::vector<std::string> bins;
    for ( int j = 0; j < kReuseBins; ++j )
        bins.push_back( "bin_" + std::to_string( j ) );
    std::vector<std::string> required = { "rows" };
    std::vector<std::string> optional = {
        "name",  "pooling_factor", "zipf_alpha", "histogram_batch",
        "dtype", "optimizer",      "weighted" };
    ( defaults.dim > 0 ? optional : required ).push_back( "dim" );
    optional.insert( optional.end(), bins.begin(), bins.end() );
    csv.checkColumns( required, optional );
    int bin_columns = 0;
    for ( const auto& b : bins )
        bin_columns += csv.hasColumn( b ) ? 1 : 0;
    if ( bin_columns != 0 && bin_columns != kReuseBins )
        throw InputError( path, 1, 1, "bin_*", "all 17 columns bin_0..bin_16 or none",
                          std::to_string( bin_columns ) + " of them" );
    if ( csv.numRows() == 0 )
        throw InputError( path, "the table file has no rows" );

    auto inRange =
        [&]( std::size_t r, const std::string& col, double x, const Range& range, const char* noun )
    {
        if ( !range.contains( x ) )
            csv.fail( r, col, range.describe( noun ) );
        return x;
    };
    for ( std::size_t r = 0; r < csv.numRows(); ++r )
    {
        TableSpec t = defaults;
        t.rows = static_cast<std::int64_t>(
            inRange( r, "rows", double( csv.getInt( r, "rows" ) ), kRows, "an integer" ) );
        if ( !csv.isEmpty( r, "dim" ) )
            t.dim = static_cast<int>(
                inRange( r, "dim", double( csv.getInt( r, "dim" ) ), kDim, "an integer" ) );
        else if ( t.dim == 0 )
            csv.fail( r, "dim", kDim.describe( "an integer" ) );
        if ( !csv.isEmpty( r, "pooling_factor" ) )
            t.pooling_factor = inRange( r, "pooling_factor", csv.getDouble( r, "pooling_factor" ),
                                        kPooling, "a number" );
        if ( !csv.isEmpty( r, "dtype" ) )
            t.dtype = enumFromCsv( csv, r, "dtype", enumPairs<DataType>() );
        if ( !csv.isEmpty( r, "optimizer" ) )
            t.optimizer = enumFromCsv( csv, r, "optimizer", enumPairs<Optimizer>() );
        if ( !csv.isEmpty( r, "weighted" ) )
            t.weighted = csv.getBool( r, "weighted" );
        if ( !csv.isEmpty( r, "histogram_batch" ) )
            t.histogram_batch = static_cast<std::int64_t>(
                inRange( r, "histogram_batch", double( csv.getInt( r, "histogram_batch" ) ), kBatch,
                         "an integer" ) );
        const bool has_bins = bin_columns == kReuseBins && !csv.isEmpty( r, "bin_0" );
        if ( !csv.isEmpty( r, "zipf_alpha" ) )
        {
            if ( has_bins )
                csv.fail( r, "zipf_alpha", "either zipf_alpha or bin_0..bin_16, not both" );
            t.zipf_alpha =
                inRange( r, "zipf_alpha", csv.getDouble( r, "zipf_alpha" ), kAlpha, "a number" );
            t.distribution = AccessDistribution::zipf;
        }
        if ( has_bins )
        {
            double sum = 0.0;
            for ( int j = 0; j < kReuseBins; ++j )
                sum += t.reuse_histogram[j] = inRange( r, bins[j], csv.getDouble( r, bins[j] ),
                                                       Range::fraction(), "a number" );
            if ( sum > 0.0 && std::fabs( sum - 1.0 ) > kHistogramTolerance )
                csv.fail( r, "bin_16", "bins bin_0..bin_16 summing to 1 (within 0.02)" );
            t.zipf_alpha = 0.0;
            t.distribution =
                sum > 0.0 ? AccessDistribution::histogram : AccessDistribution::uniform;
        }
        names.push_back( csv.isEmpty( r, "name" ) ? "t" + std::to_string( tables.size() )
                                                  : csv.text( r, "name" ) );
        tables.push_back( t );
    }
}

//! A transformer model (notation of Narayanan et al., SC'21; docs/INPUTS.md).
Workload parseTransformerWorkload( const YamlView& root )
{
    std::vector<std::string> required = { "kind", "global_batch" };
    std::vector<std::string> optional = { "name", "description" };
    for ( const ModelField& f : modelFields() )
        ( f.required ? required : optional ).emplace_back( f.key );
    root.checkKeys( required, optional );
    Workload w;
    w.kind = WorkloadKind::transformer;
    w.name = root.find( "name" ) ? root.at( "name" ).asName()
                                 : std::filesystem::path( root.file() ).stem().string();
    TransformerSpec& m = w.transformer;
    for ( const ModelField& f : modelFields() )
    {
        const Range range = Range::between( f.min, f.max );
        if ( f.kind == ModelField::choice )
            f.set( m, f.required ? root.getEnum( f.key, fieldChoices( f ) )
                                 : root.getEnumOr( f.key, f.fallback, fieldChoices( f ) ) );
        else
            f.set( m, f.required ? root.getInt32( f.key, range )
                                 : root.getInt32Or( f.key, f.fallback, range ) );
    }
    w.global_batch = root.getInt( "global_batch", Range::between( 1, 1.0e9 ) );
    const ModelFieldProblem problem = transformerSpecProblem( m );
    if ( !problem.key.empty() )
        root.at( problem.key )
            .fail( problem.expected, "'" + root.at( problem.key ).asString() + "'" );
    return w;
}

Workload parseWorkload( const YamlView& root, bool embedded )
{
    if ( root.isMap() && root.has( "kind" ) && root.at( "kind" ).isScalar() &&
         root.at( "kind" ).asString() == "transformer" )
        return parseTransformerWorkload( root );
    std::vector<std::string> required = { "tables", "dense", "global_batch" };
    const std::vector<std::string> optional = { "name", "description", "table_defaults" };
    if ( embedded && !root.has( "kind" ) )
        root.requireMap( "a workload file path or a mapping of workload fields" );
    else
    {
        expectKind( root, "workload" );
        required.insert( required.begin(), "kind" );
    }
    root.checkKeys( required, optional );

    Workload w;
    w.name = root.find( "name" ) ? root.at( "name" ).asName()
                                 : std::filesystem::path( root.file() ).stem().string();
    w.global_batch = root.getInt( "global_batch", Range::between( 1, 1.0e9 ) );
    parseDense( root.at( "dense" ), w.dense );

    TableSpec defaults;
    defaults.dim = 0; // "not given": every table then needs its own dim
    if ( auto d = root.find( "table_defaults" ) )
    {
        d->checkKeys( {}, kDefaultKeys );
        parseTableFields( *d, defaults );
    }

    YamlView tables = root.at( "tables" );
    if ( tables.isScalar() )
        readTablesCsv( tables.resolvePath( tables.asName() ), defaults, w.table_names, w.tables );
    else
    {
        tables.requireSequence( "a list of tables or the path of a CSV file" );
        if ( tables.size() == 0 )
            tables.fail( "at least one table" );
        for ( std::size_t i = 0; i < tables.size(); ++i )
        {
            YamlView e = tables.element( i );
            e.checkKeys( defaults.dim > 0 ? std::vector<std::string>{ "rows" }
                                          : std::vector<std::string>{ "rows", "dim" },
                         tableKeys() );
            TableSpec t = defaults;
            t.rows = e.getInt( "rows", kRows );
            parseTableFields( e, t );
            w.table_names.push_back( e.find( "name" ) ? e.at( "name" ).asName()
                                                      : "t" + std::to_string( i ) );
            w.tables.push_back( t );
        }
    }
    std::map<std::string, std::size_t> seen;
    for ( std::size_t i = 0; i < w.table_names.size(); ++i )
    {
        auto [it, fresh] = seen.emplace( w.table_names[i], i );
        if ( !fresh )
        {
            if ( tables.isSequence() )
                tables.element( i ).at( "name" ).fail(
                    "a table name used once", "'" + w.table_names[i] + "' again (first: tables[" +
                                                  std::to_string( it->second ) + "])" );
            throw InputError( tables.resolvePath( tables.asName() ),
                              "table name '" + w.table_names[i] + "' is used twice" );
        }
    }
    return w;
}

Workload readWorkloadFile( const std::string& path )
{
    return parseWorkload( loadYamlFile( path ) );
}

Workload parseWorkloadString( const std::string& text, const std::string& name )
{
    return parseWorkload( loadYamlString( text, name ) );
}

} // namespace shardsweep
