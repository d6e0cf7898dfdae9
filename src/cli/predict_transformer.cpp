// shardsweep predict transformer: one Megatron-LM 3D-parallel transformer step per CSV row
// (model/transformer.hpp; issue 11's CSV contract).
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/domain/parallel_fields.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/model/transformer.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>

namespace shardsweep
{

namespace
{
//! The case columns in output order: the model and layout, then the knobs of parallelFields()
//! (domain/parallel_fields.hpp) in the order of this command's CSV contract (issue 11; dtype,
//! a model column, sits among them), then any knob added to the table since. The four of
//! kRequired must be present, the rest may be absent or empty (defaults in --help).
std::vector<std::string> caseColumns()
{
    std::vector<std::string> columns = {
        "case",    "platform", "gpu",        "gpus", "arch", "hidden", "heads",       "layers",
        "seq_len", "vocab",    "ffn_hidden", "tp",   "pp",   "dp",     "global_batch" };
    const std::vector<std::string> contract = {
        "micro_batch", "schedule", "recompute", "zero",
        "dtype",       "mode",     "fused",     "sequence_parallel" };
    columns.insert( columns.end(), contract.begin(), contract.end() );
    for ( const ParallelField& f : parallelFields() )
        if ( std::find( contract.begin(), contract.end(), f.key ) == contract.end() )
            columns.emplace_back( f.key );
    return columns;
}
const std::vector<std::string> kRequired = { "hidden", "heads", "layers", "seq_len" };

std::vector<std::string> optionalColumns()
{
    std::vector<std::string> optional;
    for ( const std::string& c : caseColumns() )
        if ( std::find( kRequired.begin(), kRequired.end(), c ) == kRequired.end() )
            optional.push_back( c );
    return optional;
}

std::vector<std::string> outputColumns()
{
    std::vector<std::string> columns = caseColumns();
    columns.emplace_back( "iteration_ms" );
    for ( const std::string& phase : enumNameList<TransformerPhase>( "_ms" ) )
        columns.push_back( phase );
    columns.emplace_back( "peak_memory_GiB" );
    columns.emplace_back( "feasible" );
    return columns;
}

//! An integer cell ≥ `min`, or `fallback` when empty or absent.
std::int64_t intCell( const CsvTable& t, std::size_t row, const std::string& column,
                      std::int64_t fallback, std::int64_t min, bool required = false )
{
    if ( t.isEmpty( row, column ) )
    {
        if ( required )
            t.fail( row, column, "a value (this column has no default)" );
        return fallback;
    }
    const std::int64_t v = t.getInt( row, column );
    if ( v < min )
        t.fail( row, column, "an integer >= " + std::to_string( min ) );
    return v;
}

//! A knob's cell (domain/parallel_fields.hpp): its number, 0/1, or its name; empty: the default.
int knobCell( const CsvTable& t, std::size_t row, const ParallelField& f )
{
    switch ( f.kind )
    {
    case ParallelField::flag:
        return t.isEmpty( row, f.key ) ? f.fallback : int( t.getBool( row, f.key ) );
    case ParallelField::choice:
        return t.getEnumOr( row, f.key, parallelFieldChoices( f ), f.fallback );
    case ParallelField::integer:
        break;
    }
    const std::int64_t v = intCell( t, row, f.key, f.fallback, f.min );
    if ( v > f.max )
        t.fail( row, f.key, fmt::format( "an integer in [{}, {}]", f.min, f.max ) );
    return int( v );
}

//! A knob's output cell: the number (0/1 for a flag) or the choice's name.
ResultTable::Cell knobOutput( const ParallelField& f, const ParallelConfig& c )
{
    if ( f.kind == ParallelField::choice )
        return parallelFieldText( f, c );
    return static_cast<long long>( f.get( c ) );
}

//! The --help lines of the knobs: key, help, values and default, from the field table.
std::string knobHelp()
{
    std::string text;
    for ( const ParallelField& f : parallelFields() )
    {
        std::string values;
        if ( f.kind == ParallelField::choice )
            for ( const std::string& n : f.names() )
                values += ( values.empty() ? "" : " | " ) + n;
        else if ( f.kind == ParallelField::flag )
            values = "0 | 1";
        else
            values = fmt::format( "{}..{}", f.min, f.max );
        ParallelConfig c;
        f.set( c, f.fallback );
        const std::string fallback = f.kind == ParallelField::flag ? std::to_string( f.fallback )
                                                                   : parallelFieldText( f, c );
        text += fmt::format( "  {:<17} {}: {} (default {})\n", f.key, f.help, values, fallback );
    }
    return text;
}
} // namespace

int predictTransformer( const CommandContext& ctx, const Arguments& args )
{
    PredictCli cli(
        "predict transformer",
        "Usage: shardsweep predict transformer --input cases.csv [--format table|csv|json]\n"
        "                                      [--output pred.csv]\n\n"
        "Predicts one training (or inference) step of a transformer under Megatron-LM 3D\n"
        "parallelism for every row of a CSV file (model/transformer.hpp, "
        "docs/model/transformer.md).\n"
        "Header names in any order; an empty cell takes the default.\n"
        "Columns (required: hidden, heads, layers, seq_len):\n"
        "  case          copied through\n"
        "  platform      platform YAML (inputs/platforms/; a relative path is tried from the\n"
        "                working directory, then from the CSV's folder); empty: one GPU, `gpu`\n"
        "  gpu           catalog name or alias (e.g. 'NVIDIA H100 80GB HBM3'); empty: the\n"
        "                platform's GPU (required without a platform)\n"
        "  gpus          GPUs used = tp*pp*dp (default: that product)\n"
        "  arch          gpt | bert | opt (default gpt)\n"
        "  hidden, heads, layers, seq_len\n"
        "  vocab         default 50257 (padded to a multiple of 128*tp as Megatron does)\n"
        "  ffn_hidden    default 4*hidden\n"
        "  tp, pp        default 1\n"
        "  dp            default gpus/(tp*pp), or 1\n"
        "  global_batch  sequences per step (default micro_batch*dp); a multiple of it\n"
        "  dtype         fp32 | tf32 | fp16 | bf16 (default bf16)\n" +
            knobHelp() +
            "Output: the resolved inputs, then iteration_ms, compute_ms, tp_comm_ms, pp_comm_ms,\n"
            "dp_comm_ms, bubble_ms, optimizer_ms (the critical path, adding up to iteration_ms),\n"
            "peak_memory_GiB (fullest pipeline stage), feasible (fits the GPU memory less the\n"
            "platform's hbm_reserve_GiB). A bad row exits with status 2 naming file, line and "
            "column.\n",
        PredictCli::kInput | PredictCli::kOutput );
    if ( !cli.parse( ctx, args ) )
        return 0;
    const CsvTable t = cli.readInput( kRequired, optionalColumns() );
    const GpuCatalog catalog = readGpuCatalog( defaultGpuCatalogDir() );
    std::map<std::string, NamedPlatform> platforms;
    const std::filesystem::path csv_dir = std::filesystem::path( cli.inputPath() ).parent_path();

    // The knob (null: dtype) of each case column after global_batch, looked up once.
    const std::vector<std::string> columns = caseColumns();
    const std::size_t first_knob =
        std::size_t( std::find( columns.begin(), columns.end(), "global_batch" ) -
                     columns.begin() ) +
        1;
    std::vector<const ParallelField*> knob_of;
    for ( std::size_t c = first_knob; c < columns.size(); ++c )
        knob_of.push_back( findParallelField( columns[c] ) );
    ResultTable result( outputColumns() );
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        // --- platform and GPU ---
        Platform platform;
        std::string platform_name, gpu_name;
        if ( !t.isEmpty( r, "platform" ) )
        {
            platform_name = t.text( r, "platform" );
            auto it = platforms.find( platform_name );
            if ( it == platforms.end() )
            {
                std::filesystem::path path = platform_name;
                if ( !std::filesystem::exists( path ) && path.is_relative() &&
                     std::filesystem::exists( csv_dir / path ) )
                    path = csv_dir / path;
                if ( !std::filesystem::exists( path ) )
                    t.fail( r, "platform", "an existing platform YAML file" );
                it = platforms.emplace( platform_name, readPlatformFile( path.string(), catalog ) )
                         .first;
            }
            platform = it->second.platform;
            gpu_name = it->second.gpu_name;
        }
        if ( !t.isEmpty( r, "gpu" ) )
        {
            const GpuEntry* gpu = catalog.find( t.text( r, "gpu" ) );
            if ( !gpu )
                t.fail( r, "gpu", "a GPU of the catalog (" + defaultGpuCatalogDir() + ")" );
            platform.gpu = gpu->spec;
            gpu_name = gpu->name;
        }
        else if ( platform_name.empty() )
            t.fail( r, "gpu", "a GPU name (required when the row names no platform)" );

        // --- model ---
        TransformerSpec m;
        m.arch = t.getEnumOr( r, "arch", enumPairs<TransformerArch>(), TransformerArch::gpt );
        m.hidden = int( intCell( t, r, "hidden", 0, 1, true ) );
        m.heads = int( intCell( t, r, "heads", 0, 1, true ) );
        m.layers = int( intCell( t, r, "layers", 0, 1, true ) );
        m.seq_len = int( intCell( t, r, "seq_len", 0, 1, true ) );
        m.vocab = int( intCell( t, r, "vocab", 50257, 1 ) );
        m.ffn_hidden = int( intCell( t, r, "ffn_hidden", 4LL * m.hidden, 1 ) );
        m.dtype = t.getEnumOr( r, "dtype", computeDataTypeNames(), DataType::bf16 );
        if ( m.hidden % m.heads != 0 )
            t.fail( r, "heads", "a divisor of hidden (" + std::to_string( m.hidden ) + ")" );

        // --- parallel configuration ---
        ParallelConfig cfg;
        cfg.tp = int( intCell( t, r, "tp", 1, 1 ) );
        cfg.pp = int( intCell( t, r, "pp", 1, 1 ) );
        const std::int64_t gpus_given = intCell( t, r, "gpus", 0, 1 );
        const std::int64_t tp_pp = std::int64_t( cfg.tp ) * cfg.pp;
        const std::int64_t dp_default =
            gpus_given > 0 && gpus_given % tp_pp == 0 ? gpus_given / tp_pp : 1;
        cfg.dp = int( intCell( t, r, "dp", dp_default, 1 ) );
        const std::int64_t gpus = tp_pp * cfg.dp;
        if ( gpus_given > 0 && gpus_given != gpus )
            t.fail( r, "gpus", "tp*pp*dp = " + std::to_string( gpus ) );
        if ( m.heads % cfg.tp != 0 )
            t.fail( r, "tp", "a divisor of heads (" + std::to_string( m.heads ) + ")" );
        if ( m.layers % cfg.pp != 0 )
            t.fail( r, "pp", "a divisor of layers (" + std::to_string( m.layers ) + ")" );
        for ( const ParallelField& f : parallelFields() )
            f.set( cfg, knobCell( t, r, f ) );
        const std::int64_t per_step = std::int64_t( cfg.micro_batch ) * cfg.dp;
        cfg.global_batch = intCell( t, r, "global_batch", per_step, 1 );
        if ( cfg.global_batch % per_step != 0 )
            t.fail( r, "global_batch",
                    "a multiple of micro_batch*dp = " + std::to_string( per_step ) );
        if ( platform_name.empty() && gpus > 1 )
            t.fail( r, t.hasColumn( "platform" ) ? "platform" : "dp",
                    "a platform file for " + std::to_string( gpus ) +
                        " GPUs (without one a row runs on one GPU)" );
        if ( platform_name.empty() )
            platform.gpus_per_node = 1;

        // --- the model ---
        const TransformerOperatorCost ops =
            transformerOperatorCost( transformerOperatorCase( platform.gpu, m, cfg ) );
        const TransformerStepSummary s = predictTransformerStep( platform, m, cfg, ops );
        const std::string case_name = t.isEmpty( r, "case" ) ? "" : t.text( r, "case" );
        std::vector<ResultTable::Cell> row{ case_name,
                                            platform_name,
                                            gpu_name,
                                            static_cast<long long>( gpus ),
                                            std::string( nameOf( m.arch ) ),
                                            static_cast<long long>( m.hidden ),
                                            static_cast<long long>( m.heads ),
                                            static_cast<long long>( m.layers ),
                                            static_cast<long long>( m.seq_len ),
                                            static_cast<long long>( m.vocab ),
                                            static_cast<long long>( m.ffn_hidden ),
                                            static_cast<long long>( cfg.tp ),
                                            static_cast<long long>( cfg.pp ),
                                            static_cast<long long>( cfg.dp ),
                                            static_cast<long long>( cfg.global_batch ) };
        for ( const ParallelField* f : knob_of )
            row.push_back( f ? knobOutput( *f, cfg )
                             : ResultTable::Cell( std::string( nameOf( m.dtype ) ) ) );
        row.emplace_back( s.iteration_ms );
        for ( int ph = 0; ph < kNumTransformerPhases; ++ph )
            row.emplace_back( s.phase_ms[ph] );
        row.emplace_back( s.peak_memory_GiB );
        row.emplace_back( static_cast<long long>( s.feasible ) );
        result.addRow( row );
    }
    cli.write( ctx, result );
    return 0;
}

} // namespace shardsweep
