#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/input_text.hpp>
#include <shardsweep/io/text_file.hpp>
#include <sstream>

namespace shardsweep
{

namespace
{
std::string trim( const std::string& s )
{
    auto b = s.find_first_not_of( " \t\r" );
    if ( b == std::string::npos )
        return {};
    auto e = s.find_last_not_of( " \t\r" );
    return s.substr( b, e - b + 1 );
}

std::vector<std::string> splitLine( const std::string& line )
{
    std::vector<std::string> fields;
    std::string field;
    bool quoted = false;
    for ( std::size_t i = 0; i < line.size(); ++i )
    {
        char c = line[i];
        if ( quoted )
        {
            if ( c == '"' && i + 1 < line.size() && line[i + 1] == '"' )
            {
                field += '"';
                ++i;
            }
            else if ( c == '"' )
                quoted = false;
            else
                field += c;
        }
        else if ( c == '"' )
            quoted = true;
        else if ( c == ',' )
        {
            fields.push_back( trim( field ) );
            field.clear();
        }
        else
            field += c;
    }
    fields.push_back( trim( field ) );
    return fields;
}
} // namespace

CsvTable CsvTable::read( const std::string& path )
{
    return parse( readTextFile( path ), path );
}

CsvTable CsvTable::parse( const std::string& text, const std::string& name )
{
    CsvTable table;
    table._name = name;
    std::istringstream in( text );
    std::string line;
    int number = 0;
    bool have_header = false;
    while ( std::getline( in, line ) )
    {
        ++number;
        std::string t = trim( line );
        if ( t.empty() || t[0] == '#' )
            continue;
        auto fields = splitLine( line );
        if ( !have_header )
        {
            table._header = table._written_header = fields;
            have_header = true;
            continue;
        }
        if ( fields.size() != table._header.size() )
            throw InputError( name, number, 1, "(row)",
                              std::to_string( table._header.size() ) + " comma-separated fields",
                              std::to_string( fields.size() ) );
        table._rows.push_back( std::move( fields ) );
        table._lines.push_back( number );
    }
    if ( !have_header )
        throw InputError( name, "empty CSV file: expected a header line" );
    return table;
}

bool CsvTable::hasColumn( const std::string& column ) const
{
    return columnIndex( column ) >= 0;
}

void CsvTable::readColumnsAs( const std::vector<std::pair<std::string, std::string>>& aliases )
{
    for ( const auto& [theirs, ours] : aliases )
        if ( !hasColumn( ours ) )
            if ( const int c = columnIndex( theirs ); c >= 0 )
                _header[c] = ours;
}

int CsvTable::columnIndex( const std::string& column ) const
{
    auto it = std::find( _header.begin(), _header.end(), column );
    return it == _header.end() ? -1 : static_cast<int>( it - _header.begin() );
}

const std::string& CsvTable::text( std::size_t row, const std::string& column ) const
{
    int c = columnIndex( column );
    if ( c < 0 )
        throw InputError( _name, 1, 1, column, "a column named '" + column + "' in the header",
                          "no such column" );
    return _rows[row][c];
}

bool CsvTable::isEmpty( std::size_t row, const std::string& column ) const
{
    int c = columnIndex( column );
    return c < 0 || _rows[row][c].empty();
}

void CsvTable::fail( std::size_t row, const std::string& column, const std::string& expected ) const
{
    int c = columnIndex( column );
    std::string found = c < 0 ? std::string( "no such column" )
                              : ( _rows[row][c].empty() ? std::string( "an empty cell" )
                                                        : "'" + _rows[row][c] + "'" );
    throw InputError( _name, _lines[row], c < 0 ? 1 : c + 1, c < 0 ? column : _written_header[c],
                      expected, found );
}

double CsvTable::getDouble( std::size_t row, const std::string& column ) const
{
    const std::string& s = text( row, column );
    if ( s.empty() )
        fail( row, column, "a number" );
    char* end = nullptr;
    errno = 0;
    double v = std::strtod( s.c_str(), &end );
    if ( end != s.c_str() + s.size() || errno == ERANGE )
        fail( row, column, "a number" );
    return v;
}

std::int64_t CsvTable::getInt( std::size_t row, const std::string& column ) const
{
    const std::string& s = text( row, column );
    if ( s.empty() )
        fail( row, column, "an integer" );
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll( s.c_str(), &end, 10 );
    if ( end != s.c_str() + s.size() || errno == ERANGE )
    {
        // Accept integral values written as floating point ("4096.0", "1e6").
        double d = std::strtod( s.c_str(), &end );
        if ( end != s.c_str() + s.size() ||
             d != static_cast<double>( static_cast<long long>( d ) ) )
            fail( row, column, "an integer" );
        v = static_cast<long long>( d );
    }
    return v;
}

bool CsvTable::getBool( std::size_t row, const std::string& column ) const
{
    std::string s = text( row, column );
    std::transform( s.begin(), s.end(), s.begin(),
                    []( unsigned char ch ) { return static_cast<char>( std::tolower( ch ) ); } );
    if ( s == "1" || s == "true" )
        return true;
    if ( s == "0" || s == "false" )
        return false;
    fail( row, column, "a boolean (0, 1, true or false)" );
}

std::optional<double> CsvTable::getOptionalDouble( std::size_t row,
                                                   const std::string& column ) const
{
    if ( isEmpty( row, column ) )
        return std::nullopt;
    return getDouble( row, column );
}

void CsvTable::checkColumns( const std::vector<std::string>& required,
                             const std::vector<std::string>& optional ) const
{
    checkColumns( required, optional, false );
}

std::vector<std::string>
CsvTable::checkColumnsIgnoringOthers( const std::vector<std::string>& required,
                                      const std::vector<std::string>& optional ) const
{
    return checkColumns( required, optional, true );
}

std::vector<std::string> CsvTable::checkColumns( const std::vector<std::string>& required,
                                                 const std::vector<std::string>& optional,
                                                 bool ignore_unrelated ) const
{
    std::vector<std::string> known = required;
    known.insert( known.end(), optional.begin(), optional.end() );
    std::vector<std::string> ignored;
    // Unknown columns first: a misspelt required column is reported where it is, with the name
    // it resembles, rather than as a missing one.
    for ( std::size_t c = 0; c < _header.size(); ++c )
    {
        const auto& h = _header[c];
        if ( std::find( known.begin(), known.end(), h ) != known.end() )
            continue;
        const std::string resembles = didYouMean( h, known );
        if ( ignore_unrelated && resembles.empty() )
        {
            ignored.push_back( h );
            continue;
        }
        std::string all;
        for ( const auto& n : known )
            all += ( all.empty() ? "" : ", " ) + n;
        throw InputError( _name, 1, static_cast<int>( c ) + 1, h,
                          "one of the known columns (" + all + ")", "'" + h + "'" + resembles );
    }
    for ( const auto& r : required )
        if ( columnIndex( r ) < 0 )
            throw InputError( _name, 1, 1, r, "a required column '" + r + "' in the header",
                              "no such column" );
    return ignored;
}

} // namespace shardsweep
