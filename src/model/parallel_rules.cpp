// Validity rules of transformer parallel configurations.
#include <shardsweep/domain/names.hpp>
#include <shardsweep/model/transformer/memory.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>

namespace shardsweep
{

std::string parallelConfigSummary( const ParallelConfig& c )
{
    return "tp " + std::to_string( c.tp ) + " x pp " + std::to_string( c.pp ) + " x dp " +
           std::to_string( c.dp ) + ", micro-batch " + std::to_string( c.micro_batch ) + ", " +
           nameOf( c.schedule ) + ", recompute " + nameOf( c.recompute ) + ", ZeRO-" +
           std::to_string( c.zero ) + ( c.sequence_parallel ? ", SP" : ", no SP" ) +
           ( c.fused ? ", fused" : ", unfused" ) + ", " + nameOf( c.mode ) +
           ( c.virtual_stages > 1 ? ", interleaved x" + std::to_string( c.virtual_stages ) : "" ) +
           ( c.distributed_optimizer ? ", distributed optimizer" : "" ) +
           ( c.overlap ? ", overlap" : "" ) +
           ( c.cp > 1 ? ", context parallel x" + std::to_string( c.cp ) : "" ) +
           ( c.first_stage_layers > 0
                 ? ", first stage " + std::to_string( c.first_stage_layers ) + " layers"
                 : "" ) +
           ( c.last_stage_layers > 0
                 ? ", last stage " + std::to_string( c.last_stage_layers ) + " layers"
                 : "" ) +
           ( c.ep > 1 ? ", expert parallel x" + std::to_string( c.ep ) : "" ) +
           ( c.etp > 0 && c.etp != c.tp ? ", expert tp " + std::to_string( c.etp ) : "" );
}

int ffnHidden( const TransformerSpec& model )
{
    return model.ffn_hidden > 0 ? model.ffn_hidden : 4 * model.hidden;
}

double transformerParameters( const TransformerSpec& m )
{
    const double h = m.hidden;
    const double edges = ( double( m.vocab ) + m.seq_len ) * h + 2.0 * h;
    if ( !m.moe() )
        return m.layers * transformerLayerParams( m, 1 ) + edges;
    const double moe_layers = m.layers - m.first_dense_layers;
    return m.first_dense_layers * transformerLayerParams( m, 1 ) +
           moe_layers * ( transformer_detail::moeLayerDenseParams( m, 1 ) +
                          transformer_detail::moeLayerExpertParams( m, 1, 1 ) ) +
           edges;
}

TransformerSpec resolvedModel( const TransformerSpec& model )
{
    TransformerSpec m = model;
    m.ffn_hidden = ffnHidden( m );
    m.kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
    if ( m.moe() && m.moe_ffn_hidden == 0 )
        m.moe_ffn_hidden = m.ffn_hidden;
    return m;
}

ModelFieldProblem transformerSpecProblem( const TransformerSpec& m )
{
    if ( m.heads > 0 && m.hidden % m.heads != 0 )
        return { "heads", "a head count dividing hidden " + std::to_string( m.hidden ) };
    if ( m.kv_heads > 0 && m.heads % m.kv_heads != 0 )
        return { "kv_heads", "a key/value head count dividing heads " + std::to_string( m.heads ) };
    if ( m.experts > 0 && m.top_k > m.experts )
        return { "top_k", "at most the " + std::to_string( m.experts ) + " experts" };
    if ( m.experts > 0 && m.first_dense_layers >= m.layers )
        return { "first_dense_layers",
                 "fewer than the " + std::to_string( m.layers ) + " layers (the rest are MoE)" };
    return {};
}

std::string tensorParallelError( const TransformerSpec& model, int tp )
{
    auto s = []( std::int64_t x ) { return std::to_string( x ); };
    if ( model.heads % tp != 0 )
        return "tp " + s( tp ) + " does not divide the " + s( model.heads ) + " heads";
    if ( ffnHidden( model ) % tp != 0 )
        return "tp " + s( tp ) + " does not divide ffn_hidden " + s( ffnHidden( model ) );
    if ( model.kv_heads > 0 && model.kv_heads % tp != 0 )
        return "tp " + s( tp ) + " does not divide the " + s( model.kv_heads ) + " kv_heads";
    return "";
}

std::string parallelConfigError( const TransformerSpec& model, const ParallelConfig& c,
                                 int num_gpus )
{
    auto s = []( std::int64_t x ) { return std::to_string( x ); };
    if ( c.tp < 1 || c.pp < 1 || c.dp < 1 || c.cp < 1 )
        return "tp, cp, pp and dp must be >= 1 (got tp " + s( c.tp ) + ", cp " + s( c.cp ) +
               ", pp " + s( c.pp ) + ", dp " + s( c.dp ) + ")";
    const std::int64_t product = std::int64_t( c.tp ) * c.cp * c.pp * c.dp;
    if ( product != num_gpus )
        return ( c.cp > 1 ? "tp x cp x pp x dp = " + s( c.tp ) + " x " + s( c.cp ) + " x "
                          : "tp x pp x dp = " + s( c.tp ) + " x " ) +
               s( c.pp ) + " x " + s( c.dp ) + " = " + s( product ) + " is not the " +
               s( num_gpus ) + " GPUs";
    if ( std::string error = tensorParallelError( model, c.tp ); !error.empty() )
        return error;
    if ( c.micro_batch < 1 )
        return "micro_batch must be >= 1 (got " + s( c.micro_batch ) + ")";
    if ( c.global_batch < 1 || c.global_batch % ( std::int64_t( c.micro_batch ) * c.dp ) != 0 )
        return "micro_batch x dp = " + s( c.micro_batch ) + " x " + s( c.dp ) +
               " does not divide the global batch " + s( c.global_batch );
    if ( c.zero < 0 || c.zero > 3 )
        return "zero must be 0..3 (got " + s( c.zero ) + ")";
    if ( const ModelFieldProblem p = parallelKnobProblem( model, c ); !p.key.empty() )
        return p.key + " must be " + p.expected;
    return "";
}

namespace
{

//! The stage-layout half of parallelKnobProblem: pp divides the layers, or the explicit first and
//! last stages leave the others a whole, positive share.
ModelFieldProblem stageLayoutProblem( const TransformerSpec& model, const ParallelConfig& c )
{
    auto s = []( std::int64_t x ) { return std::to_string( x ); };
    const int f = c.first_stage_layers, l = c.last_stage_layers;
    if ( f <= 0 && l <= 0 )
    {
        if ( model.layers % c.pp != 0 )
            return { "pp",
                     "a pipeline-parallel degree dividing the " + s( model.layers ) + " layers" };
        return {};
    }
    const std::string key = l > 0 ? "last_stage_layers" : "first_stage_layers";
    if ( c.pp < 2 )
        return { key, "empty with pp 1 (uneven stages need pp >= 2)" };
    const int rest = model.layers - std::max( f, 0 ) - std::max( l, 0 );
    const int others = c.pp - ( f > 0 ) - ( l > 0 );
    if ( others == 0 && rest != 0 )
        return { key, "such that first_stage_layers + last_stage_layers = the " +
                          s( model.layers ) + " layers (pp 2)" };
    if ( others > 0 && ( rest < others || rest % others != 0 ) )
        return { key, "such that the other " + s( others ) + " stages share the remaining " +
                          s( rest ) + " of " + s( model.layers ) + " layers evenly" };
    return {};
}

//! The MoE half of parallelKnobProblem (Megatron-Core's checks for MoE parallel folding).
ModelFieldProblem expertProblem( const TransformerSpec& model, const ParallelConfig& c )
{
    auto s = []( std::int64_t x ) { return std::to_string( x ); };
    if ( !model.moe() )
    {
        if ( c.ep > 1 )
            return { "ep", "1 for a dense model (experts 0)" };
        if ( c.etp > 0 && c.etp != c.tp )
            return { "etp", "empty for a dense model (experts 0)" };
        return {};
    }
    if ( model.experts % c.ep != 0 )
        return { "ep", "an expert-parallel size dividing the " + s( model.experts ) + " experts" };
    const int etp = c.expertTp();
    const std::int64_t fe =
        model.moe_ffn_hidden > 0 ? model.moe_ffn_hidden : std::int64_t( ffnHidden( model ) );
    if ( fe % etp != 0 )
        return { c.etp > 0 ? "etp" : "tp",
                 "an expert tensor-parallel size dividing moe_ffn_hidden " + s( fe ) };
    const std::int64_t stage_gpus = std::int64_t( c.tp ) * c.cp * c.dp;
    if ( stage_gpus % ( std::int64_t( c.ep ) * etp ) != 0 )
        return { "ep", "such that ep*etp = " + s( std::int64_t( c.ep ) * etp ) +
                           " divides the tp*cp*dp = " + s( stage_gpus ) +
                           " GPUs of a pipeline stage (MoE parallel folding)" };
    if ( c.tp > 1 && !c.sequence_parallel )
        return { "sequence_parallel",
                 "1 with tp > 1 in an MoE model (Megatron-Core requires sequence parallelism)" };
    if ( model.first_dense_layers > 0 )
    {
        const int chunk = stageLayers( model, c, 0 ) / std::max( 1, c.virtual_stages );
        if ( model.first_dense_layers > chunk )
            return { "first_stage_layers",
                     "at least first_dense_layers " + s( model.first_dense_layers ) +
                         " (the dense layers must lie in the first pipeline stage" +
                         ( c.virtual_stages > 1 ? "'s first model chunk" : "" ) + ", which has " +
                         s( chunk ) + ")" };
    }
    return {};
}

} // namespace

ModelFieldProblem parallelKnobProblem( const TransformerSpec& model, const ParallelConfig& c )
{
    auto s = []( std::int64_t x ) { return std::to_string( x ); };
    if ( ModelFieldProblem p = stageLayoutProblem( model, c ); !p.key.empty() )
        return p;
    const int v = c.virtual_stages;
    if ( v > 1 )
    {
        if ( c.pp < 2 )
            return { "virtual_stages", "1 with pp 1 (interleaving needs pp >= 2)" };
        if ( c.schedule != PipelineSchedule::one_f_one_b )
            return { "virtual_stages", "1 with the gpipe schedule (interleaving is 1F1B's)" };
        if ( c.first_stage_layers > 0 || c.last_stage_layers > 0 )
            return {
                "virtual_stages",
                "1 with first/last_stage_layers (uneven interleaved stages are not modelled)" };
        if ( model.layers % ( std::int64_t( c.pp ) * v ) != 0 )
            return { "virtual_stages", "a divisor of layers/pp = " + s( model.layers / c.pp ) +
                                           " (each chunk holds whole layers)" };
        const std::int64_t per_step = std::int64_t( c.micro_batch ) * c.dp;
        const std::int64_t micro_batches = per_step > 0 ? c.global_batch / per_step : 0;
        if ( micro_batches % c.pp != 0 )
            return { "virtual_stages", "1, or the " + s( micro_batches ) +
                                           " micro-batches (global_batch/(micro_batch*dp)) a "
                                           "multiple of pp " +
                                           s( c.pp ) + " (Megatron's interleaved schedule)" };
    }
    if ( c.cp > 1 && model.seq_len % ( 2 * c.cp ) != 0 )
        return { "cp", "a context-parallel size with 2*cp dividing seq_len " + s( model.seq_len ) +
                           " (Megatron splits each sequence into 2*cp chunks)" };
    if ( c.distributed_optimizer && c.zero > 0 )
        return { "distributed_optimizer",
                 "0 with zero > 0 (the distributed optimizer is ZeRO-1's sharding)" };
    return expertProblem( model, c );
}

std::string gpuDataTypeError( const GpuSpec& gpu, DataType dtype )
{
    if ( dtype == DataType::fp8 && !( gpu.fp8_TFLOPs > 0.0 ) )
        return "dtype fp8 needs FP8 tensor cores, and the GPU lists no fp8_TFLOPs (Hopper and "
               "later have them)";
    return "";
}

std::vector<int> divisorsOf( std::int64_t n )
{
    std::vector<int> small, large;
    for ( std::int64_t d = 1; d * d <= n; ++d )
        if ( n % d == 0 )
        {
            small.push_back( int( d ) );
            if ( d * d != n )
                large.push_back( int( n / d ) );
        }
    small.insert( small.end(), large.rbegin(), large.rend() );
    return small;
}

std::vector<std::pair<int, int>> gpuLayouts( int num_gpus )
{
    std::vector<std::pair<int, int>> out;
    for ( int tp : divisorsOf( num_gpus ) )
        for ( int pp : divisorsOf( num_gpus / tp ) )
            out.emplace_back( tp, pp );
    return out;
}

} // namespace shardsweep
