#include <algorithm>
#include <cmath>
#include <numeric>
#include <shardsweep/calibration/transformer_fit.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/model/collectives.hpp>

namespace shardsweep
{

std::vector<TransformerMeasurement>
readVtrainMeasurements( const std::string& path, const std::string& set, const Platform& platform )
{
    const CsvTable csv = CsvTable::read( path );
    csv.checkColumns( { "gpus", "global_batch", "micro_batch", "hidden", "heads", "layers",
                        "seq_len", "tp", "dp", "pp", "iteration_ms" },
                      { "params_billion" } );
    std::vector<TransformerMeasurement> rows;
    for ( std::size_t r = 0; r < csv.numRows(); ++r )
    {
        TransformerMeasurement m;
        m.set = set;
        m.gpu = "A100-SXM4";
        m.line = csv.lineOf( r );
        m.platform = platform;
        m.model.arch = TransformerArch::gpt;
        m.model.hidden = int( csv.getInt( r, "hidden" ) );
        m.model.heads = int( csv.getInt( r, "heads" ) );
        m.model.layers = int( csv.getInt( r, "layers" ) );
        m.model.seq_len = int( csv.getInt( r, "seq_len" ) );
        m.model.vocab = 50257;
        m.model.dtype = DataType::fp16;
        m.config.tp = int( csv.getInt( r, "tp" ) );
        m.config.pp = int( csv.getInt( r, "pp" ) );
        m.config.dp = int( csv.getInt( r, "dp" ) );
        m.config.micro_batch = int( csv.getInt( r, "micro_batch" ) );
        m.config.global_batch = csv.getInt( r, "global_batch" );
        m.config.recompute = Recompute::full;
        m.config.schedule = PipelineSchedule::one_f_one_b;
        m.config.fused = false;
        m.measured_ms = csv.getDouble( r, "iteration_ms" );
        m.label = "h" + std::to_string( m.model.hidden ) + " L" + std::to_string( m.model.layers ) +
                  " t" + std::to_string( m.config.tp ) + " p" + std::to_string( m.config.pp ) +
                  " d" + std::to_string( m.config.dp ) + " b" +
                  std::to_string( m.config.micro_batch ) + " B" +
                  std::to_string( m.config.global_batch );
        rows.push_back( m );
    }
    return rows;
}

namespace
{
//! NeuSight's models (inputs/measured/transformer/README.md): layers, hidden, heads, ffn, vocab.
bool neusightModel( const std::string& name, TransformerSpec& m )
{
    struct Known
    {
        const char* name;
        TransformerArch arch;
        int layers, hidden, heads, ffn, vocab;
    };
    static const Known known[] = {
        { "bert_large", TransformerArch::bert, 24, 1024, 16, 4096, 30522 },
        { "gpt2_large", TransformerArch::gpt, 36, 1280, 20, 5120, 50257 },
        { "gpt3_xl", TransformerArch::gpt, 24, 3072, 24, 12288, 50257 },
        { "gpt3_27", TransformerArch::gpt, 32, 2560, 32, 10240, 50257 },
        { "opt_13", TransformerArch::opt, 24, 2048, 32, 8192, 50272 },
    };
    for ( const Known& k : known )
        if ( name == k.name )
        {
            m.arch = k.arch;
            m.layers = k.layers;
            m.hidden = k.hidden;
            m.heads = k.heads;
            m.ffn_hidden = k.ffn;
            m.vocab = k.vocab;
            return true;
        }
    return false;
}
} // namespace

std::vector<TransformerMeasurement> readNeusightMeasurements( const std::string& path,
                                                              const std::string& catalog_dir )
{
    const GpuCatalog catalog = readGpuCatalog( catalog_dir );
    const CsvTable csv = CsvTable::read( path );
    csv.checkColumns( { "gpu", "model", "mode", "seq_len", "batch", "variant", "e2e_ms" },
                      { "fw_ms", "bw_ms", "num_layer" } );
    std::vector<TransformerMeasurement> rows;
    for ( std::size_t r = 0; r < csv.numRows(); ++r )
    {
        TransformerMeasurement m;
        if ( !neusightModel( csv.text( r, "model" ), m.model ) )
            continue;
        const GpuEntry* gpu = catalog.find( csv.text( r, "gpu" ) );
        if ( !gpu )
            csv.fail( r, "gpu", "a GPU of the catalog " + catalog_dir );
        m.set = "neusight";
        m.gpu = gpu->name;
        m.line = csv.lineOf( r );
        m.platform = Platform();
        m.platform.gpu = gpu->spec;
        m.model.seq_len = int( csv.getInt( r, "seq_len" ) );
        m.model.dtype = DataType::fp32;
        const std::string mode = csv.text( r, "mode" );
        m.config.mode = mode == "inf" ? RunMode::infer : RunMode::train;
        m.config.micro_batch = int( csv.getInt( r, "batch" ) );
        m.config.global_batch = m.config.micro_batch;
        m.config.fused = csv.text( r, "variant" ) == "fusion";
        m.without_optimizer = true;
        m.without_loss_forward = m.config.mode == RunMode::train;
        m.without_lm_head =
            m.config.mode == RunMode::infer && m.model.arch == TransformerArch::bert;
        m.measured_ms = csv.getDouble( r, "e2e_ms" );
        m.label = csv.text( r, "model" ) + " " + mode + " s" + csv.text( r, "seq_len" ) + " b" +
                  csv.text( r, "batch" );
        rows.push_back( m );
    }
    return rows;
}

double predictMeasurement( const TransformerConstants& c, const TransformerMeasurement& m,
                           const GemmConstants& gemm )
{
    const TransformerOperatorCost ops = transformerOperatorCostWith(
        c, transformerOperatorCase( m.platform.gpu, m.model, m.config ), gemm );
    const TransformerStepSummary s =
        predictTransformerStepWith( c, m.platform, m.model, m.config, ops );
    double ms = s.iteration_ms;
    if ( m.without_optimizer )
        ms -= s.phase_ms[int( TransformerPhase::optimizer )];
    // One stage, one micro-batch: the step runs the head and the loss once each.
    if ( m.without_loss_forward )
        ms -= ops.loss_fwd_ms;
    if ( m.without_lm_head )
        ms -= ops.head_fwd_ms;
    return ms;
}

double transformerMape( const TransformerConstants& c,
                        const std::vector<TransformerMeasurement>& rows )
{
    if ( rows.empty() )
        return 0.0;
    double sum = 0.0;
    for ( const TransformerMeasurement& m : rows )
        sum += std::fabs( predictMeasurement( c, m ) - m.measured_ms ) / m.measured_ms;
    return 100.0 * sum / rows.size();
}

void transformerConstantsToArray( const TransformerConstants& c, double* x )
{
    x[0] = c.kernel_gap_ms;
    x[1] = c.host_ms_per_kernel;
    x[2] = c.elementwise_bw_eff;
    x[3] = c.tensor_core_eff;
    x[4] = c.flash_efficiency;
    x[5] = c.flash_bwd_ratio;
    x[6] = c.optimizer_bytes_extra;
    x[7] = c.workspace_GiB;
    x[8] = c.tp_sync_ms;
    x[9] = c.p2p_bw_eff;
    x[10] = c.p2p_ms;
    x[11] = c.dp_bw_eff;
}

TransformerConstants transformerConstantsFromArray( const double* x )
{
    TransformerConstants c = shippedTransformerConstants(); // fp8_gemm_eff: not in the vTrain fit
    c.kernel_gap_ms = x[0];
    c.host_ms_per_kernel = x[1];
    c.elementwise_bw_eff = x[2];
    c.tensor_core_eff = x[3];
    c.flash_efficiency = x[4];
    c.flash_bwd_ratio = x[5];
    c.optimizer_bytes_extra = x[6];
    c.workspace_GiB = x[7];
    c.tp_sync_ms = x[8];
    c.p2p_bw_eff = x[9];
    c.p2p_ms = x[10];
    c.dp_bw_eff = x[11];
    return c;
}

const char* transformerConstantName( int i )
{
    static const char* names[kTransformerNumConstants] = { "kernel_gap_ms",
                                                           "host_ms_per_kernel",
                                                           "elementwise_bw_eff",
                                                           "tensor_core_eff",
                                                           "flash_efficiency",
                                                           "flash_bwd_ratio",
                                                           "optimizer_bytes_extra",
                                                           "workspace_GiB",
                                                           "tp_sync_ms",
                                                           "p2p_bw_eff",
                                                           "p2p_ms",
                                                           "dp_bw_eff" };
    return i >= 0 && i < kTransformerNumConstants ? names[i] : "";
}

namespace
{
//! Mean |log(pred/measured)| per set, averaged over the sets with weights √rows: between weighing
//! every row alike (the 288 single-node rows would swamp the 22 multi-node ones) and every set
//! alike (22 rows would pull as hard as 288).
double meanLogError( const TransformerConstants& c,
                     const std::vector<TransformerMeasurement>& rows )
{
    std::vector<std::string> sets;
    std::vector<double> sum, count;
    for ( const TransformerMeasurement& m : rows )
    {
        std::size_t k = std::find( sets.begin(), sets.end(), m.set ) - sets.begin();
        if ( k == sets.size() )
        {
            sets.push_back( m.set );
            sum.push_back( 0.0 );
            count.push_back( 0.0 );
        }
        const double p = predictMeasurement( c, m );
        sum[k] += p > 0.0 ? std::fabs( std::log( p / m.measured_ms ) ) : 1e3;
        count[k] += 1.0;
    }
    double total = 0.0, weights = 0.0;
    for ( std::size_t k = 0; k < sets.size(); ++k )
    {
        total += std::sqrt( count[k] ) * sum[k] / count[k];
        weights += std::sqrt( count[k] );
    }
    return total / weights;
}

//! The constants `base` with each free constant free[k] set to exp(y[k]) (the fit's coordinates
//! are the logarithms of the free constants).
TransformerConstants constantsAt( const double* base, const std::vector<int>& free,
                                  const std::vector<double>& y )
{
    double x[kTransformerNumConstants];
    std::copy( base, base + kTransformerNumConstants, x );
    for ( int k = 0; k < int( free.size() ); ++k )
        x[free[k]] = std::exp( y[k] );
    return transformerConstantsFromArray( x );
}

//! A Nelder–Mead simplex of n + 1 points in the log space of the n free constants, and the
//! objective at each point.
struct Simplex
{
    std::vector<std::vector<double>> points;
    std::vector<double> value;
};

//! Nelder–Mead on meanLogError over the logarithms of the free constants, counting evaluations.
class LogSpaceFit
{
  public:
    LogSpaceFit( const double* base, const std::vector<int>& free,
                 const std::vector<TransformerMeasurement>& rows, int max_evaluations,
                 int& evaluations )
        : _base( base ), _free( free ), _rows( rows ), _n( int( free.size() ) ),
          _max_evaluations( max_evaluations ), _evaluations( evaluations )
    {
    }

