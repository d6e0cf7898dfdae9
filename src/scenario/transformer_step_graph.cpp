// The transformer step as a per-rank operation graph (docs/model/chakra.md, "The transformer
// step"): model/transformer/step.hpp's composition, operator by operator.
#include "transformer_graph_items.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <shardsweep/model/transformer.hpp>
#include <shardsweep/scenario/pipeline_order.hpp>
#include <shardsweep/scenario/step_graph.hpp>
#include <stdexcept>
#include <tuple>

namespace shardsweep
{

namespace
{

using transformer_detail::StageTimes;
using namespace transformer_graph;

//! One rank's serial chain of nodes under construction: each node waits for the one before.
struct RankChain
{
    int t = 0, d = 0, me = 0; //!< the rank's TP and DP index, and the rank
    std::vector<StepGraphNode> nodes;
    void append( StepGraphNode n )
    {
        if ( !nodes.empty() )
            n.deps = { static_cast<int>( nodes.size() ) - 1 };
        nodes.push_back( std::move( n ) );
    }
    //! A compute node of `ms`.
    void appendCompute( std::string name, double ms )
    {
        StepGraphNode n;
        n.name = std::move( name );
        n.duration_ns = ms * 1e6;
        append( std::move( n ) );
    }
};

class TransformerGraphBuilder
{
  public:
    TransformerGraphBuilder( const Platform& platform, const TransformerSpec& model,
                             const ParallelConfig& cfg )
        : platform_( platform ), model_( model ), cfg_( cfg ),
          ops_( transformerOperatorCost( transformerOperatorCase( platform.gpu, model, cfg ) ) )
    {
        layout_.tp = cfg.tp;
        // Megatron's tp-cp-dp-pp order: the cp·dp ranks of a stage's TP rank are its "replicas"
        // (d = c + cp·d_dp), which is also the group its gradients are reduced over.
        layout_.dp = std::max( 1, cfg.cp ) * cfg.dp;
        layout_.pp = std::max( 1, cfg.pp );
        micro_batches_ = static_cast<int>(
            cfg.global_batch / ( std::int64_t( cfg.micro_batch ) * std::max( 1, cfg.dp ) ) );
        micro_batches_ = std::max( 1, micro_batches_ );
        train_ = cfg.mode == RunMode::train;
    }

    StepGraph build()
    {
        StepGraph graph;
        graph.workload_kind = "transformer";
        graph.iteration_ms = predictTransformerStep( platform_, model_, cfg_, ops_ ).iteration_ms;
        makeGroups( graph );
        graph.ranks.resize( platform_.numGpus() );
        for ( int s = 0; s < layout_.pp; ++s )
        {
            const StageTimes st = transformerStageTimes( shippedTransformerConstants(), platform_,
                                                         model_, cfg_, ops_, s, micro_batches_ );
            const StageItems items =
                stageItems( platform_, model_, cfg_, ops_, micro_batches_, s, st );
            for ( int d = 0; d < layout_.dp; ++d )
                for ( int t = 0; t < layout_.tp; ++t )
                    graph.ranks[layout_.rank( t, d, s )] = rankNodes( t, d, s, st, items );
        }
        return graph;
    }

