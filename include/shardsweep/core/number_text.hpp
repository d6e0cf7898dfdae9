#pragma once
//! \file number_text.hpp
//! \brief The shortest decimal text of a number that reads back exactly: what messages, YAML
//! output and the field tables' printers write ("80", not "8e+01"; "1.25", not
//! "1.2500000000000000").

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace shardsweep
{

//! Formats a number for messages and YAML output: shortest text that reads back exactly.
inline std::string formatNumber( double x )
{
    char buf[40];
    // Integers print as integers ("80", not "8e+01").
    if ( x == std::floor( x ) && std::fabs( x ) < 1.0e15 )
    {
        std::snprintf( buf, sizeof( buf ), "%.0f", x );
        return buf;
    }
    for ( int precision = 1; precision <= 17; ++precision )
    {
        std::snprintf( buf, sizeof( buf ), "%.*g", precision, x );
        if ( std::strtod( buf, nullptr ) == x )
            break;
    }
    return buf;
}

} // namespace shardsweep
