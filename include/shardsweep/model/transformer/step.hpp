#pragma once
//! \file step.hpp
//! \brief One training (or inference) step of a Megatron-LM 3D-parallel transformer, composed in
//! closed form from the operator costs (model/transformer/operators.hpp): tensor-, pipeline- and
//! data-parallel communication priced by the ASTRA-sim-exact collectives of model/collectives.hpp
//! on the network dimensions each group spans, the pipeline schedule with its bubble, the Adam
//! step and the memory of every stage (Narayanan et al., SC'21, §2-§3; docs/model/transformer.md).
//!
//! Rank order is Megatron-LM's default (tp-cp-dp-pp): global rank = tp_rank + tp·(cp_rank +
//! cp·(dp_rank + dp·pp_rank)), GPUs numbered as the platform's NPUs (network dimension 0 fastest,
//! i.e. GPUs of one node first). A TP group is tp consecutive ranks, a CP ring cp ranks at stride
//! tp, the gradient group the dp·cp ranks at stride tp, pipeline neighbours tp·cp·dp ranks apart.
//! The platform's last network dimension is taken as large as the configuration needs (the GPU
//! count sets the node count).
#include <Kokkos_Core.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/domain/transformer_spec.hpp>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/model/math.hpp>
#include <shardsweep/model/transformer/groups.hpp>
#include <shardsweep/model/transformer/memory.hpp>
#include <shardsweep/model/transformer/operators.hpp>
#include <shardsweep/model/transformer/stage_times.hpp>

