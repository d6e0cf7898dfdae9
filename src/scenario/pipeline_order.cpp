// The order of one pipeline rank's passes (include/shardsweep/scenario/pipeline_order.hpp).
#include <algorithm>
#include <shardsweep/scenario/pipeline_order.hpp>

namespace shardsweep
{

std::vector<PipelinePass> pipelinePasses( PipelineSchedule schedule, bool train, int stages,
                                          int virtual_stages, int micro_batches, int stage )
{
    const int p = std::max( 1, stages ), v = std::max( 1, virtual_stages );
    const int total = std::max( 1, micro_batches ) * v; // chunk passes each way
    // The k-th pass each way (Megatron's get_model_chunk_id and micro-batch of a pass); with
    // v = 1 simply micro-batch k.
    auto pass = [&]( int k, bool forward )
    {
        const int group = p * v;
        const int chunk = ( k % group ) / p;
        return PipelinePass{ forward, ( k / group ) * p + k % p, forward ? chunk : v - 1 - chunk };
    };
    int warmup = total;
    if ( train && schedule != PipelineSchedule::gpipe )
        warmup = std::min( v > 1 ? 2 * ( p - stage - 1 ) + ( v - 1 ) * p : p - stage - 1, total );
    std::vector<PipelinePass> order;
    order.reserve( train ? 2 * total : total );
    for ( int k = 0; k < warmup; ++k )
        order.push_back( pass( k, true ) );
    if ( !train )
        return order;
    for ( int k = 0; k < total - warmup; ++k )
    {
        order.push_back( pass( warmup + k, true ) );
        order.push_back( pass( k, false ) );
    }
    for ( int k = total - warmup; k < total; ++k )
        order.push_back( pass( k, false ) );
    return order;
}

} // namespace shardsweep
