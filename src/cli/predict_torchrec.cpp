// shardsweep predict torchrec: TorchRec's planner perf estimate for each shard of a CSV.
#include <boost/program_options.hpp>
#include <fstream>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/io/torchrec_csv.hpp>
#include <shardsweep/model/torchrec/estimator.hpp>
#include <sstream>

namespace po = boost::program_options;

namespace shardsweep
{

namespace
{
std::string helpText( const po::options_description& options )
{
    std::ostringstream out;
    out << "Usage: shardsweep predict torchrec --input shards.csv [--output F] "
           "[--format table|csv|json]\n\n"
           "Prices each shard with TorchRec's planner estimator (EmbeddingPerfEstimator at\n"
           "torchrec a48cef79, docs/model/torchrec.md): forward/backward compute and comms and\n"
           "prefetch in ms, bandwidths in GiB/s converted as TorchRec does (x 1024^3 / 1000).\n\n"
           "Input columns (one row per shard):\n"
           "  rows, dim              table shape\n"
           "  shard_rows, shard_dim  this shard (<= the table; TW/DP: the whole table)\n"
           "  pooling_factor         lookups per sample; batch_size: samples per rank\n"
           "  world_size, local_world_size  ranks, ranks per host (a divisor of world_size)\n"
           "  sharding_type          table_wise, column_wise, table_column_wise, row_wise,\n"
           "                         table_row_wise, grid_shard or data_parallel\n"
           "  compute_kernel         dense, fused, fused_uvm, fused_uvm_caching, quant, "
           "quant_uvm,\n"
           "                         quant_uvm_caching or key_value\n"
           "  dtype_bytes            table element size; is_pooled, is_weighted, is_inference: "
           "0/1\n"
           "  cache_load_factor      UVM-cache share of rows (empty: TorchRec's 0.2)\n"
           "Optional columns (empty cell: TorchRec's default):\n"
           "  hbm_GiBps (897), ddr_GiBps (51), hbm_to_ddr_GiBps (32), intra_host_GiBps (600),\n"
           "  inter_host_GiBps (12.5), a2a_fwd_elem_bytes, a2a_bwd_elem_bytes,\n"
           "  rs_fwd_elem_bytes, rs_bwd_elem_bytes (quantised comms; default dtype_bytes)\n"
           "Output: the input columns followed by fwd_compute_ms, fwd_comms_ms, bwd_compute_ms,\n"
           "bwd_comms_ms, prefetch_ms, total_ms.\n\n"
        << options;
    return out.str();
}
} // namespace

int predictTorchrec( const CommandContext& ctx, const Arguments& args )
{
    po::options_description options( "Options" );
    std::string input, output, format = "table";
    options.add_options()( "help,h", "print this help" )(
        "input,i", po::value<std::string>( &input ),
        "shard CSV (required)" )( "output,o", po::value<std::string>( &output ),
                                  "write the result to this file instead of standard output" )(
        "format,f", po::value<std::string>( &format )->default_value( "table" ),
        "table, csv or json" );
    po::variables_map vm;
    try
    {
        po::store( po::command_line_parser( args ).options( options ).run(), vm );
        po::notify( vm );
    }
    catch ( const po::error& e )
    {
        throw UsageError( std::string( "predict torchrec: " ) + e.what() );
    }
    if ( vm.count( "help" ) )
    {
        ctx.print() << helpText( options );
        return 0;
    }
    if ( input.empty() )
        throw UsageError( "predict torchrec: --input shards.csv is required" );
    const OutputFormat fmt = parseOutputFormat( format );

    const CsvTable csv = CsvTable::read( input );
    const std::vector<TorchrecCsvRow> rows = readTorchrecShards( csv );

    std::vector<std::string> columns = csv.header();
    for ( const char* c : { "fwd_compute_ms", "fwd_comms_ms", "bwd_compute_ms", "bwd_comms_ms",
                            "prefetch_ms", "total_ms" } )
        columns.push_back( c );
    ResultTable result( columns );
    for ( std::size_t r = 0; r < rows.size(); ++r )
    {
        const TorchrecPerf p = torchrecPerf( rows[r].topology, rows[r].shard );
        std::vector<ResultTable::Cell> cells;
        for ( const std::string& c : csv.header() )
            cells.emplace_back( csv.text( r, c ) );
        for ( double v :
              { p.fwd_compute, p.fwd_comms, p.bwd_compute, p.bwd_comms, p.prefetch, p.total() } )
            cells.emplace_back( v );
        result.addRow( std::move( cells ) );
    }

    if ( !ctx.isRoot() )
        return 0;
    if ( output.empty() )
    {
        result.print( ctx.print(), fmt );
        return 0;
    }
    std::ofstream file( output );
    if ( !file )
        throw InputError( output, "cannot open file for writing" );
    result.print( file, fmt );
    if ( !file )
        throw InputError( output, "write failed" );
    return 0;
}

} // namespace shardsweep
