// shardsweep bench ops / bench gemm --table learned: the learned operator models against
// NeuSight's measurements (leave-one-GPU-out, unseen shapes, the largest shapes held out) next
// to the analytic models; bench ops --table constants: the analytic operator model's fit.
#include "bench_probes.hpp"
#include "command_line.hpp"

#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <optional>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/calibration/operator_fit.hpp>
#include <shardsweep/cli/bench_learned.hpp>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/csv.hpp>
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

double mapePct( const std::vector<double>& pred, const std::vector<double>& meas )
{
    double s = 0.0;
    for ( std::size_t i = 0; i < pred.size(); ++i )
        s += std::fabs( pred[i] - meas[i] ) / meas[i];
    return pred.empty() ? 0.0 : 100.0 * s / pred.size();
}

//! The error rows of GPU `g`: the leave-one-GPU-out model (<model_dir>/logo/ops_without_<GPU>.mlp)
//! and the other folds next to the analytic model, on all its rows and per op family it has.
void addGpuRows( ResultTable& table, const NeuSightOperatorData& data, int g,
                 const std::string& model_dir, const LearnedFoldModels& models )
{
    const LearnedOperatorModel fold =
        loadLearnedOperatorModel( model_dir + "/logo/ops_without_" + data.gpus[g] + ".mlp" );
    std::vector<OperatorShape> shapes;
    LearnedPredictions p;
    std::vector<double> size;
    for ( const NeuSightOperatorRow& r : data.rows )
        if ( r.gpu == g )
        {
            shapes.push_back( r.shape );
            p.measured.push_back( r.latency_ms );
            p.unseen_shape.push_back( static_cast<long long>( r.shape.B + r.shape.H ) % 5 == 0 );
            size.push_back( r.shape.B * r.shape.H );
        }
    p.largest_shape = largestShapes( size );
    const GpuSpec& spec = data.specs[g];
    p.logo = predictOperatorsHost( &fold, spec, shapes );
    p.shapes = predictOperatorsHost( &models.unseen_shapes, spec, shapes );
    p.largest = predictOperatorsHost( &models.without_largest, spec, shapes );
    p.analytic = predictOperatorsHost( nullptr, spec, shapes );
    const std::vector<char> all( shapes.size(), 1 );
    addLearnedRows( table, data.gpus[g], "all", learnedSplitErrors( p, all ),
                    models.shipped.defaultFor( data.gpus[g] ) ? "learned" : "analytic" );
    for ( int k = 0; k < kNumOperatorKinds; ++k )
    {
        std::vector<char> sel( shapes.size() );
        bool any = false;
        for ( std::size_t i = 0; i < shapes.size(); ++i )
            any |= ( sel[i] = static_cast<int>( shapes[i].kind ) == k );
        if ( any )
            addLearnedRows( table, data.gpus[g], nameOf( static_cast<OperatorKind>( k ) ),
                            learnedSplitErrors( p, sel ) );
    }
}

//! The analytic model before the fit (until 2026-11-26): the roofline at 73 % of the bandwidth,
//! the median bound / measured of the five GPUs. The constants table's baseline.
double rooflineAt73Pct( const OperatorSample& s )
{
    return operatorBoundMs( s.gpu, s.kind, s.B, s.H ) / 0.73;
}

