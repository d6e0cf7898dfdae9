#pragma once
//! \file predict_cli.hpp
//! \brief The command-line plumbing that every `shardsweep predict <kind>` shares.
//!
//! A predict command reads one CSV of cases (--input), prices each with one model, and prints one
//! ResultTable. What differs between commands is the model and its columns; what is the same is
//! --help, --gpu NAME (a catalog name or alias), --input FILE.csv, --output FILE, --format
//! table|csv|json (default: table on standard output, csv in --output), usage errors that name
//! the command (exit 2), and printing on rank 0 only. PredictCli holds that common part, so that a
//! new predict command is its model loop plus the options of its own:
//!
//! \code
//! int predictFoo( const CommandContext& ctx, const Arguments& args )
//! {
//!     PredictCli cli( "predict foo",
//!                     "Usage: shardsweep predict foo --gpu NAME --input foo.csv [--output F]\n\n"
//!                     "What it predicts, the input columns, the output columns.\n",
//!                     PredictCli::kGpu | PredictCli::kInput | PredictCli::kOutput );
//!     double knob = 1.0; // an option of this command only
//!     cli.options().add_options()( "knob", po::value( &knob ), "what it changes" );
//!     if ( !cli.parse( ctx, args ) )
//!         return 0; // --help was printed
//!     const CsvTable in = cli.readInput( { "a", "b" }, { "optional_c" } );
//!     ResultTable result( { "a", "b", "latency_ms" } );
//!     for ( std::size_t r = 0; r < in.numRows(); ++r )
//!         result.addRow( { in.getDouble( r, "a" ), in.getDouble( r, "b" ),
//!                          fooLatencyMs( cli.gpu(), in.getDouble( r, "a" ) ) } );
//!     cli.write( ctx, result );
//!     return 0;
//! }
//! \endcode
//!
//! Then declare it in cli/commands.hpp, add it to the dispatcher (src/cli/dispatch.cpp) and give
//! it a CLI test tests/cli/predict_foo.sh.

#include <boost/program_options.hpp>
#include <memory>
#include <optional>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/operator_models.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/model/gpu_calibration.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

class PredictCli
{
  public:
    //! Which of the shared options the command takes (--help and --format always). --gpu and
    //! --input, when taken, are required.
    enum Option : unsigned
    {
        kGpu = 1u,    //!< --gpu NAME, looked up in the GPU catalog (io/gpu_catalog.hpp)
        kInput = 2u,  //!< --input FILE.csv (-i)
        kOutput = 4u, //!< --output FILE (-o): write the result there instead of standard output
    };

    //! `command`: "predict foo", the prefix of every usage error. `usage`: the text printed by
    //! --help above the option list (usage line, what it predicts, columns).
    PredictCli( std::string command, const std::string& usage, unsigned options );

    //! The option list; a command adds its own options before parse().
    boost::program_options::options_description& options() { return _options; }

    //! Parses `args`. Prints the help and returns false for --help; throws UsageError (naming the
    //! command) for an unknown option, a bad value, a bad --format or a missing --gpu/--input.
    bool parse( const CommandContext& ctx, const Arguments& args );

    //! True if the user gave the option `name` (for options whose default depends on others).
    bool given( const std::string& name ) const { return _given.count( name ) > 0; }

    //! The catalog entry of --gpu (kGpu only).
    const GpuSpec& gpu() const { return _gpu; }
    //! The catalog name of --gpu (kGpu only), e.g. "A100-PCIe-40GB" for "NVIDIA A100-PCIE-40GB".
    const std::string& gpuName() const { return _gpu_catalog_name; }
    const std::string& inputPath() const { return _input; }
    const std::string& command() const { return _command; } //!< e.g. "predict gemm"
    OutputFormat format() const { return _format; }

    //! Reads --input and checks its header (CsvTable::checkColumns).
    CsvTable readInput( const std::vector<std::string>& required,
                        const std::vector<std::string>& optional ) const;
    //! Reads --input of a kernel command (gemm, op), which may be a measurement file as
    //! `calibrate gpu` reads it: `latency_ms` is taken as well (MeasuredLatencies), and columns of
    //! other tools are named on standard error and ignored
    //! (CsvTable::checkColumnsIgnoringOthers).
    //! `aliases`: other tools' names of these columns (CsvTable::readColumnsAs).
    CsvTable
    readKernelInput( const CommandContext& ctx, const std::vector<std::string>& required,
                     std::vector<std::string> optional,
                     const std::vector<std::pair<std::string, std::string>>& aliases = {} ) const;

    //! Prints `result` in --format on rank 0: to --output if given, else to standard output.
    //! Throws InputError if the output file cannot be written.
    void write( const CommandContext& ctx, const ResultTable& result ) const;

