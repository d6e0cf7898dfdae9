#include <cmath>
#include <filesystem>
#include <map>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/domain/transformer_fields.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/table_fields.hpp>
#include <shardsweep/io/workload_yaml.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>

namespace shardsweep
{

namespace
{
//! The dense model: its fields (domain/dlrm_fields.hpp) and the two MLPs' layer widths.
void parseDense( const YamlView& node, DenseModel& d )
{
    std::vector<std::string> optional;
    for ( const DenseField& f : kDenseFields )
        optional.emplace_back( f.key );
    node.checkKeys( { "bottom_mlp", "top_mlp" }, optional );
    for ( const DenseField& f : kDenseFields )
        f.set( d, f.kind == DenseField::choice
                      ? node.getEnumOr( f.key, f.fallback, fieldChoices( f ) )
                      : node.getInt32Or( f.key, f.fallback, Range::between( f.min, f.max ) ) );
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
}
} // namespace

void readTablesCsv( const std::string& path, const TableSpec& defaults,
                    std::vector<std::string>& names, std::vector<TableSpec>& tables )
{
    CsvTable csv = CsvTable::read( path );
    const bool has_bins =
        checkTableCsvColumns( csv, defaults.dim > 0 ? std::vector<std::string>{ "rows" }
                                                    : std::vector<std::string>{ "rows", "dim" } );
    if ( csv.numRows() == 0 )
        throw InputError( path, "the table file has no rows" );
    for ( std::size_t r = 0; r < csv.numRows(); ++r )
    {
        TableSpec t = defaults;
        readTableCsvRow( csv, r, has_bins, t );
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
        const Range range{ f.min, f.max, !f.above_min, true };
        if ( f.kind == ModelField::choice )
            f.set( m, f.required ? root.getEnum( f.key, fieldChoices( f ) )
                                 : root.getEnumOr( f.key, int( f.fallback ), fieldChoices( f ) ) );
        else if ( f.kind == ModelField::real )
            f.set( m, root.find( f.key ) ? root.getDouble( f.key, range ) : f.fallback );
        else
            f.set( m, f.required ? root.getInt32( f.key, range )
                                 : root.getInt32Or( f.key, int( f.fallback ), range ) );
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
        d->checkKeys( {}, tableYamlKeys( true ) );
        readTableYaml( *d, defaults );
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
                         tableYamlKeys( false ) );
            TableSpec t = defaults;
            readTableYaml( e, t );
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
