// The step as a per-rank operation graph (docs/model/chakra.md) and its replay.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <numeric>
#include <shardsweep/kernel/scenario_batch.hpp>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/scenario/step_graph.hpp>
#include <stdexcept>

namespace shardsweep
{

namespace
{

//! A collective's time back from the model's phase value (ms of whole ns: exact in double).
double phaseNs( double ms )
{
    return std::round( ms * 1e6 );
}

//! comm_size granularity: `preferred-dataset-splits` chunks of a multiple of P bytes, so that
//! ASTRA-sim's integer divisions (chunk = S / splits, messages = chunk / p_d, …) are exact and it
//! runs exactly `splits` chunks (docs/model/collectives.md, "Sizes that do not divide evenly").
std::uint64_t commAlignment( const Platform& platform )
{
    return static_cast<std::uint64_t>( std::max( 1, platform.system.preferred_dataset_splits ) ) *
           static_cast<std::uint64_t>( platform.numGpus() );
}

StepGraphNode computeNode( std::string name, double ms, std::vector<int> deps )
{
    StepGraphNode n;
    n.kind = StepGraphNode::Kind::compute;
    n.name = std::move( name );
    n.duration_ns = ms * 1e6;
    n.deps = std::move( deps );
    return n;
}

StepGraphNode collectiveNode( std::string name, Collective c, std::uint64_t bytes, int num_dims,
                              std::vector<int> deps )
{
    StepGraphNode n;
    n.kind = StepGraphNode::Kind::collective;
    n.name = std::move( name );
    n.collective = c;
    n.comm_bytes = bytes;
    n.involved_dims.assign( num_dims, true );
    n.deps = std::move( deps );
    return n;
}

//! The balanced all-to-all comm_size with the model's all-to-all-v time (`target_ns`) for the
//! per-GPU volumes send/recv: the model prices the busiest GPU's buffer per dimension, which
//! is between the mean and the busiest volume (docs/model/collectives.md), so the equivalent
//! size is searched below the busiest GPU's balanced size. On one dimension it is exactly
//! max_g max(send, recv) · P/(P-1), rounded to the alignment.
std::uint64_t allToAllCommSize( const Platform& platform, const double* send, const double* recv,
                                double target_ns )
{
    const int p = platform.numGpus();
    double busiest = 0.0;
    for ( int g = 0; g < p; ++g )
        busiest = std::max( { busiest, send[g], recv[g] } );
    return commSizeForTime( platform.network, platform.system, Collective::all_to_all, target_ns,
                            busiest * p / ( p - 1.0 ), commAlignment( platform ), 0,
                            platform.network.num_dims );
}

//! GPU g's value (ms) of phase k in the batch's only scenario.
double phaseMs( const HostScenarioBatch& batch, int g, Phase k )
{
    return batch.gpu_phase_ms( g * kNumPhases + int( k ) );
}

//! comm_size of each of the step's collectives (0: left out).
struct DlrmCommBytes
{
    std::uint64_t index = 0, fwd = 0, bwd = 0, allreduce = 0;
};

//! The collectives are the same on every GPU (each is priced by its busiest GPU): one
//! comm_size each. A collective the model prices at 0 (one GPU, no model-parallel tables)
//! is left out and its dependants wait for what it waited for.
DlrmCommBytes dlrmCommBytes( const Platform& platform, const HostScenarioBatch& batch )
{
    const int p = platform.numGpus();
    const double* scratch = batch.gpu_scratch.data();
    const double* send_index = scratch;
    const double* recv_index = scratch + p;
    const double* send_embedding = scratch + 2 * p;
    const double* recv_embedding = scratch + 3 * p;
    const double index_ns = phaseNs( phaseMs( batch, 0, Phase::input_dist ) );
    const double fwd_ns = phaseNs( phaseMs( batch, 0, Phase::embedding_comm_fwd ) );
    const double bwd_ns = phaseNs( phaseMs( batch, 0, Phase::embedding_comm_bwd ) );
    const double allreduce_ns = phaseNs( phaseMs( batch, 0, Phase::dense_allreduce ) );
    DlrmCommBytes bytes;
    if ( p > 1 )
    {
        bytes.index = allToAllCommSize( platform, send_index, recv_index, index_ns );
        bytes.fwd = allToAllCommSize( platform, send_embedding, recv_embedding, fwd_ns );
        bytes.bwd = allToAllCommSize( platform, recv_embedding, send_embedding, bwd_ns );
        if ( allreduce_ns > 0.0 )
        {
            // The gradients' own size, or where a platform's call terms (which ASTRA-sim has
            // not) make the model's time longer, the size ASTRA-sim needs for that time.
            std::vector<int> everyone( p );
            std::iota( everyone.begin(), everyone.end(), 0 );
            bytes.allreduce = groupCommSizeForTime( platform.network, platform.system, everyone,
                                                    Collective::all_reduce, allreduce_ns,
                                                    batch.summary( 0 ).allreduce_bytes );
        }
    }
    return bytes;
}

//! What every GPU's nodes are built from.
struct DlrmStep
{
    const HostScenarioBatch& batch;
    const DenseCost& dense;
    DlrmCommBytes bytes;
    int dims;          //!< the network's dimensions
    double max_fwd_ms; //!< the slowest GPU's lookups
};

//! GPU g's nodes of the step.
void addDlrmRankNodes( const DlrmStep& step, int g, std::vector<StepGraphNode>& nodes )
{
    const DenseCost& dense = step.dense;
    const DlrmCommBytes& bytes = step.bytes;
    const int dims = step.dims;
    auto add = [&]( StepGraphNode n )
    {
        nodes.push_back( std::move( n ) );
        return static_cast<int>( nodes.size() ) - 1;
    };
    const double lookup_ms = phaseMs( step.batch, g, Phase::embedding_fwd );
    // Forward: the bottom MLP runs while the ids are distributed; the lookups need both.
    std::vector<int> lookup_deps;
    if ( bytes.index > 0 )
        lookup_deps.push_back(
            add( collectiveNode( "input_dist", Collective::all_to_all, bytes.index, dims, {} ) ) );
    lookup_deps.push_back( add( computeNode( "bottom_mlp_fwd", dense.bottom_fwd_ms, {} ) ) );
    int last = add( computeNode( "embedding_fwd", lookup_ms, lookup_deps ) );
    // The pooled all-to-all starts when the slowest GPU has finished its lookups (the model
    // is a rendezvous, as NCCL's all-to-all is). ASTRA-sim's collectives are eager: a rank
    // that starts early sends at once and a late rank finds its data already there, which
    // on 2-NPU dimensions hides most of the late rank's collective. The wait is therefore
    // explicit: a GPU with less lookup work idles until the slowest one is done.
    if ( bytes.fwd > 0 )
    {
        const double wait_ms = step.max_fwd_ms - lookup_ms;
        if ( wait_ms > 0.0 )
            last = add( computeNode( "wait_embedding_comm_fwd", wait_ms, { last } ) );
        last = add( collectiveNode( "embedding_comm_fwd", Collective::all_to_all, bytes.fwd, dims,
                                    { last } ) );
    }
    last = add( computeNode( "top_fwd", dense.top_fwd_ms, { last } ) );
    const int top_bwd = add( computeNode( "top_bwd", dense.top_bwd_ms, { last } ) );
    // Backward: the gradient all-to-all and the bottom MLP's backward overlap; the shard
    // update needs both; the dense all-reduce follows the gradient all-to-all on the
    // network and overlaps the update.
    int gradients = top_bwd;
    if ( bytes.bwd > 0 )
        gradients = add( collectiveNode( "embedding_comm_bwd", Collective::all_to_all, bytes.bwd,
                                         dims, { top_bwd } ) );
    const int bottom_bwd = add( computeNode( "bottom_mlp_bwd", dense.bottom_bwd_ms, { top_bwd } ) );
    std::vector<int> update_deps = { bottom_bwd };
    if ( gradients != top_bwd )
        update_deps.insert( update_deps.begin(), gradients );
    add( computeNode( "embedding_bwd", phaseMs( step.batch, g, Phase::embedding_bwd ),
                      update_deps ) );
    if ( bytes.allreduce > 0 )
        add( collectiveNode( "dense_allreduce", Collective::all_reduce, bytes.allreduce, dims,
                             { gradients } ) );
}

} // namespace

std::uint64_t commSizeForTime( const Network& net, const SystemConfig& sys, Collective c,
                               double target_ns, double upper, std::uint64_t align, int first_dim,
                               int num_dims )
{
    align = std::max<std::uint64_t>( align, 1 );
    const SystemConfig astra = astraSystem( sys ); // ASTRA-sim's time reaches the model's
    auto time = [&]( std::uint64_t k )
    {
        return collectiveTimeNsOnDims( net, astra, c, static_cast<double>( k * align ), first_dim,
                                       num_dims );
    };
    std::uint64_t hi = static_cast<std::uint64_t>( std::ceil( std::max( upper, 0.0 ) / align ) );
    hi = std::max<std::uint64_t>( hi, 1 );
    // Rounding in the model can leave the target a few ns above the upper bound's time.
    for ( int i = 0; i < 64 && time( hi ) < target_ns; ++i )
        hi *= 2;
    std::uint64_t lo = 0; // time( 0 ) = 0 < target for any positive target
    if ( target_ns <= 0.0 )
        return 0;
    while ( hi - lo > 1 )
    {
        const std::uint64_t mid = lo + ( hi - lo ) / 2;
        ( time( mid ) >= target_ns ? hi : lo ) = mid;
    }
    return hi * align;
}

StepGraph buildDlrmStepGraph( const ScenarioInput& scenario )
{
    ScenarioInput input = scenario;
    input.model = CostModel::native;
    HostScenarioBatch batch = packScenarios( { input } );
    evaluateDenseCase( batch, 0 );
    for ( int k = 0; k < static_cast<int>( batch.table_case.extent( 0 ) ); ++k )
        evaluateTableCase( batch, k );
    evaluateBatchEntry( batch, 0 );

    const Platform& platform = *input.platform;
    const int p = platform.numGpus();
    const DlrmCommBytes bytes = dlrmCommBytes( platform, batch );
    double max_fwd_ms = 0.0;
    for ( int g = 0; g < p; ++g )
        max_fwd_ms = std::max( max_fwd_ms, phaseMs( batch, g, Phase::embedding_fwd ) );
    const DlrmStep step{ batch, batch.dense_cost( batch.dense_index( 0 ) ), bytes,
                         platform.network.num_dims, max_fwd_ms };

    StepGraph graph;
    graph.workload_kind = "dlrm";
    graph.iteration_ms = batch.summary( 0 ).iteration_ms;
    graph.ranks.resize( p );
    for ( int g = 0; g < p; ++g )
        addDlrmRankNodes( step, g, graph.ranks[g] );
    return graph;
}

} // namespace shardsweep
