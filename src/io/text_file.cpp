// Whole text files in and out (text_file.hpp).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/text_file.hpp>
#include <sstream>
#include <vector>

namespace shardsweep
{

namespace
{
thread_local InputFileRecorder* t_recorder = nullptr;

std::uint64_t fnv1a( const std::string& bytes, std::uint64_t h = 0xcbf29ce484222325ull )
{
    for ( unsigned char c : bytes )
    {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}
} // namespace

std::string readTextFile( const std::string& path, const std::string& what )
{
    std::ifstream in( path, std::ios::binary );
    if ( !in )
        throw InputError( path, "cannot open " + what + " for reading" );
    std::ostringstream text;
    text << in.rdbuf();
    if ( t_recorder )
        t_recorder->record( path, text.str() );
    return text.str();
}

InputFileRecorder::InputFileRecorder() : _outer( t_recorder )
{
    t_recorder = this;
}

InputFileRecorder::~InputFileRecorder()
{
    t_recorder = _outer;
}

void InputFileRecorder::record( const std::string& path, const std::string& text )
{
    _hashes[path] = fnv1a( text );
    if ( _outer )
        _outer->record( path, text );
}

std::uint64_t InputFileRecorder::fingerprint() const
{
    if ( _hashes.empty() )
        return 0;
    std::vector<std::uint64_t> sorted;
    for ( const auto& entry : _hashes )
        sorted.push_back( entry.second );
    std::sort( sorted.begin(), sorted.end() );
    std::uint64_t h = 0xcbf29ce484222325ull;
    for ( std::uint64_t x : sorted )
        h = fnv1a( std::string( reinterpret_cast<const char*>( &x ), sizeof x ), h );
    return h;
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
