// The step as a per-rank operation graph (docs/model/chakra.md) and its replay.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <map>
#include <shardsweep/kernel/scenario_batch.hpp>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/scenario/step_graph.hpp>
#include <stdexcept>
#include <tuple>

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

} // namespace

std::uint64_t commSizeForTime( const Network& net, const SystemConfig& sys, Collective c,
                               double target_ns, double upper, std::uint64_t align, int first_dim,
                               int num_dims )
{
    align = std::max<std::uint64_t>( align, 1 );
    auto time = [&]( std::uint64_t k )
    {
        return collectiveTimeNsOnDims( net, sys, c, static_cast<double>( k * align ), first_dim,
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
    const int dims = platform.network.num_dims;
    const DenseCost& dense = batch.dense_cost( batch.dense_index( 0 ) );
    const StepSummary& summary = batch.summary( 0 );
    auto phase = [&]( int g, Phase k ) { return batch.gpu_phase_ms( g * kNumPhases + int( k ) ); };
    const double* scratch = batch.gpu_scratch.data();
    const double* send_index = scratch;
    const double* recv_index = scratch + p;
    const double* send_embedding = scratch + 2 * p;
    const double* recv_embedding = scratch + 3 * p;

    // The collectives are the same on every GPU (each is priced by its busiest GPU): one
    // comm_size each. A collective the model prices at 0 (one GPU, no model-parallel tables)
    // is left out and its dependants wait for what it waited for.
    const double index_ns = phaseNs( phase( 0, Phase::input_dist ) );
    const double fwd_ns = phaseNs( phase( 0, Phase::embedding_comm_fwd ) );
    const double bwd_ns = phaseNs( phase( 0, Phase::embedding_comm_bwd ) );
    const double allreduce_ns = phaseNs( phase( 0, Phase::dense_allreduce ) );
    std::uint64_t index_bytes = 0, fwd_bytes = 0, bwd_bytes = 0, allreduce_bytes = 0;
    if ( p > 1 )
    {
        index_bytes = allToAllCommSize( platform, send_index, recv_index, index_ns );
        fwd_bytes = allToAllCommSize( platform, send_embedding, recv_embedding, fwd_ns );
        bwd_bytes = allToAllCommSize( platform, recv_embedding, send_embedding, bwd_ns );
        if ( allreduce_ns > 0.0 )
        {
            const std::uint64_t align = commAlignment( platform );
            allreduce_bytes = std::max<std::uint64_t>(
                align, static_cast<std::uint64_t>( std::llround( summary.allreduce_bytes /
                                                                 static_cast<double>( align ) ) ) *
                           align );
        }
    }

    double max_fwd_ms = 0.0;
    for ( int g = 0; g < p; ++g )
        max_fwd_ms = std::max( max_fwd_ms, phase( g, Phase::embedding_fwd ) );

    StepGraph graph;
    graph.workload_kind = "dlrm";
    graph.iteration_ms = summary.iteration_ms;
    graph.ranks.resize( p );
    for ( int g = 0; g < p; ++g )
    {
        std::vector<StepGraphNode>& nodes = graph.ranks[g];
        auto add = [&]( StepGraphNode n )
        {
            nodes.push_back( std::move( n ) );
            return static_cast<int>( nodes.size() ) - 1;
        };
        // Forward: the bottom MLP runs while the ids are distributed; the lookups need both.
        std::vector<int> lookup_deps;
        if ( index_bytes > 0 )
            lookup_deps.push_back( add(
                collectiveNode( "input_dist", Collective::all_to_all, index_bytes, dims, {} ) ) );
        lookup_deps.push_back( add( computeNode( "bottom_mlp_fwd", dense.bottom_fwd_ms, {} ) ) );
        int last =
            add( computeNode( "embedding_fwd", phase( g, Phase::embedding_fwd ), lookup_deps ) );
        // The pooled all-to-all starts when the slowest GPU has finished its lookups (the model
        // is a rendezvous, as NCCL's all-to-all is). ASTRA-sim's collectives are eager: a rank
        // that starts early sends at once and a late rank finds its data already there, which
        // on 2-NPU dimensions hides most of the late rank's collective. The wait is therefore
        // explicit: a GPU with less lookup work idles until the slowest one is done.
        if ( fwd_bytes > 0 )
        {
            const double wait_ms = max_fwd_ms - phase( g, Phase::embedding_fwd );
            if ( wait_ms > 0.0 )
                last = add( computeNode( "wait_embedding_comm_fwd", wait_ms, { last } ) );
            last = add( collectiveNode( "embedding_comm_fwd", Collective::all_to_all, fwd_bytes,
                                        dims, { last } ) );
        }
        last = add( computeNode( "top_fwd", dense.top_fwd_ms, { last } ) );
        const int top_bwd = add( computeNode( "top_bwd", dense.top_bwd_ms, { last } ) );
        // Backward: the gradient all-to-all and the bottom MLP's backward overlap; the shard
        // update needs both; the dense all-reduce follows the gradient all-to-all on the
        // network and overlaps the update.
        int gradients = top_bwd;
        if ( bwd_bytes > 0 )
            gradients = add( collectiveNode( "embedding_comm_bwd", Collective::all_to_all,
                                             bwd_bytes, dims, { top_bwd } ) );
        const int bottom_bwd =
            add( computeNode( "bottom_mlp_bwd", dense.bottom_bwd_ms, { top_bwd } ) );
        std::vector<int> update_deps = { bottom_bwd };
        if ( gradients != top_bwd )
            update_deps.insert( update_deps.begin(), gradients );
        add( computeNode( "embedding_bwd", phase( g, Phase::embedding_bwd ), update_deps ) );
        if ( allreduce_bytes > 0 )
            add( collectiveNode( "dense_allreduce", Collective::all_reduce, allreduce_bytes, dims,
                                 { gradients } ) );
    }
    return graph;
}

double collectiveNodeNs( const Network& net, const SystemConfig& sys, const StepGraphNode& node )
{
    // The involved dimensions must be one contiguous range (what the model can price).
    int first = 0, count = net.num_dims;
    if ( !node.involved_dims.empty() )
    {
        first = -1;
        count = 0;
        for ( int d = 0; d < net.num_dims; ++d )
        {
            const bool in =
                d < static_cast<int>( node.involved_dims.size() ) && node.involved_dims[d];
            if ( !in )
                continue;
            if ( first < 0 )
                first = d;
            else if ( d != first + count )
                throw std::invalid_argument( fmt::format(
                    "collective '{}': involved dimensions are not contiguous", node.name ) );
            ++count;
        }
        if ( first < 0 )
            return 0.0;
    }
    return collectiveTimeNsOnDims( net, sys, node.collective,
                                   static_cast<double>( node.comm_bytes ), first, count );
}

double pointToPointNs( const Network& net, int src, int dst, double bytes )
{
    for ( int d = 0; d < net.num_dims; ++d )
    {
        const int p = net.dims[d].npus_count;
        const int a = src % p, b = dst % p;
        if ( a != b )
            return collective_detail::message(
                net.dims[d], bytes,
                collective_detail::hops( net.dims[d].topology, p, ( b - a + p ) % p ) );
        src /= p;
        dst /= p;
    }
    return 0.0;
}

GroupView subGroupView( const Network& net, const SystemConfig& sys,
                        const std::vector<int>& members )
{
    GroupView v;
    v.system = sys;
    v.network.num_dims = 1;
    const int n = static_cast<int>( members.size() );
    // Every ring pair's dimension (the first in which the NPUs differ) and hop count.
    int dim = net.num_dims - 1;
    double hops = 0.0;
    for ( int i = 0; i < n; ++i )
    {
        int a = members[i], b = members[( i + 1 ) % n];
        for ( int d = 0; d < net.num_dims; ++d )
        {
            const int p = net.dims[d].npus_count;
            if ( a % p != b % p )
            {
                dim = std::min( dim, d );
                hops =
                    std::max( hops, collective_detail::hops( net.dims[d].topology, p,
                                                             ( ( b % p ) - ( a % p ) + p ) % p ) );
                break;
            }
            a /= p;
            b /= p;
        }
    }
    NetworkDim& d = v.network.dims[0];
    d = net.dims[dim];
    d.npus_count = std::max( n, 1 );
    d.topology = Topology::FullyConnected; // one hop per message: the latency carries the hops
    d.latency_ns = net.dims[dim].latency_ns * std::max( hops, 1.0 );
    for ( int c = 0; c < kNumCollectives; ++c )
        v.system.algorithm[c][0] =
            net.num_dims > 1 ? CollectiveAlgorithm::ring : sys.algorithm[c][0];
    return v;
}

StepGraphReplay replayStepGraph( const StepGraph& graph, const Network& net,
                                 const SystemConfig& sys )
{
    using Kind = StepGraphNode::Kind;
    const int num_ranks = graph.numRanks();
    const double unknown = -1.0;
    std::vector<std::vector<double>> ready( num_ranks ), finish( num_ranks );
    // The k-th collective of group `group` on a rank is instance k of that group.
    std::vector<std::vector<int>> instance( num_ranks );
    std::vector<std::vector<int>> members( graph.groups.size() + 1 );
    for ( int r = 0; r < num_ranks; ++r )
        members[0].push_back( r );
    for ( std::size_t g = 0; g < graph.groups.size(); ++g )
        members[g + 1] = graph.groups[g];
    // [group][instance][rank] -> node index (-1 absent).
    std::vector<std::vector<std::vector<int>>> coll( members.size() );
    // A group smaller than the network is priced as ASTRA-sim prices it (subGroupView).
    std::vector<GroupView> views( members.size() );
    for ( std::size_t g = 1; g < members.size(); ++g )
        if ( static_cast<int>( members[g].size() ) < num_ranks )
            views[g] = subGroupView( net, sys, members[g] );
    for ( int r = 0; r < num_ranks; ++r )
    {
        const auto& nodes = graph.ranks[r];
        ready[r].assign( nodes.size(), unknown );
        finish[r].assign( nodes.size(), unknown );
        instance[r].assign( nodes.size(), -1 );
        std::vector<int> count( members.size(), 0 );
        for ( std::size_t i = 0; i < nodes.size(); ++i )
        {
            const StepGraphNode& n = nodes[i];
            for ( int d : n.deps )
                if ( d < 0 || d >= static_cast<int>( nodes.size() ) )
                    throw std::invalid_argument( fmt::format(
                        "rank {} node {} ('{}'): dependency {} does not exist", r, i, n.name, d ) );
            if ( n.kind != Kind::collective )
                continue;
            if ( n.group < 0 || n.group >= static_cast<int>( members.size() ) )
                throw std::invalid_argument( fmt::format(
                    "rank {} node {} ('{}'): unknown group {}", r, i, n.name, n.group ) );
            const int k = count[n.group]++;
            instance[r][i] = k;
            auto& slots = coll[n.group];
            if ( static_cast<int>( slots.size() ) <= k )
                slots.resize( k + 1, std::vector<int>( num_ranks, -1 ) );
            slots[k][r] = static_cast<int>( i );
        }
    }
    // The same occurrence of (peer -> r, tag) on the peer: receive i of rank r matches send
    // matching[r][i] of its peer (-1: none).
    std::vector<std::vector<int>> matching( num_ranks );
    {
        std::map<std::tuple<int, int, int>, std::vector<int>> sends; // (src, dst, tag) -> nodes
        for ( int r = 0; r < num_ranks; ++r )
            for ( std::size_t i = 0; i < graph.ranks[r].size(); ++i )
            {
                const StepGraphNode& n = graph.ranks[r][i];
                if ( n.kind == Kind::send )
                    sends[{ r, n.peer, n.tag }].push_back( static_cast<int>( i ) );
            }
        std::map<std::tuple<int, int, int>, std::size_t> seen;
        for ( int r = 0; r < num_ranks; ++r )
        {
            matching[r].assign( graph.ranks[r].size(), -1 );
            for ( std::size_t i = 0; i < graph.ranks[r].size(); ++i )
            {
                const StepGraphNode& n = graph.ranks[r][i];
                if ( n.kind != Kind::recv )
                    continue;
                if ( n.peer < 0 || n.peer >= num_ranks )
                    throw std::invalid_argument(
                        fmt::format( "rank {} node {} ('{}'): source rank {} does not exist", r, i,
                                     n.name, n.peer ) );
                const auto key = std::make_tuple( n.peer, r, n.tag );
                const std::size_t k = seen[key]++;
                auto it = sends.find( key );
                if ( it != sends.end() && k < it->second.size() )
                    matching[r][i] = it->second[k];
            }
        }
    }
    StepGraphReplay out;
    // Nodes before first_open[r] have finished (a pass starts there: chains stay linear).
    std::vector<std::size_t> first_open( num_ranks, 0 );
    bool progress = true;
    while ( progress )
    {
        progress = false;
        for ( int r = 0; r < num_ranks; ++r )
        {
            const auto& nodes = graph.ranks[r];
            while ( first_open[r] < nodes.size() && finish[r][first_open[r]] != unknown )
                ++first_open[r];
            for ( std::size_t i = first_open[r]; i < nodes.size(); ++i )
            {
                if ( finish[r][i] != unknown )
                    continue;
                const StepGraphNode& n = nodes[i];
                if ( ready[r][i] == unknown )
                {
                    double t = 0.0;
                    bool all = true;
                    for ( int d : n.deps )
                    {
                        if ( finish[r][d] == unknown )
                        {
                            all = false;
                            break;
                        }
                        t = std::max( t, finish[r][d] );
                    }
                    if ( !all )
                        continue;
                    ready[r][i] = t;
                    progress = true;
                }
                switch ( n.kind )
                {
                case Kind::compute:
                    finish[r][i] = ready[r][i] + n.duration_ns;
                    progress = true;
                    break;
                case Kind::send:
                    finish[r][i] =
                        ready[r][i] + pointToPointNs( net, r, n.peer, double( n.comm_bytes ) );
                    progress = true;
                    break;
                case Kind::recv:
                {
                    const int j = matching[r][i];
                    if ( j >= 0 && finish[n.peer][j] != unknown )
                    {
                        finish[r][i] = std::max( ready[r][i], finish[n.peer][j] );
                        progress = true;
                    }
                    break;
                }
                case Kind::collective:
                {
                    const auto& slot = coll[n.group][instance[r][i]];
                    double start = 0.0;
                    bool all = true;
                    for ( int m : members[n.group] )
                    {
                        const int j = slot[m];
                        if ( j < 0 )
                            throw std::invalid_argument( fmt::format(
                                "rank {} node {} ('{}'): rank {} has no matching collective", r, i,
                                n.name, m ) );
                        if ( ready[m][j] == unknown )
                        {
                            all = false;
                            break;
                        }
                        start = std::max( start, ready[m][j] );
                    }
                    if ( !all )
                        break;
                    const GroupView& view = views[n.group];
                    const double end =
                        start +
                        ( view.network.num_dims > 0
                              ? collectiveTimeNsOnDims( view.network, view.system, n.collective,
                                                        double( n.comm_bytes ), 0, 1 )
                              : collectiveNodeNs( net, sys, n ) );
                    for ( int m : members[n.group] )
                        finish[m][slot[m]] = end;
                    progress = true;
                    break;
                }
                }
            }
        }
    }
    out.rank_finish_ns.assign( num_ranks, 0.0 );
    for ( int r = 0; r < num_ranks; ++r )
    {
        double compute = 0.0;
        for ( std::size_t i = 0; i < graph.ranks[r].size(); ++i )
        {
            if ( finish[r][i] == unknown )
                throw std::invalid_argument(
                    fmt::format( "rank {} node {} ('{}') never finishes (a dependency cycle or an "
                                 "unmatched collective or message)",
                                 r, i, graph.ranks[r][i].name ) );
            out.rank_finish_ns[r] = std::max( out.rank_finish_ns[r], finish[r][i] );
            if ( graph.ranks[r][i].kind == Kind::compute )
                compute += graph.ranks[r][i].duration_ns;
        }
        out.finish_ns = std::max( out.finish_ns, out.rank_finish_ns[r] );
        out.compute_ns = std::max( out.compute_ns, compute );
    }
    return out;
}

} // namespace shardsweep
