// Numbers and names in input files: parsing (with YAML 1.1 digit separators), shortest
// round-trip formatting, numeric ranges in words, and typo suggestions (input_text.hpp).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <shardsweep/io/input_text.hpp>
#include <shardsweep/io/yaml_util.hpp>

namespace shardsweep
{

namespace
{
constexpr double kUnbounded = 1.0e308;

// YAML 1.1 allowed '_' between digits (40_000_000); yaml-cpp does not, so strip them here.
std::string stripDigitSeparators( const std::string& s )
{
    std::string out;
    for ( std::size_t i = 0; i < s.size(); ++i )
    {
        if ( s[i] == '_' && i > 0 && i + 1 < s.size() &&
             std::isdigit( static_cast<unsigned char>( s[i - 1] ) ) &&
             std::isdigit( static_cast<unsigned char>( s[i + 1] ) ) )
            continue;
        out += s[i];
    }
    return out;
}

std::size_t editDistance( const std::string& a, const std::string& b )
{
    std::vector<std::size_t> row( b.size() + 1 );
    for ( std::size_t j = 0; j <= b.size(); ++j )
        row[j] = j;
    for ( std::size_t i = 1; i <= a.size(); ++i )
    {
        std::size_t diag = row[0];
        row[0] = i;
        for ( std::size_t j = 1; j <= b.size(); ++j )
        {
            std::size_t up = row[j];
            row[j] = std::min( { row[j] + 1, row[j - 1] + 1, diag + ( a[i - 1] != b[j - 1] ) } );
            diag = up;
        }
    }
    return row[b.size()];
}

std::size_t commonPrefix( const std::string& a, const std::string& b )
{
    std::size_t i = 0;
    while ( i < a.size() && i < b.size() && a[i] == b[i] )
        ++i;
    return i;
}
} // namespace

std::string lowerCase( std::string s )
{
    for ( auto& c : s )
        c = static_cast<char>( std::tolower( static_cast<unsigned char>( c ) ) );
    return s;
}

bool parseNumber( const std::string& text, double& value )
{
    std::string t = stripDigitSeparators( text );
    if ( t.empty() || std::isspace( static_cast<unsigned char>( t[0] ) ) )
        return false;
    errno = 0;
    char* end = nullptr;
    value = std::strtod( t.c_str(), &end );
    return end == t.c_str() + t.size() && errno == 0 && std::isfinite( value );
}

bool parseInteger( const std::string& text, std::int64_t& value )
{
    std::string t = stripDigitSeparators( text );
    if ( t.empty() || std::isspace( static_cast<unsigned char>( t[0] ) ) )
        return false;
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll( t.c_str(), &end, 10 );
    if ( end == t.c_str() + t.size() && errno == 0 )
    {
        value = v;
        return true;
    }
    // Integral floats (4e7) are integers written compactly.
    double d = 0.0;
    if ( !parseNumber( t, d ) || d != std::floor( d ) || std::fabs( d ) > 9.0e18 )
        return false;
    value = static_cast<std::int64_t>( d );
    return true;
}

std::string didYouMean( const std::string& word, const std::vector<std::string>& names )
{
    std::string c = closestName( word, names );
    return c.empty() ? std::string() : " (did you mean '" + c + "'?)";
}

// ---- Range ---------------------------------------------------------------------------------

bool Range::contains( double x ) const
{
    bool lo = min_inclusive ? x >= min : x > min;
    bool hi = max_inclusive ? x <= max : x < max;
    return lo && hi;
}

std::string Range::describe( const std::string& noun ) const
{
    bool has_min = min > -kUnbounded;
    bool has_max = max < kUnbounded;
    if ( has_min && has_max )
        return noun + " in " + ( min_inclusive ? "[" : "(" ) + formatNumber( min ) + ", " +
               formatNumber( max ) + ( max_inclusive ? "]" : ")" );
    if ( has_min )
        return noun + ( min_inclusive ? " >= " : " > " ) + formatNumber( min );
    if ( has_max )
        return noun + ( max_inclusive ? " <= " : " < " ) + formatNumber( max );
    return noun;
}

std::string closestName( const std::string& word, const std::vector<std::string>& names )
{
    const std::string w = lowerCase( word );
    std::string best;
    std::size_t best_distance = std::numeric_limits<std::size_t>::max();
    for ( const auto& n : names )
    {
        const std::string l = lowerCase( n );
        std::size_t d = editDistance( w, l );
        // Ties go to the name sharing the longer prefix ("e" -> "ee" rather than "a").
        if ( d < best_distance ||
             ( d == best_distance && commonPrefix( w, l ) > commonPrefix( w, lowerCase( best ) ) ) )
        {
            best_distance = d;
            best = n;
        }
    }
    // A typo changes a few characters; anything further away is a different word.
    std::size_t limit = std::max<std::size_t>( 2, w.size() / 3 );
    return best_distance <= limit ? best : std::string();
}

} // namespace shardsweep
