#include <algorithm>
#include <filesystem>
#include <optional>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/neusight_data.hpp>
#include <shardsweep/model/gemm.hpp>
#include <yaml-cpp/yaml.h>

namespace shardsweep
{

namespace
{
double jsonNumber( const YAML::Node& root, const std::string& path, const char* key )
{
    const YAML::Node v = root[key];
    if ( !v || !v.IsScalar() )
        throw InputError( path, std::string( "missing number '" ) + key + "'" );
    try
    {
        const double x = v.as<double>();
        if ( !( x > 0.0 ) )
            throw InputError( path, v.Mark().line + 1, v.Mark().column + 1, key, "a number > 0",
                              v.Scalar() );
        return x;
    }
    catch ( const YAML::Exception& )
    {
        throw InputError( path, v.Mark().line + 1, v.Mark().column + 1, key, "a number",
                          v.Scalar() );
    }
}
} // namespace

GpuSpec readNeuSightDevice( const std::string& path, std::string* device_name )
{
    YAML::Node root;
    try
    {
        root = YAML::LoadFile( path ); // JSON is YAML
    }
    catch ( const YAML::Exception& e )
    {
        throw InputError( path, std::string( "cannot read device JSON: " ) + e.what() );
    }
    GpuSpec g;
    g.sm_count = static_cast<int>( jsonNumber( root, path, "Num_Sm" ) );
    g.boost_clock_MHz = jsonNumber( root, path, "Freq" );
    g.fp32_TFLOPs = jsonNumber( root, path, "SingleFLOPs" ) / 1000.0;
    g.memory_bandwidth_GBps = jsonNumber( root, path, "Mem_Bw" );
    g.l2_cache_MiB = jsonNumber( root, path, "L2Cache" );
    g.memory_GiB = jsonNumber( root, path, "Dev_Mem" );
    if ( device_name )
        *device_name = root["Device"] ? root["Device"].as<std::string>() : std::string();
    return g;
}

void readNeuSightGemm( const std::string& path, int gpu, std::vector<GemmMeasurement>& rows )
{
    const CsvTable t = CsvTable::read( path );
    t.checkColumns( { "op", "latency_ms", "B", "M", "N", "K" }, { "device", "kernel", "kernels" } );
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        GemmMeasurement m;
        m.gpu = gpu;
        const std::optional<GemmOp> op = enumFromName<GemmOp>( t.text( r, "op" ) );
        if ( !op )
            t.fail( r, "op", "'" + joinChoices( enumNameList<GemmOp>(), "', '", "' or '" ) + "'" );
        m.linear = *op == GemmOp::linear;
        if ( t.hasColumn( "kernels" ) )
        {
            const std::string& k = t.text( r, "kernels" );
            m.kernels = static_cast<int>( std::count( k.begin(), k.end(), ';' ) );
        }
        m.B = t.getDouble( r, "B" );
        m.M = t.getDouble( r, "M" );
        m.K = t.getDouble( r, "N" ); // NeuSight's N is the reduction
        m.N = t.getDouble( r, "K" );
        m.latency_ms = t.getDouble( r, "latency_ms" );
        if ( !( m.latency_ms > 0.0 ) )
            t.fail( r, "latency_ms", "a number > 0" );
        rows.push_back( m );
    }
}

GemmDataset loadNeuSightGemmDataset( const std::string& dir )
{
    namespace fs = std::filesystem;
    const fs::path devices = fs::path( dir ) / "devices";
    const fs::path train = fs::path( dir ) / "train";
    if ( !fs::is_directory( devices ) || !fs::is_directory( train ) )
        throw InputError( dir, "expected the folders devices/ and train/ (inputs/measured/gemm)" );
    std::vector<std::string> stems;
    for ( const auto& e : fs::directory_iterator( devices ) )
    {
        if ( e.path().extension() != ".json" )
            continue;
        const std::string stem = e.path().stem().string();
        if ( fs::exists( train / ( "bmm_" + stem + ".csv" ) ) ||
             fs::exists( train / ( "linear_" + stem + ".csv" ) ) )
            stems.push_back( stem );
    }
    std::sort( stems.begin(), stems.end() );
    GemmDataset d;
    for ( const std::string& stem : stems )
    {
        const int gpu = static_cast<int>( d.gpus.size() );
        std::string name;
        GpuSpec spec = readNeuSightDevice( ( devices / ( stem + ".json" ) ).string(), &name );
        // The model is validated on what users predict with: the catalog entry that lists the
        // device name as an alias (datasheet values, board power and process node; NeuSight's
        // JSONs have no power, and Tesla_P4.json counts 40 SMs where GP104 has 20). A device the
        // catalog lacks keeps the JSON's values (no power cap).
        if ( const GpuEntry* e = defaultGpuCatalog().find( name ) )
            spec = e->spec;
        d.specs.push_back( spec );
        d.gpus.push_back( stem );
        d.device_names.push_back( name );
        for ( const char* op : { "bmm_", "linear_" } )
        {
            const fs::path f = train / ( op + stem + ".csv" );
            if ( fs::exists( f ) )
                readNeuSightGemm( f.string(), gpu, d.rows );
        }
    }
    if ( d.gpus.empty() )
        throw InputError( dir, "no GPU with both devices/<gpu>.json and train/*_<gpu>.csv" );
    return d;
}

namespace
{
//! Appends the rows of one of NeuSight's train/*.csv to `data`.
void readOperatorFile( const std::string& f, NeuSightOperatorData& data )
{
    const CsvTable t = CsvTable::read( f );
    t.checkColumns( { "OPName", "Latency", "Device", "B", "H" },
                    t.header() ); // NeuSight's other columns
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        NeuSightOperatorRow row;
        const std::optional<OperatorKind> kind =
            enumFromName<OperatorKind>( t.text( r, "OPName" ) );
        if ( !kind )
            t.fail( r, "OPName", "one of " + enumChoices<OperatorKind>( ", " ) );
        row.shape.kind = *kind;
        const GpuEntry* g = defaultGpuCatalog().find( t.text( r, "Device" ) );
        if ( !g )
            t.fail( r, "Device", "a GPU of the catalog (inputs/gpus)" );
        const auto it = std::find( data.gpus.begin(), data.gpus.end(), g->name );
        row.gpu = static_cast<int>( it - data.gpus.begin() );
        if ( it == data.gpus.end() )
        {
            data.gpus.push_back( g->name );
            data.specs.push_back( g->spec );
        }
        row.shape.B = t.getDouble( r, "B" );
        row.shape.H = t.getDouble( r, "H" );
        row.latency_ms = t.getDouble( r, "Latency" );
        if ( !( row.latency_ms > 0.0 ) )
            t.fail( r, "Latency", "a number > 0" );
        data.rows.push_back( row );
    }
}

} // namespace

NeuSightOperatorData loadNeuSightOperatorData( const std::string& data_dir )
{
    namespace fs = std::filesystem;
    const fs::path train = fs::path( data_dir ) / "train";
    if ( !fs::is_directory( train ) )
        throw InputError( data_dir, "expected the folder train/ (inputs/measured/ops)" );
    std::vector<std::string> files;
    for ( const auto& e : fs::directory_iterator( train ) )
        if ( e.path().extension() == ".csv" )
            files.push_back( e.path().string() );
    std::sort( files.begin(), files.end() );
    NeuSightOperatorData data;
    for ( const std::string& f : files )
        readOperatorFile( f, data );
    return data;
}

} // namespace shardsweep