//! --table constants: the analytic model's constants fitted without each GPU and evaluated on it
//! (leave-one-GPU-out), the fit on all GPUs (which reproduces shippedOperatorConstants()), and the
//! shipped constants; each with the MAPE of the fold, the shipped constants and the 73 % roofline
//! on the same rows.
ResultTable constantsTable( const NeuSightOperatorData& data, const std::vector<int>& order,
                            int max_evals )
{
    std::vector<OperatorSample> samples;
    for ( const NeuSightOperatorRow& r : data.rows )
        samples.push_back(
            { data.specs[r.gpu], r.shape.kind, r.shape.B, r.shape.H, r.latency_ms } );
    ResultTable t( { "fold", "objective", "evaluations", "launch_ms", "bandwidth_efficiency",
                     "softmax_factor", "ln_factor", "rows", "fold_mape_pct", "shipped_mape_pct",
                     "roofline_73pct_mape_pct" } );
    const auto addRow = [&]( const std::string& fold, const OperatorFitResult& fit, int held )
    {
        std::vector<double> meas, pred, shipped, roof;
        for ( std::size_t i = 0; i < samples.size(); ++i )
            if ( held < 0 || data.rows[i].gpu == held )
            {
                const OperatorSample& s = samples[i];
                meas.push_back( s.latency_ms );
                pred.push_back(
                    predictOperatorAnalyticWith( fit.constants, s.gpu, s.kind, s.B, s.H ) );
                shipped.push_back( predictOperatorAnalytic( s.gpu, s.kind, s.B, s.H ) );
                roof.push_back( rooflineAt73Pct( s ) );
            }
        const OperatorConstants& c = fit.constants;
        t.addRow( { fold, fit.objective, static_cast<long long>( fit.evaluations ), c.launch_ms,
                    c.bandwidth_efficiency, c.softmax_factor, c.ln_factor,
                    static_cast<long long>( meas.size() ), mapePct( pred, meas ),
                    mapePct( shipped, meas ), mapePct( roof, meas ) } );
    };
    for ( int g : order )
    {
        std::vector<OperatorSample> train;
        for ( std::size_t i = 0; i < samples.size(); ++i )
            if ( data.rows[i].gpu != g )
                train.push_back( samples[i] );
        addRow( "without " + data.gpus[g],
                fitOperatorConstants( kOperatorFitStart, train, max_evals ), g );
    }
    addRow( "all GPUs", fitOperatorConstants( kOperatorFitStart, samples, max_evals ), -1 );
    OperatorFitResult shipped;
    shipped.constants = shippedOperatorConstants();
    shipped.objective = operatorFitObjective( shipped.constants, samples );
    addRow( "shipped", shipped, -1 );
    return t;
}
} // namespace

void addLearnedRows( ResultTable& t, const std::string& gpu, const std::string& subset,
                     const LearnedSplitErrors& e, const std::string& default_model )
{
    t.addRow( { gpu, subset, static_cast<long long>( e.rows ), e.logo_learned, e.logo_analytic,
                static_cast<long long>( e.shape_rows ), e.shapes_learned, e.shapes_analytic,
                static_cast<long long>( e.largest_rows ), e.largest_learned, e.largest_analytic,
                default_model } );
}

ResultTable learnedErrorTable()
{
    return ResultTable( { "gpu", "subset", "rows", "logo_learned_mape_pct",
                          "logo_analytic_mape_pct", "unseen_shape_rows", "shapes_learned_mape_pct",
                          "shapes_analytic_mape_pct", "largest_rows", "largest_learned_mape_pct",
                          "largest_analytic_mape_pct", "default_model" } );
}

LearnedFoldModels loadLearnedFoldModels( const std::string& dir, const std::string& family,
                                         LearnedOperatorModel ( *load )( const std::string& ) )
{
    return { load( dir + "/logo/" + family + "_unseen_shapes.mlp" ),
             load( dir + "/logo/" + family + "_without_largest.mlp" ),
             load( dir + "/" + family + ".mlp" ) };
}

std::vector<char> largestShapes( const std::vector<double>& size )
{
    std::vector<double> sorted = size;
    std::sort( sorted.begin(), sorted.end() );
    std::vector<char> held( size.size(), 0 );
    if ( size.empty() )
        return held;
    const double threshold =
        sorted[static_cast<std::size_t>( std::floor( kLargestShapesQuantile * sorted.size() ) )];
    for ( std::size_t i = 0; i < size.size(); ++i )
        held[i] = size[i] >= threshold;
    return held;
}

LearnedSplitErrors learnedSplitErrors( const LearnedPredictions& p,
                                       const std::vector<char>& select )
{
    // Per subset: measured, learned, analytic of the selected rows.
    struct Rows
    {
        std::vector<double> m, l, a;
        void add( double meas, double learned, double analytic )
        {
            m.push_back( meas );
            l.push_back( learned );
            a.push_back( analytic );
        }
    } all, shapes, largest;
    for ( std::size_t i = 0; i < p.measured.size(); ++i )
    {
        if ( !select[i] )
            continue;
        all.add( p.measured[i], p.logo[i], p.analytic[i] );
        if ( p.unseen_shape[i] )
            shapes.add( p.measured[i], p.shapes[i], p.analytic[i] );
        if ( p.largest_shape[i] )
            largest.add( p.measured[i], p.largest[i], p.analytic[i] );
    }
    LearnedSplitErrors e;
    e.rows = all.m.size();
    e.shape_rows = shapes.m.size();
    e.largest_rows = largest.m.size();
    e.logo_learned = mapePct( all.l, all.m );
    e.logo_analytic = mapePct( all.a, all.m );
    e.shapes_learned = mapePct( shapes.l, shapes.m );
    e.shapes_analytic = mapePct( shapes.a, shapes.m );
    e.largest_learned = mapePct( largest.l, largest.m );
    e.largest_analytic = mapePct( largest.a, largest.m );
    return e;
}