    //! The objective at log-space point y.
    double evaluate( const std::vector<double>& y )
    {
        ++_evaluations;
        return meanLogError( constantsAt( _base, _free, y ), _rows );
    }

    bool budgetLeft() const { return _evaluations < _max_evaluations; }

    //! The simplex of `best` and best + step along each axis.
    Simplex initialSimplex( const std::vector<double>& best, double best_value, double step )
    {
        Simplex s{ std::vector<std::vector<double>>( _n + 1, best ),
                   std::vector<double>( _n + 1, best_value ) };
        for ( int k = 0; k < _n; ++k )
        {
            s.points[k + 1][k] += step;
            s.value[k + 1] = evaluate( s.points[k + 1] );
        }
        return s;
    }

    //! One Nelder–Mead step (reflect, expand, contract or shrink towards the best point); false
    //! when the simplex has converged and nothing was done.
    bool iterate( Simplex& s )
    {
        std::vector<std::vector<double>>& simplex = s.points;
        std::vector<double>& value = s.value;
        const int n = _n;
        std::vector<int> order( n + 1 );
        std::iota( order.begin(), order.end(), 0 );
        std::sort( order.begin(), order.end(),
                   [&]( int a, int b ) { return value[a] < value[b]; } );
        const int lo = order[0], hi = order[n], second = order[n - 1];
        if ( value[hi] - value[lo] < 1e-7 )
            return false;
        std::vector<double> centroid( n, 0.0 );
        for ( int i = 0; i <= n; ++i )
            if ( i != hi )
                for ( int k = 0; k < n; ++k )
                    centroid[k] += simplex[i][k] / n;
        auto along = [&]( double t )
        {
            std::vector<double> y( n );
            for ( int k = 0; k < n; ++k )
                y[k] = centroid[k] + t * ( simplex[hi][k] - centroid[k] );
            return y;
        };
        const std::vector<double> reflected = along( -1.0 );
        const double fr = evaluate( reflected );
        if ( fr < value[lo] )
        {
            const std::vector<double> expanded = along( -2.0 );
            const double fe = evaluate( expanded );
            simplex[hi] = fe < fr ? expanded : reflected;
            value[hi] = std::min( fe, fr );
        }
        else if ( fr < value[second] )
        {
            simplex[hi] = reflected;
            value[hi] = fr;
        }
        else
            contractOrShrink( s, along( 0.5 ), lo, hi );
        return true;
    }

