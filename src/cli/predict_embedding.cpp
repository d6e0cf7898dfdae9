// shardsweep predict embedding: the embedding-lookup model (model/embedding.hpp) for the tables of
// a CSV file, one whole table per row on one GPU.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/table_fields.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/model/embedding.hpp>
#include <utility>

namespace shardsweep
{

namespace
{
//! Kernel column: TorchRec's names (domain/names.hpp), or this command's names before issue 22
//! (hbm, uvm, uvm_caching) with a deprecation note; default fused, or fused_uvm_caching when
//! cache_rows is given.
ComputeKernel parseKernel( const CsvTable& t, std::size_t row, bool has_cache )
{
    if ( t.isEmpty( row, "kernel" ) )
        return has_cache ? ComputeKernel::uvm_caching : ComputeKernel::hbm;
    static const NamePairs<ComputeKernel> legacy = {
        { "hbm", ComputeKernel::hbm },
        { "uvm", ComputeKernel::uvm },
        { "uvm_caching", ComputeKernel::uvm_caching } };
    const std::string& s = t.text( row, "kernel" );
    const auto old =
        std::find_if( legacy.begin(), legacy.end(), [&]( const auto& n ) { return n.first == s; } );
    if ( old != legacy.end() )
    {
        static bool noted = false;
        if ( !std::exchange( noted, true ) )
            fmt::print( stderr,
                        "shardsweep: note: {}: kernel '{}' is deprecated; write '{}' (the name "
                        "plans, sweeps and results files use)\n",
                        t.name(), s, nameOf( old->second ) );
    }
    const ComputeKernel kernel =
        old != legacy.end()
            ? old->second
            : t.getEnumOr( row, "kernel", enumPairs<ComputeKernel>(), ComputeKernel::hbm );
    if ( kernel == ComputeKernel::dense )
        t.fail( row, "kernel", "one of fused, fused_uvm, fused_uvm_caching" );
    if ( kernel == ComputeKernel::uvm_caching && !has_cache )
        t.fail( row, "kernel", "fused or fused_uvm (fused_uvm_caching needs cache_rows)" );
    return kernel;
}

//! The input columns that are table fields (domain/dlrm_fields.hpp): required, then optional.
constexpr const char* kTableColumns[] = { "rows", "dim", "pooling_factor", "zipf_alpha" };
constexpr const char* kOptionalTableColumns[] = { "dtype", "optimizer" };

//! The --help lines of the table-field columns, from the field table.
std::string tableColumnsHelp()
{
    std::string text;
    auto line = [&]( const char* key, bool required )
    {
        const TableField& f = *findTableField( key );
        const std::string fallback =
            f.kind == TableField::choice ? ", default " + f.names()[std::size_t( f.fallback )] : "";
        text += fmt::format( "  {}{}: {} ({}{})\n", required ? "" : "optional ", key, f.help,
                             fieldValuesText( f ), fallback );
    };
    for ( const char* key : kTableColumns )
        line( key, true );
    for ( const char* key : kOptionalTableColumns )
        line( key, false );
    return text;
}

//! A whole number >= `least` (written as an integer or e.g. 1e6).
double wholeNumber( const CsvTable& t, std::size_t row, const char* column, double least )
{
    const double x = t.getDouble( row, column );
    if ( !( x >= least ) || x != std::floor( x ) || x > 9.0e18 )
        t.fail( row, column, least > 0.0 ? "an integer >= 1" : "an integer >= 0" );
    return x;
}

} // namespace

int predictEmbedding( const CommandContext& ctx, const Arguments& args )
{
    PredictCli cli(
        "predict embedding",
        "Usage: shardsweep predict embedding --gpu NAME --input tables.csv [--output pred.csv]\n\n"
        "Predicts one training step's embedding lookup (forward) and its backward with the\n"
        "optimizer update for every row of a CSV file, each row one whole table on one GPU, with\n"
        "the model of model/embedding.hpp (docs/model/embedding.md). Columns:\n" +
            tableColumnsHelp() +
            "  batch: samples in the step\n"
            "  optional cache_rows (rows of a fully associative LRU cache in HBM),\n"
            "  optional kernel (fused: rows in HBM; fused_uvm: rows in host memory;\n"
            "    fused_uvm_caching: host rows with the cache_rows cache; default "
            "fused_uvm_caching\n"
            "    when cache_rows is given, else fused; the older names hbm, uvm, uvm_caching are\n"
            "    read with a deprecation note).\n"
            "A zipf_alpha of 0 means uniform accesses.\n"
            "The output repeats the input columns and adds expected_unique_rows (distinct rows "
            "one\n"
            "batch touches), cache_hit_rate (steady-state LRU hit rate of cache_rows rows, Che's\n"
            "approximation; empty without cache_rows), fwd_ms and bwd_ms (backward incl. "
            "optimizer).\n",
        PredictCli::kGpu | PredictCli::kInput | PredictCli::kOutput );
    double host_GBps = 0.0;
    cli.options().add_options()(
        "host-GBps", boost::program_options::value( &host_GBps ),
        "host-to-GPU bandwidth of the UVM path in GB/s (default: the GPU's PCIe x16 rate)" );
    if ( !cli.parse( ctx, args ) )
        return 0;
    if ( cli.given( "host-GBps" ) && !( host_GBps > 0.0 ) )
        throw UsageError( "predict embedding: --host-GBps must be > 0" );
    const GpuSpec& gpu = cli.gpu();
    if ( !cli.given( "host-GBps" ) )
        host_GBps = gpu.pcie_bandwidth_GBps > 0.0 ? gpu.pcie_bandwidth_GBps
                                                  : pcieX16BandwidthGBps( gpu.pcie_generation );

    const CsvTable t = cli.readInput( { "rows", "dim", "pooling_factor", "batch", "zipf_alpha" },
                                      { "dtype", "cache_rows", "kernel", "optimizer" } );
    ResultTable result( { "rows", "dim", "pooling_factor", "batch", "zipf_alpha", "dtype",
                          "cache_rows", "kernel", "optimizer", "expected_unique_rows",
                          "cache_hit_rate", "fwd_ms", "bwd_ms" } );
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        TableSpec spec;
        const auto readCell = [&]( const char* key )
        {
            const TableField& f = *findTableField( key );
            f.set( spec, tableFieldCell( t, r, f ) );
        };
        for ( const char* key : kTableColumns ) // required: an empty cell fails
            readCell( key );
        for ( const char* key : kOptionalTableColumns )
            if ( !t.isEmpty( r, key ) )
                readCell( key );
        // This command's zipf_alpha 0 means uniform (a workload's table gives no exponent).
        spec.distribution =
            spec.zipf_alpha > 0.0 ? AccessDistribution::zipf : AccessDistribution::uniform;
        const double rows = double( spec.rows );
        const double dim = spec.dim;
        const double batch = wholeNumber( t, r, "batch", 1.0 );
        const bool has_cache = !t.isEmpty( r, "cache_rows" );
        const double cache_rows = has_cache ? wholeNumber( t, r, "cache_rows", 0.0 ) : 0.0;
        const ComputeKernel kernel = parseKernel( t, r, has_cache );

        const double lookups = batch * spec.pooling_factor;
        const double cache_fraction = has_cache ? math::fmin( 1.0, cache_rows / rows ) : 0.0;
        const EmbeddingCost c = embeddingShardCost( gpu, host_GBps, spec, 1.0, spec.dim, batch,
                                                    kernel, cache_fraction );
        ResultTable::Cell cache_cell = std::string();
        ResultTable::Cell hit_cell = std::string();
        if ( has_cache )
        {
            cache_cell = static_cast<long long>( cache_rows );
            hit_cell = lruHitRate( spec, lookups, cache_rows );
        }
        result.addRow( { static_cast<long long>( rows ), static_cast<long long>( dim ),
                         spec.pooling_factor, static_cast<long long>( batch ), spec.zipf_alpha,
                         std::string( nameOf( spec.dtype ) ), cache_cell,
                         std::string( nameOf( kernel ) ), std::string( nameOf( spec.optimizer ) ),
                         expectedUniqueRows( spec, lookups ), hit_cell, c.fwd_ms, c.bwd_ms } );
    }
    cli.write( ctx, result );
    return 0;
}

} // namespace shardsweep
