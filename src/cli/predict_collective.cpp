// shardsweep predict collective: the ASTRA-sim congestion-unaware collective model
// (model/collectives.hpp) for an unchanged ASTRA-sim network .yml and system .json.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/model/collectives.hpp>

namespace shardsweep
{

namespace
{
namespace po = boost::program_options;

//! Appends the collectives named by `text` ("all" = the four, in enum order); hyphens are
//! accepted for underscores (all-reduce) because ASTRA-sim's system keys spell them that way.
void addCollectives( const std::string& text, std::vector<Collective>& out )
{
    std::string name = text;
    for ( char& ch : name )
        ch =
            ch == '-' ? '_' : static_cast<char>( std::tolower( static_cast<unsigned char>( ch ) ) );
    if ( name == "all" )
    {
        for ( int c = 0; c < kNumCollectives; ++c )
            out.push_back( static_cast<Collective>( c ) );
        return;
    }
    if ( const auto c = enumFromName<Collective>( name ) )
    {
        out.push_back( *c );
        return;
    }
    throw UsageError( "predict collective: --collective: expected " +
                      enumChoices<Collective>( ", " ) + " or all, found '" + text + "'" );
}

//! "1048576", "1MiB", "4KiB", "2GB", "1.5e3B": a whole, positive number of bytes. Binary units
//! (KiB, MiB, GiB, TiB) are powers of 1024, decimal ones (kB/KB, MB, GB, TB) powers of 1000;
//! unit names are case-insensitive.
double parseBytes( const std::string& text )
{
    auto bad = [&]( const std::string& why ) -> double
    {
        throw UsageError( "predict collective: --bytes: expected a whole number of bytes >= 1 "
                          "with an optional unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB (" +
                          why + "), found '" + text + "'" );
    };
    if ( text.empty() ||
         !( std::isdigit( static_cast<unsigned char>( text[0] ) ) || text[0] == '.' ) ||
         text.find_first_of( "xX" ) != std::string::npos )
        return bad( "not a number" );
    char* end = nullptr;
    const double number = std::strtod( text.c_str(), &end );
    std::string unit( end );
    for ( char& ch : unit )
        ch = static_cast<char>( std::tolower( static_cast<unsigned char>( ch ) ) );
    double scale = 0.0;
    if ( unit.empty() || unit == "b" )
        scale = 1.0;
    else
    {
        const char* prefixes = "kmgt";
        const char* p = unit.size() >= 2 ? std::strchr( prefixes, unit[0] ) : nullptr;
        if ( p && *p )
        {
            const int power = static_cast<int>( p - prefixes ) + 1;
            if ( unit.substr( 1 ) == "b" )
                scale = std::pow( 1000.0, power );
            else if ( unit.substr( 1 ) == "ib" )
                scale = std::pow( 1024.0, power );
        }
    }
    if ( scale == 0.0 )
        return bad( "unknown unit '" + std::string( end ) + "'" );
    const double bytes = number * scale;
    if ( !std::isfinite( bytes ) || bytes < 1.0 || bytes > 9.0e15 )
        return bad( "out of range" );
    if ( bytes != std::floor( bytes ) )
        return bad( "not a whole number of bytes" );
    return bytes;
}

//! "FIRST" or "FIRST:COUNT" (COUNT defaults to the remaining dimensions).
void parseDims( const std::string& text, int num_dims, int& first, int& count )
{
    auto bad = [&]()
    {
        throw UsageError( "predict collective: --dims: expected FIRST or FIRST:COUNT with 0 <= "
                          "FIRST < FIRST+COUNT <= " +
                          std::to_string( num_dims ) + " (the network's dimensions), found '" +
                          text + "'" );
    };
    const std::size_t colon = text.find( ':' );
    auto toInt = [&]( const std::string& s )
    {
        if ( s.empty() || s.size() > 3 || s.find_first_not_of( "0123456789" ) != std::string::npos )
            bad();
        return std::stoi( s );
    };
    first = toInt( text.substr( 0, colon ) );
    count = colon == std::string::npos ? num_dims - first : toInt( text.substr( colon + 1 ) );
    if ( first < 0 || count < 1 || first + count > num_dims )
        bad();
}
//! Per-GPU all-to-all volumes: columns send_bytes, recv_bytes (bytes to / from the other GPUs),
//! one row per GPU in the network's NPU order; an optional `gpu` column must count 0, 1, ...
void readVolumes( const std::string& path, int num_gpus, std::vector<double>& send,
                  std::vector<double>& recv )
{
    const CsvTable t = CsvTable::read( path );
    t.checkColumns( { "send_bytes", "recv_bytes" }, { "gpu" } );
    if ( t.numRows() != static_cast<std::size_t>( num_gpus ) )
        throw InputError( t.name(), t.numRows() ? t.lineOf( t.numRows() - 1 ) : 1, 1, "rows",
                          "one row per NPU of the network (" + std::to_string( num_gpus ) + ")",
                          std::to_string( t.numRows() ) + " rows" );
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        if ( t.hasColumn( "gpu" ) && t.getInt( r, "gpu" ) != static_cast<std::int64_t>( r ) )
            t.fail( r, "gpu", "the GPUs in order 0, 1, 2, ... (" + std::to_string( r ) + " here)" );
        for ( const char* column : { "send_bytes", "recv_bytes" } )
        {
            const double v = t.getDouble( r, column );
            if ( !std::isfinite( v ) || v < 0.0 )
                t.fail( r, column, "a number of bytes >= 0" );
            ( column[0] == 's' ? send : recv ).push_back( v );
        }
    }
}
//! True when `path` reads as a shardsweep platform file (a line `kind: platform`): the usual
//! mistake of passing one as an ASTRA-sim network file.
bool isPlatformFile( const std::string& path )
{
    std::ifstream in( path );
    for ( std::string line; std::getline( in, line ); )
        if ( line.rfind( "kind:", 0 ) == 0 && line.find( "platform" ) != std::string::npos )
            return true;
    return false;
}

//! The --help text above the option list.
const char* const kPredictCollectiveUsage =
    "Usage: shardsweep predict collective (--network NET.yml [--system SYS.json] |\n"
    "           --platform P.yaml) --collective KIND [--collective KIND ...]\n"
    "           --bytes S [--bytes S ...] [--dims FIRST[:COUNT]] [--format table|csv|json]\n"
    "       shardsweep predict collective (--network NET.yml [--system SYS.json] |\n"
    "           --platform P.yaml) --volumes GPUS.csv [--format table|csv|json]\n\n"
    "Time of one collective with ASTRA-sim 2.0's congestion-unaware analytical semantics\n"
    "(model/collectives.hpp, docs/model/collectives.md): per-dimension ring / direct /\n"
    "halving-doubling / double-binary-tree phases, localBWAware or baseline composition over\n"
    "the dimensions, and the chunk pipeline. NET.yml and SYS.json are ASTRA-sim's own network\n"
    "and system files, read unchanged (docs/INPUTS.md).\n\n"
    "Without --system, ASTRA-sim-like defaults are used (those of the system reader):\n"
    "  every *-implementation ring on every dimension, collective-optimization localBWAware,\n"
    "  preferred-dataset-splits 1, active-chunks-per-dimension 1, endpoint-delay 10 ns,\n"
    "  local-mem-bw 50 GB/s (upstream's regression config). A --system file that leaves a key\n"
    "  out gets the same default for it. shardsweep's own keys call-latency-ns and call-bw\n"
    "  (a fixed time and a pass over the bytes per call, which `calibrate network` fits;\n"
    "  ASTRA-sim has neither) are added when the file or platform sets them.\n\n"
    "Output: one row per (collective, bytes), collective-major; csv/json columns\n"
    "collective,bytes,time_ns; the table adds time_us. --volumes adds a row all_to_allv\n"
    "whose bytes are the total sent by all GPUs.\n";

//! The options of 'predict collective' as given (texts unparsed).
struct CollectiveRequest
{
    std::string network_path, system_path, platform_path, dims_text, volumes_path;
    std::vector<std::string> collective_texts, bytes_texts;
};

//! Adds the options of 'predict collective' to `cli`, bound to `q`.
void addCollectiveOptions( PredictCli& cli, CollectiveRequest& q )
{
    cli.options().add_options()(
        "network", po::value( &q.network_path ),
        "ASTRA-sim analytical network .yml (topology, npus_count, bandwidth GB/s with GB = 2^30 "
        "B, latency ns per hop; one entry per dimension, dimension 0 innermost)" )(
        "platform", po::value( &q.platform_path ),
        "a shardsweep platform file (inputs/platforms/): its network: and system: sections, "
        "instead of --network and --system" )(
        "system", po::value( &q.system_path ),
        "ASTRA-sim system .json (endpoint-delay, active-chunks-per-dimension, "
        "preferred-dataset-splits, *-implementation, collective-optimization, local-mem-bw GB/s "
        "with GB = 1e9 B; the other ASTRA-sim keys are accepted and do not change the time; "
        "shardsweep's call-latency-ns and call-bw GB/s add to every call)" )(
        "collective", po::value( &q.collective_texts ),
        "all_reduce | all_gather | reduce_scatter | all_to_all | all (the four); repeatable" )(
        "bytes", po::value( &q.bytes_texts ),
        "ASTRA-sim comm_size in bytes, repeatable: the per-NPU buffer for all_reduce, the full "
        "input for reduce_scatter (output S/P), the input shard for all_gather (output P*S), the "
        "send buffer for all_to_all. Units: B, KB/MB/GB/TB (powers of 1000), KiB/MiB/GiB/TiB "
        "(powers of 1024), e.g. 1MiB, 4KiB, 2GB" )(
        "dims", po::value( &q.dims_text ),
        "a group spanning only dimensions FIRST..FIRST+COUNT-1 (e.g. 0:1 = the GPUs of one node "
        "when dimension 0 is intra-node); default: all dimensions" )(
        "volumes", po::value( &q.volumes_path ),
        "per-GPU all-to-all (allToAllvTimeNs): a csv with columns send_bytes,recv_bytes (bytes "
        "each GPU sends to / receives from the other GPUs, own share excluded; optional gpu "
        "column 0,1,...), one row per NPU of the network in its order (dimension 0 fastest). "
        "Equal volumes v give the all_to_all of --bytes v*P/(P-1)" );
}

//! Throws UsageError for a combination of options that does not make one request.
void checkCollectiveRequest( const CollectiveRequest& q )
{
    if ( !q.platform_path.empty() && ( !q.network_path.empty() || !q.system_path.empty() ) )
        throw UsageError( "predict collective: --platform takes the network and system from the "
                          "platform file: give it or --network/--system, not both" );
    if ( ( q.network_path.empty() && q.platform_path.empty() ) ||
         ( q.volumes_path.empty() && ( q.collective_texts.empty() || q.bytes_texts.empty() ) ) ||
         q.collective_texts.empty() != q.bytes_texts.empty() )
        throw UsageError( "predict collective: --network (or --platform) and --collective with "
                          "--bytes, or --volumes, are required (see --help)" );
    if ( !q.volumes_path.empty() && !q.dims_text.empty() )
        throw UsageError( "predict collective: --dims does not apply to --volumes (the per-GPU "
                          "all-to-all spans the whole network)" );
}

//! The network and system of --platform, or of --network and --system (default system).
void readNetworkAndSystem( const CollectiveRequest& q, Network& net, SystemConfig& sys )
{
    if ( !q.network_path.empty() && isPlatformFile( q.network_path ) )
        throw UsageError(
            "predict collective: --network " + q.network_path +
            " is a shardsweep platform file (kind: platform): pass it as --platform " +
            q.network_path + ", or an ASTRA-sim network .yml as --network" );
    if ( !q.platform_path.empty() )
    {
        const Platform platform = readPlatformFile( q.platform_path ).platform;
        net = platform.network;
        sys = platform.system;
    }
    else
    {
        net = readAstraNetworkFile( q.network_path );
        if ( !q.system_path.empty() )
            sys = readAstraSystemFile( q.system_path, net.num_dims );
    }
}

//! `v` as an integer cell when it is a whole number (e.g. whole nanoseconds: every per-step delay
//! is truncated), so that it prints as one; else as a double.
ResultTable::Cell wholeNumberCell( double v )
{
    if ( v == std::floor( v ) && v < 9.0e18 )
        return static_cast<long long>( v );
    return v;
}

//! Adds the row (collective, bytes, time_ns); the table format adds time_us.
void addTimeRow( ResultTable& result, OutputFormat format, const std::string& collective,
                 const ResultTable::Cell& bytes, double ns )
{
    std::vector<ResultTable::Cell> row = { collective, bytes, wholeNumberCell( ns ) };
    if ( format == OutputFormat::table )
        row.push_back( ns / 1000.0 );
    result.addRow( std::move( row ) );
}

//! Adds the row all_to_allv of the per-GPU volumes in `volumes_path`: bytes sent by all GPUs.
void addAllToAllvRow( ResultTable& result, OutputFormat format, const Network& net,
                      const SystemConfig& sys, const std::string& volumes_path )
{
    double npus = 1.0;
    for ( int d = 0; d < net.num_dims; ++d )
        npus *= net.dims[d].npus_count;
    if ( npus > 1.0e6 )
        throw UsageError( "predict collective: --volumes: the network has more than 10^6 NPUs" );
    std::vector<double> send, recv;
    readVolumes( volumes_path, static_cast<int>( npus ), send, recv );
    double total = 0.0;
    for ( double v : send )
        total += v;
    const double ns =
        allToAllvTimeNs( net, sys, send.data(), recv.data(), static_cast<int>( npus ) );
    addTimeRow( result, format, "all_to_allv", wholeNumberCell( total ), ns );
}
} // namespace