namespace shardsweep
{

namespace transformer_detail
{

//! st.compute_f and st.compute_b: the stage's layers, embedding, head and loss, with recompute.
KOKKOS_INLINE_FUNCTION void setComputeTimes( const ParallelConfig& cfg,
                                             const TransformerOperatorCost& ops,
                                             const StageShape& sh, StageTimes& st )
{
    const bool train = sh.train;
    const double layer_f = train ? ops.layer_fwd_ms : ops.layer_fwd_ms - ops.layer_dropout_ms;
    const double moe_f = train ? ops.moe_layer_fwd_ms : ops.moe_layer_fwd_ms - ops.layer_dropout_ms;
    // (A dense model has no MoE layers: + 0·moe_f leaves its sums as they were.)
    st.compute_f = sh.dense_layers * layer_f + sh.moe_layers * moe_f;
    if ( sh.role.first )
        st.compute_f += ops.embedding_fwd_ms;
    if ( sh.role.last )
        st.compute_f += ops.head_fwd_ms + ( train ? ops.loss_fwd_ms : 0.0 );
    if ( train )
    {
        double recompute = 0.0, moe_recompute = 0.0;
        if ( cfg.recompute == Recompute::full )
        {
            recompute = ops.layer_fwd_ms;
            moe_recompute = ops.moe_layer_fwd_ms;
        }
        else if ( cfg.recompute == Recompute::selective )
            recompute = moe_recompute = ops.layer_attn_core_ms;
        st.compute_b = sh.dense_layers * ( ops.layer_bwd_ms + recompute ) +
                       sh.moe_layers * ( ops.moe_layer_bwd_ms + moe_recompute );
        if ( sh.role.first )
            st.compute_b += ops.embedding_bwd_ms;
        if ( sh.role.last )
            st.compute_b += ops.head_bwd_ms + ops.loss_bwd_ms;
    }
}

//! st.tp_f and st.tp_b (tp > 1): 2 all-reduces of [s, b, h] per layer forward and 2 backward (SP:
//! each an all-gather of the 1/t shard plus a reduce-scatter); full recompute repeats the forward
//! pair; embedding one forward, LM head one backward, cross-entropy three of b·s fp32.
KOKKOS_INLINE_FUNCTION void setTensorParallelTimes( const TransformerConstants& c,
                                                    const Platform& platform,
                                                    const TransformerSpec& m,
                                                    const ParallelConfig& cfg, const StageShape& sh,
                                                    StageTimes& st )
{
    const bool train = sh.train, sp = sh.sp;
    const GroupNetwork tpg = groupNetwork( platform, cfg.tp, 1.0 );
    const double bytes = sh.e * sh.sbh;
    // Each collective is also a kernel the host issues, and waits for the slowest rank of the
    // group: tp_sync_ms per doubling of the group (rank skew).
    const double sync = c.tp_sync_ms * math::log2( double( cfg.tp ) );
    auto coll = [&]( Collective k, double size )
    { return issuedMs( c, groupCollectiveMs( tpg, k, size ), 1.0 ) + sync; };
    const double pair = sp ? coll( Collective::all_gather, bytes / cfg.tp ) +
                                 coll( Collective::reduce_scatter, bytes )
                           : coll( Collective::all_reduce, bytes );
    const double per_layer_f = 2.0 * pair;
    double per_layer_b = 2.0 * pair;
    if ( cfg.recompute == Recompute::full )
        per_layer_b += 2.0 * pair;
    // An MoE layer keeps the attention's pair (and a pair for shared experts): its routed experts
    // communicate in the EP and ETP groups (moeCommMs).
    const double moe_pairs = m.shared_experts > 0 ? 2.0 : 1.0;
    const double moe_layer_f = moe_pairs * pair;
    const double moe_layer_b = ( cfg.recompute == Recompute::full ? 2.0 : 1.0 ) * moe_pairs * pair;
    st.tp_f = sh.dense_layers * per_layer_f + sh.moe_layers * moe_layer_f;
    st.tp_b = train ? sh.dense_layers * per_layer_b + sh.moe_layers * moe_layer_b : 0.0;
    if ( sh.role.first )
        st.tp_f += sp ? coll( Collective::reduce_scatter, bytes ) : pair;
    if ( sh.role.last )
    {
        if ( sp )
            st.tp_f += coll( Collective::all_gather, bytes / cfg.tp );
        if ( train )
        {
            st.tp_f += 3.0 * coll( Collective::all_reduce,
                                   4.0 * cfg.micro_batch * m.seq_len / math::max( 1, cfg.cp ) );
            st.tp_b += sp ? coll( Collective::reduce_scatter, bytes ) : pair;
        }
    }
}

//! st.pp_f and st.pp_b (pp > 1): one activation forward and one gradient backward per micro-batch
//! and stage boundary, [s/cp, b, h] (1/t of it with SP), between ranks tp·cp·dp apart.
KOKKOS_INLINE_FUNCTION void setPipelineTimes( const TransformerConstants& c,
                                              const Platform& platform, const ParallelConfig& cfg,
                                              const StageShape& sh, StageTimes& st )
{
    // The framework's send/recv reaches p2p_bw_eff of the link and costs p2p_ms per message
    // (nothing without a network: a pipeline on one GPU is a test fixture).
    const double wire = pointToPointMs( platform, double( cfg.tp ) * cfg.cp * cfg.dp,
                                        sh.e * sh.sbh / ( sh.sp ? cfg.tp : 1 ) / c.p2p_bw_eff );
    const double msg = wire > 0.0 ? c.p2p_ms + wire : 0.0;
    const double neighbours = ( sh.role.first || sh.role.last ) ? 1.0 : 2.0;
    // Interleaved: a micro-batch passes every rank once per model chunk (v times); every chunk
    // boundary is a message, the last rank's included (it sends to the first rank's next chunk).
    const double v = math::max( 1, cfg.virtual_stages );
    if ( sh.train )
    {
        // Megatron pairs the sends and receives of the steady state (send_forward_recv_backward
        // and send_backward_recv_forward): one message time in each direction.
        st.pp_f = v * msg;
        st.pp_b = v * msg;
    }
    else
    {
        st.pp_f = v > 1.0 ? v * msg : neighbours * msg;
    }
}

//! Context parallelism (cp > 1), added to st.tp_f and st.tp_b (the collectives inside a stage):
//! ring attention passes every rank's key/value chunk around the cp ranks (stride tp), cp − 1
//! steps of 2·b·(s/cp)·(g/a)·h/t elements each way per layer in the forward; the backward passes
//! K, V and their gradients (twice the bytes). Each step overlaps the attention on the chunk in
//! hand (Megatron-Core's p2p context parallelism), so only what outlasts the layer's attention
//! core is exposed; full recompute repeats the forward's exchange.
KOKKOS_INLINE_FUNCTION void
setContextParallelTimes( const TransformerConstants& c, const Platform& platform,
                         const TransformerSpec& m, const ParallelConfig& cfg,
                         const TransformerOperatorCost& ops, const StageShape& sh, StageTimes& st )
{
    const double kv = 2.0 * sh.sbh * kvHeadRatio( m ) / cfg.tp * sh.e;
    auto exchange = [&]( double bytes )
    {
        const double wire = pointToPointMs( platform, double( cfg.tp ), bytes / c.p2p_bw_eff );
        return wire > 0.0 ? ( cfg.cp - 1.0 ) * ( c.p2p_ms + wire ) : 0.0;
    };
    const double fwd = math::fmax( 0.0, exchange( kv ) - ops.layer_attn_core_ms );
    const double bwd = math::fmax( 0.0, exchange( 2.0 * kv ) - ops.layer_attn_core_bwd_ms );
    st.tp_f += sh.layers * fwd;
    if ( sh.train )
        st.tp_b += sh.layers * ( bwd + ( cfg.recompute == Recompute::full ? fwd : 0.0 ) );
}

//! The stage with the largest time per micro-batch: first, then last (pp > 1), then a middle one
//! (pp > 2); an earlier one wins a tie.
KOKKOS_INLINE_FUNCTION const StageTimes*
criticalStage( int pp, const StageTimes& first, const StageTimes& mid, const StageTimes& last )
{
    const StageTimes* crit = &first;
    if ( pp > 1 && last.total() > crit->total() )
        crit = &last;
    if ( pp > 2 && mid.total() > crit->total() )
        crit = &mid;
    return crit;
}

} // namespace transformer_detail

//! Stage `stage`'s times per micro-batch (and its post-pipeline DP and optimizer times).
KOKKOS_INLINE_FUNCTION transformer_detail::StageTimes
transformerStageTimes( const TransformerConstants& c, const Platform& platform,
                       const TransformerSpec& m, const ParallelConfig& cfg,
                       const TransformerOperatorCost& ops, int stage, double micro_batches )
{
    namespace td = transformer_detail;
    td::StageTimes st;
    const td::StageShape sh = td::stageShape( m, cfg, stage );
    td::setComputeTimes( cfg, ops, sh, st );
    if ( cfg.tp > 1 )
    {
        td::setTensorParallelTimes( c, platform, m, cfg, sh, st );
        // Megatron's --tp-comm-overlap (with sequence parallelism) splits each all-gather and
        // reduce-scatter into chunks that run under the adjacent GEMMs: only the communication
        // that outlasts the stage's layer GEMMs is exposed.
        if ( cfg.overlap && sh.sp && sh.train )
        {
            const bool full = cfg.recompute == Recompute::full;
            const double gemm_f =
                sh.dense_layers * ops.layer_gemm_fwd_ms + sh.moe_layers * ops.moe_layer_gemm_fwd_ms;
            const double recomputed = full ? ops.layer_gemm_fwd_ms : 0.0;
            const double moe_recomputed = full ? ops.moe_layer_gemm_fwd_ms : 0.0;
            const double gemm_b = sh.dense_layers * ( ops.layer_gemm_bwd_ms + recomputed ) +
                                  sh.moe_layers * ( ops.moe_layer_gemm_bwd_ms + moe_recomputed );
            st.tp_f = math::fmax( 0.0, st.tp_f - gemm_f );
            st.tp_b = math::fmax( 0.0, st.tp_b - gemm_b );
        }
    }
    if ( cfg.cp > 1 )
        td::setContextParallelTimes( c, platform, m, cfg, ops, sh, st );
    if ( sh.moe_layers > 0 )
    {
        const td::MoeCommMs moe =
            td::moeCommMs( c, platform, m, cfg, sh.sbh / m.hidden / cfg.tp, sh.e, sh.train );
        st.ep_f = sh.moe_layers * moe.fwd;
        st.ep_b = sh.moe_layers * moe.bwd;
        // With overlap the all-to-alls of one micro-batch run under another's compute (Megatron's
        // --overlap-moe-expert-parallel-comm; DeepSeek-V3's DualPipe): only what outlasts the
        // stage's compute is exposed.
        const double ep = st.ep_f + st.ep_b;
        if ( cfg.overlap && sh.train && ep > 0.0 )
        {
            const double exposed = math::fmax( 0.0, ep - st.compute_f - st.compute_b ) / ep;
            st.ep_f *= exposed;
            st.ep_b *= exposed;
        }
    }
    if ( cfg.pp > 1 )
        td::setPipelineTimes( c, platform, cfg, sh, st );
    if ( sh.train )
        td::setDataParallelAndOptimizerTimes( c, platform, m, cfg, sh, micro_batches, st );
    return st;
}

//! Micro-batches per iteration and data-parallel replica: global batch / (micro-batch · dp), at
//! least 1.
KOKKOS_INLINE_FUNCTION double transformerMicroBatches( const ParallelConfig& cfg )
{
    const double per_replica = double( cfg.micro_batch ) * math::max( 1, cfg.dp );
    return math::fmax( 1.0, double( cfg.global_batch ) / per_replica );
}

//! Time (ms) of the pipeline part of a step (every micro-batch's forward and backward through
//! every stage, before the gradient synchronisation): from the first, middle (all alike) and last
//! stage's times per micro-batch. With stage times F_i, B_i per micro-batch, 1F1B runs in
//! (m−1)·max_i(F_i + B_i) + Σ_i (F_i + B_i) (fill and drain cross every stage once; the steady
//! state is paced by the slowest stage); GPipe in (m−1)·max F + Σ F + (m−1)·max B + Σ B. Uniform
//! stages give (m + p − 1)(F + B) for both: bubble (p − 1)/m of the ideal time (SC'21 §2.2.1).
//! Interleaved 1F1B with v model chunks per rank (each 1/v of the rank's times): fill and drain
//! cross every stage once in chunks, Σ_i (F_i + B_i)/v, and the steady state runs the remaining
//! m − 1/v micro-batches at the slowest stage's pace: (m − 1/v)·max_i(F_i + B_i) + Σ_i (F_i +
//! B_i)/v; uniform stages give m(F + B) + (p − 1)(F + B)/v, a bubble of (p − 1)/(v·m) of the
//! ideal (SC'21 §2.2.2). v = 1 is 1F1B exactly.
//! Non-decreasing in every stage time, and GPipe's is never below 1F1B's (max F + max B ≥
//! max (F + B)): the transformer planner's lower bounds rely on both
//! (docs/model/transformer_planner.md).
KOKKOS_INLINE_FUNCTION double transformerPipelineMs( PipelineSchedule schedule, bool train, int pp,
                                                     const transformer_detail::StageTimes& first,
                                                     const transformer_detail::StageTimes& mid,
                                                     const transformer_detail::StageTimes& last,
                                                     double micro_batches, int virtual_stages = 1 )
{
    const transformer_detail::StageTimes* crit =
        transformer_detail::criticalStage( pp, first, mid, last );
    const double middles = pp > 2 ? pp - 2.0 : 0.0;
    const double sum_total =
        first.total() + ( pp > 1 ? last.total() : 0.0 ) + middles * mid.total();
    if ( schedule == PipelineSchedule::gpipe && train )
    {
        // Σ F + Σ B is Σ (F + B): summed as 1F1B sums it, so that GPipe is never below 1F1B by a
        // rounding either (max F + max B ≥ max (F + B) holds exactly in floating point).
        double max_f = first.forward(), max_b = first.backward();
        if ( pp > 1 )
        {
            max_f = math::fmax( max_f, last.forward() );
            max_b = math::fmax( max_b, last.backward() );
        }
        if ( pp > 2 )
        {
            max_f = math::fmax( max_f, mid.forward() );
            max_b = math::fmax( max_b, mid.backward() );
        }
        return ( micro_batches - 1.0 ) * ( max_f + max_b ) + sum_total;
    }
    const double v = math::max( 1, virtual_stages );
    return ( micro_batches - 1.0 / v ) * crit->total() + sum_total / v;
}

//! A full step with explicit constants (the calibration varies them). stage_ms (optional, pp
//! entries): busy time of each stage over the iteration (its micro-batches, DP and optimizer);
//! stage_memory_GiB (optional, pp entries): memory of each stage's GPUs.
KOKKOS_INLINE_FUNCTION TransformerStepSummary predictTransformerStepWith(
    const TransformerConstants& c, const Platform& platform, const TransformerSpec& m,
    const ParallelConfig& cfg, const TransformerOperatorCost& ops, double* stage_ms = nullptr,
    double* stage_memory_GiB = nullptr )
{
    namespace td = transformer_detail;
    TransformerStepSummary r;
    const int pp = math::max( 1, cfg.pp );
    const double micro_batches = transformerMicroBatches( cfg );
    const bool train = cfg.mode == RunMode::train;

    // Three kinds of stages: first, middle (all alike), last; one stage is first and last.
    const td::StageTimes first =
        transformerStageTimes( c, platform, m, cfg, ops, 0, micro_batches );
    const td::StageTimes last =
        pp > 1 ? transformerStageTimes( c, platform, m, cfg, ops, pp - 1, micro_batches ) : first;
    const td::StageTimes mid =
        pp > 2 ? transformerStageTimes( c, platform, m, cfg, ops, 1, micro_batches ) : first;

    const td::StageTimes* crit = td::criticalStage( pp, first, mid, last );
    const double pipeline = transformerPipelineMs( cfg.schedule, train, pp, first, mid, last,
                                                   micro_batches, cfg.virtual_stages );

    // After its last backward each stage synchronises gradients and steps; stage i finishes its
    // backward about i backward steps before stage 0 (1F1B drains from the last stage).
    double post = first.dp + first.opt;
    const td::StageTimes* post_stage = &first;
    if ( pp > 1 )
    {
        // (Interleaved: one chunk's backward, 1/v of the stage's.)
        const double back_step = mid.backward() / math::max( 1, cfg.virtual_stages );
        const double last_end = last.dp + last.opt - ( pp - 1.0 ) * back_step;
        if ( last_end > post )
        {
            post = last_end;
            post_stage = &last;
        }
        if ( pp > 2 && mid.dp + mid.opt - back_step > post )
        {
            post = mid.dp + mid.opt - back_step;
            post_stage = &mid;
        }
    }
    post = math::fmax( post, 0.0 );

    r.iteration_ms = pipeline + post;
    r.phase_ms[int( TransformerPhase::compute )] =
        micro_batches * ( crit->compute_f + crit->compute_b );
    r.phase_ms[int( TransformerPhase::tp_comm )] = micro_batches * ( crit->tp_f + crit->tp_b );
    r.phase_ms[int( TransformerPhase::pp_comm )] = micro_batches * ( crit->pp_f + crit->pp_b );
    r.phase_ms[int( TransformerPhase::ep_comm )] = micro_batches * ( crit->ep_f + crit->ep_b );
    r.phase_ms[int( TransformerPhase::bubble )] = pipeline - micro_batches * crit->total();
    const double dp_share = post_stage->dp + post_stage->opt > 0.0
                                ? post * post_stage->dp / ( post_stage->dp + post_stage->opt )
                                : 0.0;
    r.phase_ms[int( TransformerPhase::dp_comm )] = dp_share;
    r.phase_ms[int( TransformerPhase::optimizer )] = post - dp_share;

    // Memory: the fullest stage.
    const TransformerPeakMemory peak = transformerPeakMemory( c, m, cfg, micro_batches );
    r.peak_memory_GiB = peak.bytes / 1073741824.0;
    r.peak_memory_stage = peak.stage;
    const double capacity = platform.gpu.memory_GiB - platform.hbm_reserve_GiB;
    r.feasible = r.peak_memory_GiB <= capacity;

    // Model FLOPs (forward ×3 for training): layers + vocabulary GEMM of the whole model.
    const double sequences = double( cfg.global_batch );
    const double moe_layers = m.moe() ? m.layers - m.first_dense_layers : 0.0;
    const double per_micro = m.moe() ? ( m.layers - moe_layers ) * ops.layer_flops +
                                           moe_layers * ops.moe_layer_flops + ops.head_flops
                                     : m.layers * ops.layer_flops + ops.head_flops;
    r.model_flops = ( train ? 3.0 : 1.0 ) * per_micro * sequences / cfg.micro_batch;

    if ( stage_ms )
        for ( int i = 0; i < pp; ++i )
        {
            const td::StageTimes& st = i == 0 ? first : ( i == pp - 1 ? last : mid );
            stage_ms[i] = micro_batches * st.total() + st.dp + st.opt;
        }
    if ( stage_memory_GiB )
        for ( int i = 0; i < pp; ++i )
            stage_memory_GiB[i] =
                transformerStageMemoryBytes( c, m, cfg, i, micro_batches ) / 1073741824.0;
    return r;
}

//! A full step with the shipped constants.
KOKKOS_INLINE_FUNCTION TransformerStepSummary
predictTransformerStep( const Platform& platform, const TransformerSpec& model,
                        const ParallelConfig& config, const TransformerOperatorCost& ops,
                        double* stage_ms = nullptr, double* stage_memory_GiB = nullptr )
{
    return predictTransformerStepWith( shippedTransformerConstants(), platform, model, config, ops,
                                       stage_ms, stage_memory_GiB );
}

} // namespace shardsweep
