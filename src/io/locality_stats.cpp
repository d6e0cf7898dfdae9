#include <cstdlib>
#include <regex>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/locality_stats.hpp>
#include <shardsweep/io/text_file.hpp>
#include <sstream>

namespace shardsweep
{

namespace
{

struct Lines
{
    std::string name;
    std::vector<std::string> text;
    std::size_t next = 0; // index of the next unread line

    bool atEnd()
    {
        while ( next < text.size() && text[next].find_first_not_of( " \t\r" ) == std::string::npos )
            ++next;
        return next >= text.size();
    }
    [[noreturn]] void fail( std::size_t index, const std::string& field,
                            const std::string& expected ) const
    {
        const std::string found =
            index < text.size() ? "'" + text[index] + "'" : std::string( "the end of the file" );
        throw InputError( name, static_cast<int>( index + 1 ), 1, field, expected, found );
    }
    //! The next non-blank line, which must start with `prefix`; returns the rest.
    std::string expect( const std::string& prefix, const std::string& field )
    {
        if ( atEnd() )
            fail( next, field, "a line starting with '" + prefix + "'" );
        const std::string& line = text[next];
        if ( line.compare( 0, prefix.size(), prefix ) != 0 )
            fail( next, field, "a line starting with '" + prefix + "'" );
        ++next;
        return line.substr( prefix.size() );
    }
};

double parseNumber( const Lines& lines, std::size_t index, const std::string& text,
                    const std::string& field )
{
    const char* begin = text.c_str();
    char* end = nullptr;
    const double value = std::strtod( begin, &end );
    if ( end == begin )
        lines.fail( index, field, "a number" );
    for ( const char* p = end; *p; ++p )
        if ( *p != ' ' && *p != '\t' && *p != '\r' )
            lines.fail( index, field, "a number at the end of the line" );
    return value;
}

// 17 lines "(lo, hi]: v" (the last "(32768+: v"); the bin edges and the CDF lines follow.
void parseHistogram( Lines& lines, const std::string& field, double out[kReuseBins] )
{
    double sum = 0.0;
    for ( int j = 0; j < kReuseBins; ++j )
    {
        const std::string prefix =
            j == 0 ? std::string( "(0, 1]: " )
            : j < kReuseBins - 1
                ? "(" + std::to_string( 1 << ( j - 1 ) ) + ", " + std::to_string( 1 << j ) + "]: "
                : "(" + std::to_string( 1 << ( j - 1 ) ) + "+: ";
        const std::size_t index = lines.next;
        const std::string bin_field = field + "[" + std::to_string( j ) + "]";
        const std::string rest = lines.expect( prefix, bin_field );
        out[j] = parseNumber( lines, index, rest, bin_field );
        if ( out[j] < 0.0 || out[j] > 1.0 )
            lines.fail( index, bin_field, "a fraction in [0, 1]" );
        sum += out[j];
    }
    // Values are printed with 3 decimals: 17 roundings move the sum by at most 0.0085.
    if ( sum < 0.99 || sum > 1.01 )
        lines.fail( lines.next - 1, field, "bins summing to 1 (within rounding)" );
    lines.expect( "[", field + " edges" );
    lines.expect( "[", field + " cdf" );
}

} // namespace

std::vector<LocalityTarget> parseLocalityStats( const std::string& text, const std::string& name )
{
    Lines lines;
    lines.name = name;
    std::istringstream in( text );
    for ( std::string line; std::getline( in, line ); )
    {
        if ( !line.empty() && line.back() == '\r' )
            line.pop_back();
        lines.text.push_back( line );
    }
    static const std::regex batch_name( R"(_t([0-9]+)_bs([0-9]+))" );
    static const std::regex header(
        R"(^Locality stats after processing ([0-9]+) batches of size ([0-9]+)\s*$)" );

    std::vector<LocalityTarget> blocks;
    while ( !lines.atEnd() )
    {
        LocalityTarget block;
        const std::size_t name_line = lines.next;
        block.source = lines.text[lines.next++];
        std::smatch m;
        if ( std::regex_search( block.source, m, batch_name ) )
            block.num_tables = std::stoll( m[1] );
        else
            lines.fail( name_line, "file name", "a batch file name like 'fbgemm_t856_bs65536.pt'" );
        if ( lines.atEnd() || !std::regex_match( lines.text[lines.next], m, header ) )
            lines.fail( lines.next, "header",
                        "'Locality stats after processing N batches of size B'" );
        block.batch_size = std::stoll( m[2] );
        ++lines.next;
        std::size_t index = lines.next;
        block.total_indices =
            parseNumber( lines, index, lines.expect( "Avg # of indices: ", "indices" ), "indices" );
        index = lines.next;
        block.total_unique = parseNumber(
            lines, index, lines.expect( "Avg # of unique cols: ", "unique cols" ), "unique cols" );
        if ( block.total_unique <= 0.0 || block.total_indices < block.total_unique )
            lines.fail( index, "unique cols", "a count in (0, indices]" );
        lines.expect( "Avg col size: ", "col size" );
        lines.expect( "Histogram of col sizes:", "unique histogram" );
        parseHistogram( lines, "unique histogram", block.unique_hist );
        lines.expect( "Ratio of index distribution at different column sizes:",
                      "access histogram" );
        parseHistogram( lines, "access histogram", block.access_hist );
        blocks.push_back( block );
    }
    if ( blocks.empty() )
        throw InputError( name, "no locality blocks found" );
    return blocks;
}

std::vector<LocalityTarget> readLocalityStats( const std::string& path )
{
    return parseLocalityStats( readTextFile( path, "the locality statistics file" ), path );
}

} // namespace shardsweep
