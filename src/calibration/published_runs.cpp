// Published H100 training runs as measurements (published_runs.hpp).
#include <cmath>
#include <limits>
#include <shardsweep/calibration/published_runs.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <string>

namespace shardsweep
{

namespace
{

//! The number after `key` in `text` ("VP=6" → 6), or `fallback` where the key or its digits are
//! missing.
int statedNumber( const std::string& text, const std::string& key, int fallback )
{
    const std::size_t at = text.find( key );
    if ( at == std::string::npos )
        return fallback;
    int value = 0, digits = 0;
    for ( std::size_t i = at + key.size(); i < text.size() && digits < 6; ++i, ++digits )
    {
        if ( text[i] < '0' || text[i] > '9' )
            break;
        value = 10 * value + ( text[i] - '0' );
    }
    return digits > 0 && value > 0 ? value : fallback;
}

//! The cheapest recompute from `least` on with which the configuration fits `platform`'s memory
//! (full if none).
Recompute cheapestFittingRecompute( const Platform& platform, const TransformerSpec& model,
                                    ParallelConfig config, Recompute least )
{
    for ( Recompute r : { Recompute::none, Recompute::selective, Recompute::full } )
    {
        if ( int( r ) < int( least ) )
            continue;
        config.recompute = r;
        const double GiB = transformerPeakMemory( shippedTransformerConstants(), model, config,
                                                  transformerMicroBatches( config ) )
                               .bytes /
                           1073741824.0;
        if ( GiB <= platform.gpu.memory_GiB - platform.hbm_reserve_GiB )
            return r;
    }
    return Recompute::full;
}

} // namespace

std::vector<TransformerMeasurement> readPublishedMeasurements( const std::string& path,
                                                               const Platform& platform )
{
    const CsvTable csv = CsvTable::read( path );
    csv.checkColumns(
        { "model", "gpus", "gpu_type", "global_batch", "micro_batch", "hidden", "heads", "layers",
          "seq_len", "vocab", "tp", "pp", "dp", "measured_tflops_per_gpu", "source" },
        { "params_billion", "recompute", "sequence_parallel", "measured_iteration_s" } );
    std::vector<TransformerMeasurement> rows;
    for ( std::size_t r = 0; r < csv.numRows(); ++r )
    {
        TransformerMeasurement m;
        const std::string name = csv.text( r, "model" );
        const std::string source = csv.text( r, "source" );
        const bool fp8 = csv.text( r, "gpu_type" ).find( "FP8" ) != std::string::npos;
        const bool nemo = name.rfind( "nemo", 0 ) == 0;
        m.set = nemo ? "nemo2407" : "megatron2024";
        m.gpu = "H100-SXM-80GB";
        m.line = csv.lineOf( r );
        m.platform = platform;
        TransformerSpec& model = m.model;
        model.arch = TransformerArch::gpt;
        model.hidden = int( csv.getInt( r, "hidden" ) );
        model.heads = int( csv.getInt( r, "heads" ) );
        model.layers = int( csv.getInt( r, "layers" ) );
        model.seq_len = int( csv.getInt( r, "seq_len" ) );
        model.vocab = csv.isEmpty( r, "vocab" ) ? 50257 : int( csv.getInt( r, "vocab" ) );
        model.dtype = fp8 ? DataType::fp8 : DataType::bf16;
        ParallelConfig& c = m.config;
        c.tp = int( csv.getInt( r, "tp" ) );
        c.pp = int( csv.getInt( r, "pp" ) );
        c.dp = int( csv.getInt( r, "dp" ) );
        c.micro_batch = csv.isEmpty( r, "micro_batch" ) ? 1 : int( csv.getInt( r, "micro_batch" ) );
        c.global_batch = csv.getInt( r, "global_batch" );
        c.sequence_parallel = c.tp > 1;
        c.distributed_optimizer = true;
        c.overlap = true;
        c.fused = true;
        c.virtual_stages = statedNumber( source, "VP=", 1 );
        // NeMo's GPT-3 configurations set selective recompute (NeMo-Framework-Launcher
        // conf/training/gpt3/{5b,20b,175b}*.yaml: activations_checkpoint_granularity selective),
        // and the runs fitted with it: priced as run, even where the memory model says it does
        // not fit (the feasible column shows that disagreement). Megatron's table does not say:
        // the cheapest recompute that fits.
        c.recompute = nemo ? Recompute::selective
                           : cheapestFittingRecompute( platform, model, c, Recompute::none );
        if ( const std::string error = parallelConfigError( model, c, c.numGpus() );
             !error.empty() )
            csv.fail( r, "tp", "a configuration the model can price (" + error + ")" );
        // The source's throughput over the model's FLOPs of one step.
        const TransformerOperatorCost ops =
            transformerOperatorCost( transformerOperatorCase( platform.gpu, model, c ) );
        const double flops = predictTransformerStep( platform, model, c, ops ).model_flops;
        m.measured_ms = flops /
                        ( csv.getDouble( r, "measured_tflops_per_gpu" ) * 1.0e12 * c.numGpus() ) *
                        1.0e3;
        m.label = name + " " + std::to_string( c.numGpus() ) + " GPUs " + nameOf( model.dtype ) +
                  " mb " + std::to_string( c.micro_batch ) + " v " +
                  std::to_string( c.virtual_stages ) + " recompute " + nameOf( c.recompute );
        rows.push_back( m );
    }
    return rows;
}

namespace
{
//! The fp8_gemm_eff on a 0.001 grid over [0.3, 1.2] with the smallest objective( constants ), or
//! `base`'s own value when the objective has nothing to measure (returns NaN).
template <class Objective>
double bestFp8GemmEfficiency( const TransformerConstants& base, const Objective& objective )
{
    double best = base.fp8_gemm_eff, best_objective = std::numeric_limits<double>::infinity();
    for ( int step = 300; step <= 1200; ++step )
    {
        TransformerConstants c = base;
        c.fp8_gemm_eff = step * 1.0e-3;
        const double o = objective( c );
        if ( std::isnan( o ) )
            return base.fp8_gemm_eff;
        if ( o < best_objective )
        {
            best_objective = o;
            best = c.fp8_gemm_eff;
        }
    }
    return best;
}
} // namespace

double fitFp8GemmEfficiency( const TransformerConstants& base,
                             const std::vector<TransformerMeasurement>& rows )
{
    return bestFp8GemmEfficiency(
        base,
        [&]( const TransformerConstants& c )
        {
            double sum = 0.0;
            int n = 0;
            for ( const TransformerMeasurement& m : rows )
                if ( m.model.dtype == DataType::fp8 )
                {
                    sum += std::fabs( std::log( predictMeasurement( c, m ) / m.measured_ms ) );
                    ++n;
                }
            return n > 0 ? sum : std::nan( "" );
        } );
}

double fp8GemmEfficiencyFromGemms( const TransformerConstants& base, const GpuSpec& gpu,
                                   const std::vector<GemmSample>& measured )
{
    TransformerOperatorCase oc;
    oc.gpu = gpu;
    oc.model.dtype = DataType::fp8;
    return bestFp8GemmEfficiency(
        base,
        [&]( const TransformerConstants& c )
        {
            const transformer_detail::OperatorContext x =
                transformer_detail::operatorContext( c, oc, shippedGemmConstants() );
            double sum = 0.0;
            int n = 0;
            for ( const GemmSample& s : measured )
                if ( s.dtype == DataType::fp8 )
                {
                    sum += std::log( predictGemmWith( x.gemm_constants, x.gpu, s.B, s.M, s.N, s.K,
                                                      s.dtype, s.op )
                                         .latency_ms /
                                     s.latency_ms );
                    ++n;
                }
            return n > 0 ? std::fabs( sum / n ) : std::nan( "" );
        } );
}

} // namespace shardsweep
