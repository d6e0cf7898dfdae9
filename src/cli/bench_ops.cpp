// shardsweep bench ops / bench gemm --table learned: the learned operator models against
// NeuSight's measurements, leave-one-GPU-out and on unseen shapes, next to the analytic models.
#include "bench_probes.hpp"
#include "command_line.hpp"

#include <boost/program_options.hpp>
#include <chrono>
#include <filesystem>
#include <optional>
#include <shardsweep/build_paths.hpp>
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

struct OperatorRow
{
    int gpu = 0;
    OperatorShape shape;
    double latency_ms = 0.0;
};

double mapePct( const std::vector<double>& pred, const std::vector<double>& meas )
{
    double s = 0.0;
    for ( std::size_t i = 0; i < pred.size(); ++i )
        s += std::fabs( pred[i] - meas[i] ) / meas[i];
    return pred.empty() ? 0.0 : 100.0 * s / pred.size();
}

//! NeuSight's measured operator rows and their GPUs (by catalog name, in order of appearance).
struct OperatorData
{
    std::vector<std::string> gpus;
    std::vector<GpuSpec> specs;
    std::vector<OperatorRow> rows;
};

//! Appends the rows of one of NeuSight's train/*.csv to `data`.
void readOperatorFile( const std::string& f, OperatorData& data )
{
    const CsvTable t = CsvTable::read( f );
    t.checkColumns( { "OPName", "Latency", "Device", "B", "H" },
                    t.header() ); // NeuSight's other columns
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        OperatorRow row;
        const std::optional<OperatorKind> kind =
            enumFromName<OperatorKind>( t.text( r, "OPName" ) );
        if ( !kind )
            t.fail( r, "OPName", "one of " + enumChoices<OperatorKind>( ", " ) );
        row.shape.kind = *kind;
        const GpuEntry* g = defaultGpuCatalog().find( t.text( r, "Device" ) );
        if ( !g )
            t.fail( r, "Device", "a GPU of the catalog (inputs/gpus)" );
        const auto it = std::find( data.gpus.begin(), data.gpus.end(), g->name );
        row.gpu = static_cast<int>( it - data.gpus.begin() );
        if ( it == data.gpus.end() )
        {
            data.gpus.push_back( g->name );
            data.specs.push_back( g->spec );
        }
        row.shape.B = t.getDouble( r, "B" );
        row.shape.H = t.getDouble( r, "H" );
        row.latency_ms = t.getDouble( r, "Latency" );
        if ( !( row.latency_ms > 0.0 ) )
            t.fail( r, "Latency", "a number > 0" );
        data.rows.push_back( row );
    }
}

//! Rows of every train/*.csv of `data_dir` (in file name order); GPUs by catalog name.
OperatorData readOperatorData( const std::string& data_dir )
{
    namespace fs = std::filesystem;
    const fs::path train = fs::path( data_dir ) / "train";
    if ( !fs::is_directory( train ) )
        throw InputError( data_dir, "expected the folder train/ (inputs/measured/ops)" );
    std::vector<std::string> files;
    for ( const auto& e : fs::directory_iterator( train ) )
        if ( e.path().extension() == ".csv" )
            files.push_back( e.path().string() );
    std::sort( files.begin(), files.end() );
    OperatorData data;
    for ( const std::string& f : files )
        readOperatorFile( f, data );
    return data;
}

//! The error rows of GPU `g`: the leave-one-GPU-out model (<model_dir>/logo/ops_without_<GPU>.mlp)
//! and `shapes_model` next to the analytic model, on all its rows and per op family it has.
void addGpuRows( ResultTable& table, const OperatorData& data, int g, const std::string& model_dir,
                 const LearnedOperatorModel& shapes_model )
{
    const LearnedOperatorModel fold =
        loadLearnedOperatorModel( model_dir + "/logo/ops_without_" + data.gpus[g] + ".mlp" );
    std::vector<OperatorShape> shapes;
    std::vector<double> meas;
    std::vector<char> held;
    for ( const OperatorRow& r : data.rows )
        if ( r.gpu == g )
        {
            shapes.push_back( r.shape );
            meas.push_back( r.latency_ms );
            held.push_back( static_cast<long long>( r.shape.B + r.shape.H ) % 5 == 0 );
        }
    const GpuSpec& spec = data.specs[g];
    const std::vector<double> logo = predictOperatorsHost( &fold, spec, shapes );
    const std::vector<double> unseen = predictOperatorsHost( &shapes_model, spec, shapes );
    const std::vector<double> analytic = predictOperatorsHost( nullptr, spec, shapes );
    std::vector<char> all( shapes.size(), 1 );
    addLearnedRows( table, data.gpus[g], "all",
                    learnedSplitErrors( meas, logo, unseen, analytic, held, all ) );
    for ( int k = 0; k < kNumOperatorKinds; ++k )
    {
        std::vector<char> sel( shapes.size() );
        bool any = false;
        for ( std::size_t i = 0; i < shapes.size(); ++i )
            any |= ( sel[i] = static_cast<int>( shapes[i].kind ) == k );
        if ( any )
            addLearnedRows( table, data.gpus[g], nameOf( static_cast<OperatorKind>( k ) ),
                            learnedSplitErrors( meas, logo, unseen, analytic, held, sel ) );
    }
}
} // namespace

