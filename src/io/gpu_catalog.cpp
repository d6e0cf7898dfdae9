#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/gpu_fields.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/gpu_catalog.hpp>

namespace shardsweep
{

double pcieX16BandwidthGBps( int generation )
{
    // 16 lanes x transfer rate x line-code efficiency / 8 bits, per direction.
    switch ( generation )
    {
    case 1:
        return 16 * 2.5 * 0.8 / 8;
    case 2:
        return 16 * 5.0 * 0.8 / 8;
    case 3:
        return 16 * 8.0 * 128.0 / 130.0 / 8;
    case 4:
        return 16 * 16.0 * 128.0 / 130.0 / 8;
    case 5:
        return 16 * 32.0 * 128.0 / 130.0 / 8;
    case 6:
        return 16 * 64.0 * 242.0 / 256.0 / 8; // FLIT mode, FEC overhead
    default:
        return 0.0;
    }
}

std::string normalizeGpuName( const std::string& name )
{
    std::string out;
    for ( char c : name )
        if ( std::isalnum( static_cast<unsigned char>( c ) ) )
            out += static_cast<char>( std::tolower( static_cast<unsigned char>( c ) ) );
    return out;
}

GpuEntry parseGpu( const YamlView& node, bool inline_gpu )
{
    std::vector<std::string> required = { "name" };
    std::vector<std::string> optional = { "aliases", "description" };
    for ( const GpuField& f : kGpuFields )
        ( f.required ? required : optional ).emplace_back( f.key );
    if ( inline_gpu )
        node.requireMap( "a GPU catalog name or a mapping of GPU fields" );
    else
    {
        expectKind( node, "gpu" );
        required.insert( required.begin(), "kind" );
    }
    node.checkKeys( required, optional );

    GpuEntry e;
    e.file = node.file();
    e.name = node.at( "name" ).asName();
    if ( auto a = node.find( "aliases" ) )
        e.aliases = a->asStringList();
    GpuSpec& g = e.spec;
    for ( const GpuField& f : kGpuFields )
    {
        const Range range{ f.min, f.max, !f.above_min, true };
        if ( f.kind == GpuField::integer )
            f.set( g, f.required ? node.getInt32( f.key, range )
                                 : node.getInt32Or( f.key, int( f.fallback ), range ) );
        else
            f.set( g, f.required ? node.getDouble( f.key, range )
                                 : node.getDoubleOr( f.key, f.fallback, range ) );
    }
    // The one derived default (its fallback 0 lies outside its range).
    if ( !node.find( "pcie_bandwidth_GBps" ) )
        g.pcie_bandwidth_GBps = pcieX16BandwidthGBps( g.pcie_generation );
    return e;
}

GpuEntry readGpuFile( const std::string& path )
{
    return parseGpu( loadYamlFile( path ) );
}

void GpuCatalog::add( const GpuEntry& entry )
{
    std::vector<std::string> mine = entry.aliases;
    mine.insert( mine.begin(), entry.name );
    for ( const auto& n : mine )
        if ( const GpuEntry* other = find( n ) )
            throw InputError( entry.file, "GPU name '" + n + "' is already used by '" +
                                              other->name + "' (" + other->file + ")" );
    _entries.push_back( entry );
}

const GpuEntry* GpuCatalog::find( const std::string& name ) const
{
    const std::string key = normalizeGpuName( name );
    if ( key.empty() )
        return nullptr;
    for ( const auto& e : _entries )
    {
        if ( normalizeGpuName( e.name ) == key )
            return &e;
        for ( const auto& a : e.aliases )
            if ( normalizeGpuName( a ) == key )
                return &e;
    }
    return nullptr;
}

const GpuEntry& GpuCatalog::get( const std::string& name ) const
{
    if ( const GpuEntry* e = find( name ) )
        return *e;
    std::string hint = closestName( name, names() );
    throw UsageError( "unknown GPU '" + name + "'" +
                      ( hint.empty() ? "" : " (did you mean '" + hint + "'?)" ) +
                      "; the catalog has " + joinChoices( names(), ", ", " and " ) );
}

std::vector<std::string> GpuCatalog::names() const
{
    std::vector<std::string> out;
    for ( const auto& e : _entries )
        out.push_back( e.name );
    return out;
}

GpuCatalog GpuCatalog::read( const std::string& dir )
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if ( !fs::is_directory( dir, ec ) )
        throw InputError( dir, "GPU catalog directory not found" );
    std::vector<std::string> files;
    for ( const auto& f : fs::directory_iterator( dir ) )
    {
        const std::string ext = f.path().extension().string();
        if ( f.is_regular_file() && ( ext == ".yaml" || ext == ".yml" ) )
            files.push_back( f.path().string() );
    }
    std::sort( files.begin(), files.end() );
    GpuCatalog catalog;
    for ( const auto& f : files )
        catalog.add( readGpuFile( f ) );
    if ( catalog._entries.empty() )
        throw InputError( dir, "GPU catalog directory holds no .yaml files" );
    return catalog;
}

GpuCatalog readGpuCatalog( const std::string& dir )
{
    return GpuCatalog::read( dir );
}

std::string defaultGpuCatalogDir()
{
    if ( const char* env = std::getenv( "SHARDSWEEP_GPU_CATALOG" ) )
        if ( *env )
            return env;
    std::error_code ec;
    std::string source = std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/gpus";
    if ( std::filesystem::is_directory( source, ec ) )
        return source;
    return std::string( SHARDSWEEP_INSTALL_DATADIR ) + "/inputs/gpus";
}

const GpuCatalog& defaultGpuCatalog()
{
    static std::once_flag once;
    static GpuCatalog catalog;
    std::call_once( once, [] { catalog = GpuCatalog::read( defaultGpuCatalogDir() ); } );
    return catalog;
}

const GpuEntry& findGpu( const std::string& name )
{
    return defaultGpuCatalog().get( name );
}

} // namespace shardsweep