  private:
    std::string _command;
    unsigned _taken;
    boost::program_options::options_description _options;
    boost::program_options::variables_map _given;
    std::string _gpu_catalog_name;
    std::string _gpu_name, _input, _output, _format_text;
    GpuSpec _gpu{};
    OutputFormat _format = OutputFormat::table;
};

//! Prints `result` in `format` on rank 0: to `output` if given (written atomically: no
//! half-written file), else to standard output. Throws InputError if the file cannot be written.
void writeResultTable( const CommandContext& ctx, const ResultTable& result, OutputFormat format,
                       const std::string& output );

//! --reduction-dim of `calibrate gpu` and `predict gemm`: K or N (GemmReductionDim), or auto
//! (and empty): nullopt, the command decides (calibrate: from the data; predict: as the
//! calibration's file). Throws UsageError naming `command` for anything else.
std::optional<GemmReductionDim> parseReductionDim( const std::string& command,
                                                   const std::string& text );

//! A CSV cell that must be a whole number >= 1 (shape dimensions); fails naming the row otherwise.
double positiveIntegerCell( const CsvTable& t, std::size_t row, const char* column );

//! The `dtype` cell (io/calibration_csv.hpp's dtypeCell: our names or PyTorch's): a type a model
//! computes in (not int8) that `gpu` has (fp8 needs FP8 tensor cores); fp32 when empty. Fails
//! naming the row and field otherwise.
DataType computeDtypeCell( const CsvTable& t, std::size_t row, const GpuSpec& gpu );

//! The measured times of a kernel command's input, when it has a `latency_ms` column (a
//! measurement file given to predict as it is, e.g. the rows a calibration did not see). Each
//! output row then ends in `measured_ms` and `error_pct` (prediction over measurement − 1, %),
//! and report() prints the MAPE over the rows on standard error: checking a calibration on
//! held-out shapes is one command.
class MeasuredLatencies
{
  public:
    //! The --help paragraph of the commands that take one.
    static constexpr const char* kHelp =
        "A latency_ms column (a measurement file as `calibrate gpu` reads it, e.g. the rows a\n"
        "calibration did not see) is taken as measured: each row then ends in measured_ms and\n"
        "error_pct (prediction over measurement - 1, %), and the MAPE over the rows is printed on\n"
        "standard error. dtype may also be PyTorch's name (float32, bfloat16, half, ...); columns\n"
        "of other tools (kernel, device) are named on standard error and ignored.\n";

    explicit MeasuredLatencies( const CsvTable& input );
    bool present() const { return !_measured_ms.empty(); }
    //! `columns`, followed by measured_ms and error_pct when present.
    std::vector<std::string> columns( std::vector<std::string> columns ) const;
    //! Appends row r's measured_ms and error_pct to `row` when present.
    void append( std::vector<ResultTable::Cell>& row, std::size_t r, double predicted_ms );
    //! On rank 0, when present: "<command>: MAPE x % over n rows with latency_ms (median y %)".
    void report( const CommandContext& ctx, const std::string& command ) const;

  private:
    std::vector<double> _measured_ms;
    std::vector<double> _ape_pct; //!< of the rows appended so far
};

//! The learned-model options of the predict commands that have one (gemm, op): --model
//! auto|learned|analytic, --model-file F, --force-learned.
class LearnedModelOptions
{
  public:
    //! Adds the options to `cli`; `file_help` describes --model-file's default.
    LearnedModelOptions( PredictCli& cli, const char* file_help );
    //! After cli.parse(): the learned model to use, or null for the analytic one. The learned
    //! model is loaded (with `load`, from --model-file or `default_path` when that exists) and
    //! kept only for the GPUs of its default_for line (--model auto) or of its trained_on line
    //! (--model learned), unless --force-learned.
    std::unique_ptr<LearnedOperatorModel>
    load( const PredictCli& cli, const std::string& default_path,
          LearnedOperatorModel ( *load )( const std::string& ) ) const;

  private:
    std::string _command;
    std::string _model = "auto";
    std::string _file;
    bool _force_learned = false;
};

//! `--calibration CALIB.yaml` (written by `calibrate gpu`) of the predict commands that price one
//! GPU's kernels (gemm, op).
class CalibrationOption
{
  public:
    explicit CalibrationOption( PredictCli& cli );
    //! After cli.parse(): the calibration, or nullopt without --calibration. A file made for
    //! another GPU than --gpu is a usage error (exit 2).
    std::optional<GpuCalibration> load( const PredictCli& cli ) const;
    const std::string& path() const { return _file; } //!< empty without --calibration

  private:
    std::string _file;
};

//! Reads a calibration file and checks that it was made for `gpu_name` (a catalog name); `what`
//! names where the file came from in the error ("--calibration", "platform.yaml: calibration").
GpuCalibration loadCalibrationFor( const std::string& path, const std::string& gpu_name,
                                   const std::string& what );

} // namespace shardsweep
