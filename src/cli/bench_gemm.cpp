// shardsweep bench gemm: the GEMM model against NeuSight's measurements, leave-one-GPU-out.
#include "bench_probes.hpp"
#include "command_line.hpp"

#include <boost/program_options.hpp>
#include <chrono>
#include <iostream>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/calibration/gemm_fit.hpp>
#include <shardsweep/cli/bench_learned.hpp>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/neusight_data.hpp>
#include <shardsweep/io/operator_models.hpp>
#include <shardsweep/io/table_output.hpp>
#include <sstream>

namespace shardsweep
{

namespace
{
namespace po = boost::program_options;

//! B·M·N·K ≥ 2^30: the large, transformer-shaped end of the data (few rows; most are small).
bool isLarge( const GemmMeasurement& m )
{
    return m.B * m.M * m.N * m.K >= 1073741824.0;
}

std::vector<double> predictRows( const GemmConstants& c, const GemmDataset& d,
                                 const std::vector<std::size_t>& rows )
{
    std::vector<double> p;
    p.reserve( rows.size() );
    for ( std::size_t i : rows )
        p.push_back( gemmPredictRow( c, d.specs[d.rows[i].gpu], d.rows[i] ) );
    return p;
}

std::vector<double> rooflineRows( const GemmDataset& d, const std::vector<std::size_t>& rows )
{
    std::vector<double> p;
    p.reserve( rows.size() );
    for ( std::size_t i : rows )
    {
        const GemmMeasurement& m = d.rows[i];
        p.push_back( gemmRooflineMs( d.specs[m.gpu], m.B, m.M, m.N, m.K, DataType::fp32 ) );
    }
    return p;
}

//! --table learned: the learned GEMM model's fold files against the shipped analytic model.
ResultTable learnedTable( const GemmDataset& d, const std::string& model_dir )
{
    const LearnedFoldModels models =
        loadLearnedFoldModels( model_dir, "gemm", loadLearnedGemmModel );
    ResultTable table = learnedErrorTable();
    for ( std::size_t g = 0; g < d.gpus.size(); ++g )
    {
        const GpuEntry* entry = defaultGpuCatalog().find( d.device_names[g] );
        const std::string name = entry ? entry->name : d.gpus[g];
        const LearnedOperatorModel fold =
            loadLearnedGemmModel( model_dir + "/logo/gemm_without_" + name + ".mlp" );
        std::vector<GemmShape> shapes;
        LearnedPredictions p;
        std::vector<double> size;
        std::vector<char> linear, bmm;
        for ( const GemmMeasurement& m : d.rows )
            if ( m.gpu == static_cast<int>( g ) )
            {
                shapes.push_back( m.shape() );
                p.measured.push_back( m.latency_ms );
                p.unseen_shape.push_back( static_cast<long long>( m.B + m.M + m.N + m.K ) % 5 ==
                                          0 );
                size.push_back( m.B * m.M * m.N * m.K );
                linear.push_back( m.linear );
                bmm.push_back( !m.linear );
            }
        p.largest_shape = largestShapes( size );
        const auto latency = [&]( const LearnedOperatorModel* model )
        {
            std::vector<double> out;
            for ( const GemmPrediction& q : predictGemmsHost( model, d.specs[g], shapes ) )
                out.push_back( q.latency_ms );
            return out;
        };
        p.logo = latency( &fold );
        p.shapes = latency( &models.unseen_shapes );
        p.largest = latency( &models.without_largest );
        p.analytic = latency( nullptr );
        const std::vector<char> all( shapes.size(), 1 );
        addLearnedRows( table, name, "all", learnedSplitErrors( p, all ),
                        models.shipped.defaultFor( name ) ? "learned" : "analytic" );
        addLearnedRows( table, name, nameOf( GemmOp::bmm ), learnedSplitErrors( p, bmm ) );
        addLearnedRows( table, name, nameOf( GemmOp::linear ), learnedSplitErrors( p, linear ) );
    }
    return table;
}

void addConstantsRow( ResultTable& t, const std::string& fold, const GemmFitResult& r )
{
    double x[kGemmNumConstants];
    gemmConstantsToArray( r.constants, x );
    std::vector<ResultTable::Cell> row{ fold, r.objective,
                                        static_cast<long long>( r.evaluations ) };
    for ( double v : x )
        row.emplace_back( v );
    t.addRow( row );
}

//! The options of `bench gemm`.
struct BenchOptions
{
    std::string data_dir = std::string( SHARDSWEEP_MEASURED_DIR ) + "/gemm";
    std::string format = "table", table = "errors";
    std::string model_dir = defaultModelDir();
    int stride = 8, max_evals = 2500;
    OutputFormat fmt = OutputFormat::table; //!< parsed from `format`
};

//! Reads and checks the options into `o`; false after --help (the command then returns 0).
bool parseOptions( const CommandContext& ctx, const Arguments& args, BenchOptions& o )
{
    po::options_description opts(
        "Usage: shardsweep bench gemm [options]\n\n"
        "Validates the GEMM model (model/gemm.hpp) on NeuSight's measured FP32 bmm/linear\n"
        "latencies, leave-one-GPU-out: for each GPU the model's global constants are fitted on "
        "the\n"
        "other GPUs (Nelder-Mead, mean |log error|, every --fit-stride-th row) and evaluated on "
        "all\n"
        "rows of the held-out GPU. Prints per GPU and subset (all rows; 'large': B*M*N*K >= 2^30)\n"
        "the MAPE and median APE of that fit, of the plain roofline max(FLOPs/peak, bytes/BW) and "
        "of\n"
        "the shipped constants (shippedGemmConstants(), fitted on all GPUs).\n\nOptions" );
    opts.add_options()( "help,h", "this text" )(
        "data-dir", po::value( &o.data_dir ),
        "folder with devices/*.json and train/{bmm,linear}_<gpu>.csv (default: "
        "inputs/measured/gemm)" )( "format,f", po::value( &o.format ),
                                   enumChoices<OutputFormat>().c_str() )(
        "table", po::value( &o.table ),
        "errors: the error table; constants: the constants of each fold and of the fit on all "
        "GPUs; learned: the learned model (MLP correction, model/learned_operator.hpp) trained "
        "without each GPU (<models>/logo/gemm_without_<GPU>.mlp) on that GPU, trained without "
        "the rows whose B+M+N+K is a multiple of 5 (logo/gemm_unseen_shapes.mlp) on those rows, "
        "and trained without each GPU's largest fifth of shapes by B*M*N*K "
        "(logo/gemm_without_largest.mlp) on those rows, each next to the shipped analytic model "
        "on the same rows (MAPE %); default_model is the model `predict gemm` uses on the GPU "
        "(<models>/gemm.mlp's default_for line: learned where it won on the largest shapes)" )(
        "model-dir", po::value( &o.model_dir ),
        "folder with logo/gemm_*.mlp (default: $SHARDSWEEP_MODEL_DIR or inputs/models)" )(
        "fit-stride", po::value( &o.stride ),
        "fit on every n-th row of the training GPUs (default 8, keeps the run < 1 min)" )(
        "max-evaluations", po::value( &o.max_evals ),
        "objective evaluations per fit (default 2500)" );
    po::variables_map vm;
    if ( !parseCommandLine( ctx, "bench gemm", args, opts, vm ) )
        return false;
    o.fmt = parseOutputFormat( o.format );
    if ( o.table != "errors" && o.table != "constants" && o.table != "learned" )
        throw UsageError(
            "bench gemm: --table must be 'errors', 'constants' or 'learned', found '" + o.table +
            "'" );
    if ( o.stride < 1 || o.max_evals < 1 )
        throw UsageError( "bench gemm: --fit-stride and --max-evaluations must be >= 1" );
    return true;
}

//! The constants fitted on every `stride`-th row of the GPUs other than `g` (leave-one-GPU-out).
GemmFitResult fitWithoutGpu( const GemmDataset& d, int g, int stride, int max_evals )
{
    std::vector<std::size_t> fit;
    std::size_t n = 0;
    for ( std::size_t i = 0; i < d.rows.size(); ++i )
        if ( d.rows[i].gpu != g && n++ % stride == 0 )
            fit.push_back( i );
    return fitGemmConstants( kGemmFitStart, d, fit, max_evals );
}

//! The error rows of GPU `g` (all its rows, then the large ones): the fit without it (`fold`),
//! the roofline, the shipped constants and the refit on all GPUs (`all`).
void addErrorRows( ResultTable& errors, const GemmDataset& d, int g, const GemmFitResult& fold,
                   const GemmFitResult& all )
{
    for ( int large = 0; large < 2; ++large )
    {
        std::vector<std::size_t> rows;
        for ( std::size_t i = 0; i < d.rows.size(); ++i )
            if ( d.rows[i].gpu == g && ( !large || isLarge( d.rows[i] ) ) )
                rows.push_back( i );
        const GemmErrorStats logo =
            gemmErrorStats( predictRows( fold.constants, d, rows ), d, rows );
        const GemmErrorStats roof = gemmErrorStats( rooflineRows( d, rows ), d, rows );
        const GemmErrorStats shipped =
            gemmErrorStats( predictRows( shippedGemmConstants(), d, rows ), d, rows );
        const GemmErrorStats refit =
            gemmErrorStats( predictRows( all.constants, d, rows ), d, rows );
        errors.addRow( { d.gpus[g], std::string( large ? "large" : "all" ),
                         static_cast<long long>( rows.size() ), logo.mape, logo.median_ape,
                         roof.mape, roof.median_ape, shipped.mape, shipped.median_ape,
                         refit.mape } );
    }
}
} // namespace

int benchGemm( const CommandContext& ctx, const Arguments& args )
{
    BenchOptions o;
    if ( !parseOptions( ctx, args, o ) )
        return 0;

    const auto start = std::chrono::steady_clock::now();
    const GemmDataset d = loadNeuSightGemmDataset( o.data_dir );
    const int num_gpus = static_cast<int>( d.gpus.size() );
    if ( o.table == "learned" )
    {
        learnedTable( d, o.model_dir ).print( ctx.print(), o.fmt );
        if ( o.fmt == OutputFormat::table )
            ctx.print() << "\n"
                        << d.rows.size() << " rows, " << num_gpus << " GPUs, "
                        << bench::secondsSince( start ) << " s\n";
        return 0;
    }

    // Fit on all GPUs: what the shipped constants were fitted on.
    std::vector<std::size_t> all_fit;
    for ( std::size_t i = 0; i < d.rows.size(); i += o.stride )
        all_fit.push_back( i );
    const GemmFitResult all = fitGemmConstants( kGemmFitStart, d, all_fit, o.max_evals );

    ResultTable errors( { "gpu", "subset", "rows", "logo_mape_pct", "logo_median_ape_pct",
                          "roofline_mape_pct", "roofline_median_ape_pct", "shipped_mape_pct",
                          "shipped_median_ape_pct", "refit_all_mape_pct" } );
    ResultTable constants( { "fit_on", "objective_mean_abs_log", "evaluations", "launch_ms",
                             "peak_efficiency", "k_overhead", "intensity_half", "occupancy_area",
                             "bandwidth_efficiency", "splitk_ms", "linear_launch_ratio",
                             "flops_per_joule_16nm", "boost_ms" } );
    addConstantsRow( constants, "all", all );
    for ( int g = 0; g < num_gpus; ++g )
    {
        const GemmFitResult fold = fitWithoutGpu( d, g, o.stride, o.max_evals );
        addConstantsRow( constants, "all but " + d.gpus[g], fold );
        addErrorRows( errors, d, g, fold, all );
    }
    const double seconds = bench::secondsSince( start );
    ( o.table == "errors" ? errors : constants ).print( ctx.print(), o.fmt );
    if ( o.fmt == OutputFormat::table )
        ctx.print() << "\n"
                    << d.rows.size() << " rows, " << num_gpus << " GPUs, " << num_gpus + 1
                    << " fits on every " << o.stride << "-th row, " << seconds << " s\n";
    return 0;
}

} // namespace shardsweep
