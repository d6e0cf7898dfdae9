// shardsweep bench transformer: the transformer step model against measured iterations.
#include "bench_neusight_calibration.hpp"
#include "bench_probes.hpp"
#include "bench_published.hpp"
#include "command_line.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <map>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/calibration/gemm_fit.hpp>
#include <shardsweep/calibration/transformer_fit.hpp>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/neusight_data.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/model/transformer/throughput.hpp>
#include <sstream>

namespace shardsweep
{

namespace
{
namespace po = boost::program_options;
using Rows = std::vector<TransformerMeasurement>;

//! The constants the fit varies: the framework's per-kernel host time, the tensor-core and
//! element-wise efficiencies, the kernel gap and the TP rank skew. The others (fused attention,
//! optimizer, workspace) have no measurement here and keep their datasheet/physical values.
const bool kFitted[kTransformerNumConstants] = { true,  true,  true, true, false, false,
                                                 false, false, true, true, true,  true };

struct Stats
{
    std::size_t rows = 0;
    double mape = 0.0, median = 0.0, max = 0.0;
};

//! Mean, median and max of absolute percentage errors (all 0 when there are none).
Stats apeStats( std::vector<double> ape )
{
    Stats s;
    s.rows = ape.size();
    if ( ape.empty() )
        return s;
    for ( double a : ape )
        s.mape += a / ape.size();
    std::sort( ape.begin(), ape.end() );
    s.median = ape[ape.size() / 2];
    s.max = ape.back();
    return s;
}

Stats stats( const std::vector<double>& pred, const Rows& rows )
{
    std::vector<double> ape;
    for ( std::size_t i = 0; i < rows.size(); ++i )
        ape.push_back( 100.0 * std::fabs( pred[i] - rows[i].measured_ms ) / rows[i].measured_ms );
    return apeStats( std::move( ape ) );
}

std::vector<double> predictAll( const TransformerConstants& c, const Rows& rows,
                                const GemmConstants& gemm = shippedGemmConstants() )
{
    std::vector<double> p;
    for ( const TransformerMeasurement& m : rows )
        p.push_back( predictMeasurement( c, m, gemm ) );
    return p;
}

Rows concat( const Rows& a, const Rows& b )
{
    Rows r = a;
    r.insert( r.end(), b.begin(), b.end() );
    return r;
}

//! Groups of measured configurations of one model, cluster size and global batch.
std::map<std::string, std::vector<std::size_t>> sameProblemGroups( const Rows& rows )
{
    std::map<std::string, std::vector<std::size_t>> groups;
    for ( std::size_t i = 0; i < rows.size(); ++i )
    {
        const TransformerMeasurement& m = rows[i];
        std::ostringstream key;
        key << m.set << " h" << m.model.hidden << " L" << m.model.layers << " s" << m.model.seq_len
            << " gpus" << m.config.numGpus() << " B" << m.config.global_batch;
        groups[key.str()].push_back( i );
    }
    return groups;
}

//! The options of `bench transformer`.
struct BenchOptions
{
    std::string data_dir, gemm_dir, platform_path, h100_platform_path, h100_gemms_dir, catalog_dir;
    std::string table = "errors";
    OutputFormat fmt = OutputFormat::table;
    int folds = 4, max_evals = 600;
    bool gemm_logo = true;
};

//! Reads and checks the options into `o`; false after --help (the command then returns 0).
bool parseOptions( const CommandContext& ctx, const Arguments& args, BenchOptions& o )
{
    const std::string measured = SHARDSWEEP_MEASURED_DIR;
    o.data_dir = measured + "/transformer";
    o.h100_gemms_dir = measured + "/h100";
    o.gemm_dir = measured + "/gemm";
    o.platform_path =
        std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/platforms/dgx-a100-hdr800.yaml";
    o.h100_platform_path =
        std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/platforms/h100-16node-ib.yaml";
    o.catalog_dir = defaultGpuCatalogDir();
    std::string format = "table";
    po::options_description opts(
        "Usage: shardsweep bench transformer [options]\n\n"
        "Validates the transformer step model (model/transformer.hpp) on measured iterations:\n"
        "vTrain's Megatron-DeepSpeed GPT runs on A100s (single node 2-8 GPUs, multi-node 64-512)\n"
        "and NeuSight's single-GPU HuggingFace fp32 steps on V100/T4/P100/P4.\n"
        "--table errors: MAPE per set with the shipped constants (shippedTransformerConstants()) "
        "and,\n"
        "  honestly held out, k-fold cross-validation on vTrain (constants refitted without the\n"
        "  fold) and, for NeuSight, the GEMM model refitted without the GPU (leave-one-GPU-out;\n"
        "  the transformer constants never see NeuSight's GPUs); calibrated_mape_pct: that\n"
        "  GEMM model calibrated with 150 random GEMMs of the GPU's own (issue 24), the mean\n"
        "  over 10 draws of them; calibrated_least_pct, _largest_pct: their range;\n"
        "  calibrated_own_shapes_pct: calibrated instead with the GPU's 150 measured GEMMs\n"
        "  nearest to the ones the model prices for these steps (what `shapes` lists).\n"
        "--table fastest: per model, cluster and batch, the measured time of the configuration\n"
        "  the model ranks fastest against the measured fastest (goal: within 3 %).\n"
        "--table feasible: measured configurations the model predicts not to fit in memory.\n"
        "--table constants: the constants fitted on all vTrain rows, next to the shipped ones.\n"
        "--table rows: every row with its prediction.\n"
        "--table nccl: the collective model with the platform's NVSwitch dimension against\n"
        "  nccl-tests all-reduce on 2..8 A100s.\n"
        "--table published: published H100 runs (NeMo 24.07 FP8, Megatron-LM's 2024 table) on\n"
        "  --h100-platform, with what the sources leave out set as their users run it\n"
        "  (calibration/published_runs.hpp), and the MAPE per source.\n\nOptions" );
    opts.add_options()( "help,h",
                        "this text" )( "data-dir", po::value( &o.data_dir ),
                                       "folder of vtrain_*_dev.csv, neusight_e2e_dev.csv, "
                                       "nccl_tests_a100/ (default: inputs/measured/transformer)" )(
        "gemm-dir", po::value( &o.gemm_dir ),
        "NeuSight GEMM data for the leave-one-GPU-out GEMM fit" )(
        "platform", po::value( &o.platform_path ),
        "platform of the vTrain runs (default inputs/platforms/dgx-a100-hdr800.yaml)" )(
        "h100-platform", po::value( &o.h100_platform_path ),
        "platform of the published H100 runs (default inputs/platforms/h100-16node-ib.yaml)" )(
        "gpus", po::value( &o.catalog_dir ), "GPU catalog folder" )(
        "format,f", po::value( &format ), enumChoices<OutputFormat>().c_str() )(
        "table", po::value( &o.table ),
        "errors | fastest | feasible | constants | rows | nccl | published" )(
        "folds", po::value( &o.folds ), "cross-validation folds on vTrain (default 4)" )(
        "max-evaluations", po::value( &o.max_evals ),
        "objective evaluations per fit (default 600)" )(
        "no-gemm-logo", "NeuSight with the shipped GEMM constants (skip the GEMM refits)" );
    po::variables_map vm;
    if ( !parseCommandLine( ctx, "bench transformer", args, opts, vm ) )
        return false;
    o.gemm_logo = !vm.count( "no-gemm-logo" );
    o.fmt = parseOutputFormat( format );
    const std::vector<std::string> tables = { "errors", "fastest", "feasible", "constants",
                                              "rows",   "nccl",    "published" };
    if ( std::find( tables.begin(), tables.end(), o.table ) == tables.end() )
        throw UsageError( "bench transformer: unknown --table '" + o.table + "'" );
    if ( o.folds < 2 || o.max_evals < 1 )
        throw UsageError( "bench transformer: --folds must be >= 2, --max-evaluations >= 1" );
    return true;
}

//! --table nccl: the all-reduce errors per GPU count 2..8 and over all rows.
void printNcclTable( const CommandContext& ctx, const BenchOptions& o, const Platform& platform )
{
    ResultTable t( { "gpus", "rows", "mape_pct", "median_ape_pct", "max_ape_pct" } );
    double all = 0.0;
    std::size_t all_rows = 0;
    for ( int n = 2; n <= 8; ++n )
    {
        const Stats s = apeStats( ncclAllReduceApe( o.data_dir, platform, n ) );
        all += s.mape * s.rows;
        all_rows += s.rows;
        t.addRow( { static_cast<long long>( n ), static_cast<long long>( s.rows ), s.mape, s.median,
                    s.max } );
    }
    t.addRow( { std::string( "all" ), static_cast<long long>( all_rows ), all / all_rows,
                std::string( "" ), std::string( "" ) } );
    t.print( ctx.print(), o.fmt );
}

//! The measured rows: vTrain single- and multi-node, NeuSight, and vTrain's two sets together.
struct MeasuredSets
{
    Rows single, multi, neusight, vtrain;
};

MeasuredSets readMeasuredSets( const BenchOptions& o, const Platform& platform )
{
    MeasuredSets sets;
    sets.single =
        readVtrainMeasurements( o.data_dir + "/vtrain_single_dev.csv", "vtrain_single", platform );
    sets.multi =
        readVtrainMeasurements( o.data_dir + "/vtrain_multi_dev.csv", "vtrain_multi", platform );
    sets.neusight = readNeusightMeasurements( o.data_dir + "/neusight_e2e_dev.csv", o.catalog_dir );
    sets.vtrain = concat( sets.single, sets.multi );
    return sets;
}

//! The step model's summary (phases, memory, feasibility) of one measured configuration.
TransformerStepSummary predictStepSummary( const TransformerMeasurement& m )
{
    const TransformerOperatorCost ops =
        transformerOperatorCost( transformerOperatorCase( m.platform.gpu, m.model, m.config ) );
    return predictTransformerStep( m.platform, m.model, m.config, ops );
}

//! --table rows: every measured row with its prediction, phases, peak memory and the MFU the
//! measured time means (the model's FLOPs over the measured time: the validated range's MFU).
void printRowsTable( const CommandContext& ctx, OutputFormat fmt, const MeasuredSets& sets )
{
    std::vector<std::string> columns = { "set",         "gpu",          "line",     "case",
                                         "measured_ms", "predicted_ms", "error_pct" };
    for ( const std::string& c : enumNameList<TransformerPhase>( "_ms" ) )
        columns.push_back( c );
    columns.emplace_back( "peak_memory_GiB" );
    columns.emplace_back( "measured_mfu_pct" );
    ResultTable t( columns );
    for ( const Rows* set : { &sets.single, &sets.multi, &sets.neusight } )
        for ( const TransformerMeasurement& m : *set )
        {
            const TransformerStepSummary s = predictStepSummary( m );
            const double p = predictMeasurement( shippedTransformerConstants(), m );
            std::vector<ResultTable::Cell> row{ m.set,
                                                m.gpu,
                                                static_cast<long long>( m.line ),
                                                m.label,
                                                m.measured_ms,
                                                p,
                                                100.0 * ( p - m.measured_ms ) / m.measured_ms };
            for ( int ph = 0; ph < kNumTransformerPhases; ++ph )
                row.emplace_back( s.phase_ms[ph] );
            row.emplace_back( s.peak_memory_GiB );
            TransformerStepSummary measured = s;
            measured.iteration_ms = m.measured_ms;
            row.emplace_back( transformerThroughput( measured, m.platform.gpu,
                                                     m.config.tp * m.config.pp * m.config.dp,
                                                     m.model.dtype, 0.0 )
                                  .mfu_pct );
            t.addRow( row );
        }
    t.print( ctx.print(), fmt );
}

//! --table fastest: per problem, the measured time of the predicted fastest configuration
//! against the measured fastest, and how many problems are within 3 %.
void printFastestTable( const CommandContext& ctx, OutputFormat fmt, const Rows& vtrain )
{
    ResultTable t( { "set", "problem", "configs", "measured_fastest_ms",
                     "measured_ms_of_predicted_fastest", "gap_pct", "within_3pct" } );
    int pass = 0, total = 0;
    const std::vector<double> pred = predictAll( shippedTransformerConstants(), vtrain );
    for ( const auto& [key, idx] : sameProblemGroups( vtrain ) )
    {
        if ( idx.size() < 2 )
            continue;
        std::size_t best_measured = idx[0], best_predicted = idx[0];
        for ( std::size_t i : idx )
        {
            if ( vtrain[i].measured_ms < vtrain[best_measured].measured_ms )
                best_measured = i;
            if ( pred[i] < pred[best_predicted] )
                best_predicted = i;
        }
        const double gap =
            100.0 * ( vtrain[best_predicted].measured_ms - vtrain[best_measured].measured_ms ) /
            vtrain[best_measured].measured_ms;
        const bool ok = gap <= 3.0;
        pass += ok;
        ++total;
        t.addRow( { vtrain[idx[0]].set, key, static_cast<long long>( idx.size() ),
                    vtrain[best_measured].measured_ms, vtrain[best_predicted].measured_ms, gap,
                    std::string( ok ? "yes" : "no" ) } );
    }
    t.print( ctx.print(), fmt );
    if ( fmt == OutputFormat::table )
        ctx.print() << "\n"
                    << pass << " of " << total
                    << " problems (>= 2 measured configurations): the predicted fastest is "
                       "within 3 % of the measured fastest\n";
}

//! --table feasible: per set, the rows the model predicts not to fit and the peak memory.
void printFeasibleTable( const CommandContext& ctx, OutputFormat fmt, const MeasuredSets& sets )
{
    ResultTable t(
        { "set", "rows", "predicted_infeasible", "max_peak_memory_GiB", "gpu_memory_GiB" } );
    for ( const Rows* set : { &sets.single, &sets.multi, &sets.neusight } )
    {
        long long bad = 0;
        double peak = 0.0, capacity = 0.0;
        for ( const TransformerMeasurement& m : *set )
        {
            const TransformerStepSummary s = predictStepSummary( m );
            bad += !s.feasible;
            peak = std::max( peak, s.peak_memory_GiB );
            capacity = m.platform.gpu.memory_GiB;
        }
        t.addRow( { set->empty() ? std::string( "" ) : set->front().set,
                    static_cast<long long>( set->size() ), bad, peak, capacity } );
    }
    t.print( ctx.print(), fmt );
}

//! --table constants: the shipped constants next to those fitted on all vTrain rows.
void printConstantsTable( const CommandContext& ctx, OutputFormat fmt,
                          const TransformerFitResult& all )
{
    std::vector<std::string> cols = { "constants", "objective_mean_abs_log", "evaluations" };
    for ( int i = 0; i < kTransformerNumConstants; ++i )
        cols.push_back( transformerConstantName( i ) );
    ResultTable t( cols );
    for ( int which = 0; which < 2; ++which )
    {
        const TransformerConstants c = which ? all.constants : shippedTransformerConstants();
        double x[kTransformerNumConstants];
        transformerConstantsToArray( c, x );
        std::vector<ResultTable::Cell> row{
            std::string( which ? "fit on all vTrain rows" : "shipped" ),
            which ? all.objective : 0.0, static_cast<long long>( which ? all.evaluations : 0 ) };
        for ( double v : x )
            row.emplace_back( v );
        t.addRow( row );
    }
    t.print( ctx.print(), fmt );
}

//! k-fold cross-validation over all vTrain rows: each row's prediction by the constants refitted
//! without its fold (row i is in fold i % k).
std::vector<double> crossValidatedPredictions( const Rows& vtrain, int folds, int max_evals )
{
    std::vector<double> cv_pred( vtrain.size(), 0.0 );
    for ( int k = 0; k < folds; ++k )
    {
        Rows train, test;
        std::vector<std::size_t> test_idx;
        for ( std::size_t i = 0; i < vtrain.size(); ++i )
            if ( int( i % folds ) == k )
            {
                test.push_back( vtrain[i] );
                test_idx.push_back( i );
            }
            else
                train.push_back( vtrain[i] );
        const TransformerFitResult fold =
            fitTransformerConstants( shippedTransformerConstants(), train, kFitted, max_evals );
        const std::vector<double> p = predictAll( fold.constants, test );
        for ( std::size_t j = 0; j < test_idx.size(); ++j )
            cv_pred[test_idx[j]] = p[j];
    }
    return cv_pred;
}

//! The errors rows of vTrain's single- and multi-node sets: shipped constants and k-fold CV.
void addVtrainErrorRows( ResultTable& t, const MeasuredSets& sets, int folds, int max_evals )
{
    const std::vector<double> cv_pred = crossValidatedPredictions( sets.vtrain, folds, max_evals );
    const std::vector<double> shipped_vtrain =
        predictAll( shippedTransformerConstants(), sets.vtrain );
    for ( int which = 0; which < 2; ++which )
    {
        const Rows& set = which ? sets.multi : sets.single;
        const std::size_t offset = which ? sets.single.size() : 0;
        const std::vector<double> ship( shipped_vtrain.begin() + offset,
                                        shipped_vtrain.begin() + offset + set.size() );
        const std::vector<double> cv( cv_pred.begin() + offset,
                                      cv_pred.begin() + offset + set.size() );
        const Stats s = stats( ship, set ), h = stats( cv, set );
        t.addRow( { set.front().set, std::string( "A100-SXM4" ), static_cast<long long>( s.rows ),
                    s.mape, s.median, s.max, h.mape, std::to_string( folds ) + "-fold CV", NAN, NAN,
                    NAN, NAN, which ? 10.0 : 8.0 } );
    }
}

//! The errors rows of NeuSight, per GPU.
void addNeusightErrorRows( ResultTable& t, const BenchOptions& o, const GpuCatalog& catalog,
                           const Rows& neusight )
{
    // NeuSight per GPU: the transformer constants never see these GPUs; the GEMM model is refitted
    // without the GPU's own GEMM measurements (as bench gemm's leave-one-GPU-out).
    std::map<std::string, Rows> by_gpu;
    for ( const TransformerMeasurement& m : neusight )
        by_gpu[m.gpu].push_back( m );
    GemmDataset gemm_data;
    if ( o.gemm_logo )
        gemm_data = loadNeuSightGemmDataset( o.gemm_dir );
    for ( const auto& [gpu, rows] : by_gpu )
    {
        GemmConstants gemm = shippedGemmConstants();
        std::string protocol = "shipped GEMM constants";
        if ( o.gemm_logo )
        {
            gemm = gemmConstantsWithoutGpu( catalog, gemm_data, gpu );
            protocol = "GEMM fit without this GPU";
        }
        const Stats s = stats( predictAll( shippedTransformerConstants(), rows ), rows );
        const Stats h = stats( predictAll( shippedTransformerConstants(), rows, gemm ), rows );
        // Issue 24: the same held-out GEMM model, calibrated with 150 of the GPU's own GEMMs.
        CalibratedMape c;
        if ( o.gemm_logo && !rows.empty() )
            c = neusightCalibratedMape(
                rows, gpu, catalog, gemm_data, gemm,
                [&]( const Rows& r )
                { return stats( predictAll( shippedTransformerConstants(), r, gemm ), r ).mape; } );
        t.addRow( { std::string( "neusight" ), gpu, static_cast<long long>( s.rows ), s.mape,
                    s.median, s.max, h.mape, protocol, c.mean, c.least, c.largest, c.own_shapes,
                    8.0 } );
    }
}

//! --table errors: MAPE per set, shipped and held out, and a summary line of the run.
void printErrorsTable( const CommandContext& ctx, const BenchOptions& o, const GpuCatalog& catalog,
                       const MeasuredSets& sets, std::chrono::steady_clock::time_point start )
{
    ResultTable t( { "set", "gpu", "rows", "shipped_mape_pct", "shipped_median_ape_pct",
                     "shipped_max_ape_pct", "held_out_mape_pct", "held_out_protocol",
                     "calibrated_mape_pct", "calibrated_least_pct", "calibrated_largest_pct",
                     "calibrated_own_shapes_pct", "goal_pct" } );
    addVtrainErrorRows( t, sets, o.folds, o.max_evals );
    addNeusightErrorRows( t, o, catalog, sets.neusight );
    const double seconds = bench::secondsSince( start );
    t.print( ctx.print(), o.fmt );
    if ( o.fmt == OutputFormat::table )
        ctx.print() << "\nvTrain: " << sets.single.size() << " single-node + " << sets.multi.size()
                    << " multi-node rows on " << o.platform_path
                    << "; NeuSight: " << sets.neusight.size() << " rows; " << o.folds
                    << "-fold CV with " << o.max_evals << " evaluations per fit; " << seconds
                    << " s\n";
}
} // namespace

int benchTransformer( const CommandContext& ctx, const Arguments& args )
{
    BenchOptions o;
    if ( !parseOptions( ctx, args, o ) )
        return 0;

    const auto start = std::chrono::steady_clock::now();
    const GpuCatalog catalog = readGpuCatalog( o.catalog_dir );
    const Platform platform = readPlatformFile( o.platform_path, catalog ).platform;

    if ( o.table == "published" )
    {
        printPublishedTable( ctx, o.fmt, o.data_dir,
                             readPlatformFile( o.h100_platform_path, catalog ).platform,
                             o.h100_gemms_dir );
        return 0;
    }
    if ( o.table == "nccl" )
    {
        printNcclTable( ctx, o, platform );
        return 0;
    }
    const MeasuredSets sets = readMeasuredSets( o, platform );
    if ( o.table == "rows" )
    {
        printRowsTable( ctx, o.fmt, sets );
        return 0;
    }
    if ( o.table == "fastest" )
    {
        printFastestTable( ctx, o.fmt, sets.vtrain );
        return 0;
    }
    if ( o.table == "feasible" )
    {
        printFeasibleTable( ctx, o.fmt, sets );
        return 0;
    }

    // Constants fitted on every vTrain row (what shippedTransformerConstants() holds, rounded).
    const TransformerFitResult all =
        fitTransformerConstants( shippedTransformerConstants(), sets.vtrain, kFitted, o.max_evals );
    if ( o.table == "constants" )
    {
        printConstantsTable( ctx, o.fmt, all );
        return 0;
    }
    printErrorsTable( ctx, o, catalog, sets, start );
    return 0;
}

} // namespace shardsweep
