// shardsweep predict transformer: one Megatron-LM 3D-parallel transformer step per CSV row
// (model/transformer.hpp; issue 11's CSV contract).
#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <shardsweep/cli/cost_model_option.hpp>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/domain/parallel_fields.hpp>
#include <shardsweep/domain/transformer_fields.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/io/yaml_util.hpp>
#include <shardsweep/model/transformer.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <shardsweep/model/transformer/throughput.hpp>
#include <shardsweep/model/transformer/validated_range.hpp>

namespace shardsweep
{

namespace
{
//! The layout columns, which no field table holds (each follows from the others and the GPUs).
const std::vector<std::string> kLayoutColumns = { "tp", "pp", "dp", "global_batch" };

//! The case columns in output order: the model and layout, then the knobs in the order of this
//! command's CSV contract (issue 11; dtype, a model field, sits among them), then any knob or
//! model field added to the field tables since (domain/parallel_fields.hpp,
//! domain/transformer_fields.hpp).
std::vector<std::string> caseColumns()
{
    std::vector<std::string> columns = { "case",    "platform", "gpu",       "gpus",
                                         "arch",    "hidden",   "heads",     "layers",
                                         "seq_len", "vocab",    "ffn_hidden" };
    columns.insert( columns.end(), kLayoutColumns.begin(), kLayoutColumns.end() );
    const std::vector<std::string> contract = {
        "micro_batch", "schedule", "recompute", "zero",
        "dtype",       "mode",     "fused",     "sequence_parallel" };
    columns.insert( columns.end(), contract.begin(), contract.end() );
    auto add_new = [&columns]( const char* key )
    {
        if ( std::find( columns.begin(), columns.end(), key ) == columns.end() )
            columns.emplace_back( key );
    };
    for ( const ParallelField& f : parallelFields() )
        add_new( f.key );
    for ( const ModelField& f : modelFields() )
        add_new( f.key );
    return columns;
}

//! The model fields files must give (hidden, heads, layers, seq_len).
std::vector<std::string> requiredColumns()
{
    std::vector<std::string> required;
    for ( const ModelField& f : modelFields() )
        if ( f.required )
            required.emplace_back( f.key );
    return required;
}

std::vector<std::string> optionalColumns()
{
    const std::vector<std::string> required = requiredColumns();
    std::vector<std::string> optional;
    for ( const std::string& c : caseColumns() )
        if ( std::find( required.begin(), required.end(), c ) == required.end() )
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
    for ( const char* c :
          { "tflops_per_gpu", "mfu_pct", "tokens_per_s", "outside_validated_range" } )
        columns.emplace_back( c );
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

//! A field's cell (domain/field_table.hpp): its number, 0/1, or its name; empty: the default.
template <class S, class V>
V fieldCell( const CsvTable& t, std::size_t row, const Field<S, V>& f )
{
    switch ( f.kind )
    {
    case Field<S, V>::flag:
        return t.isEmpty( row, f.key ) ? f.fallback : V( t.getBool( row, f.key ) );
    case Field<S, V>::choice:
        return V( t.getEnumOr( row, f.key, fieldChoices( f ), int( f.fallback ) ) );
    case Field<S, V>::real:
    {
        if ( t.isEmpty( row, f.key ) )
            return f.fallback;
        const double x = t.getDouble( row, f.key );
        const Range range{ double( f.min ), double( f.max ), !f.above_min, true };
        if ( !range.contains( x ) )
            t.fail( row, f.key, range.describe( "a number" ) );
        return V( x );
    }
    case Field<S, V>::integer:
        break;
    }
    const std::int64_t v =
        intCell( t, row, f.key, std::int64_t( f.fallback ), std::int64_t( f.min ), f.required );
    if ( v > f.max )
        t.fail( row, f.key, fmt::format( "an integer in [{}, {}]", f.min, f.max ) );
    return V( v );
}

//! A field's output cell: the number (0/1 for a flag) or the choice's name.
template <class S, class V>
ResultTable::Cell fieldOutput( const Field<S, V>& f, const S& value )
{
    if ( f.kind == Field<S, V>::choice )
        return fieldValueText( f, f.get( value ) );
    if ( f.kind == Field<S, V>::real )
        return double( f.get( value ) );
    return static_cast<long long>( f.get( value ) );
}

//! The --help lines of a field table: key, help, values and default.
template <class S, class V, std::size_t N>
std::string fieldHelp( const Field<S, V> ( &table )[N] )
{
    std::string text;
    for ( const Field<S, V>& f : table )
    {
        // A fallback outside a number's range (ffn_hidden 0) is derived; its help says how.
        std::string fallback =
            "default " + ( f.kind == Field<S, V>::flag
                               ? std::to_string( static_cast<long long>( f.fallback ) )
                               : fieldValueText( f, f.fallback ) );
        const bool numeric = f.kind == Field<S, V>::integer || f.kind == Field<S, V>::real;
        if ( f.required )
            fallback = "required";
        else if ( numeric && ( f.fallback < f.min || ( f.above_min && f.fallback <= f.min ) ) )
            fallback = "optional";
        text +=
            fmt::format( "  {:<17} {}: {} ({})\n", f.key, f.help, fieldValuesText( f ), fallback );
    }
    return text;
}

//! A row's platform (its YAML file, loaded once per name) and GPU (the `gpu` cell, else the
//! platform's).
struct RowPlatform
{
    Platform platform;
    std::string platform_name, gpu_name;
};

class PlatformCells
{
  public:
    PlatformCells( const CsvTable& t, const std::string& csv_path,
                   std::vector<CalibrationFile> calibrations )
        : _t( t ), _catalog( readGpuCatalog( defaultGpuCatalogDir() ) ),
          _csv_dir( std::filesystem::path( csv_path ).parent_path() ),
          _calibrations( std::move( calibrations ) )
    {
    }

    RowPlatform read( std::size_t r )
    {
        RowPlatform p;
        if ( !_t.isEmpty( r, "platform" ) )
        {
            p.platform_name = _t.text( r, "platform" );
            const NamedPlatform& named = platformFile( r, p.platform_name );
            p.platform = named.platform;
            p.gpu_name = named.gpu_name;
        }
        if ( !_t.isEmpty( r, "gpu" ) )
        {
            const GpuEntry* gpu = _catalog.find( _t.text( r, "gpu" ) );
            if ( !gpu )
                _t.fail( r, "gpu", "a GPU of the catalog (" + defaultGpuCatalogDir() + ")" );
            p.platform.gpu = gpu->spec;
            p.gpu_name = gpu->name;
            for ( const CalibrationFile& f : _calibrations )
                if ( calibratesGpu( f.calibration, gpu->name ) )
                    p.platform.gpu = calibratedGpuSpec( gpu->spec, f.calibration );
        }
        else if ( p.platform_name.empty() )
            _t.fail( r, "gpu", "a GPU name (required when the row names no platform)" );
        return p;
    }

  private:
    //! A relative path is tried from the working directory, then from the CSV's folder.
    const NamedPlatform& platformFile( std::size_t r, const std::string& name )
    {
        auto it = _platforms.find( name );
        if ( it != _platforms.end() )
            return it->second;
        std::filesystem::path path = name;
        if ( !std::filesystem::exists( path ) && path.is_relative() &&
             std::filesystem::exists( _csv_dir / path ) )
            path = _csv_dir / path;
        if ( !std::filesystem::exists( path ) )
            _t.fail( r, "platform", "an existing platform YAML file" );
        NamedPlatform platform = readPlatformFile( path.string(), _catalog );
        for ( const CalibrationFile& f : _calibrations )
            applyGpuCalibration( platform, f );
        return _platforms.emplace( name, std::move( platform ) ).first->second;
    }

    const CsvTable& _t;
    const GpuCatalog _catalog;
    const std::filesystem::path _csv_dir;
    std::map<std::string, NamedPlatform> _platforms;
    const std::vector<CalibrationFile> _calibrations;
};

//! A row's model, its derived fields resolved (resolvedModel), so that the output shows what was
//! priced.
TransformerSpec modelCells( const CsvTable& t, std::size_t r )
{
    TransformerSpec m;
    for ( const ModelField& f : modelFields() )
        f.set( m, fieldCell( t, r, f ) );
    const ModelFieldProblem problem = transformerSpecProblem( m );
    if ( !problem.key.empty() )
        t.fail( r, problem.key, problem.expected );
    return resolvedModel( m );
}

//! A row's parallel configuration on `gpus` GPUs (the `gpus` cell, or tp·pp·dp).
ParallelConfig configCells( const CsvTable& t, std::size_t r, const TransformerSpec& m,
                            std::int64_t& gpus )
{
    ParallelConfig cfg;
    cfg.tp = int( intCell( t, r, "tp", 1, 1 ) );
    cfg.pp = int( intCell( t, r, "pp", 1, 1 ) );
    for ( const ParallelField& f : parallelFields() )
        f.set( cfg, fieldCell( t, r, f ) );
    const std::int64_t gpus_given = intCell( t, r, "gpus", 0, 1 );
    const std::int64_t tp_cp_pp = std::int64_t( cfg.tp ) * cfg.cp * cfg.pp;
    const std::int64_t dp_default =
        gpus_given > 0 && gpus_given % tp_cp_pp == 0 ? gpus_given / tp_cp_pp : 1;
    cfg.dp = int( intCell( t, r, "dp", dp_default, 1 ) );
    gpus = tp_cp_pp * cfg.dp;
    if ( gpus_given > 0 && gpus_given != gpus )
        t.fail( r, "gpus",
                ( cfg.cp > 1 ? "tp*cp*pp*dp = " : "tp*pp*dp = " ) + std::to_string( gpus ) );
    if ( const std::string error = tensorParallelError( m, cfg.tp ); !error.empty() )
        t.fail( r, "tp", "a degree that splits the model (" + error + ")" );
    const std::int64_t per_step = std::int64_t( cfg.micro_batch ) * cfg.dp;
    cfg.global_batch = intCell( t, r, "global_batch", per_step, 1 );
    if ( cfg.global_batch % per_step != 0 )
        t.fail( r, "global_batch", "a multiple of micro_batch*dp = " + std::to_string( per_step ) );
    if ( const ModelFieldProblem p = parallelKnobProblem( m, cfg ); !p.key.empty() )
        t.fail( r, p.key, p.expected );
    return cfg;
}

//! Where each output column after `gpus` comes from, looked up once: a model field, a knob, or
//! one of kLayoutColumns.
struct CaseColumn
{
    const ModelField* model = nullptr;
    const ParallelField* knob = nullptr;
    int layout = -1;
};

std::vector<CaseColumn> caseColumnSources()
{
    const std::vector<std::string> columns = caseColumns();
    std::vector<CaseColumn> sources;
    for ( auto c = std::find( columns.begin(), columns.end(), "gpus" ) + 1; c != columns.end();
          ++c )
    {
        CaseColumn s;
        s.model = findModelField( *c );
        s.knob = findParallelField( *c );
        s.layout = int( std::find( kLayoutColumns.begin(), kLayoutColumns.end(), *c ) -
                        kLayoutColumns.begin() );
        sources.push_back( s );
    }
    return sources;
}

const char* const kHelp =
    "Usage: shardsweep predict transformer --input cases.csv [--format table|csv|json]\n"
    "                                      [--output pred.csv]\n\n"
    "Predicts one training (or inference) step of a transformer under Megatron-LM 3D\n"
    "parallelism for every row of a CSV file (model/transformer.hpp, "
    "docs/model/transformer.md).\n"
    "Header names in any order; an empty cell takes the default.\n"
    "Columns:\n"
    "  case              copied through\n"
    "  platform          platform YAML (inputs/platforms/; a relative path is tried from the\n"
    "                    working directory, then from the CSV's folder); empty: one GPU, `gpu`\n"
    "  gpu               catalog name or alias (e.g. 'NVIDIA H100 80GB HBM3'); empty: the\n"
    "                    platform's GPU (required without a platform)\n"
    "  gpus              GPUs used = tp*cp*pp*dp (default: that product)\n"
    "  tp, pp            default 1\n"
    "  dp                default gpus/(tp*cp*pp), or 1\n"
    "  global_batch      sequences per step (default micro_batch*dp); a multiple of it\n";
} // namespace

int predictTransformer( const CommandContext& ctx, const Arguments& args )
{
    PredictCli cli(
        "predict transformer",
        std::string( kHelp ) + "The model (domain/transformer_fields.hpp):\n" +
            fieldHelp( kModelFields ) +
            "The parallel configuration (domain/parallel_fields.hpp):\n" +
            fieldHelp( kParallelFields ) +
            "Output: the resolved inputs, then iteration_ms, compute_ms, tp_comm_ms, pp_comm_ms,\n"
            "dp_comm_ms, bubble_ms, optimizer_ms (the critical path, adding up to iteration_ms),\n"
            "peak_memory_GiB (fullest pipeline stage), feasible (fits the GPU memory less the\n"
            "platform's hbm_reserve_GiB), tflops_per_gpu (model FLOPs without recompute per\n"
            "second and GPU), mfu_pct (of the GPU's dense peak in dtype) and tokens_per_s\n"
            "(global_batch x seq_len per second), outside_validated_range (every way the row\n"
            "leaves what the model was checked against: GPU, dtype, GPU count, tp across nodes,\n"
            "fused attention, MFU; empty inside it; docs/MODEL.md). A bad row exits with status\n"
            "2 naming file, line and column.\n",
        PredictCli::kInput | PredictCli::kOutput );
    std::vector<std::string> calibration_paths;
    cli.options().add_options()(
        "calibration", boost::program_options::value( &calibration_paths )->multitoken(),
        ( std::string( kCalibrationOptionHelp ) + " (rows on the calibrated GPU)" ).c_str() );
    if ( !cli.parse( ctx, args ) )
        return 0;
    const CsvTable t = cli.readInput( requiredColumns(), optionalColumns() );
    PlatformCells platforms( t, cli.inputPath(), readCalibrationFiles( calibration_paths ) );
    const std::vector<CaseColumn> sources = caseColumnSources();
    ResultTable result( outputColumns() );
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        RowPlatform p = platforms.read( r );
        const TransformerSpec m = modelCells( t, r );
        std::int64_t gpus = 0;
        const ParallelConfig cfg = configCells( t, r, m, gpus );
        if ( p.platform_name.empty() && gpus > 1 )
            t.fail( r, t.hasColumn( "platform" ) ? "platform" : "dp",
                    "a platform file for " + std::to_string( gpus ) +
                        " GPUs (without one a row runs on one GPU)" );
        if ( p.platform_name.empty() )
            p.platform.gpus_per_node = 1;
        if ( const std::string error = gpuDataTypeError( p.platform.gpu, m.dtype ); !error.empty() )
            t.fail( r, "dtype", "a type the GPU computes in (" + error + ")" );

        const TransformerOperatorCost ops =
            transformerOperatorCost( transformerOperatorCase( p.platform.gpu, m, cfg ) );
        const TransformerStepSummary s = predictTransformerStep( p.platform, m, cfg, ops );
        std::vector<ResultTable::Cell> row{ t.isEmpty( r, "case" ) ? "" : t.text( r, "case" ),
                                            p.platform_name, p.gpu_name,
                                            static_cast<long long>( gpus ) };
        const long long layout[] = { cfg.tp, cfg.pp, cfg.dp,
                                     static_cast<long long>( cfg.global_batch ) };
        for ( const CaseColumn& c : sources )
            row.push_back( c.model  ? fieldOutput( *c.model, m )
                           : c.knob ? fieldOutput( *c.knob, cfg )
                                    : ResultTable::Cell( layout[c.layout] ) );
        row.emplace_back( s.iteration_ms );
        for ( int ph = 0; ph < kNumTransformerPhases; ++ph )
            row.emplace_back( s.phase_ms[ph] );
        row.emplace_back( s.peak_memory_GiB );
        row.emplace_back( static_cast<long long>( s.feasible ) );
        const TransformerThroughput tp = transformerThroughput(
            s, p.platform.gpu, int( gpus ), m.dtype, double( cfg.global_batch ) * m.seq_len );
        row.emplace_back( tp.tflops_per_gpu );
        row.emplace_back( tp.mfu_pct );
        row.emplace_back( tp.tokens_per_s );
        row.emplace_back( joinValidationNotes(
            transformerValidationNotes( p.gpu_name, p.platform, m, cfg, tp.mfu_pct ) ) );
        result.addRow( row );
    }
    cli.write( ctx, result );
    return 0;
}

} // namespace shardsweep
