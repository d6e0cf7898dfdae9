#pragma once
//! \file errors.hpp
//! \brief Exceptions that the command line turns into exit codes and one clear message.
//!
//! Exit codes (docs/CLI.md): 0 success, 1 runtime failure, 2 bad input or usage (nothing written),
//! 3 sweep stopped on a signal and resumable.

#include <stdexcept>
#include <string>

namespace shardsweep
{

//! Exit status of a sweep that stopped cleanly on SIGTERM/SIGINT/SIGUSR1 and can be resumed.
constexpr int kExitResumable = 3;
constexpr int kExitBadInput = 2;
constexpr int kExitFailure = 1;

//! Bad command-line usage (unknown option, missing argument). Exit status 2.
class UsageError : public std::runtime_error
{
  public:
    using std::runtime_error::runtime_error;
};

//! How a runtime failure starts on stderr: "shardsweep: error on rank R: " when several ranks run,
//! else "shardsweep: error: ".
inline std::string errorPrefix( int rank, int size )
{
    return size > 1 ? "shardsweep: error on rank " + std::to_string( rank ) + ": "
                    : std::string( "shardsweep: error: " );
}

//! A failure that every rank of a communicator learnt of at the same point and throws together
//! (an error flag reduced over the ranks), so that each rank leaves its collective calls in step
//! and none waits for another. Only the ranks where it happened (`origin()`) hold its message;
//! the others say which rank to look at. Exit status 1.
class CollectiveError : public std::runtime_error
{
  public:
    CollectiveError( const std::string& message, bool origin )
        : std::runtime_error( message ), _origin( origin )
    {
    }
    bool origin() const { return _origin; }

  private:
    bool _origin = true;
};

//! Bad input file content. The message names file, line, column, field, expectation and finding:
//! "inputs/x.yaml:12:5: field 'bandwidth_GBps': expected a number > 0, found '-3'".
class InputError : public std::runtime_error
{
  public:
    InputError( const std::string& file, int line, int column, const std::string& field,
                const std::string& expected, const std::string& found )
        : std::runtime_error( format( file, line, column, field, expected, found ) ), _file( file ),
          _line( line ), _column( column ), _field( field )
    {
    }

    //! For errors that are not tied to one position (line/column 0 are omitted from the text).
    InputError( const std::string& file, const std::string& message )
        : std::runtime_error( file + ": " + message ), _file( file )
    {
    }

    const std::string& file() const { return _file; }
    int line() const { return _line; }
    int column() const { return _column; }
    const std::string& field() const { return _field; }

  private:
    static std::string format( const std::string& file, int line, int column,
                               const std::string& field, const std::string& expected,
                               const std::string& found )
    {
        // Line-oriented files (logs) have no column and no field name: "file:7: expected ...".
        std::string where = file;
        if ( line > 0 )
            where += ":" + std::to_string( line );
        if ( line > 0 && column > 0 )
            where += ":" + std::to_string( column );
        const std::string what = field.empty() ? std::string() : " field '" + field + "':";
        return where + ":" + what + " expected " + expected + ", found " + found;
    }

    std::string _file;
    int _line = 0;
    int _column = 0;
    std::string _field;
};

} // namespace shardsweep
