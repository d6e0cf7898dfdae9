// The transformer step as a per-rank operation graph (docs/model/chakra.md, "The transformer
// step"): model/transformer/step.hpp's composition, operator by operator.
#include "transformer_graph_items.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <shardsweep/model/transformer.hpp>
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
            std::vector<Item> fwd, bwd, post;
            stageItems( s, fwd, bwd, post );
            checkStageSums( s, st, fwd, bwd, post );
            for ( int d = 0; d < layout_.dp; ++d )
                for ( int t = 0; t < layout_.tp; ++t )
                    graph.ranks[layout_.rank( t, d, s )] = rankNodes( t, d, s, st, fwd, bwd, post );
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

    //! The stage's operations, in model/transformer/step.hpp's terms (transformerStageTimes).
    void stageItems( int s, std::vector<Item>& fwd, std::vector<Item>& bwd,
                     std::vector<Item>& post ) const
    {
        const TransformerOperatorCost& o = ops_;
        const int layers = stageLayers( model_, cfg_, s );
        const bool first = s == 0, last = s == layout_.pp - 1;
        TpItems tp;
        tp.ranks = cfg_.tp;
        tp.sp = cfg_.sequence_parallel && cfg_.tp > 1;
        const double e = transformer_detail::activationBytes( model_.dtype );
        const double tokens = double( model_.seq_len ) / std::max( 1, cfg_.cp ) * cfg_.micro_batch;
        tp.bytes = e * tokens * model_.hidden;
        tp.net = groupNetwork( platform_, cfg_.tp, 1.0 );
        tp.sync = shippedTransformerConstants().tp_sync_ms * std::log2( double( cfg_.tp ) );
        const double layer_f = train_ ? o.layer_fwd_ms : o.layer_fwd_ms - o.layer_dropout_ms;
        const double moe_f = train_ ? o.moe_layer_fwd_ms : o.moe_layer_fwd_ms - o.layer_dropout_ms;
        const int dense_layers = stageDenseLayers( model_, cfg_, s );
        const bool shared = model_.shared_experts > 0;
        ExpertItems ex;
        if ( model_.moe() )
        {
            ex.ep = cfg_.ep;
            ex.etp = cfg_.expertTp();
            ex.a2a_bytes = transformer_detail::moeAllToAllBytes( model_, tokens / cfg_.tp, e );
            ex.ep_net = groupNetwork( platform_, ex.ep, double( ex.etp ) );
            ex.etp_net = groupNetwork( platform_, ex.etp, 1.0 );
        }
        // Context parallelism: the ring exchange of one layer that its attention core does not
        // hide (model/transformer/step.hpp, setContextParallelTimes), one collective on the ring.
        double cp_f = 0.0, cp_b = 0.0, kv_bytes = 0.0;
        if ( cfg_.cp > 1 )
        {
            transformer_detail::StageShape one_layer =
                transformer_detail::stageShape( model_, cfg_, s );
            one_layer.layers = 1;
            StageTimes exposed;
            transformer_detail::setContextParallelTimes( shippedTransformerConstants(), platform_,
                                                         model_, cfg_, o, one_layer, exposed );
            cp_f = exposed.tp_f;
            cp_b = exposed.tp_b - ( cfg_.recompute == Recompute::full ? cp_f : 0.0 );
            kv_bytes = 2.0 * tokens * model_.hidden * transformer_detail::kvHeadRatio( model_ ) /
                       cfg_.tp * e;
        }
        auto ring = [&]( std::vector<Item>& v, const std::string& name, double ms, double bytes )
        {
            if ( ms > 0.0 )
                v.push_back( { Kind::collective, name, ms, 0.0, Collective::all_gather,
                               GroupKind::cp, bytes } );
        };

        // Forward of one micro-batch.
        if ( first )
        {
            addCompute( fwd, "embedding.fwd", o.embedding_fwd_ms );
            if ( tp.sp )
                tp.add( fwd, "embedding.tp_rs", Collective::reduce_scatter, tp.bytes );
            else
                tp.pair( fwd, "embedding.tp" );
        }
        for ( int l = 0; l < layers; ++l )
        {
            const std::string layer = fmt::format( "layer{}", s * layers + l );
            if ( l < dense_layers )
            {
                addCompute( fwd, layer + ".fwd", layer_f );
                ring( fwd, layer + ".cp_kv", cp_f, kv_bytes );
                tp.pair( fwd, layer + ".tp_attn" );
                tp.pair( fwd, layer + ".tp_mlp" );
                continue;
            }
            addCompute( fwd, layer + ".fwd", moe_f );
            ring( fwd, layer + ".cp_kv", cp_f, kv_bytes );
            tp.pair( fwd, layer + ".tp_attn" );
            ex.layer( fwd, layer );
            if ( shared )
                tp.pair( fwd, layer + ".tp_shared" );
        }
        if ( last )
        {
            addCompute( fwd, "head.fwd", o.head_fwd_ms );
            if ( train_ )
                addCompute( fwd, "loss.fwd", o.loss_fwd_ms );
            if ( tp.sp )
                tp.add( fwd, "head.tp_ag", Collective::all_gather, tp.bytes / cfg_.tp );
            if ( train_ )
                for ( int k = 0; k < 3; ++k )
                    tp.add( fwd, fmt::format( "loss.tp{}", k ), Collective::all_reduce,
                            4.0 * tokens );
        }
        if ( !train_ )
            return;

        // Backward of one micro-batch (recomputation first).
        if ( last )
        {
            addCompute( bwd, "loss.bwd", o.loss_bwd_ms );
            addCompute( bwd, "head.bwd", o.head_bwd_ms );
            if ( tp.sp )
                tp.add( bwd, "head.tp_rs", Collective::reduce_scatter, tp.bytes );
            else
                tp.pair( bwd, "head.tp" );
        }
        for ( int l = layers - 1; l >= 0; --l )
        {
            const std::string layer = fmt::format( "layer{}", s * layers + l );
            const bool moe = l >= dense_layers;
            if ( cfg_.recompute == Recompute::full )
            {
                addCompute( bwd, layer + ".recompute", moe ? o.moe_layer_fwd_ms : o.layer_fwd_ms );
                ring( bwd, layer + ".recompute_cp_kv", cp_f, kv_bytes );
                tp.pair( bwd, layer + ".recompute_tp_attn" );
                if ( moe )
                    ex.layer( bwd, layer + ".recompute" );
                if ( !moe || shared )
                    tp.pair( bwd, layer + ( moe ? ".recompute_tp_shared" : ".recompute_tp_mlp" ) );
            }
            else if ( cfg_.recompute == Recompute::selective )
                addCompute( bwd, layer + ".recompute", o.layer_attn_core_ms );
            addCompute( bwd, layer + ".bwd", moe ? o.moe_layer_bwd_ms : o.layer_bwd_ms );
            ring( bwd, layer + ".cp_kv_grad", cp_b, 2.0 * kv_bytes );
            if ( !moe || shared )
                tp.pair( bwd, layer + ( moe ? ".tp_shared" : ".tp_mlp" ) );
            if ( moe )
                ex.layer( bwd, layer + ".grad" );
            tp.pair( bwd, layer + ".tp_attn" );
        }
        if ( first )
            addCompute( bwd, "embedding.bwd", o.embedding_bwd_ms );
        postItems( s, StageRole{ first, last }, post );
    }

    //! After the pipeline: gradient synchronisation (at dp_bw_eff) and the optimizer.
    void postItems( int s, const StageRole& role, std::vector<Item>& post ) const
    {
        namespace td = transformer_detail;
        const TransformerConstants& c = shippedTransformerConstants();
        const StageParams split = transformerStageParamSplit( model_, cfg_, s );
        const double params = split.dense;
        const ModelStateBytes sb = modelStateBytes( model_.dtype );
        auto dp = [&]( const std::string& name, GroupKind g, const GroupNetwork& net, Collective k,
                       double size )
        {
            const double ms = groupCollectiveMs( net, k, size ) / c.dp_bw_eff;
            if ( ms > 0.0 )
                post.push_back( { Kind::collective, name, ms, 0.0, k, g, size } );
        };
        // Gradients of `p` parameters held alike by the n ranks of group `g` (names `PREFIX.*`).
        auto sync = [&]( const std::string& prefix, GroupKind g, int n, double stride, double p )
        {
            if ( n <= 1 )
                return;
            const GroupNetwork net = groupNetwork( platform_, n, stride );
            const double grads = p * sb.gradients;
            const double shard = p * sb.weights / n;
            if ( zeroStage( cfg_ ) == 0 )
                dp( prefix + ".allreduce", g, net, Collective::all_reduce, grads );
            else
            {
                dp( prefix + ".reduce_scatter", g, net, Collective::reduce_scatter, grads );
                dp( prefix + ".allgather", g, net, Collective::all_gather, shard );
            }
            if ( zeroStage( cfg_ ) >= 3 )
                for ( int k = 0; k < 2 * micro_batches_; ++k )
                    dp( fmt::format( "zero3.{}allgather{}", prefix == "dp" ? "" : prefix + "_", k ),
                        g, net, Collective::all_gather, shard );
        };
        sync( "dp", GroupKind::dp, layout_.dp, double( cfg_.tp ), params );
        if ( layout_.pp > 1 && ( role.first || role.last ) )
        {
            const GroupNetwork emb =
                groupNetwork( platform_, 2, double( cfg_.tp ) * layout_.dp * ( layout_.pp - 1 ) );
            dp( "embedding.grad_allreduce", GroupKind::embedding, emb, Collective::all_reduce,
                td::paddedVocab( model_, cfg_.tp ) * model_.hidden / cfg_.tp * sb.gradients );
        }
        // An MoE stage's experts: their gradients over the edp ranks that hold them.
        const int edp = expertDataParallel( cfg_ );
        if ( split.expert > 0.0 )
            sync( "edp", GroupKind::edp, edp, double( cfg_.ep ) * cfg_.expertTp(), split.expert );
        const double shard = zeroStage( cfg_ ) >= 1 ? params / layout_.dp + split.expert / edp
                                                    : params + split.expert;
        const double master = sb.optimizer > 8.0 ? 8.0 : 0.0;
        addCompute( post, "optimizer",
                    td::memoryBoundMs( c, platform_.gpu,
                                       shard * ( sb.gradients + master + 16.0 + sb.weights +
                                                 c.optimizer_bytes_extra ) ) );
        // fp8: the updated weights cast into Transformer Engine's fp8 copy and its transpose.
        if ( sb.fp8_cache > 0.0 )
            addCompute(
                post, "optimizer.fp8_cast",
                td::memoryBoundMs( c, platform_.gpu,
                                   ( params + split.expert ) * ( sb.weights + sb.fp8_cache ) ) );
    }

    //! One rank's serial chain: the stage's micro-batches in schedule order, each forward
    //! preceded by the receive of its activation and followed by its send (backward: gradient,
    //! the other way), then the post-pipeline part.
    std::vector<StepGraphNode> rankNodes( int t, int d, int s, const StageTimes& st,
                                          const std::vector<Item>& fwd,
                                          const std::vector<Item>& bwd,
                                          const std::vector<Item>& post )
    {
        RankChain chain{ t, d, layout_.rank( t, d, s ), {} };
        const double msg =
            train_ ? st.pp_f : st.pp_f / ( ( s == 0 || s == layout_.pp - 1 ) ? 1 : 2 );
        auto forward = [&]( int k )
        {
            const std::string mb = fmt::format( "@mb{}", k );
            if ( s > 0 )
                appendMessage( chain, s - 1, 2 * k, msg, false, "pp.recv_act" + mb );
            appendItems( chain, fwd, mb );
            // Inference charges a middle stage both its messages; the receive's share is
            // spent before the send so that the next stage waits for it too.
            if ( !train_ && s > 0 && s < layout_.pp - 1 )
                appendMessage( chain, -1, 0, msg, true, "pp.fwd_recv_time" + mb );
            appendMessage( chain, s + 1, 2 * k, msg, true,
                           ( s < layout_.pp - 1 ? "pp.send_act" : "pp.fwd_unpaired" ) + mb );
        };
        auto backward = [&]( int k )
        {
            const std::string mb = fmt::format( "@mb{}", k );
            if ( s < layout_.pp - 1 )
                appendMessage( chain, s + 1, 2 * k + 1, st.pp_b, false, "pp.recv_grad" + mb );
            appendItems( chain, bwd, mb );
            appendMessage( chain, s - 1, 2 * k + 1, st.pp_b, true,
                           ( s > 0 ? "pp.send_grad" : "pp.bwd_unpaired" ) + mb );
        };
        // Forwards before the first backward: all (inference, GPipe), one per later stage (1F1B).
        const int m = micro_batches_;
        const bool one_f_one_b = train_ && cfg_.schedule != PipelineSchedule::gpipe;
        const int warmup = one_f_one_b ? std::min( layout_.pp - s - 1, m ) : m;
        for ( int k = 0; k < warmup; ++k )
            forward( k );
        for ( int k = 0; k < m - warmup; ++k )
        {
            forward( warmup + k );
            backward( k );
        }
        if ( train_ )
            for ( int k = m - warmup; k < m; ++k )
                backward( k );
        appendItems( chain, post, "" );
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
            chain.appendCompute( "pp.p2p_host" + name.substr( name.find( '@' ) ), p2p_ms );
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
