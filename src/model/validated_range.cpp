// Where a transformer prediction leaves the measured range (see validated_range.hpp).
#include <cmath>
#include <fmt/format.h>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/model/transformer/validated_range.hpp>

namespace shardsweep
{

namespace
{
//! The measured class of `gpu_name` in `precision`, else its first class in another precision,
//! else null.
const MeasuredTransformerRuns* measuredClass( const std::string& gpu_name,
                                              MeasuredPrecision precision )
{
    const MeasuredTransformerRuns* other = nullptr;
    for ( const MeasuredTransformerRuns& c : kMeasuredTransformerRuns )
        for ( const char* g : c.gpus )
            if ( g && gpu_name == g )
            {
                if ( c.precision == precision )
                    return &c;
                other = other ? other : &c;
            }
    return other;
}

//! The note when `platform` prices the intra-node all-reduce measured on `gpu_name`'s nodes more
//! than kNodeAllReduceTolerance away from the measurement ("" otherwise, or without one).
std::string nodeAllReduceNote( const std::string& gpu_name, const Platform& platform )
{
    const Network& net = platform.network;
    for ( const MeasuredNodeAllReduce& m : kMeasuredNodeAllReduces )
        for ( const char* g : m.gpus )
            if ( g && gpu_name == g && net.num_dims > 0 && net.dims[0].npus_count == m.node_gpus )
            {
                const double ns = collectiveTimeNsOnDims( net, platform.system,
                                                          Collective::all_reduce, m.bytes, 0, 1 );
                if ( ns * kNodeAllReduceTolerance >= m.measured_ns &&
                     ns <= kNodeAllReduceTolerance * m.measured_ns )
                    return "";
                return fmt::format( "the platform prices a {:.0f} MiB all-reduce on the {} GPUs of "
                                    "a node at {:.2f} ms, {} measured {:.2f} ms (the collectives "
                                    "inside a node scale with it; {} prices it as measured)",
                                    m.bytes / 1048576.0, m.node_gpus, ns * 1e-6, m.source,
                                    m.measured_ns * 1e-6, m.fitted_platform );
            }
    return "";
}

const char* precisionText( MeasuredPrecision p )
{
    return p == MeasuredPrecision::fp32  ? "fp32"
           : p == MeasuredPrecision::fp8 ? "fp8"
                                         : "fp16/bf16";
}
} // namespace

std::vector<std::string> transformerValidationNotes( const std::string& gpu_name,
                                                     const Platform& platform,
                                                     const TransformerSpec& model,
                                                     const ParallelConfig& config, double mfu_pct )
{
    std::vector<std::string> notes;
    // The MoE model has met two published runs only (docs/model/moe.md), whatever the GPU.
    if ( model.moe() )
        notes.push_back( "mixture of experts: checked against two published DeepSeek-V3 runs only "
                         "(+19 % and -18 % tokens/s; routing priced as uniform)" );
    if ( config.numGpus() > 1 )
        if ( std::string note = nodeAllReduceNote( gpu_name, platform ); !note.empty() )
            notes.push_back( std::move( note ) );
    const MeasuredPrecision precision = measuredPrecision( model.dtype );
    const MeasuredTransformerRuns* c = measuredClass( gpu_name, precision );
    if ( !c )
    {
        notes.push_back( fmt::format( "no measured transformer steps on {}", gpu_name ) );
        return notes;
    }
    if ( precision != c->precision )
        notes.push_back(
            fmt::format( "{} measured in {} only", gpu_name, precisionText( c->precision ) ) );
    const int gpus = config.numGpus();
    if ( gpus > c->max_gpus )
        notes.push_back( fmt::format( "{} GPUs; measured up to {}", gpus, c->max_gpus ) );
    const int per_node = platform.gpus_per_node > 0 ? platform.gpus_per_node : 1;
    const int tp_nodes = ( config.tp + per_node - 1 ) / per_node;
    if ( tp_nodes > c->max_tp_nodes )
        notes.push_back( fmt::format( "tp {} spans {} nodes; measured: {}", config.tp, tp_nodes,
                                      c->max_tp_nodes == 1
                                          ? std::string( "within one node" )
                                          : fmt::format( "up to {} nodes", c->max_tp_nodes ) ) );
    if ( config.pp > c->max_pp )
        notes.push_back( fmt::format( "pp {}; measured up to {}", config.pp, c->max_pp ) );
    if ( c->optimistic_min_dp > 0 && config.tp < per_node && config.dp >= c->optimistic_min_dp )
        notes.push_back( fmt::format( "tp {} below the {} GPUs of a node with dp {}: predicted "
                                      "{:.1f}-{:.1f} % short of all {} measured runs like it ({})",
                                      config.tp, per_node, config.dp, c->optimistic_min_pct,
                                      c->optimistic_max_pct, c->optimistic_runs, c->source ) );
    if ( config.fused && !c->flash_attention )
        notes.push_back( fmt::format( "fused (flash) attention: the measured runs on {} used "
                                      "unfused attention",
                                      gpu_name ) );
    if ( !std::isnan( mfu_pct ) && mfu_pct > c->max_mfu_pct )
        notes.push_back( fmt::format( "MFU {:.1f} % above the highest measured on {} ({:.1f} % in "
                                      "{})",
                                      mfu_pct, gpu_name, c->max_mfu_pct, c->source ) );
    return notes;
}

std::string joinValidationNotes( const std::vector<std::string>& notes )
{
    std::string text;
    for ( const std::string& n : notes )
        text += ( text.empty() ? "" : "; " ) + n;
    return text;
}

std::string validationLine( const std::vector<std::string>& notes )
{
    return notes.empty()
               ? "inside the validated range (the measured runs of docs/MODEL.md)\n"
               : "outside the validated range (docs/MODEL.md): " + joinValidationNotes( notes ) +
                     "\n";
}

} // namespace shardsweep
