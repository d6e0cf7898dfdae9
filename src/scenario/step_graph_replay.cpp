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

namespace
{

//! The time of collective `node`, ns; throws std::invalid_argument (naming the collective
//! `name()`) when its involved dimensions are not one contiguous range (what the model can
//! price). Dimensions beyond the network's are ignored; none involved: 0.
template <class NameFunction>
double packedCollectiveNs( const Network& net, const SystemConfig& sys,
                           const PackedStepGraph::Node& node, const NameFunction& name )
{
    int first = 0, count = net.num_dims;
    if ( !node.all_dims )
    {
        first = -1;
        count = 0;
        for ( int d = 0; d < net.num_dims; ++d )
        {
            if ( !( node.dims_mask & ( 1u << d ) ) )
                continue;
            if ( first < 0 )
                first = d;
            else if ( d != first + count )
                throw std::invalid_argument( fmt::format(
                    "collective '{}': involved dimensions are not contiguous", name() ) );
            ++count;
        }
        if ( first < 0 )
            return 0.0;
    }
    return collectiveTimeNsOnDims( net, sys, node.collective,
                                   static_cast<double>( node.comm_bytes ), first, count );
}

} // namespace

double collectiveNodeNs( const Network& net, const SystemConfig& sys, const StepGraphNode& node )
{
    return packedCollectiveNs( net, astraSystem( sys ), PackedStepGraph::packNode( node ),
                               [&] { return node.name; } );
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
    const SystemConfig astra = astraSystem( sys );
    GroupView v{ net, astra };
    int dims = net.num_dims;
    if ( static_cast<int>( members.size() ) < total )
    {
        v = subGroupView( net, astra, members );
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

namespace
{
using Kind = StepGraphNode::Kind;
constexpr double kUnknown = -1.0; //!< a time not known yet

//! The replay of one step graph: every rank's nodes start when their dependencies have finished;
//! a receive finishes when its matching send has; a collective starts when every member of its
//! group has reached it and finishes on all of them at once.
class GraphReplayer
{
  public:
    GraphReplayer( const PackedStepGraph& graph, const Network& net, const SystemConfig& sys )
        : graph_( graph ), net_( net ), sys_( astraSystem( sys ) ), num_ranks_( graph.numRanks() )
    {
        indexGroups();
        indexNodes();
        linkDependants();
        matchReceives();
    }

    StepGraphReplay run();

  private:
    void indexGroups();
    void indexNodes();
    void indexNode( int r, std::size_t i, std::vector<int>& count );
    void linkDependants();
    void matchReceives();
    void start( int r, int i );
    void arriveAtCollective( int r, int i, double t );
    void done( int r, int i, double t )
    {
        finish_[r][i] = t;
        finished_.emplace_back( r, i );
    }
    void release( int r, int i );
    StepGraphReplay summary() const;

    const PackedStepGraph& graph_;
    const Network& net_;
    const SystemConfig sys_;
    const int num_ranks_;
    //! Group 0 is every rank; group g + 1 is graph.groups[g].
    std::vector<std::vector<int>> members_;
    //! position_[g][r]: rank r's index among group g's members (-1: not a member).
    std::vector<std::vector<int>> position_;
    //! A group smaller than the network is priced as ASTRA-sim prices it (subGroupView).
    std::vector<GroupView> views_;
    // Per node: dependencies not yet finished; which instance of its group's collectives it is
    // (the k-th collective of a group on a rank is instance k); the send a receive matches
    // (receive i of rank r matches the same occurrence of (peer -> r, tag) among the peer's
    // sends); ready and finish times.
    std::vector<std::vector<int>> pending_, instance_, matching_;
    //! Dependants of node i of rank r: dependants_[r][first_dependant_[r][i] .. [i + 1]).
    std::vector<std::vector<int>> first_dependant_, dependants_;
    std::vector<std::vector<double>> ready_, finish_;
    std::vector<std::vector<std::vector<int>>> coll_; //!< [group][k][member index] -> node
    std::map<std::tuple<int, int, int>, std::vector<int>> sends_; //!< (src, dst, tag) -> nodes
    //! Receives waiting for their send: (src rank, send node) -> (rank, node).
    std::map<std::pair<int, int>, std::pair<int, int>> waiting_recv_;
    //! Collective instances: members arrived so far and their latest ready time.
    std::vector<std::vector<std::pair<int, double>>> arrived_;
    std::vector<std::pair<int, int>> work_;     //!< nodes whose dependencies have finished
    std::vector<std::pair<int, int>> finished_; //!< nodes whose finish time was just set
};

void GraphReplayer::indexGroups()
{
    members_.resize( graph_.groups.size() + 1 );
    for ( int r = 0; r < num_ranks_; ++r )
        members_[0].push_back( r );
    for ( std::size_t g = 0; g < graph_.groups.size(); ++g )
        members_[g + 1] = graph_.groups[g];
    position_.assign( members_.size(), std::vector<int>( num_ranks_, -1 ) );
    for ( std::size_t g = 0; g < members_.size(); ++g )
        for ( std::size_t k = 0; k < members_[g].size(); ++k )
            if ( members_[g][k] >= 0 && members_[g][k] < num_ranks_ )
                position_[g][members_[g][k]] = static_cast<int>( k );
    views_.resize( members_.size() );
    for ( std::size_t g = 1; g < members_.size(); ++g )
        if ( static_cast<int>( members_[g].size() ) < num_ranks_ )
            views_[g] = subGroupView( net_, sys_, members_[g] );
}

void GraphReplayer::indexNodes()
{
    pending_.resize( num_ranks_ );
    instance_.resize( num_ranks_ );
    matching_.resize( num_ranks_ );
    first_dependant_.resize( num_ranks_ );
    dependants_.resize( num_ranks_ );
    ready_.resize( num_ranks_ );
    finish_.resize( num_ranks_ );
    coll_.resize( members_.size() );
    for ( int r = 0; r < num_ranks_; ++r )
    {
        const std::size_t n = graph_.size( r );
        pending_[r].assign( n, 0 );
        instance_[r].assign( n, -1 );
        matching_[r].assign( n, -1 );
        first_dependant_[r].assign( n + 1, 0 );
        ready_[r].assign( n, kUnknown );
        finish_[r].assign( n, kUnknown );
        std::vector<int> count( members_.size(), 0 );
        for ( std::size_t i = 0; i < n; ++i )
            indexNode( r, i, count );
    }
    arrived_.resize( members_.size() );
    for ( std::size_t g = 0; g < members_.size(); ++g )
        arrived_[g].assign( coll_[g].size(), { 0, 0.0 } );
}

//! Node i of rank r: its dependencies, its send key, its collective instance (`count`: the
//! rank's collectives per group so far); malformed references throw.
void GraphReplayer::indexNode( int r, std::size_t i, std::vector<int>& count )
{
    const std::size_t n = graph_.size( r );
    const PackedStepGraph::Node& node = graph_.node( r, i );
    for ( int d : graph_.deps( r, i ) )
    {
        if ( d < 0 || d >= static_cast<int>( n ) )
            throw std::invalid_argument( fmt::format( "rank {} node {} ('{}'): dependency {} does "
                                                      "not exist",
                                                      r, i, graph_.name( r, i ), d ) );
        ++first_dependant_[r][d + 1];
        ++pending_[r][i];
    }
    if ( node.kind == Kind::send )
        sends_[{ r, node.peer, node.tag }].push_back( static_cast<int>( i ) );
    if ( node.kind == Kind::recv && ( node.peer < 0 || node.peer >= num_ranks_ ) )
        throw std::invalid_argument(
            fmt::format( "rank {} node {} ('{}'): source rank {} does not exist", r, i,
                         graph_.name( r, i ), node.peer ) );
    if ( node.kind != Kind::collective )
        return;
    if ( node.group < 0 || node.group >= static_cast<int>( members_.size() ) )
        throw std::invalid_argument( fmt::format( "rank {} node {} ('{}'): unknown group {}", r, i,
                                                  graph_.name( r, i ), node.group ) );
    const int k = count[node.group]++;
    instance_[r][i] = k;
    if ( position_[node.group][r] < 0 )
        throw std::invalid_argument(
            fmt::format( "rank {} node {} ('{}'): rank {} is not in group {}", r, i,
                         graph_.name( r, i ), r, node.group ) );
    auto& slots = coll_[node.group]; // [k][member index] -> node
    if ( static_cast<int>( slots.size() ) <= k )
        slots.resize( k + 1, std::vector<int>( members_[node.group].size(), -1 ) );
    slots[k][position_[node.group][r]] = static_cast<int>( i );
}

void GraphReplayer::linkDependants()
{
    for ( int r = 0; r < num_ranks_; ++r )
    {
        auto& first = first_dependant_[r];
        for ( std::size_t i = 1; i < first.size(); ++i )
            first[i] += first[i - 1];
        dependants_[r].resize( first.back() );
        std::vector<int> next( first.begin(), first.end() - 1 );
        for ( std::size_t i = 0; i < graph_.size( r ); ++i )
            for ( int d : graph_.deps( r, i ) )
                dependants_[r][next[d]++] = static_cast<int>( i );
    }
}

void GraphReplayer::matchReceives()
{
    std::map<std::tuple<int, int, int>, std::size_t> seen;
    for ( int r = 0; r < num_ranks_; ++r )
        for ( std::size_t i = 0; i < graph_.size( r ); ++i )
        {
            const PackedStepGraph::Node& node = graph_.node( r, i );
            if ( node.kind != Kind::recv )
                continue;
            const auto key = std::make_tuple( node.peer, r, node.tag );
            const std::size_t k = seen[key]++;
            auto it = sends_.find( key );
            if ( it != sends_.end() && k < it->second.size() )
            {
                matching_[r][i] = it->second[k];
                waiting_recv_[{ node.peer, it->second[k] }] = { r, static_cast<int>( i ) };
            }
        }
}

//! A node has finished: its dependants lose a dependency; a send completes its waiting receive.
void GraphReplayer::release( int r, int i )
{
    for ( int k = first_dependant_[r][i]; k < first_dependant_[r][i + 1]; ++k )
        if ( const int j = dependants_[r][k]; --pending_[r][j] == 0 )
            work_.emplace_back( r, j );
    if ( graph_.node( r, i ).kind != Kind::send )
        return;
    auto it = waiting_recv_.find( { r, i } );
    if ( it != waiting_recv_.end() )
    {
        const auto [q, j] = it->second;
        if ( ready_[q][j] != kUnknown && finish_[q][j] == kUnknown )
            done( q, j, std::max( ready_[q][j], finish_[r][i] ) );
    }
}

//! Node i of rank r, whose dependencies have finished, starts.
void GraphReplayer::start( int r, int i )
{
    const PackedStepGraph::Node& node = graph_.node( r, i );
    double t = 0.0;
    for ( int d : graph_.deps( r, i ) )
        t = std::max( t, finish_[r][d] );
    ready_[r][i] = t;
    switch ( node.kind )
    {
    case Kind::compute:
        done( r, i, t + node.duration_ns );
        break;
    case Kind::send:
        done( r, i, t + pointToPointNs( net_, r, node.peer, double( node.comm_bytes ) ) );
        break;
    case Kind::recv:
    {
        const int j = matching_[r][i];
        if ( j >= 0 && finish_[node.peer][j] != kUnknown )
            done( r, i, std::max( t, finish_[node.peer][j] ) );
        break;
    }
    case Kind::collective:
        arriveAtCollective( r, i, t );
        break;
    }
}

//! Rank r reaches its collective node i at time t; the last member starts it for all.
void GraphReplayer::arriveAtCollective( int r, int i, double t )
{
    const PackedStepGraph::Node& node = graph_.node( r, i );
    const int k = instance_[r][i];
    auto& [count, start] = arrived_[node.group][k];
    ++count;
    start = std::max( start, t );
    if ( count < static_cast<int>( members_[node.group].size() ) )
        return;
    const auto& slot = coll_[node.group][k];
    const auto& group = members_[node.group];
    for ( std::size_t m = 0; m < group.size(); ++m )
        if ( slot[m] < 0 )
            throw std::invalid_argument(
                fmt::format( "rank {} node {} ('{}'): rank {} has no matching collective", r, i,
                             graph_.name( r, i ), group[m] ) );
    const GroupView& view = views_[node.group];
    const double end =
        start +
        ( view.network.num_dims > 0
              ? collectiveTimeNsOnDims( view.network, view.system, node.collective,
                                        double( node.comm_bytes ), 0, 1 )
              : packedCollectiveNs( net_, sys_, node, [&] { return graph_.name( r, i ); } ) );
    for ( std::size_t m = 0; m < group.size(); ++m )
        done( group[m], slot[m], end );
}

StepGraphReplay GraphReplayer::run()
{
    // Worklist: nodes whose dependencies have finished, in the order they became ready.
    for ( int r = 0; r < num_ranks_; ++r )
        for ( std::size_t i = 0; i < graph_.size( r ); ++i )
            if ( pending_[r][i] == 0 )
                work_.emplace_back( r, static_cast<int>( i ) );
    while ( !work_.empty() || !finished_.empty() )
    {
        while ( !finished_.empty() )
        {
            const auto [r, i] = finished_.back();
            finished_.pop_back();
            release( r, i );
        }
        if ( work_.empty() )
            break;
        const auto [r, i] = work_.back();
        work_.pop_back();
        start( r, i );
    }
    return summary();
}

StepGraphReplay GraphReplayer::summary() const
{
    StepGraphReplay out;
    out.rank_finish_ns.assign( num_ranks_, 0.0 );
    for ( int r = 0; r < num_ranks_; ++r )
    {
        double compute = 0.0;
        for ( std::size_t i = 0; i < graph_.size( r ); ++i )
        {
            if ( finish_[r][i] == kUnknown )
                throw std::invalid_argument(
                    fmt::format( "rank {} node {} ('{}') never finishes (a dependency cycle or an "
                                 "unmatched collective or message)",
                                 r, i, graph_.name( r, i ) ) );
            out.rank_finish_ns[r] = std::max( out.rank_finish_ns[r], finish_[r][i] );
            if ( graph_.node( r, i ).kind == Kind::compute )
                compute += graph_.node( r, i ).duration_ns;
        }
        out.finish_ns = std::max( out.finish_ns, out.rank_finish_ns[r] );
        out.compute_ns = std::max( out.compute_ns, compute );
    }
    return out;
}
} // namespace

StepGraphReplay replayStepGraph( const PackedStepGraph& graph, const Network& net,
                                 const SystemConfig& sys )
{
    return GraphReplayer( graph, net, sys ).run();
}

StepGraphReplay replayStepGraph( const StepGraph& graph, const Network& net,
                                 const SystemConfig& sys )
{
    return replayStepGraph( PackedStepGraph::pack( graph ), net, sys );
}

} // namespace shardsweep
