// Where a sweep starts from: a fresh output, journals to resume, or a finished file (rank 0 only).
#include "sweep_internal.hpp"

#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <shardsweep/io/hdf5.hpp>
#include <sstream>
#include <unistd.h>

namespace shardsweep
{
namespace detail
{

namespace fs = std::filesystem;

namespace
{

std::string manifestText( const ExpectedIdentity& id )
{
    return fmt::format( "shardsweep-journal-manifest\nschema_version {}\nconfig_hash {:016x}\n"
                        "num_scenarios {}\ndetail {}\nslice {}\n",
                        kSweepSchemaVersion, id.config_hash, id.num_scenarios, nameOf( id.detail ),
                        id.slice );
}

void syncDirectory( const fs::path& dir )
{
    int fd = ::open( dir.c_str(), O_RDONLY | O_DIRECTORY );
    if ( fd >= 0 )
    {
        ::fsync( fd );
        ::close( fd );
    }
}

void writeManifest( const fs::path& dir, const ExpectedIdentity& id )
{
    fs::create_directories( dir );
    const fs::path tmp = dir / "manifest.tmp";
    {
        std::ofstream f( tmp, std::ios::trunc );
        f << manifestText( id );
        if ( !f )
            throw std::runtime_error( "cannot write " + tmp.string() );
    }
    h5::syncPath( tmp.string() );
    fs::rename( tmp, dir / "manifest" );
    syncDirectory( dir );
    syncDirectory( dir.parent_path().empty() ? fs::path( "." ) : dir.parent_path() );
}

std::map<std::string, std::string> readKeyValues( const fs::path& path )
{
    std::map<std::string, std::string> kv;
    std::ifstream f( path );
    std::string line;
    while ( std::getline( f, line ) )
    {
        std::istringstream s( line );
        std::string key, value;
        s >> key >> value;
        kv[key] = value;
    }
    return kv;
}

//! "" when the identity matches, else what differs (stored vs this run).
std::string compareIdentity( const std::map<std::string, std::string>& stored,
                             const ExpectedIdentity& id )
{
    const std::map<std::string, std::string> mine = {
        { "schema_version", std::to_string( kSweepSchemaVersion ) },
        { "config_hash", fmt::format( "{:016x}", id.config_hash ) },
        { "num_scenarios", std::to_string( id.num_scenarios ) },
        { "detail", nameOf( id.detail ) },
        { "slice", id.slice },
    };
    std::string diff;
    for ( const auto& [key, value] : mine )
    {
        auto it = stored.find( key );
        const std::string theirs = it == stored.end() ? "(missing)" : it->second;
        if ( theirs != value )
            diff += fmt::format( "{}{} is {} there, {} in this run", diff.empty() ? "" : "; ", key,
                                 theirs, value );
    }
    return diff;
}

//! Identity attributes of an existing results file, or an empty map when it is not readable.
std::map<std::string, std::string> fileIdentity( const std::string& path, bool& readable,
                                                 bool& complete )
{
    std::map<std::string, std::string> kv;
    readable = h5::File::isReadable( path );
    complete = false;
    if ( !readable )
        return kv;
    try
    {
        auto file = h5::File::openSerial( path );
        {
            auto root = file.root();
            const auto id = root.id();
            if ( h5::hasAttribute( id, "schema_version" ) )
                kv["schema_version"] =
                    std::to_string( h5::readIntAttribute( id, "schema_version" ) );
            if ( h5::hasAttribute( id, "config_hash" ) )
                kv["config_hash"] = h5::readStringAttribute( id, "config_hash" );
            if ( h5::hasAttribute( id, "num_scenarios" ) )
                kv["num_scenarios"] = std::to_string( h5::readIntAttribute( id, "num_scenarios" ) );
            if ( h5::hasAttribute( id, "detail" ) )
                kv["detail"] = h5::readStringAttribute( id, "detail" );
            if ( h5::hasAttribute( id, "slice" ) )
                kv["slice"] = h5::readStringAttribute( id, "slice" );
            complete =
                h5::hasAttribute( id, "complete" ) && h5::readIntAttribute( id, "complete" ) == 1;
        }
        file.close();
    }
    catch ( const std::exception& )
    {
        readable = false;
    }
    return kv;
}

//! Removes every entry of `dir` but `kept` (a missing directory: nothing to remove). Throws
//! std::filesystem::filesystem_error when an entry cannot be removed: --fresh must not go on
//! with old journals left behind.
void removeAllBut( const fs::path& dir, const char* kept )
{
    std::error_code missing;
    for ( const auto& entry : fs::directory_iterator( dir, missing ) )
        if ( entry.path().filename() != kept )
            fs::remove_all( entry.path() );
}

//! Removes the journal directory when it holds nothing but the lock file.
void removeUnusedJournalDir( const fs::path& dir )
{
    std::error_code ec;
    for ( const auto& entry : fs::directory_iterator( dir, ec ) )
        if ( entry.path().filename() != "lock" )
            return;
    fs::remove_all( dir, ec );
}

} // namespace

std::string journalDir( const std::string& output )
{
    return output + ".journal";
}

StartState prepareOutput( const ExpectedIdentity& id, const std::string& output, bool fresh )
{
    StartState state;
    const fs::path dir = journalDir( output );
    if ( fresh )
    {
        removeAllBut( dir, "lock" ); // which this run holds
        fs::remove( output );
    }
    bool readable = false, complete = false;
    const bool output_exists = fs::exists( output );
    const auto stored_file = output_exists
                                 ? fileIdentity( output, readable, complete )
                                 : decltype( fileIdentity( output, readable, complete ) ){};

    if ( fs::exists( dir / "manifest" ) )
    {
        const std::string diff = compareIdentity( readKeyValues( dir / "manifest" ), id );
        if ( !diff.empty() )
        {
            state.error = fmt::format( "refusing to resume {}: its journals ({}) belong to another "
                                       "sweep ({}); rerun with --fresh to start over",
                                       output, dir.string(), diff );
            return state;
        }
        if ( output_exists && readable && complete && compareIdentity( stored_file, id ).empty() )
        {
            // Killed while cleaning up after a finished run: the file is the result.
            fs::remove_all( dir );
            state.kind = StartState::Kind::complete;
            return state;
        }
        state.kind = StartState::Kind::resume;
    }
    else
    {
        // Refused here, the run leaves no journal directory behind (the lock made it).
        const auto refuse = [&]( std::string message )
        {
            removeUnusedJournalDir( dir );
            state.error = std::move( message );
            return state;
        };
        if ( output_exists )
        {
            if ( !readable )
                return refuse( fmt::format( "refusing to use {}: it exists but is not a readable "
                                            "HDF5 file and has no journals to rebuild it from "
                                            "(damaged?); rerun with --fresh to overwrite it",
                                            output ) );
            const std::string diff = compareIdentity( stored_file, id );
            if ( !diff.empty() )
                return refuse( fmt::format( "refusing to resume {}: it holds another sweep ({}); "
                                            "rerun with --fresh to overwrite it",
                                            output, diff ) );
            if ( !complete )
                return refuse( fmt::format( "refusing to resume {}: the file is incomplete and "
                                            "its journals ({}) are gone; rerun with --fresh",
                                            output, dir.string() ) );
            // A journal directory without a manifest next to the complete file is what a kill
            // inside removeJournals leaves (the manifest goes last, then the directory), or
            // only the lock this run made.
            std::error_code ec;
            fs::remove_all( dir, ec );
            state.kind = StartState::Kind::complete;
            return state;
        }
        writeManifest( dir, id );
        state.kind = StartState::Kind::fresh;
    }
    int session = 0;
    std::vector<std::string> journals;
    for ( const auto& entry : fs::directory_iterator( dir ) )
    {
        const std::string name = entry.path().filename().string();
        int s = 0, r = 0;
        if ( std::sscanf( name.c_str(), "s%d-r%d.jnl", &s, &r ) == 2 )
        {
            journals.push_back( entry.path().string() );
            session = std::max( session, s + 1 );
        }
    }
    std::sort( journals.begin(), journals.end() );
    state.session = session;
    state.journals = journals;
    return state;
}

void removeJournals( const std::string& output )
{
    const fs::path dir = journalDir( output );
    // Journals first, the manifest last: a kill in between leaves a manifest that a rerun
    // recognises next to the complete file.
    try
    {
        removeAllBut( dir, "manifest" );
    }
    catch ( const fs::filesystem_error& )
    {
        return; // the file is complete: a journal left over is removed by the next run
    }
    std::error_code ec;
    fs::remove_all( dir, ec );
}

} // namespace detail
} // namespace shardsweep
