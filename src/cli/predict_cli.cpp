// The shared --gpu/--input/--output/--format plumbing of the predict subcommands (predict_cli.hpp).
#include "command_line.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <iostream>
#include <numeric>
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/calibration_csv.hpp>
#include <shardsweep/io/gpu_calibration_yaml.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <sstream>

namespace shardsweep
{

namespace po = boost::program_options;

PredictCli::PredictCli( std::string command, const std::string& usage, unsigned options )
    : _command( std::move( command ) ), _taken( options ), _options( usage + "\nOptions" )
{
    _options.add_options()( "help,h", "this text" );
    if ( _taken & kGpu )
        _options.add_options()(
            "gpu", po::value( &_gpu_name ),
            "GPU catalog name or alias, e.g. A100-PCIe-40GB or \"NVIDIA A100-PCIE-40GB\" "
            "(required)" );
    if ( _taken & kInput )
        _options.add_options()( "input,i", po::value( &_input ), "input CSV (required)" );
    if ( _taken & kOutput )
        _options.add_options()( "output,o", po::value( &_output ),
                                "write the result to this file instead of standard output" );
    // "table | csv | json", with the default: table, or csv when written to --output.
    std::vector<std::string> formats = enumNameList<OutputFormat>();
    if ( !( _taken & kOutput ) )
        formats[std::size_t( OutputFormat::table )] += " (default)";
    const std::string format_help =
        joinChoices( formats, " | ", " | " ) +
        ( ( _taken & kOutput ) ? " (default: table on standard output, csv in --output)" : "" );
    _options.add_options()( "format,f", po::value( &_format_text ), format_help.c_str() );
}

bool PredictCli::parse( const CommandContext& ctx, const Arguments& args )
{
    if ( !parseCommandLine( ctx, _command, args, _options, _given ) )
        return false;
    const bool need_gpu = ( _taken & kGpu ) && _gpu_name.empty();
    const bool need_input = ( _taken & kInput ) && _input.empty();
    if ( need_gpu || need_input )
        throw UsageError( _command + ": " +
                          ( need_gpu && need_input
                                ? "--gpu and --input are required"
                                : ( need_gpu ? "--gpu is required" : "--input is required" ) ) +
                          " (see --help)" );
    try
    {
        _format = _format_text.empty()
                      ? ( _output.empty() ? OutputFormat::table : OutputFormat::csv )
                      : parseOutputFormat( _format_text );
    }
    catch ( const UsageError& e )
    {
        throw UsageError( _command + ": " + e.what() );
    }
    if ( _taken & kGpu )
    {
        const GpuEntry& entry = findGpu( _gpu_name );
        _gpu = entry.spec;
        _gpu_catalog_name = entry.name;
    }
    return true;
}

CsvTable PredictCli::readInput( const std::vector<std::string>& required,
                                const std::vector<std::string>& optional ) const
{
    CsvTable table = CsvTable::read( _input );
    table.checkColumns( required, optional );
    return table;
}

CsvTable
PredictCli::readKernelInput( const CommandContext& ctx, const std::vector<std::string>& required,
                             std::vector<std::string> optional,
                             const std::vector<std::pair<std::string, std::string>>& aliases ) const
{
    CsvTable table = CsvTable::read( _input );
    table.readColumnsAs( aliases );
    optional.emplace_back( "latency_ms" );
    const std::string note =
        unusedColumnsNote( _input, table.checkColumnsIgnoringOthers( required, optional ) );
    if ( !note.empty() && ctx.isRoot() )
        std::cerr << "note: " << note << '\n';
    return table;
}

void PredictCli::write( const CommandContext& ctx, const ResultTable& result ) const
{
    writeResultTable( ctx, result, _format, _output );
}

void writeResultTable( const CommandContext& ctx, const ResultTable& result, OutputFormat format,
                       const std::string& output )
{
    if ( !ctx.isRoot() )
        return;
    if ( output.empty() )
    {
        result.print( ctx.print(), format );
        return;
    }
    std::ostringstream text;
    result.print( text, format );
    writeTextFileAtomically( output, text.str() );
}

double positiveIntegerCell( const CsvTable& t, std::size_t row, const char* column )
{
    const double x = t.getDouble( row, column );
    if ( !( x >= 1.0 ) || x != static_cast<double>( static_cast<long long>( x ) ) )
        t.fail( row, column, "an integer >= 1" );
    return x;
}

DataType computeDtypeCell( const CsvTable& t, std::size_t row, const GpuSpec& gpu )
{
    const DataType dtype = dtypeCell( t, row );
    if ( const std::string error = gpuDataTypeError( gpu, dtype ); !error.empty() )
        t.fail( row, "dtype", "a type the GPU computes in (" + error + ")" );
    return dtype;
}

std::optional<GemmReductionDim> parseReductionDim( const std::string& command,
                                                   const std::string& text )
{
    if ( text.empty() || text == "auto" )
        return std::nullopt;
    if ( const std::optional<GemmReductionDim> dim = enumFromName<GemmReductionDim>( text ) )
        return dim;
    throw UsageError( command + ": --reduction-dim: expected " +
                      enumChoices<GemmReductionDim>( ", " ) + " or auto, found '" + text + "'" );
}

MeasuredLatencies::MeasuredLatencies( const CsvTable& input )
{
    if ( input.hasColumn( "latency_ms" ) )
        for ( std::size_t r = 0; r < input.numRows(); ++r )
            _measured_ms.push_back( measuredLatencyCell( input, r ) );
}

std::vector<std::string> MeasuredLatencies::columns( std::vector<std::string> columns ) const
{
    if ( present() )
        columns.insert( columns.end(), { "measured_ms", "error_pct" } );
    return columns;
}

void MeasuredLatencies::append( std::vector<ResultTable::Cell>& row, std::size_t r,
                                double predicted_ms )
{
    if ( !present() )
        return;
    const double error_pct = 100.0 * ( predicted_ms / _measured_ms[r] - 1.0 );
    _ape_pct.push_back( std::fabs( error_pct ) );
    row.insert( row.end(), { _measured_ms[r], error_pct } );
}

void MeasuredLatencies::report( const CommandContext& ctx, const std::string& command ) const
{
    if ( !present() || _ape_pct.empty() || !ctx.isRoot() )
        return;
    std::vector<double> sorted = _ape_pct;
    std::sort( sorted.begin(), sorted.end() );
    const std::size_t n = sorted.size();
    const double median = n % 2 == 1 ? sorted[n / 2] : 0.5 * ( sorted[n / 2 - 1] + sorted[n / 2] );
    const double mape = std::accumulate( sorted.begin(), sorted.end(), 0.0 ) / double( n );
    std::cerr << fmt::format( "{}: MAPE {:.2f} % over {} rows with latency_ms (median {:.2f} %)\n",
                              command, mape, n, median );
}

LearnedModelOptions::LearnedModelOptions( PredictCli& cli, const char* file_help )
    : _command( cli.command() )
{
    namespace po = boost::program_options;
    cli.options().add_options()(
        "model", po::value( &_model ),
        "auto (default): the learned model on the GPUs its file lists in default_for (where it "
        "beat the analytic model on shapes larger than its training shapes: docs/MODEL.md), the "
        "analytic model elsewhere | learned: the learned model on every GPU it was trained on | "
        "analytic" )( "model-file", po::value( &_file ), file_help )(
        "force-learned", po::bool_switch( &_force_learned ),
        "use the learned model on every GPU, also those it was not trained on" );
}

std::unique_ptr<LearnedOperatorModel>
LearnedModelOptions::load( const PredictCli& cli, const std::string& default_path,
                           LearnedOperatorModel ( *load )( const std::string& ) ) const
{
    if ( _model != "auto" && _model != "learned" && _model != "analytic" )
        throw UsageError( _command + ": --model must be 'auto', 'learned' or 'analytic', found '" +
                          _model + "'" );
    if ( _model == "analytic" )
        return nullptr;
    const std::string path = _file.empty() ? default_path : _file;
    if ( _file.empty() && !std::filesystem::exists( path ) )
        return nullptr; // no shipped model (e.g. an install without inputs/models)
    auto learned = std::make_unique<LearnedOperatorModel>( load( path ) );
    const bool chosen =
        _force_learned || ( _model == "auto" ? learned->defaultFor( cli.gpuName() )
                                             : learned->trainedOn( cli.gpuName() ) );
    if ( !chosen )
        learned.reset();
    return learned;
}

CalibrationOption::CalibrationOption( PredictCli& cli )
{
    cli.options().add_options()(
        "calibration", po::value( &_file ),
        "GPU calibration file (written by `shardsweep calibrate gpu` for this --gpu): rows of a "
        "calibrated dtype are priced with it (model column 'calibrated'), others as without it" );
}

std::optional<GpuCalibration> CalibrationOption::load( const PredictCli& cli ) const
{
    if ( _file.empty() )
        return std::nullopt;
    return loadCalibrationFor( _file, cli.gpuName(), cli.command() + ": --calibration" );
}

GpuCalibration loadCalibrationFor( const std::string& path, const std::string& gpu_name,
                                   const std::string& what )
{
    GpuCalibration c = readGpuCalibration( path );
    if ( !calibratesGpu( c, gpu_name ) )
        throw UsageError( what + " " + path + " calibrates GPU '" + c.gpu + "', not '" + gpu_name +
                          "'" );
    return c;
}

} // namespace shardsweep