int benchOps( const CommandContext& ctx, const Arguments& args )
{
    std::string data_dir = std::string( SHARDSWEEP_MEASURED_DIR ) + "/ops";
    std::string model_dir = defaultModelDir();
    std::string format = "table", table_name = "learned";
    int max_evals = 3000;
    po::options_description opts(
        "Usage: shardsweep bench ops [options]\n\n"
        "Validates the learned operator model (softmax, ln, element-wise; "
        "model/learned_operator.hpp)\n"
        "on NeuSight's measured kernels (inputs/measured/ops/train/*.csv). For each GPU: the "
        "model\n"
        "trained without that GPU (<models>/logo/ops_without_<GPU>.mlp, written by\n"
        "postprocess/train_operator_model.py) on all its rows (leave-one-GPU-out), and the model\n"
        "trained without the rows whose B+H is a multiple of 5 "
        "(<models>/logo/ops_unseen_shapes.mlp)\n"
        "on those rows (unseen shapes of a known GPU), and the model trained without each GPU's\n"
        "largest fifth of shapes by B*H (<models>/logo/ops_without_largest.mlp) on those rows "
        "(out\n"
        "of distribution); each next to the analytic model (a fixed kernel time plus the "
        "roofline at\n"
        "a share of the bandwidth, softmax and layer norm slower by a factor; shipped "
        "constants).\n"
        "MAPE per GPU and op family (subset). default_model: the model `predict op` uses on that "
        "GPU\n"
        "(<models>/ops.mlp's default_for line: learned where it won on the largest shapes).\n\n"
        "Options" );
    opts.add_options()( "help,h",
                        "this text" )( "data-dir", po::value( &data_dir ),
                                       "folder with train/*.csv (default: inputs/measured/ops)" )(
        "model-dir", po::value( &model_dir ),
        "folder with logo/ops_*.mlp (default: $SHARDSWEEP_MODEL_DIR or inputs/models)" )(
        "format,f", po::value( &format ), enumChoices<OutputFormat>().c_str() )(
        "table", po::value( &table_name ),
        "learned (default): the table above; constants: the analytic model's constants fitted "
        "without each GPU (Nelder-Mead, mean |log error|) with their MAPE on it, the fit on all "
        "GPUs (what shippedOperatorConstants() holds, to 5 digits) and the shipped constants, "
        "next to the roofline at 73 % of the bandwidth (the analytic model before 2026-11-26)" )(
        "max-evaluations", po::value( &max_evals ),
        "objective evaluations per fit of --table constants (default 3000)" );
    po::variables_map vm;
    if ( !parseCommandLine( ctx, "bench ops", args, opts, vm ) )
        return 0;
    const OutputFormat fmt = parseOutputFormat( format );
    if ( table_name != "learned" && table_name != "constants" )
        throw UsageError( "bench ops: --table must be 'learned' or 'constants', found '" +
                          table_name + "'" );
    if ( max_evals < 1 )
        throw UsageError( "bench ops: --max-evaluations must be >= 1" );
    const auto start = std::chrono::steady_clock::now();

    // Rows of every train/*.csv; GPUs by catalog name.
    const NeuSightOperatorData data = loadNeuSightOperatorData( data_dir );
    std::vector<int> order( data.gpus.size() );
    for ( std::size_t g = 0; g < data.gpus.size(); ++g )
        order[g] = static_cast<int>( g );
    std::sort( order.begin(), order.end(),
               [&]( int a, int b ) { return data.gpus[a] < data.gpus[b]; } );
    if ( table_name == "constants" )
    {
        constantsTable( data, order, max_evals ).print( ctx.print(), fmt );
        if ( fmt == OutputFormat::table )
            ctx.print() << "\n"
                        << data.rows.size() << " rows, " << data.gpus.size() << " GPUs, "
                        << bench::secondsSince( start ) << " s\n";
        return 0;
    }
    const LearnedFoldModels models =
        loadLearnedFoldModels( model_dir, "ops", loadLearnedOperatorModel );
    ResultTable table = learnedErrorTable();
    for ( int g : order )
        addGpuRows( table, data, g, model_dir, models );
    const double seconds = bench::secondsSince( start );
    table.print( ctx.print(), fmt );
    if ( fmt == OutputFormat::table )
        ctx.print() << "\n"
                    << data.rows.size() << " rows, " << data.gpus.size() << " GPUs, " << seconds
                    << " s\n";
    return 0;
}

} // namespace shardsweep
