// A pipeline stage's operations for the transformer step graph (transformer_graph_items.hpp,
// stageItems): model/transformer/step.hpp's stage times, operator by operator, per model chunk.
#include "transformer_graph_items.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <shardsweep/model/transformer.hpp>

namespace shardsweep
{
namespace transformer_graph
{

namespace
{

using transformer_detail::StageTimes;

class StageItemBuilder
{
  public:
    StageItemBuilder( const Platform& platform, const TransformerSpec& model,
                      const ParallelConfig& cfg, const TransformerOperatorCost& ops,
                      int micro_batches )
        : platform_( platform ), model_( model ), cfg_( cfg ), ops_( ops ),
          micro_batches_( micro_batches ), train_( cfg.mode == RunMode::train ),
          pp_( std::max( 1, cfg.pp ) ), v_( std::max( 1, cfg.virtual_stages ) )
    {
    }

    StageItems build( int s, const StageTimes& st ) const
    {
        StageItems items;
        items.fwd.resize( v_ );
        items.bwd.resize( v_ );
        passItems( s, items );
        if ( train_ )
            postItems( s, StageRole{ s == 0, s == pp_ - 1 }, items.post );
        if ( cfg_.overlap )
            exposeOverlapped( st, items );
        checkStageSums( s, st, items );
        return items;
    }

  private:
    //! Global number of the stage's local layer l: stages hold consecutive layers; with v
    //! chunks, chunk c of stage s holds model chunk c·pp + s (Megatron's interleaved layout).
    int globalLayer( int s, int l ) const
    {
        if ( v_ > 1 )
        {
            const int per_chunk = stageLayers( model_, cfg_, s ) / v_;
            return ( ( l / per_chunk ) * pp_ + s ) * per_chunk + l % per_chunk;
        }
        int offset = 0;
        for ( int i = 0; i < s; ++i )
            offset += stageLayers( model_, cfg_, i );
        return offset + l;
    }

    //! The forward and backward of one micro-batch, per chunk (the embedding in the first
    //! stage's first chunk, the head and loss in the last stage's last chunk).
    void passItems( int s, StageItems& items ) const
    {
        const TransformerOperatorCost& o = ops_;
        const int layers = stageLayers( model_, cfg_, s );
        const int per_chunk = layers / v_;
        const bool first = s == 0, last = s == pp_ - 1;
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
            std::vector<Item>& fwd = items.fwd.front();
            addCompute( fwd, "embedding.fwd", o.embedding_fwd_ms );
            if ( tp.sp )
                tp.add( fwd, "embedding.tp_rs", Collective::reduce_scatter, tp.bytes );
            else
                tp.pair( fwd, "embedding.tp" );
        }
        for ( int l = 0; l < layers; ++l )
        {
            std::vector<Item>& fwd = items.fwd[l / per_chunk];
            const std::string layer = fmt::format( "layer{}", globalLayer( s, l ) );
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
            std::vector<Item>& fwd = items.fwd.back();
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
            std::vector<Item>& bwd = items.bwd.back();
            addCompute( bwd, "loss.bwd", o.loss_bwd_ms );
            addCompute( bwd, "head.bwd", o.head_bwd_ms );
            if ( tp.sp )
                tp.add( bwd, "head.tp_rs", Collective::reduce_scatter, tp.bytes );
            else
                tp.pair( bwd, "head.tp" );
        }
        for ( int l = layers - 1; l >= 0; --l )
        {
            std::vector<Item>& bwd = items.bwd[l / per_chunk];
            const std::string layer = fmt::format( "layer{}", globalLayer( s, l ) );
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
            addCompute( items.bwd.front(), "embedding.bwd", o.embedding_bwd_ms );
    }

