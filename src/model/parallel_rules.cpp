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
           ( c.fused ? ", fused" : ", unfused" ) + ", " + nameOf( c.mode );
}

int ffnHidden( const TransformerSpec& model )
{
    return model.ffn_hidden > 0 ? model.ffn_hidden : 4 * model.hidden;
}

double transformerParameters( const TransformerSpec& m )
{
    const double h = m.hidden;
    return m.layers * transformerLayerParams( m, 1 ) + ( double( m.vocab ) + m.seq_len ) * h +
           2.0 * h;
}

TransformerSpec resolvedModel( const TransformerSpec& model )
{
    TransformerSpec m = model;
    m.ffn_hidden = ffnHidden( m );
    m.kv_heads = m.kv_heads > 0 ? m.kv_heads : m.heads;
    return m;
}

ModelFieldProblem transformerSpecProblem( const TransformerSpec& m )
{
    if ( m.heads > 0 && m.hidden % m.heads != 0 )
        return { "heads", "a head count dividing hidden " + std::to_string( m.hidden ) };
    if ( m.kv_heads > 0 && m.heads % m.kv_heads != 0 )
        return { "kv_heads", "a key/value head count dividing heads " + std::to_string( m.heads ) };
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
    if ( c.tp < 1 || c.pp < 1 || c.dp < 1 )
        return "tp, pp and dp must be >= 1 (got tp " + s( c.tp ) + ", pp " + s( c.pp ) + ", dp " +
               s( c.dp ) + ")";
    if ( std::int64_t( c.tp ) * c.pp * c.dp != num_gpus )
        return "tp x pp x dp = " + s( c.tp ) + " x " + s( c.pp ) + " x " + s( c.dp ) + " = " +
               s( std::int64_t( c.tp ) * c.pp * c.dp ) + " is not the " + s( num_gpus ) + " GPUs";
    if ( std::string error = tensorParallelError( model, c.tp ); !error.empty() )
        return error;
    if ( model.layers % c.pp != 0 )
        return "pp " + s( c.pp ) + " does not divide the " + s( model.layers ) + " layers";
    if ( c.micro_batch < 1 )
        return "micro_batch must be >= 1 (got " + s( c.micro_batch ) + ")";
    if ( c.global_batch < 1 || c.global_batch % ( std::int64_t( c.micro_batch ) * c.dp ) != 0 )
        return "micro_batch x dp = " + s( c.micro_batch ) + " x " + s( c.dp ) +
               " does not divide the global batch " + s( c.global_batch );
    if ( c.zero < 0 || c.zero > 3 )
        return "zero must be 0..3 (got " + s( c.zero ) + ")";
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
