#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <optional>
#include <ostream>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/table_output.hpp>

namespace shardsweep
{

OutputFormat parseOutputFormat( const std::string& text )
{
    if ( const std::optional<OutputFormat> format = enumFromName<OutputFormat>( text ) )
        return *format;
    throw UsageError( "--format: expected " + enumChoices<OutputFormat>( ", ", " or " ) +
                      ", found '" + text + "'" );
}

ResultTable::ResultTable( std::vector<std::string> columns ) : _columns( std::move( columns ) ) {}

void ResultTable::addRow( std::vector<Cell> row )
{
    if ( row.size() != _columns.size() )
        throw std::logic_error( fmt::format( "ResultTable: row has {} cells for {} columns",
                                             row.size(), _columns.size() ) );
    _rows.push_back( std::move( row ) );
}

std::string jsonQuoted( const std::string& s )
{
    std::string out = "\"";
    for ( char c : s )
    {
        switch ( c )
        {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        default:
            out += c;
        }
    }
    return out + "\"";
}

namespace
{
std::string csvEscape( const std::string& s )
{
    if ( s.find_first_of( ",\"\n" ) == std::string::npos )
        return s;
    std::string out = "\"";
    for ( char c : s )
    {
        if ( c == '"' )
            out += '"';
        out += c;
    }
    return out + "\"";
}

std::string formatCell( const ResultTable::Cell& cell, OutputFormat format )
{
    if ( const auto* s = std::get_if<std::string>( &cell ) )
    {
        if ( format == OutputFormat::csv )
            return csvEscape( *s );
        if ( format == OutputFormat::json )
            return jsonQuoted( *s );
        return *s;
    }
    if ( const auto* i = std::get_if<long long>( &cell ) )
        return std::to_string( *i );
    double v = std::get<double>( cell );
    if ( !std::isfinite( v ) )
        return format == OutputFormat::json ? "null" : fmt::format( "{}", v );
    // Tables: 6 significant digits to read; CSV/JSON: the shortest text that reads back as the
    // same double (0.1, not 0.10000000000000001).
    return format == OutputFormat::table ? fmt::format( "{:.6g}", v ) : fmt::format( "{}", v );
}
} // namespace

void ResultTable::print( std::ostream& out, OutputFormat format ) const
{
    if ( format == OutputFormat::csv )
    {
        for ( std::size_t c = 0; c < _columns.size(); ++c )
            out << ( c ? "," : "" ) << csvEscape( _columns[c] );
        out << '\n';
        for ( const auto& row : _rows )
        {
            for ( std::size_t c = 0; c < row.size(); ++c )
                out << ( c ? "," : "" ) << formatCell( row[c], format );
            out << '\n';
        }
        return;
    }
    if ( format == OutputFormat::json )
    {
        out << "[";
        for ( std::size_t r = 0; r < _rows.size(); ++r )
        {
            out << ( r ? ",\n " : "\n " ) << "{";
            for ( std::size_t c = 0; c < _columns.size(); ++c )
                out << ( c ? ", " : "" ) << jsonQuoted( _columns[c] ) << ": "
                    << formatCell( _rows[r][c], format );
            out << "}";
        }
        out << "\n]\n";
        return;
    }
    // Aligned table: numbers right-aligned, text left-aligned; a text column empty in every row
    // is left out (CSV and JSON keep every column: they are contracts).
    std::vector<std::vector<std::string>> cells;
    std::vector<std::size_t> width( _columns.size() );
    std::vector<bool> shown( _columns.size(), _rows.empty() );
    for ( std::size_t c = 0; c < _columns.size(); ++c )
        width[c] = _columns[c].size();
    for ( const auto& row : _rows )
    {
        cells.emplace_back();
        for ( std::size_t c = 0; c < row.size(); ++c )
        {
            cells.back().push_back( formatCell( row[c], format ) );
            width[c] = std::max( width[c], cells.back().back().size() );
            const auto* text = std::get_if<std::string>( &row[c] );
            if ( !text || !text->empty() )
                shown[c] = true;
        }
    }
    const auto printRow = [&]( const auto& cell )
    {
        bool first = true;
        for ( std::size_t c = 0; c < _columns.size(); ++c )
        {
            if ( !shown[c] )
                continue;
            out << ( first ? "" : "  " ) << cell( c );
            first = false;
        }
        out << '\n';
    };
    printRow( [&]( std::size_t c ) { return fmt::format( "{:<{}}", _columns[c], width[c] ); } );
    for ( std::size_t r = 0; r < cells.size(); ++r )
        printRow(
            [&]( std::size_t c )
            {
                const bool text = std::holds_alternative<std::string>( _rows[r][c] );
                return text ? fmt::format( "{:<{}}", cells[r][c], width[c] )
                            : fmt::format( "{:>{}}", cells[r][c], width[c] );
            } );
}

} // namespace shardsweep
