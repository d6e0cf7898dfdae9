// shardsweep predict torchrec: TorchRec's planner perf estimate for each shard of a CSV.
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/io/torchrec_csv.hpp>
#include <shardsweep/model/torchrec/estimator.hpp>

namespace shardsweep
{

int predictTorchrec( const CommandContext& ctx, const Arguments& args )
{
    PredictCli cli(
        "predict torchrec",
        "Usage: shardsweep predict torchrec --input shards.csv [--output F] "
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
        "bwd_comms_ms, prefetch_ms, total_ms.\n",
        PredictCli::kInput | PredictCli::kOutput );
    if ( !cli.parse( ctx, args ) )
        return 0;

    const CsvTable csv = CsvTable::read( cli.inputPath() );
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

    cli.write( ctx, result );
    return 0;
}

} // namespace shardsweep