  private:
    //! TP groups, DP groups and the tied-embedding pairs; a group of every rank is group 0.
    void makeGroups( StepGraph& graph )
    {
        const int p = platform_.numGpus();
        // Per (i, j): the group of ranks rank_of(i, j, k), k < n; its number goes to `group_of`.
        auto add = [&]( std::vector<int>& group_of, int ni, int nj, int n, auto rank_of )
        {
            for ( int i = 0; i < ni; ++i )
                for ( int j = 0; j < nj; ++j )
                {
                    std::vector<int> m;
                    for ( int k = 0; k < n; ++k )
                        m.push_back( rank_of( i, j, k ) );
                    int g = 0;
                    if ( static_cast<int>( m.size() ) != p )
                    {
                        graph.groups.push_back( m );
                        g = static_cast<int>( graph.groups.size() );
                    }
                    for ( int r : m )
                        group_of[r] = g;
                }
        };
        group_of_.assign( p );
        const Layout& L = layout_;
        if ( L.tp > 1 )
            add( group_of_.tp, L.pp, L.dp, L.tp,
                 [&]( int s, int d, int t ) { return L.rank( t, d, s ); } );
        if ( L.dp > 1 && train_ )
            add( group_of_.dp, L.pp, L.tp, L.dp,
                 [&]( int s, int t, int d ) { return L.rank( t, d, s ); } );
        if ( L.pp > 1 && train_ )
            add( group_of_.embedding, L.dp, L.tp, 2,
                 [&]( int d, int t, int k ) { return L.rank( t, d, k == 0 ? 0 : L.pp - 1 ); } );
        if ( cfg_.cp > 1 )
        {
            // A ring: the cp ranks of one TP rank and data-parallel replica (d = c + cp·d_dp).
            const int cp = cfg_.cp;
            add( group_of_.cp, L.pp, L.tp * cfg_.dp, cp,
                 [&]( int s, int i, int c )
                 { return L.rank( i % L.tp, c + cp * ( i / L.tp ), s ); } );
        }
        if ( model_.moe() )
        {
            // Expert ranks of a stage in etp-ep-edp order (MoE parallel folding): the stage's
            // q-th rank (q = t + tp·d) is expert rank (q mod etp, (q / etp) mod ep, q / (etp·ep)).
            const int etp = cfg_.expertTp(), ep = cfg_.ep, edp = expertDataParallel( cfg_ );
            const int stage = L.tp * L.dp;
            auto q = [&]( int s, int et, int e, int ed )
            { return s * stage + et + etp * ( e + ep * ed ); };
            if ( ep > 1 )
                add( group_of_.ep, L.pp, etp * edp, ep,
                     [&]( int s, int i, int k ) { return q( s, i % etp, k, i / etp ); } );
            if ( etp > 1 )
                add( group_of_.etp, L.pp, ep * edp, etp,
                     [&]( int s, int i, int k ) { return q( s, k, i % ep, i / ep ); } );
            if ( edp > 1 && train_ )
                add( group_of_.edp, L.pp, etp * ep, edp,
                     [&]( int s, int i, int k ) { return q( s, i % etp, i / etp, k ); } );
        }
        groups_ = &graph.groups;
    }

    //! Members of group g (0 = every rank).
    std::vector<int> members( int g ) const
    {
        if ( g > 0 )
            return ( *groups_ )[g - 1];
        std::vector<int> all( platform_.numGpus() );
        for ( int r = 0; r < platform_.numGpus(); ++r )
            all[r] = r;
        return all;
    }

    //! comm_size whose ASTRA-sim time on group g is the model's time for the item (cached:
    //! the per-layer collectives repeat).
    std::uint64_t commSize( const Item& item, int g )
    {
        const auto key = std::make_tuple( g, int( item.collective ), item.ms, item.payload_bytes );
        auto it = sizes_.find( key );
        if ( it == sizes_.end() )
            it = sizes_
                     .emplace( key, groupCommSizeForTime( platform_.network, platform_.system,
                                                          members( g ), item.collective,
                                                          item.ms * 1e6, item.payload_bytes ) )
                     .first;
        return it->second;
    }

    //! One rank's serial chain: the stage's passes in schedule order (pipelinePasses), each
    //! forward preceded by the receive of its activation and followed by its send (backward:
    //! gradient, the other way), then the post-pipeline part. With v chunks per rank a
    //! micro-batch crosses every rank once per chunk: the last rank's chunk c sends to the
    //! first rank's chunk c + 1 (and its gradient back), so every rank sends v messages each way
    //! per micro-batch, as the model charges (setPipelineTimes). Tags: 2(k·v + c) for the
    //! activation into chunk c of micro-batch k, + 1 for the gradient into it (2k and 2k + 1
    //! without interleaving).
    std::vector<StepGraphNode> rankNodes( int t, int d, int s, const StageTimes& st,
                                          const StageItems& items )
    {
        RankChain chain{ t, d, layout_.rank( t, d, s ), {} };
        const int p = layout_.pp, v = std::max( 1, cfg_.virtual_stages );
        const bool first = s == 0, last = s == p - 1;
        const double fwd_msg =
            ( train_ || v > 1 ? st.pp_f : st.pp_f / ( ( first || last ) ? 1 : 2 ) ) / v;
        const double bwd_msg = st.pp_b / v;
        auto tag = [&]( int k, int chunk, bool gradient )
        { return 2 * ( k * v + chunk ) + ( gradient ? 1 : 0 ); };
        // Names: the items' `NAME@mbK` (a layer's number tells its chunk); messages
        // `NAME.chunkC@mbK` when interleaved.
        auto suffixes = [&]( int k, int c )
        {
            const std::string mb = fmt::format( "@mb{}", k );
            return std::make_pair( mb, v > 1 ? fmt::format( ".chunk{}", c ) + mb : mb );
        };
        auto forward = [&]( int k, int c )
        {
            const auto [mb, msg] = suffixes( k, c );
            if ( !( first && c == 0 ) )
                appendMessage( chain, first ? p - 1 : s - 1, tag( k, c, false ), fwd_msg, false,
                               "pp.recv_act" + msg );
            appendItems( chain, items.fwd[c], mb );
            // Inference charges a middle stage both its messages; the receive's share is
            // spent before the send so that the next stage waits for it too.
            if ( !train_ && v == 1 && !first && !last )
                appendMessage( chain, -1, 0, fwd_msg, true, "pp.fwd_recv_time" + msg );
            if ( last && c == v - 1 )
                appendMessage( chain, -1, 0, fwd_msg, true, "pp.fwd_unpaired" + msg );
            else
                appendMessage( chain, last ? 0 : s + 1, tag( k, last ? c + 1 : c, false ), fwd_msg,
                               true, "pp.send_act" + msg );
        };
        auto backward = [&]( int k, int c )
        {
            const auto [mb, msg] = suffixes( k, c );
            if ( !( last && c == v - 1 ) )
                appendMessage( chain, last ? 0 : s + 1, tag( k, c, true ), bwd_msg, false,
                               "pp.recv_grad" + msg );
            appendItems( chain, items.bwd[c], mb );
            if ( first && c == 0 )
                appendMessage( chain, -1, 0, bwd_msg, true, "pp.bwd_unpaired" + msg );
            else
                appendMessage( chain, first ? p - 1 : s - 1, tag( k, first ? c - 1 : c, true ),
                               bwd_msg, true, "pp.send_grad" + msg );
        };
        for ( const PipelinePass& pass :
              pipelinePasses( cfg_.schedule, train_, p, v, micro_batches_, s ) )
        {
            if ( pass.forward )
                forward( pass.micro_batch, pass.chunk );
            else
                backward( pass.micro_batch, pass.chunk );
        }
        appendItems( chain, items.post, "" );
        return std::move( chain.nodes );
    }