int predictCollective( const CommandContext& ctx, const Arguments& args )
{
    CollectiveRequest q;
    PredictCli cli( "predict collective", kPredictCollectiveUsage, 0u );
    addCollectiveOptions( cli, q );
    if ( !cli.parse( ctx, args ) )
        return 0;
    checkCollectiveRequest( q );
    const OutputFormat fmt = cli.format();
    std::vector<Collective> collectives;
    for ( const std::string& text : q.collective_texts )
        addCollectives( text, collectives );
    std::vector<double> sizes;
    for ( const std::string& text : q.bytes_texts )
        sizes.push_back( parseBytes( text ) );

    Network net;
    SystemConfig sys;
    readNetworkAndSystem( q, net, sys );
    int first = 0, count = net.num_dims;
    if ( !q.dims_text.empty() )
        parseDims( q.dims_text, net.num_dims, first, count );

    ResultTable result(
        fmt == OutputFormat::table
            ? std::vector<std::string>{ "collective", "bytes", "time_ns", "time_us" }
            : std::vector<std::string>{ "collective", "bytes", "time_ns" } );
    for ( Collective c : collectives )
        for ( double bytes : sizes )
        {
            const double ns = collectiveTimeNsOnDims( net, sys, c, bytes, first, count );
            addTimeRow( result, fmt, std::string( nameOf( c ) ), static_cast<long long>( bytes ),
                        ns );
        }
    if ( !q.volumes_path.empty() )
        addAllToAllvRow( result, fmt, net, sys, q.volumes_path );
    cli.write( ctx, result );
    return 0;
}

} // namespace shardsweep
