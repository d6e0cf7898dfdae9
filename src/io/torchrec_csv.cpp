#include <fmt/format.h>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/torchrec_csv.hpp>

namespace shardsweep
{

namespace
{
//! The integer in column `col` of row `r`, which must be > 0.
std::int64_t positiveInt( const CsvTable& table, std::size_t r, const char* col )
{
    const std::int64_t v = table.getInt( r, col );
    if ( v <= 0 )
        table.fail( r, col, "an integer > 0" );
    return v;
}

//! The optional number in column `col` of row `r`: none when empty, else it must be > 0
//! (`expected` says what it is in the error).
std::optional<double> optionalPositive( const CsvTable& table, std::size_t r, const char* col,
                                        const char* expected )
{
    auto v = table.getOptionalDouble( r, col );
    if ( v && !( *v > 0.0 ) )
        table.fail( r, col, expected );
    return v;
}
} // namespace

const std::vector<std::string>& torchrecCsvRequiredColumns()
{
    static const std::vector<std::string> c = {
        "rows",        "dim",        "shard_rows",       "shard_dim",     "pooling_factor",
        "batch_size",  "world_size", "local_world_size", "sharding_type", "compute_kernel",
        "dtype_bytes", "is_pooled",  "is_weighted",      "is_inference",  "cache_load_factor" };
    return c;
}

const std::vector<std::string>& torchrecCsvOptionalColumns()
{
    static const std::vector<std::string> c = {
        "hbm_GiBps",          "ddr_GiBps",         "hbm_to_ddr_GiBps",
        "intra_host_GiBps",   "inter_host_GiBps",  "a2a_fwd_elem_bytes",
        "a2a_bwd_elem_bytes", "rs_fwd_elem_bytes", "rs_bwd_elem_bytes" };
    return c;
}

namespace
{
//! The shard columns of row `r` (sharding, kernel, shape, lookups, dtype, flags, cache load
//! factor), each checked against the others.
void readShard( const CsvTable& table, std::size_t r, TorchrecShard& s )
{
    const auto type = enumFromName<ShardingType>( table.text( r, "sharding_type" ) );
    if ( !type )
        table.fail( r, "sharding_type", "one of " + enumChoices<ShardingType>( ", " ) );
    const auto kernel = enumFromName<TorchrecKernel>( table.text( r, "compute_kernel" ) );
    if ( !kernel )
        table.fail( r, "compute_kernel", "one of " + enumChoices<TorchrecKernel>( ", ", " or " ) );
    s.sharding = *type;
    s.kernel = *kernel;
    s.rows = positiveInt( table, r, "rows" );
    s.dim = static_cast<int>( positiveInt( table, r, "dim" ) );
    const bool whole_rows =
        s.sharding == ShardingType::table_wise || s.sharding == ShardingType::data_parallel ||
        s.sharding == ShardingType::column_wise || s.sharding == ShardingType::table_column_wise;
    s.shard_rows = table.getInt( r, "shard_rows" );
    if ( s.shard_rows < 0 || s.shard_rows > s.rows )
        table.fail( r, "shard_rows", fmt::format( "0 <= shard_rows <= rows ({})", s.rows ) );
    if ( whole_rows && s.shard_rows != s.rows )
        table.fail( r, "shard_rows",
                    fmt::format( "rows ({}) for a {} shard", s.rows, nameOf( s.sharding ) ) );
    const std::int64_t shard_dim = table.getInt( r, "shard_dim" );
    if ( shard_dim <= 0 || shard_dim > s.dim )
        table.fail( r, "shard_dim", fmt::format( "1 <= shard_dim <= dim ({})", s.dim ) );
    s.shard_dim = static_cast<int>( shard_dim );
    if ( ( s.sharding == ShardingType::table_wise || s.sharding == ShardingType::row_wise ||
           s.sharding == ShardingType::table_row_wise ||
           s.sharding == ShardingType::data_parallel ) &&
         s.shard_dim != s.dim )
        table.fail( r, "shard_dim",
                    fmt::format( "dim ({}) for a {} shard", s.dim, nameOf( s.sharding ) ) );
    const double pf = table.getDouble( r, "pooling_factor" );
    if ( !( pf >= 0.0 ) )
        table.fail( r, "pooling_factor", "a number >= 0" );
    const double batch = static_cast<double>( positiveInt( table, r, "batch_size" ) );
    s.lookups = pf * batch;
    s.pooled_outputs = batch;
    const double dtype = table.getDouble( r, "dtype_bytes" );
    if ( !( dtype > 0.0 ) )
        table.fail( r, "dtype_bytes", "a number > 0 (4 fp32, 2 fp16, 1 int8)" );
    s.dtype_bytes = dtype;
    s.pooled = table.getBool( r, "is_pooled" );
    s.weighted = table.getBool( r, "is_weighted" );
    s.inference = table.getBool( r, "is_inference" );
    if ( auto clf = table.getOptionalDouble( r, "cache_load_factor" ) )
    {
        if ( !( *clf >= 0.0 && *clf <= 1.0 ) )
            table.fail( r, "cache_load_factor", "a number in [0, 1] or empty" );
        s.cache_load_factor = *clf;
    }
}

//! The topology of row `r`: world sizes, and the bandwidths that override the defaults.
TorchrecTopology readTopology( const CsvTable& table, std::size_t r )
{
    const std::int64_t w = positiveInt( table, r, "world_size" );
    const std::int64_t l = positiveInt( table, r, "local_world_size" );
    if ( l > w || w % l != 0 )
        table.fail( r, "local_world_size", fmt::format( "a divisor of world_size ({})", w ) );
    TorchrecTopology t = torchrecDefaultTopology( static_cast<int>( w ), static_cast<int>( l ) );
    auto bandwidth = [&]( const char* col, double& field )
    {
        if ( auto v = optionalPositive( table, r, col,
                                        "a bandwidth in GiB/s > 0, or empty for the default" ) )
            field = torchrecGiBpsToBytesPerMs( *v );
    };
    bandwidth( "hbm_GiBps", t.hbm_mem_bw );
    bandwidth( "ddr_GiBps", t.ddr_mem_bw );
    bandwidth( "hbm_to_ddr_GiBps", t.hbm_to_ddr_mem_bw );
    bandwidth( "intra_host_GiBps", t.intra_host_bw );
    bandwidth( "inter_host_GiBps", t.inter_host_bw );
    return t;
}

//! The optional all-to-all and reduce-scatter element sizes of row `r`.
void readElementSizes( const CsvTable& table, std::size_t r, TorchrecShard& s )
{
    auto elem = [&]( const char* col, double& field )
    {
        if ( auto v = optionalPositive( table, r, col, "an element size in bytes > 0, or empty" ) )
            field = *v;
    };
    elem( "a2a_fwd_elem_bytes", s.a2a_fwd_bytes );
    elem( "a2a_bwd_elem_bytes", s.a2a_bwd_bytes );
    elem( "rs_fwd_elem_bytes", s.rs_fwd_bytes );
    elem( "rs_bwd_elem_bytes", s.rs_bwd_bytes );
}
} // namespace

std::vector<TorchrecCsvRow> readTorchrecShards( const CsvTable& table )
{
    table.checkColumns( torchrecCsvRequiredColumns(), torchrecCsvOptionalColumns() );
    std::vector<TorchrecCsvRow> out;
    out.reserve( table.numRows() );
    for ( std::size_t r = 0; r < table.numRows(); ++r )
    {
        TorchrecCsvRow row;
        readShard( table, r, row.shard );
        row.topology = readTopology( table, r );
        readElementSizes( table, r, row.shard );
        if ( !torchrecKernelSupported( row.topology, row.shard.kernel ) )
            table.fail( r, "compute_kernel", "a kernel supported on cuda" );
        out.push_back( row );
    }
    return out;
}

} // namespace shardsweep