    //! After the pipeline: gradient synchronisation (at dp_bw_eff) and the optimizer.
    void postItems( int s, const StageRole& role, std::vector<Item>& post ) const
    {
        namespace td = transformer_detail;
        const TransformerConstants& c = shippedTransformerConstants();
        const StageParams split = transformerStageParamSplit( model_, cfg_, s );
        const double params = split.dense;
        const ModelStateBytes sb = modelStateBytes( model_.dtype );
        const int replicas = std::max( 1, cfg_.cp ) * cfg_.dp; // the dp·cp ranks of a TP rank
        auto dp = [&]( const std::string& name, GroupKind g, const GroupNetwork& net, Collective k,
                       double size, Overlap overlap = Overlap::none )
        {
            const double ms = groupCollectiveMs( net, k, size ) / c.dp_bw_eff;
            if ( ms > 0.0 )
                post.push_back( { Kind::collective, name, ms, 0.0, k, g, size, overlap } );
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
                dp( prefix + ".allreduce", g, net, Collective::all_reduce, grads,
                    Overlap::gradient_reduction );
            else
            {
                dp( prefix + ".reduce_scatter", g, net, Collective::reduce_scatter, grads,
                    Overlap::gradient_reduction );
                dp( prefix + ".allgather", g, net, Collective::all_gather, shard,
                    Overlap::weight_gather );
            }
            if ( zeroStage( cfg_ ) >= 3 )
                for ( int k = 0; k < 2 * micro_batches_; ++k )
                    dp( fmt::format( "zero3.{}allgather{}", prefix == "dp" ? "" : prefix + "_", k ),
                        g, net, Collective::all_gather, shard );
        };
        sync( "dp", GroupKind::dp, replicas, double( cfg_.tp ), params );
        if ( pp_ > 1 && ( role.first || role.last ) )
        {
            const GroupNetwork emb =
                groupNetwork( platform_, 2, double( cfg_.tp ) * replicas * ( pp_ - 1 ) );
            dp( "embedding.grad_allreduce", GroupKind::embedding, emb, Collective::all_reduce,
                td::paddedVocab( model_, cfg_.tp ) * model_.hidden / cfg_.tp * sb.gradients );
        }
        // An MoE stage's experts: their gradients over the edp ranks that hold them.
        const int edp = expertDataParallel( cfg_ );
        if ( split.expert > 0.0 )
            sync( "edp", GroupKind::edp, edp, double( cfg_.ep ) * cfg_.expertTp(), split.expert );
        const double shard =
            zeroStage( cfg_ ) >= 1 ? params / replicas + split.expert / edp : params + split.expert;
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

    //! With overlap (model/transformer/step.hpp and stage_times.hpp) only the part of some
    //! communication that outlasts the compute it runs under is on the critical path: the TP
    //! collectives of a pass (--tp-comm-overlap, under the layer GEMMs), the expert all-to-alls
    //! (under the stage's compute), the gradient reduction (under the last backward) and the
    //! weight gather (under the first forward). The graph keeps one serial chain per rank
    //! (ASTRA-sim runs one collective at a time per rank; a collective overlapping the pass's own
    //! collectives would not be the model's step), so these collectives carry the exposed time
    //! E of their kind: their network time N first, whole while E ≥ N (the host's issue time
    //! then takes E − N in proportion), else N scaled by E/N and no host time; at E = 0 none is
    //! written. Keeping the network whole where it can be keeps every collective above the
    //! latency floor that ASTRA-sim's time cannot go below.
    void exposeOverlapped( const StageTimes& st, StageItems& items ) const
    {
        auto expose = [&]( std::vector<std::vector<Item>*> passes, auto pick, double exposed )
        {
            double net = 0.0, host = 0.0;
            for ( const std::vector<Item>* v : passes )
                for ( const Item& i : *v )
                    if ( i.kind == Kind::collective && pick( i ) )
                    {
                        net += i.ms;
                        host += i.host_ms;
                    }
            exposed = std::max( 0.0, exposed );
            if ( net + host <= 0.0 )
                return;
            const double net_share = exposed >= net ? 1.0 : exposed / net;
            const double host_share = exposed >= net && host > 0.0 ? ( exposed - net ) / host : 0.0;
            for ( std::vector<Item>* v : passes )
            {
                auto hidden = [&]( const Item& i )
                { return i.kind == Kind::collective && pick( i ) && net_share <= 0.0; };
                v->erase( std::remove_if( v->begin(), v->end(), hidden ), v->end() );
                for ( Item& i : *v )
                    if ( i.kind == Kind::collective && pick( i ) )
                    {
                        i.ms *= net_share;
                        i.host_ms *= host_share;
                    }
            }
        };
        auto all = []( std::vector<std::vector<Item>>& chunks )
        {
            std::vector<std::vector<Item>*> v;
            for ( std::vector<Item>& c : chunks )
                v.push_back( &c );
            return v;
        };
        auto is_tp = []( const Item& i ) { return i.group == GroupKind::tp; };
        auto cp_ms = [&]( const std::vector<std::vector<Item>>& chunks )
        {
            double t = 0.0;
            for ( const std::vector<Item>& v : chunks )
                for ( const Item& i : v )
                    if ( i.group == GroupKind::cp )
                        t += i.ms + i.host_ms;
            return t;
        };
        // The model's TP phase holds the context-parallel exchange too, which is not hidden.
        expose( all( items.fwd ), is_tp, st.tp_f - cp_ms( items.fwd ) );
        expose( all( items.bwd ), is_tp, st.tp_b - cp_ms( items.bwd ) );
        expose( all( items.fwd ), onExpertGroup, st.ep_f );
        expose( all( items.bwd ), onExpertGroup, st.ep_b );
        // Only the DP reduction and gather hide (ZeRO-3's gathers and the tied embedding's
        // all-reduce do not): max(0, t − the pass's compute) of each.
        auto sum = [&]( Overlap k )
        {
            double t = 0.0;
            for ( const Item& i : items.post )
                if ( i.overlap == k )
                    t += i.ms;
            return t;
        };
        auto of = [&]( Overlap k ) { return [k]( const Item& i ) { return i.overlap == k; }; };
        const double reduce = sum( Overlap::gradient_reduction );
        const double gather = sum( Overlap::weight_gather );
        expose( { &items.post }, of( Overlap::gradient_reduction ), reduce - st.compute_b );
        expose( { &items.post }, of( Overlap::weight_gather ), gather - st.compute_f );
    }

    const Platform& platform_;
    const TransformerSpec& model_;
    const ParallelConfig& cfg_;
    const TransformerOperatorCost& ops_;
    int micro_batches_ = 1;
    bool train_ = true;
    int pp_ = 1, v_ = 1;
};

} // namespace

StageItems stageItems( const Platform& platform, const TransformerSpec& model,
                       const ParallelConfig& cfg, const TransformerOperatorCost& ops,
                       int micro_batches, int stage, const transformer_detail::StageTimes& st )
{
    return StageItemBuilder( platform, model, cfg, ops, micro_batches ).build( stage, st );
}

} // namespace transformer_graph
} // namespace shardsweep
