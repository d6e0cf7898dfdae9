// shardsweep predict embedding: the embedding-lookup model (model/embedding.hpp) for the tables of
// a CSV file, one whole table per row on one GPU.
#include <cmath>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/model/embedding.hpp>

namespace shardsweep
{

namespace
{
DataType parseTableDtype( const CsvTable& t, std::size_t row )
{
    if ( t.isEmpty( row, "dtype" ) )
        return DataType::fp32;
    const std::string& s = t.text( row, "dtype" );
    if ( s == "fp32" )
        return DataType::fp32;
    if ( s == "fp16" )
        return DataType::fp16;
    if ( s == "bf16" )
        return DataType::bf16;
    if ( s == "int8" )
        return DataType::int8;
    t.fail( row, "dtype", "one of fp32, fp16, bf16, int8" );
}

Optimizer parseOptimizer( const CsvTable& t, std::size_t row )
{
    if ( t.isEmpty( row, "optimizer" ) )
        return Optimizer::sgd;
    const std::string& s = t.text( row, "optimizer" );
    if ( s == "sgd" )
        return Optimizer::sgd;
    if ( s == "rowwise_adagrad" )
        return Optimizer::rowwise_adagrad;
    if ( s == "adam" )
        return Optimizer::adam;
    t.fail( row, "optimizer", "one of sgd, rowwise_adagrad, adam" );
}

//! Kernel column; default hbm, or uvm_caching when cache_rows is given.
ComputeKernel parseKernel( const CsvTable& t, std::size_t row, bool has_cache )
{
    if ( t.isEmpty( row, "kernel" ) )
        return has_cache ? ComputeKernel::uvm_caching : ComputeKernel::hbm;
    const std::string& s = t.text( row, "kernel" );
    if ( s == "hbm" )
        return ComputeKernel::hbm;
    if ( s == "uvm" )
        return ComputeKernel::uvm;
    if ( s == "uvm_caching" )
    {
        if ( !has_cache )
            t.fail( row, "kernel", "hbm or uvm (uvm_caching needs cache_rows)" );
        return ComputeKernel::uvm_caching;
    }
    t.fail( row, "kernel", "one of hbm, uvm, uvm_caching" );
}

//! A whole number >= `least` (written as an integer or e.g. 1e6).
double wholeNumber( const CsvTable& t, std::size_t row, const char* column, double least )
{
    const double x = t.getDouble( row, column );
    if ( !( x >= least ) || x != std::floor( x ) || x > 9.0e18 )
        t.fail( row, column, least > 0.0 ? "an integer >= 1" : "an integer >= 0" );
    return x;
}

const char* dtypeName( DataType d )
{
    return d == DataType::fp16
               ? "fp16"
               : ( d == DataType::bf16 ? "bf16" : ( d == DataType::int8 ? "int8" : "fp32" ) );
}
const char* optimizerName( Optimizer o )
{
    return o == Optimizer::adam ? "adam"
                                : ( o == Optimizer::rowwise_adagrad ? "rowwise_adagrad" : "sgd" );
}
const char* kernelName( ComputeKernel k )
{
    return k == ComputeKernel::uvm ? "uvm"
                                   : ( k == ComputeKernel::uvm_caching ? "uvm_caching" : "hbm" );
}
} // namespace

int predictEmbedding( const CommandContext& ctx, const Arguments& args )
{
    PredictCli cli(
        "predict embedding",
        "Usage: shardsweep predict embedding --gpu NAME --input tables.csv [--output pred.csv]\n\n"
        "Predicts one training step's embedding lookup (forward) and its backward with the\n"
        "optimizer update for every row of a CSV file, each row one whole table on one GPU, with\n"
        "the model of model/embedding.hpp (docs/model/embedding.md). Columns:\n"
        "  rows, dim, pooling_factor (mean lookups per sample), batch (samples),\n"
        "  zipf_alpha (p_i ~ i^-alpha over the rows; 0 = uniform),\n"
        "  optional dtype (fp32 default, fp16, bf16, int8),\n"
        "  optional cache_rows (rows of a fully associative LRU cache in HBM),\n"
        "  optional kernel (hbm; uvm: rows in host memory; uvm_caching: host rows with the\n"
        "    cache_rows cache; default uvm_caching when cache_rows is given, else hbm),\n"
        "  optional optimizer (sgd default, rowwise_adagrad, adam).\n"
        "The output repeats the input columns and adds expected_unique_rows (distinct rows one\n"
        "batch touches), cache_hit_rate (steady-state LRU hit rate of cache_rows rows, Che's\n"
        "approximation; empty without cache_rows), fwd_ms and bwd_ms (backward incl. optimizer).\n",
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
        const double rows = wholeNumber( t, r, "rows", 1.0 );
        const double dim = wholeNumber( t, r, "dim", 1.0 );
        if ( dim > 1e6 )
            t.fail( r, "dim", "an integer between 1 and 1000000" );
        spec.rows = static_cast<std::int64_t>( rows );
        spec.dim = static_cast<int>( dim );
        spec.pooling_factor = t.getDouble( r, "pooling_factor" );
        if ( !( spec.pooling_factor >= 0.0 ) || !std::isfinite( spec.pooling_factor ) )
            t.fail( r, "pooling_factor", "a number >= 0" );
        const double batch = wholeNumber( t, r, "batch", 1.0 );
        spec.zipf_alpha = t.getDouble( r, "zipf_alpha" );
        if ( !( spec.zipf_alpha >= 0.0 ) || !( spec.zipf_alpha <= 10.0 ) )
            t.fail( r, "zipf_alpha", "a number in [0, 10] (0: uniform)" );
        spec.distribution =
            spec.zipf_alpha > 0.0 ? AccessDistribution::zipf : AccessDistribution::uniform;
        spec.dtype = parseTableDtype( t, r );
        spec.optimizer = parseOptimizer( t, r );
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
                         std::string( dtypeName( spec.dtype ) ), cache_cell,
                         std::string( kernelName( kernel ) ),
                         std::string( optimizerName( spec.optimizer ) ),
                         expectedUniqueRows( spec, lookups ), hit_cell, c.fwd_ms, c.bwd_ms } );
    }
    cli.write( ctx, result );
    return 0;
}

} // namespace shardsweep