    //! The items' nodes, names suffixed; a collective's host time after it (`NAME.host`).
    void appendItems( RankChain& chain, const std::vector<Item>& v, const std::string& suffix )
    {
        for ( const Item& i : v )
        {
            StepGraphNode n;
            n.kind = i.kind;
            n.name = i.name + suffix;
            if ( i.kind == Kind::compute )
                n.duration_ns = i.ms * 1e6;
            else
            {
                n.collective = i.collective;
                n.group = group_of_.of( i.group )[chain.me];
                n.comm_bytes = commSize( i, n.group );
                n.involved_dims.assign( platform_.network.num_dims, true );
            }
            chain.append( std::move( n ) );
            if ( i.host_ms > 0.0 )
                chain.appendCompute( i.name + ".host" + suffix, i.host_ms );
        }
    }

    //! A pipeline message to or from stage `peer_stage`: the model charges `ms` per micro-batch
    //! and direction to every stage, p2p_ms of it the framework's: the sender spends that in a
    //! compute node `pp.p2p_host` and the rest in its SEND; a stage without a neighbour that way
    //! idles as long.
    void appendMessage( RankChain& chain, int peer_stage, int tag, double ms, bool send,
                        const std::string& name ) const
    {
        if ( ms <= 0.0 )
            return;
        if ( peer_stage < 0 || peer_stage >= layout_.pp )
        {
            chain.appendCompute( name, ms ); // no neighbour that way: idle
            return;
        }
        const double p2p_ms = shippedTransformerConstants().p2p_ms;
        if ( ms > p2p_ms )
            ms -= p2p_ms;
        if ( send )
            chain.appendCompute( "pp.p2p_host" + name.substr( name.find_first_of( ".@", 3 ) ),
                                 p2p_ms );
        StepGraphNode n;
        n.name = name;
        const int peer = layout_.rank( chain.t, chain.d, peer_stage );
        n.kind = send ? Kind::send : Kind::recv;
        n.peer = peer;
        n.tag = tag;
        const int from = send ? chain.me : peer, to = send ? peer : chain.me;
        n.comm_bytes = pointToPointSizeForTime( platform_.network, from, to, ms * 1e6 );
        chain.append( std::move( n ) );
    }

    const Platform& platform_;
    const TransformerSpec& model_;
    ParallelConfig cfg_;
    TransformerOperatorCost ops_;
    Layout layout_;
    int micro_batches_ = 1;
    bool train_ = true;
    GroupMaps group_of_;
    const std::vector<std::vector<int>>* groups_ = nullptr;
    std::map<std::tuple<int, int, double, double>, std::uint64_t> sizes_;
};

} // namespace

StepGraph buildTransformerStepGraph( const ScenarioInput& input )
{
    ParallelConfig cfg = input.plan->parallel;
    cfg.global_batch = input.global_batch > 0 ? input.global_batch : input.workload->global_batch;
    if ( cfg.numGpus() != input.platform->numGpus() )
        throw std::invalid_argument(
            fmt::format( "the configuration needs {} GPUs, the platform has {}", cfg.numGpus(),
                         input.platform->numGpus() ) );
    return TransformerGraphBuilder( *input.platform, input.workload->transformer, cfg ).build();
}

} // namespace shardsweep
