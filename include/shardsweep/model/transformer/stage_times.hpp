#pragma once
//! \file stage_times.hpp
//! \brief What one pipeline stage of a transformer step costs per micro-batch, by phase
//! (StageTimes), the shape the phases are priced from (StageShape), and the once-per-iteration
//! part: the gradient synchronisation over the ranks that hold the same weights and the Adam step
//! (setDataParallelAndOptimizerTimes). model/transformer/step.hpp prices the other phases and
//! composes the stages into a step; rank layout and sources there.
#include <Kokkos_Core.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/domain/transformer_spec.hpp>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/model/math.hpp>
#include <shardsweep/model/transformer/groups.hpp>
#include <shardsweep/model/transformer/memory.hpp>

namespace shardsweep
{

namespace transformer_detail
{

//! Time of one stage per micro-batch, split by phase, ms.
struct StageTimes
{
    double compute_f = 0.0, compute_b = 0.0;
    double tp_f = 0.0, tp_b = 0.0;
    double pp_f = 0.0, pp_b = 0.0;
    double dp = 0.0;               //!< after the last backward (ZeRO-3: all its all-gathers)
    double opt = 0.0;              //!< Adam step
    double ep_f = 0.0, ep_b = 0.0; //!< MoE all-to-alls and expert-TP collectives
    KOKKOS_INLINE_FUNCTION double forward() const { return compute_f + tp_f + pp_f + ep_f; }
    KOKKOS_INLINE_FUNCTION double backward() const { return compute_b + tp_b + pp_b + ep_b; }
    KOKKOS_INLINE_FUNCTION double total() const { return forward() + backward(); }
};

//! What every phase of one stage's times needs: mode, layers, role and activation size.
struct StageShape
{
    bool train = true;
    int layers = 0;
    int dense_layers = 0; //!< layers with a dense FFN (all of them in a dense model)
    int moe_layers = 0;   //!< layers - dense_layers
    int stage = 0;
    StageRole role;
    double e = 0.0;   //!< bytes per activation element
    double sbh = 0.0; //!< elements of one [s, b, h] activation
    bool sp = false;  //!< sequence parallelism in effect (tp > 1)
};

//! The shape of stage `stage` of a configuration.
KOKKOS_INLINE_FUNCTION StageShape stageShape( const TransformerSpec& m, const ParallelConfig& cfg,
                                              int stage )
{
    StageShape sh;
    sh.train = cfg.mode == RunMode::train;
    sh.layers = stageLayers( m, cfg, stage );
    sh.dense_layers = stageDenseLayers( m, cfg, stage );
    sh.moe_layers = sh.layers - sh.dense_layers;
    sh.stage = stage;
    sh.role.first = stage == 0;
    sh.role.last = stage == cfg.pp - 1;
    sh.e = activationBytes( m.dtype );
    sh.sbh = double( m.seq_len ) / math::max( 1, cfg.cp ) * cfg.micro_batch * m.hidden;
    sh.sp = cfg.sequence_parallel && cfg.tp > 1;
    return sh;
}

//! The modelled gradient collectives of `params` parameters held alike by the `n` ranks of group
//! `g`, ms: without ZeRO an all-reduce of the gradients; with it a reduce-scatter of them and an
//! all-gather of the 1/n weight shards; ZeRO-3 gathers the weights again in every micro-batch's
//! forward and backward. Nothing for a group of one.
struct GradientSyncMs
{
    double reduce = 0.0, gather = 0.0, zero3 = 0.0;
};

KOKKOS_INLINE_FUNCTION GradientSyncMs gradientSyncMs( const GroupNetwork& g, double params,
                                                      double n, const ModelStateBytes& sb, int zero,
                                                      double micro_batches )
{
    GradientSyncMs r;
    if ( n <= 1.0 )
        return r;
    const double grads = params * sb.gradients;
    const double weight_shard = params * sb.weights / n;
    if ( zero == 0 )
        r.reduce = groupCollectiveMs( g, Collective::all_reduce, grads );
    else
    {
        r.reduce = groupCollectiveMs( g, Collective::reduce_scatter, grads );
        r.gather = groupCollectiveMs( g, Collective::all_gather, weight_shard );
    }
    if ( zero >= 3 )
        r.zero3 =
            2.0 * micro_batches * groupCollectiveMs( g, Collective::all_gather, weight_shard );
    return r;
}

//! st.dp and st.opt (training): the gradient synchronisation and the Adam step, once per
//! iteration.
KOKKOS_INLINE_FUNCTION void
setDataParallelAndOptimizerTimes( const TransformerConstants& c, const Platform& platform,
                                  const TransformerSpec& m, const ParallelConfig& cfg,
                                  const StageShape& sh, double micro_batches, StageTimes& st )
{
    const StageParams split = transformerStageParamSplit( m, cfg, sh.stage );
    const double params = split.dense;
    const ModelStateBytes sb = modelStateBytes( m.dtype );
    // Gradients are reduced, and ZeRO / the distributed optimizer shard, over the dp·cp ranks that
    // hold the same weights.
    const double dp = math::max( 1, cfg.dp ) * math::max( 1, cfg.cp );
    const int zero = zeroStage( cfg );
    GradientSyncMs sync = gradientSyncMs( groupNetwork( platform, int( dp ), double( cfg.tp ) ),
                                          params, dp, sb, zero, micro_batches );
    // An MoE stage's experts: the same over the edp ranks that hold them (stride ep·etp).
    const double edp = expertDataParallel( cfg );
    if ( split.expert > 0.0 )
    {
        const GradientSyncMs experts =
            gradientSyncMs( groupNetwork( platform, int( edp ), double( cfg.ep ) * cfg.expertTp() ),
                            split.expert, edp, sb, zero, micro_batches );
        sync.reduce += experts.reduce;
        sync.gather += experts.gather;
        sync.zero3 += experts.zero3;
    }
    const double reduce = sync.reduce, gather = sync.gather, zero3 = sync.zero3;
    double tied = 0.0; // modelled collectives, ms
    // Tied word embeddings: the first and last stage all-reduce their gradient copies.
    if ( cfg.pp > 1 && ( sh.role.first || sh.role.last ) )
    {
        const double V = paddedVocab( m, cfg.tp );
        const GroupNetwork emb =
            groupNetwork( platform, 2, double( cfg.tp ) * cfg.cp * cfg.dp * ( cfg.pp - 1 ) );
        tied =
            groupCollectiveMs( emb, Collective::all_reduce, V * m.hidden / cfg.tp * sb.gradients );
    }
    // The framework's gradient synchronisation reaches dp_bw_eff of the modelled collectives.
    // With overlap the gradient reduction runs under the last micro-batch's backward and the
    // weight all-gather under the next step's first forward (Megatron's bucketed
    // --overlap-grad-reduce / --overlap-param-gather): only what outlasts them is exposed.
    if ( cfg.overlap )
        st.dp = math::fmax( 0.0, reduce / c.dp_bw_eff - st.compute_b ) +
                math::fmax( 0.0, gather / c.dp_bw_eff - st.compute_f ) +
                ( zero3 + tied ) / c.dp_bw_eff;
    else
        st.dp = ( reduce + gather + zero3 + tied ) / c.dp_bw_eff;
    // Adam over the GPU's parameter shard: read gradient, read and write fp32 master,
    // momentum and variance, write the model-precision copy, zero the gradient buffer.
    const double shard = zero >= 1 ? params / dp + split.expert / edp : params + split.expert;
    const double master = sb.optimizer > 8.0 ? 8.0 : 0.0;
    const double bytes_per_param =
        sb.gradients + master + 16.0 + sb.weights + c.optimizer_bytes_extra;
    st.opt = memoryBoundMs( c, platform.gpu, shard * bytes_per_param );
    // fp8: the updated weights are cast once per step into the fp8 copy and its transpose (read
    // 2 bytes, write 2 × 1), on every GPU's whole stage.
    if ( sb.fp8_cache > 0.0 )
        st.opt += memoryBoundMs( c, platform.gpu,
                                 ( params + split.expert ) * ( sb.weights + sb.fp8_cache ) );
}

} // namespace transformer_detail

} // namespace shardsweep
