#pragma once
// Internals shared by export-et and inspect-et (src/cli/export_et.cpp, inspect_et.cpp): the one
// positional argument and the progress lines of their loops over ranks.
#include "command_line.hpp"

#include <boost/program_options.hpp>
#include <chrono>
#include <fmt/format.h>
#include <iostream>
#include <shardsweep/cli/commands.hpp>
#include <string>

namespace shardsweep::trace_cli
{

//! Parses `args` with one positional argument; returns false after printing --help.
inline bool parseArguments( const CommandContext& ctx, const std::string& command,
                            const Arguments& args,
                            const boost::program_options::options_description& options,
                            const std::string& positional_name, std::string& positional,
                            const std::string& help )
{
    namespace po = boost::program_options;
    po::options_description hidden;
    hidden.add_options()( positional_name.c_str(), po::value( &positional ) );
    po::positional_options_description pos;
    pos.add( positional_name.c_str(), 1 );
    po::variables_map vm;
    return parseCommandLine( ctx, command, args, options, vm, CommandHelp{ help, "\n" }, hidden,
                             pos );
}

//! --progress-interval of export-et and inspect-et.
constexpr const char* kProgressHelp =
    "seconds between progress lines on standard error (default 10; 0: none)";

//! Progress of a long loop over ranks on standard error (rank 0; standard output carries the
//! table), e.g. "export-et: 128/1024 traces written (12.5 s)": at most every `interval` seconds,
//! none when it is 0, and a last line at the end when any was printed.
class RankProgress
{
  public:
    RankProgress( const CommandContext& ctx, std::string command, std::string counted, int total,
                  double interval )
        : _talk( ctx.isRoot() && interval > 0.0 ), _command( std::move( command ) ),
          _counted( std::move( counted ) ), _total( total ), _interval( interval ),
          _start( Clock::now() ), _last( _start )
    {
    }

    //! `count` of the total are done.
    void done( int count )
    {
        if ( !_talk )
            return;
        const Clock::time_point now = Clock::now();
        const bool last = count == _total && _printed;
        if ( !last && std::chrono::duration<double>( now - _last ).count() < _interval )
            return;
        std::cerr << fmt::format( "{}: {}/{} {} ({:.1f} s)\n", _command, count, _total, _counted,
                                  std::chrono::duration<double>( now - _start ).count() );
        _last = now;
        _printed = true;
    }

  private:
    using Clock = std::chrono::steady_clock;
    bool _talk;
    std::string _command, _counted;
    int _total;
    double _interval;
    Clock::time_point _start, _last;
    bool _printed = false;
};

} // namespace shardsweep::trace_cli