void addLearnedRows( ResultTable& t, const std::string& gpu, const std::string& subset,
                     const LearnedSplitErrors& e )
{
    t.addRow( { gpu, subset, static_cast<long long>( e.rows ), e.logo_learned, e.logo_analytic,
                static_cast<long long>( e.shape_rows ), e.shapes_learned, e.shapes_analytic } );
}

ResultTable learnedErrorTable()
{
    return ResultTable( { "gpu", "subset", "rows", "logo_learned_mape_pct",
                          "logo_analytic_mape_pct", "unseen_shape_rows", "shapes_learned_mape_pct",
                          "shapes_analytic_mape_pct" } );
}

LearnedSplitErrors
learnedSplitErrors( const std::vector<double>& meas, const std::vector<double>& logo,
                    const std::vector<double>& shapes, const std::vector<double>& analytic,
                    const std::vector<char>& held, const std::vector<char>& select )
{
    LearnedSplitErrors e;
    std::vector<double> m, l, a, hm, hs, ha;
    for ( std::size_t i = 0; i < meas.size(); ++i )
    {
        if ( !select[i] )
            continue;
        m.push_back( meas[i] );
        l.push_back( logo[i] );
        a.push_back( analytic[i] );
        if ( held[i] )
        {
            hm.push_back( meas[i] );
            hs.push_back( shapes[i] );
            ha.push_back( analytic[i] );
        }
    }
    e.rows = m.size();
    e.shape_rows = hm.size();
    e.logo_learned = mapePct( l, m );
    e.logo_analytic = mapePct( a, m );
    e.shapes_learned = mapePct( hs, hm );
    e.shapes_analytic = mapePct( ha, hm );
    return e;
}

int benchOps( const CommandContext& ctx, const Arguments& args )
{
    std::string data_dir = std::string( SHARDSWEEP_MEASURED_DIR ) + "/ops";
    std::string model_dir = defaultModelDir();
    std::string format = "table";
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
        "on those rows (unseen shapes of a known GPU); each next to the analytic model (the "
        "roofline\n"
        "at 73 % of the bandwidth). MAPE per GPU and op family (subset).\n\nOptions" );
    opts.add_options()( "help,h",
                        "this text" )( "data-dir", po::value( &data_dir ),
                                       "folder with train/*.csv (default: inputs/measured/ops)" )(
        "model-dir", po::value( &model_dir ),
        "folder with logo/ops_*.mlp (default: $SHARDSWEEP_MODEL_DIR or inputs/models)" )(
        "format,f", po::value( &format ), enumChoices<OutputFormat>().c_str() );
    po::variables_map vm;
    if ( !parseCommandLine( ctx, "bench ops", args, opts, vm ) )
        return 0;
    const OutputFormat fmt = parseOutputFormat( format );
    const auto start = std::chrono::steady_clock::now();

    // Rows of every train/*.csv; GPUs by catalog name.
    const OperatorData data = readOperatorData( data_dir );
    const LearnedOperatorModel shapes_model =
        loadLearnedOperatorModel( model_dir + "/logo/ops_unseen_shapes.mlp" );
    ResultTable table = learnedErrorTable();
    std::vector<int> order( data.gpus.size() );
    for ( std::size_t g = 0; g < data.gpus.size(); ++g )
        order[g] = static_cast<int>( g );
    std::sort( order.begin(), order.end(),
               [&]( int a, int b ) { return data.gpus[a] < data.gpus[b]; } );
    for ( int g : order )
        addGpuRows( table, data, g, model_dir, shapes_model );
    const double seconds = bench::secondsSince( start );
    table.print( ctx.print(), fmt );
    if ( fmt == OutputFormat::table )
        ctx.print() << "\n"
                    << data.rows.size() << " rows, " << data.gpus.size() << " GPUs, " << seconds
                    << " s\n";
    return 0;
}

} // namespace shardsweep
