#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/core/errors.hpp>
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
    std::vector<std::string> required = {
        "name",           "sm_count",   "boost_clock_MHz",       "fp32_TFLOPs",
        "fp16_TFLOPs",    "memory_GiB", "memory_bandwidth_GBps", "l2_cache_MiB",
        "pcie_generation" };
    std::vector<std::string> optional = {
        "aliases",     "tf32_TFLOPs", "bf16_TFLOPs", "pcie_bandwidth_GBps",
        "description", "tdp_W",       "process_nm" };
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
    // Ranges are generous physical bounds: they catch unit mistakes (MHz vs GHz, GB vs MB).
    g.sm_count = node.getInt32( "sm_count", Range::between( 1, 10000 ) );
    g.boost_clock_MHz = node.getDouble( "boost_clock_MHz", Range::between( 100, 10000 ) );
    const Range tflops = Range::between( 0, 100000 );
    g.fp32_TFLOPs = node.getDouble( "fp32_TFLOPs", Range{ 0.0, 100000.0, false, true } );
    g.tf32_TFLOPs = node.getDoubleOr( "tf32_TFLOPs", 0.0, tflops );
    g.fp16_TFLOPs = node.getDouble( "fp16_TFLOPs", tflops );
    g.bf16_TFLOPs = node.getDoubleOr( "bf16_TFLOPs", 0.0, tflops );
    g.memory_GiB = node.getDouble( "memory_GiB", Range{ 0.0, 65536.0, false, true } );
    g.memory_bandwidth_GBps =
        node.getDouble( "memory_bandwidth_GBps", Range{ 0.0, 1.0e6, false, true } );
    g.l2_cache_MiB = node.getDouble( "l2_cache_MiB", Range{ 0.0, 65536.0, false, true } );
    g.pcie_generation = node.getInt32( "pcie_generation", Range::between( 1, 6 ) );
    g.pcie_bandwidth_GBps =
        node.getDoubleOr( "pcie_bandwidth_GBps", pcieX16BandwidthGBps( g.pcie_generation ),
                          Range{ 0.0, 10000.0, false, true } );
    // Optional; 0 (the default) means unknown, and the GEMM model then applies no power cap.
    g.tdp_W = node.getDoubleOr( "tdp_W", 0.0, Range::between( 0, 10000 ) );
    g.process_nm = node.getDoubleOr( "process_nm", 0.0, Range::between( 0, 1000 ) );
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
                      "; the catalog has " + joinNames( names(), " and " ) );
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