  private:
    //! The contracted point replaces the worst (hi) when better, else every point but the best
    //! (lo) moves half-way towards it.
    void contractOrShrink( Simplex& s, const std::vector<double>& contracted, int lo, int hi )
    {
        std::vector<std::vector<double>>& simplex = s.points;
        std::vector<double>& value = s.value;
        const double fc = evaluate( contracted );
        if ( fc < value[hi] )
        {
            simplex[hi] = contracted;
            value[hi] = fc;
            return;
        }
        for ( int i = 0; i <= _n; ++i )
            if ( i != lo )
            {
                for ( int k = 0; k < _n; ++k )
                    simplex[i][k] = simplex[lo][k] + 0.5 * ( simplex[i][k] - simplex[lo][k] );
                value[i] = evaluate( simplex[i] );
            }
    }

    const double* _base;
    const std::vector<int>& _free;
    const std::vector<TransformerMeasurement>& _rows;
    int _n;
    int _max_evaluations;
    int& _evaluations;
};
} // namespace

TransformerFitResult fitTransformerConstants( const TransformerConstants& start,
                                              const std::vector<TransformerMeasurement>& rows,
                                              const bool* vary, int max_evaluations )
{
    double base[kTransformerNumConstants];
    transformerConstantsToArray( start, base );
    std::vector<int> free;
    for ( int i = 0; i < kTransformerNumConstants; ++i )
        if ( vary[i] && base[i] > 0.0 )
            free.push_back( i );
    const int n = int( free.size() );
    TransformerFitResult result;
    result.constants = start;
    LogSpaceFit fit( base, free, rows, max_evaluations, result.evaluations );
    std::vector<double> best( n );
    for ( int k = 0; k < n; ++k )
        best[k] = std::log( base[free[k]] );
    double best_value = fit.evaluate( best );
    double step = 0.5;
    // Restarts with a shrinking simplex escape Nelder–Mead's premature collapse.
    for ( int restart = 0; restart < 6 && n > 0 && fit.budgetLeft(); ++restart, step *= 0.5 )
    {
        Simplex s = fit.initialSimplex( best, best_value, step );
        for ( int iter = 0; iter < 60 * n && fit.budgetLeft(); ++iter )
            if ( !fit.iterate( s ) )
                break;
        const int lo = int( std::min_element( s.value.begin(), s.value.end() ) - s.value.begin() );
        if ( s.value[lo] < best_value - 1e-9 )
        {
            best = s.points[lo];
            best_value = s.value[lo];
        }
        else if ( restart > 1 )
            break;
    }
    result.constants = constantsAt( base, free, best );
    result.objective = best_value;
    return result;
}

std::vector<double> ncclAllReduceApe( const std::string& data_dir, const Platform& platform, int n )
{
    const std::string path =
        data_dir + "/nccl_tests_a100/all_reduce_" + std::to_string( n ) + "gpu.csv";
    const CsvTable csv = CsvTable::read( path );
    Platform node = platform;
    node.network.num_dims = 1;
    node.network.dims[0].npus_count = n;
    std::vector<double> ape;
    for ( std::size_t r = 0; r < csv.numRows(); ++r )
    {
        const double bytes = csv.getDouble( r, "size(B)" );
        const double measured_ns = std::stod( csv.text( r, "time(ns)" ) );
        const double ns =
            collectiveTimeNs( node.network, node.system, Collective::all_reduce, bytes );
        ape.push_back( 100.0 * std::fabs( ns - measured_ns ) / measured_ns );
    }
    return ape;
}

} // namespace shardsweep
