// nccl-tests output reader (nccl_tests_log.hpp).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <regex>
#include <set>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/nccl_tests_log.hpp>
#include <sstream>

namespace shardsweep
{

namespace
{

struct TestName
{
    const char* pattern;
    NcclTest test;
};
// Longest spellings first: "reduce_scatter" must not be read as a reduce.
constexpr TestName kTestNames[] = {
    { "reduce_scatter", NcclTest::reduce_scatter },
    { "reducescatter", NcclTest::reduce_scatter },
    { "all_reduce", NcclTest::all_reduce },
    { "allreduce", NcclTest::all_reduce },
    { "all_gather", NcclTest::all_gather },
    { "allgather", NcclTest::all_gather },
    { "all_to_all", NcclTest::all_to_all },
    { "alltoall", NcclTest::all_to_all },
    { "sendrecv", NcclTest::sendrecv },
};

std::string lower( std::string s )
{
    std::transform( s.begin(), s.end(), s.begin(),
                    []( unsigned char c ) { return static_cast<char>( std::tolower( c ) ); } );
    return s;
}

bool testFromText( const std::string& text, NcclTest& test )
{
    const std::string t = lower( text );
    for ( const TestName& n : kTestNames )
        if ( t.find( n.pattern ) != std::string::npos )
        {
            test = n.test;
            return true;
        }
    return false;
}

std::vector<std::string> tokens( const std::string& line )
{
    std::istringstream in( line );
    std::vector<std::string> out;
    for ( std::string w; in >> w; )
        out.push_back( w );
    return out;
}

//! A positive number, or nothing.
bool positiveNumber( const std::string& s, double& x )
{
    char* end = nullptr;
    x = std::strtod( s.c_str(), &end );
    return end && *end == '\0' && end != s.c_str() && x > 0.0;
}

//! vTrain's CSV form of the same measurement (one node; ranks from "_<N>gpu" in the name).
void readCsvTable( const std::string& path, NcclTestsLog& log )
{
    const CsvTable t = CsvTable::read( path );
    std::smatch m;
    const std::string stem = std::filesystem::path( path ).filename().string();
    if ( !std::regex_search( stem, m, std::regex( "_([0-9]+)gpu" ) ) )
        throw InputError( path, "a CSV table of nccl-tests needs its rank count in the file name "
                                "(as in all_reduce_8gpu.csv)" );
    log.ranks = std::stoi( m[1] );
    log.hosts = 1;
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        NcclTestsLog::Row row;
        row.bytes = t.getDouble( r, "size(B)" );
        // The first time(ns) column is out-of-place; the CSV reader keeps the first of a name.
        row.time_us = t.getDouble( r, "time(ns)" ) * 1.0e-3;
        row.line = t.lineOf( r );
        if ( !( row.bytes > 0.0 ) || !( row.time_us > 0.0 ) )
            t.fail( r, "time(ns)", "a size and a time > 0" );
        log.rows.push_back( row );
    }
}

} // namespace

const char* ncclTestName( NcclTest t )
{
    switch ( t )
    {
    case NcclTest::all_reduce:
        return "all_reduce";
    case NcclTest::all_gather:
        return "all_gather";
    case NcclTest::reduce_scatter:
        return "reduce_scatter";
    case NcclTest::all_to_all:
        return "alltoall";
    case NcclTest::sendrecv:
        return "sendrecv";
    }
    return "?";
}

NcclTestsLog readNcclTestsLog( const std::string& spec )
{
    NcclTestsLog log;
    const std::size_t eq = spec.find( '=' );
    bool named = false;
    if ( eq != std::string::npos )
    {
        log.path = spec.substr( eq + 1 );
        if ( !testFromText( spec.substr( 0, eq ), log.test ) )
            throw UsageError( fmt::format( "--nccl-tests {}: unknown collective '{}' (all_reduce, "
                                           "all_gather, reduce_scatter, alltoall, sendrecv)",
                                           spec, spec.substr( 0, eq ) ) );
        named = true;
    }
    else
        log.path = spec;
    if ( !named &&
         !testFromText( std::filesystem::path( log.path ).filename().string(), log.test ) )
        throw InputError( log.path, "cannot tell which collective this nccl-tests log measured "
                                    "from its name: name the file after the test (e.g. "
                                    "all_reduce_perf_2node.log) or pass KIND=PATH" );
    std::ifstream in( log.path );
    if ( !in )
        throw InputError( log.path, "cannot open file for reading" );
    std::string first;
    std::getline( in, first );
    if ( first.rfind( "size(B)", 0 ) == 0 )
    {
        readCsvTable( log.path, log );
        if ( log.rows.empty() )
            throw InputError( log.path, "no measurement rows" );
        return log;
    }
    in.seekg( 0 );

    const std::regex label( "^\\s*[0-9]+: ?" ); // srun --label
    std::set<std::string> hosts;
    std::vector<std::string> header;
    int time_column = -1;
    std::string line;
    for ( int number = 1; std::getline( in, line ); ++number )
    {
        if ( !line.empty() && line.back() == '\r' )
            line.pop_back();
        std::smatch m;
        if ( std::regex_search( line, m, label ) )
            line = m.suffix();
        std::vector<std::string> w = tokens( line );
        if ( w.empty() )
            continue;
        const auto where = [&]( const std::string& what )
        { return InputError( log.path, number, 0, "", what, "'" + line + "'" ); };
        if ( w[0] == "#" && w.size() > 1 && w[1] == "Rank" )
        {
            const auto on = std::find( w.begin(), w.end(), "on" );
            if ( on == w.end() || on + 1 == w.end() )
                throw where( "a rank line '#  Rank N Group G Pid P on HOST device D ...'" );
            hosts.insert( *( on + 1 ) );
            ++log.ranks;
            if ( log.ranks_line == 0 )
                log.ranks_line = number;
            continue;
        }
        if ( w[0] == "#" && std::find( w.begin(), w.end(), "size" ) != w.end() &&
             std::find( w.begin(), w.end(), "time" ) != w.end() )
        {
            header.assign( w.begin() + 1, w.end() );
            time_column = static_cast<int>( std::find( header.begin(), header.end(), "time" ) -
                                            header.begin() );
            continue;
        }
        if ( w[0][0] == '#' || header.empty() )
            continue;
        double bytes = 0.0;
        if ( !positiveNumber( w[0], bytes ) ||
             w[0].find_first_not_of( "0123456789" ) != std::string::npos )
            continue; // NCCL INFO lines, warnings, "NCCL version ..."
        if ( w.size() != header.size() )
            throw where( fmt::format( "a row of {} columns as the header says (a truncated log?)",
                                      header.size() ) );
        NcclTestsLog::Row row;
        row.bytes = bytes;
        row.line = number;
        if ( !positiveNumber( w[time_column], row.time_us ) )
            throw where( "a time (µs) > 0 in the first 'time' column" );
        log.rows.push_back( row );
    }
    if ( log.ranks == 0 )
        throw InputError( log.path, "no '#  Rank N ... on HOST device D' lines: the log's header "
                                    "is missing (save nccl-tests' whole standard output)" );
    if ( header.empty() || log.rows.empty() )
        throw InputError( log.path, "no measurement table (the '#  size  count  type ...  time' "
                                    "header and rows under it)" );
    log.hosts = static_cast<int>( hosts.size() );
    return log;
}

} // namespace shardsweep
