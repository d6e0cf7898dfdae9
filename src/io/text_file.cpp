// Whole text files in and out (text_file.hpp).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/text_file.hpp>
#include <sstream>

namespace shardsweep
{

std::string readTextFile( const std::string& path )
{
    std::ifstream in( path, std::ios::binary );
    if ( !in )
        throw InputError( path, "cannot open file for reading" );
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

void writeTextFileAtomically( const std::string& path, const std::string& text )
{
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out( tmp, std::ios::trunc );
        out << text;
        out.flush();
        if ( !out )
        {
            std::remove( tmp.c_str() );
            throw InputError( path, "cannot write the file" );
        }
    }
    std::error_code ec;
    std::filesystem::rename( tmp, path, ec );
    if ( ec )
    {
        std::remove( tmp.c_str() );
        throw InputError( path, "cannot write the file: " + ec.message() );
    }
}

} // namespace shardsweep
