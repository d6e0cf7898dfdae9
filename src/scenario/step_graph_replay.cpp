// Replaying a step graph with ASTRA-sim's rules (docs/model/chakra.md, "The replay"), and how
// ASTRA-sim's congestion-unaware backend prices point-to-point messages and sub-group collectives.
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/scenario/step_graph.hpp>
#include <stdexcept>
#include <tuple>

namespace shardsweep
{

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

std::uint64_t pointToPointSizeForTime( const Network& net, int src, int dst, double target_ns )
{
    const double target = std::round( target_ns );
    auto time = [&]( std::uint64_t b ) { return pointToPointNs( net, src, dst, double( b ) ); };
    if ( time( 0 ) >= target )
        return 1;
    std::uint64_t lo = 0, hi = 1;
    while ( time( hi ) < target && hi < ( std::uint64_t( 1 ) << 62 ) )
        hi *= 2;
    while ( hi - lo > 1 )
    {
        const std::uint64_t mid = lo + ( hi - lo ) / 2;
        ( time( mid ) >= target ? hi : lo ) = mid;
    }
    return hi;
}

std::uint64_t groupCommSizeForTime( const Network& net, const SystemConfig& sys,
                                    const std::vector<int>& members, Collective c, double target_ns,
                                    double model_bytes )
{
    int total = 1;
    for ( int d = 0; d < net.num_dims; ++d )
        total *= net.dims[d].npus_count;
    GroupView v{ net, sys };
    int dims = net.num_dims;
    if ( static_cast<int>( members.size() ) < total )
    {
        v = subGroupView( net, sys, members );
        dims = 1;
    }
    const std::uint64_t align =
        std::uint64_t( std::max( 1, sys.preferred_dataset_splits ) ) * members.size();
    const double target = std::round( target_ns );
    const std::uint64_t own =
        std::max<std::uint64_t>( 1, std::llround( model_bytes / double( align ) ) ) * align;
    const double own_ns = collectiveTimeNsOnDims( v.network, v.system, c, double( own ), 0, dims );
    if ( std::fabs( own_ns - target ) <= 1.0 )
        return own;
    return commSizeForTime( v.network, v.system, c, target, model_bytes, align, 0, dims );
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
    std::vector<std::vector<int>> members( graph.groups.size() + 1 );
    for ( int r = 0; r < num_ranks; ++r )
        members[0].push_back( r );
    for ( std::size_t g = 0; g < graph.groups.size(); ++g )
        members[g + 1] = graph.groups[g];
    // position[g][r]: rank r's index among group g's members (-1: not a member).
    std::vector<std::vector<int>> position( members.size(), std::vector<int>( num_ranks, -1 ) );
    for ( std::size_t g = 0; g < members.size(); ++g )
        for ( std::size_t k = 0; k < members[g].size(); ++k )
            if ( members[g][k] >= 0 && members[g][k] < num_ranks )
                position[g][members[g][k]] = static_cast<int>( k );
    // A group smaller than the network is priced as ASTRA-sim prices it (subGroupView).
    std::vector<GroupView> views( members.size() );
    for ( std::size_t g = 1; g < members.size(); ++g )
        if ( static_cast<int>( members[g].size() ) < num_ranks )
            views[g] = subGroupView( net, sys, members[g] );

    // Per node: dependencies not yet finished, dependants, ready and finish times; the k-th
    // collective of a group on a rank is instance k of that group; receive i of rank r matches
    // the same occurrence of (peer -> r, tag) among the peer's sends.
    std::vector<std::vector<int>> pending( num_ranks ), instance( num_ranks ),
        matching( num_ranks );
    // Dependants of node i of rank r: dependants[r][first_dependant[r][i] .. [i + 1]).
    std::vector<std::vector<int>> first_dependant( num_ranks ), dependants( num_ranks );
    std::vector<std::vector<double>> ready( num_ranks ), finish( num_ranks );
    std::vector<std::vector<std::vector<int>>> coll(
        members.size() );                                        // [group][k][member index] -> node
    std::map<std::tuple<int, int, int>, std::vector<int>> sends; // (src, dst, tag) -> nodes
    for ( int r = 0; r < num_ranks; ++r )
    {
        const auto& nodes = graph.ranks[r];
        const std::size_t n = nodes.size();
        pending[r].assign( n, 0 );
        instance[r].assign( n, -1 );
        matching[r].assign( n, -1 );
        first_dependant[r].assign( n + 1, 0 );
        ready[r].assign( n, unknown );
        finish[r].assign( n, unknown );
        std::vector<int> count( members.size(), 0 );
        for ( std::size_t i = 0; i < n; ++i )
        {
            const StepGraphNode& node = nodes[i];
            for ( int d : node.deps )
            {
                if ( d < 0 || d >= static_cast<int>( n ) )
                    throw std::invalid_argument(
                        fmt::format( "rank {} node {} ('{}'): dependency {} does not exist", r, i,
                                     node.name, d ) );
                ++first_dependant[r][d + 1];
                ++pending[r][i];
            }
            if ( node.kind == Kind::send )
                sends[{ r, node.peer, node.tag }].push_back( static_cast<int>( i ) );
            if ( node.kind == Kind::recv && ( node.peer < 0 || node.peer >= num_ranks ) )
                throw std::invalid_argument(
                    fmt::format( "rank {} node {} ('{}'): source rank {} does not exist", r, i,
                                 node.name, node.peer ) );
            if ( node.kind != Kind::collective )
                continue;
            if ( node.group < 0 || node.group >= static_cast<int>( members.size() ) )
                throw std::invalid_argument( fmt::format(
                    "rank {} node {} ('{}'): unknown group {}", r, i, node.name, node.group ) );
            const int k = count[node.group]++;
            instance[r][i] = k;
            if ( position[node.group][r] < 0 )
                throw std::invalid_argument(
                    fmt::format( "rank {} node {} ('{}'): rank {} is not in group {}", r, i,
                                 node.name, r, node.group ) );
            auto& slots = coll[node.group]; // [k][member index] -> node
            if ( static_cast<int>( slots.size() ) <= k )
                slots.resize( k + 1, std::vector<int>( members[node.group].size(), -1 ) );
            slots[k][position[node.group][r]] = static_cast<int>( i );
        }
    }
    for ( int r = 0; r < num_ranks; ++r )
    {
        auto& first = first_dependant[r];
        for ( std::size_t i = 1; i < first.size(); ++i )
            first[i] += first[i - 1];
        dependants[r].resize( first.back() );
        std::vector<int> next( first.begin(), first.end() - 1 );
        const auto& nodes = graph.ranks[r];
        for ( std::size_t i = 0; i < nodes.size(); ++i )
            for ( int d : nodes[i].deps )
                dependants[r][next[d]++] = static_cast<int>( i );
    }
    // Receives waiting for their send: (src rank, send node) -> (rank, node).
    std::map<std::pair<int, int>, std::pair<int, int>> waiting_recv;
    {
        std::map<std::tuple<int, int, int>, std::size_t> seen;
        for ( int r = 0; r < num_ranks; ++r )
            for ( std::size_t i = 0; i < graph.ranks[r].size(); ++i )
            {
                const StepGraphNode& node = graph.ranks[r][i];
                if ( node.kind != Kind::recv )
                    continue;
                const auto key = std::make_tuple( node.peer, r, node.tag );
                const std::size_t k = seen[key]++;
                auto it = sends.find( key );
                if ( it != sends.end() && k < it->second.size() )
                {
                    matching[r][i] = it->second[k];
                    waiting_recv[{ node.peer, it->second[k] }] = { r, static_cast<int>( i ) };
                }
            }
    }
    // Collective instances: members arrived so far and their latest ready time.
    std::vector<std::vector<std::pair<int, double>>> arrived( members.size() );
    for ( std::size_t g = 0; g < members.size(); ++g )
        arrived[g].assign( coll[g].size(), { 0, 0.0 } );

    // Worklist: nodes whose dependencies have finished, in the order they became ready.
    std::vector<std::pair<int, int>> work;
    for ( int r = 0; r < num_ranks; ++r )
        for ( std::size_t i = 0; i < graph.ranks[r].size(); ++i )
            if ( pending[r][i] == 0 )
                work.emplace_back( r, static_cast<int>( i ) );
    std::vector<std::pair<int, int>> finished; // nodes whose finish time was just set
    auto done = [&]( int r, int i, double t )
    {
        finish[r][i] = t;
        finished.emplace_back( r, i );
    };
    while ( !work.empty() || !finished.empty() )
    {
        while ( !finished.empty() )
        {
            const auto [r, i] = finished.back();
            finished.pop_back();
            for ( int k = first_dependant[r][i]; k < first_dependant[r][i + 1]; ++k )
                if ( const int j = dependants[r][k]; --pending[r][j] == 0 )
                    work.emplace_back( r, j );
            const StepGraphNode& node = graph.ranks[r][i];
            if ( node.kind == Kind::send )
            {
                auto it = waiting_recv.find( { r, i } );
                if ( it != waiting_recv.end() )
                {
                    const auto [q, j] = it->second;
                    if ( ready[q][j] != unknown && finish[q][j] == unknown )
                        done( q, j, std::max( ready[q][j], finish[r][i] ) );
                }
            }
        }
        if ( work.empty() )
            break;
        const auto [r, i] = work.back();
        work.pop_back();
        const StepGraphNode& node = graph.ranks[r][i];
        double t = 0.0;
        for ( int d : node.deps )
            t = std::max( t, finish[r][d] );
        ready[r][i] = t;
        switch ( node.kind )
        {
        case Kind::compute:
            done( r, i, t + node.duration_ns );
            break;
        case Kind::send:
            done( r, i, t + pointToPointNs( net, r, node.peer, double( node.comm_bytes ) ) );
            break;
        case Kind::recv:
        {
            const int j = matching[r][i];
            if ( j >= 0 && finish[node.peer][j] != unknown )
                done( r, i, std::max( t, finish[node.peer][j] ) );
            break;
        }
        case Kind::collective:
        {
            const int k = instance[r][i];
            auto& [count, start] = arrived[node.group][k];
            ++count;
            start = std::max( start, t );
            if ( count < static_cast<int>( members[node.group].size() ) )
                break;
            const auto& slot = coll[node.group][k];
            const auto& group = members[node.group];
            for ( std::size_t m = 0; m < group.size(); ++m )
                if ( slot[m] < 0 )
                    throw std::invalid_argument(
                        fmt::format( "rank {} node {} ('{}'): rank {} has no matching collective",
                                     r, i, node.name, group[m] ) );
            const GroupView& view = views[node.group];
            const double end =
                start + ( view.network.num_dims > 0
                              ? collectiveTimeNsOnDims( view.network, view.system, node.collective,
                                                        double( node.comm_bytes ), 0, 1 )
                              : collectiveNodeNs( net, sys, node ) );
            for ( std::size_t m = 0; m < group.size(); ++m )
                done( group[m], slot[m], end );
            break;
        }
        }
    }

    StepGraphReplay out;
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
