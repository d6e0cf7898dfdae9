#pragma once
//! \file memory.hpp
//! \brief Parameters and memory of one GPU of a Megatron-LM 3D-parallel transformer: weights,
//! gradients and Adam states (with ZeRO), activations per micro-batch in flight (Korthikanti et
//! al. 2022), workspaces (docs/model/transformer.md).
#include <Kokkos_Core.hpp>
#include <shardsweep/domain/transformer_spec.hpp>
#include <shardsweep/model/math.hpp>
#include <shardsweep/model/transformer/operators.hpp>

namespace shardsweep
{

//! Which pipeline stage: the first holds the embedding, the last the LM head and loss, with one
//! stage (pp = 1) both.
struct StageRole
{
    bool first = false;
    bool last = false;
};

//! Parameters of one transformer layer on one TP rank: QKV, projection, FC1, FC2 matrices and the
//! column-parallel biases split over t; row-parallel biases (projection, FC2) and the two
//! LayerNorms (2·2h) replicated. t = 1: 4h² + 2hf + 9h + f (12h² + 13h for f = 4h, SC'21 eq. 2);
//! with g key/value heads of a the QKV matrix and bias are (1 + 2g/a)·h wide instead of 3h;
//! SwiGLU's FC1 and its bias are 2f wide (3hf FFN weights).
KOKKOS_INLINE_FUNCTION double transformerLayerParams( const TransformerSpec& m, int tp )
{
    const double h = m.hidden;
    const double f = transformer_detail::ffnHidden( m );
    const double kv = transformer_detail::kvHeadRatio( m ); // QKV is (1 + 2·kv)·h wide
    const double gate = transformer_detail::ffnGateFactor( m );
    return ( ( 2.0 + 2.0 * kv ) * h * h + ( 1.0 + gate ) * h * f + ( 1.0 + 2.0 * kv ) * h +
             gate * f ) /
               tp +
           2.0 * h + 4.0 * h;
}

//! Parameters of a stage's non-layer parts on one TP rank: word embedding [V/t, h] and learned
//! positions [s, h] on the first stage; the final LayerNorm (BERT: + dense h×h and LayerNorm of
//! the LM-head transform, and the output bias V/t) on the last, plus a copy of the tied word
//! embedding when the last stage is not also the first.
KOKKOS_INLINE_FUNCTION double transformerEdgeParams( const TransformerSpec& m, int tp,
                                                     StageRole role )
{
    const double h = m.hidden;
    const double V = transformer_detail::paddedVocab( m, tp );
    double p = 0.0;
    if ( role.first )
        p += V * h / tp + double( m.seq_len ) * h;
    if ( role.last )
    {
        p += 2.0 * h;
        if ( m.arch == TransformerArch::bert )
            p += h * h + h + 2.0 * h + V / tp;
        if ( !role.first )
            p += V * h / tp;
    }
    return p;
}

//! Transformer layers of pipeline stage `stage`: first_stage_layers / last_stage_layers where set,
//! the rest shared evenly by the other stages (L/pp with neither; parallelConfigError checks
//! that the shares are whole).
KOKKOS_INLINE_FUNCTION int stageLayers( const TransformerSpec& m, const ParallelConfig& cfg,
                                        int stage )
{
    const int pp = math::max( 1, cfg.pp );
    if ( pp == 1 )
        return m.layers;
    const bool first = stage == 0, last = stage == pp - 1;
    if ( first && cfg.first_stage_layers > 0 )
        return cfg.first_stage_layers;
    if ( last && cfg.last_stage_layers > 0 )
        return cfg.last_stage_layers;
    int rest = m.layers, stages = pp;
    if ( cfg.first_stage_layers > 0 )
    {
        rest -= cfg.first_stage_layers;
        --stages;
    }
    if ( cfg.last_stage_layers > 0 )
    {
        rest -= cfg.last_stage_layers;
        --stages;
    }
    return stages > 0 ? rest / stages : 0;
}

//! Layers of stage `stage` with a dense FFN: all of them in a dense model; in an MoE model the
//! leading first_dense_layers, which parallelKnobProblem keeps inside the first stage (its first
//! model chunk when interleaved).
KOKKOS_INLINE_FUNCTION int stageDenseLayers( const TransformerSpec& m, const ParallelConfig& cfg,
                                             int stage )
{
    const int layers = stageLayers( m, cfg, stage );
    if ( !m.moe() )
        return layers;
    return stage == 0 ? math::min( m.first_dense_layers, layers ) : 0;
}

//! The ZeRO stage in effect: Megatron's distributed optimizer shards as ZeRO-1 does.
KOKKOS_INLINE_FUNCTION int zeroStage( const ParallelConfig& cfg )
{
    return cfg.distributed_optimizer ? math::max( 1, cfg.zero ) : cfg.zero;
}

//! Parameters of one GPU of stage `role` holding `layers` dense layers (an MoE model's:
//! transformerStageParamSplit).
KOKKOS_INLINE_FUNCTION double transformerStageParams( const TransformerSpec& m, int tp, int layers,
                                                      StageRole role )
{
    return layers * transformerLayerParams( m, tp ) + transformerEdgeParams( m, tp, role );
}

//! Parameters of one GPU of a stage, by the group that holds the same ones: `dense` (every
//! non-expert parameter) is replicated over the dp·cp ranks of the stage, `expert` over the edp =
//! tp·cp·dp/(ep·etp) ranks of the expert layout (MoE parallel folding).
struct StageParams
{
    double dense = 0.0;
    double expert = 0.0;
};

//! The parameters of one GPU of stage `stage` (transformerStageParams for a dense model).
KOKKOS_INLINE_FUNCTION StageParams transformerStageParamSplit( const TransformerSpec& m,
                                                               const ParallelConfig& cfg,
                                                               int stage )
{
    StageRole role;
    role.first = stage == 0;
    role.last = stage == math::max( 1, cfg.pp ) - 1;
    const int layers = stageLayers( m, cfg, stage );
    StageParams p;
    if ( !m.moe() )
    {
        p.dense = transformerStageParams( m, cfg.tp, layers, role );
        return p;
    }
    const int dense_layers = stageDenseLayers( m, cfg, stage );
    const int moe_layers = layers - dense_layers;
    p.dense = dense_layers * transformerLayerParams( m, cfg.tp ) +
              moe_layers * transformer_detail::moeLayerDenseParams( m, cfg.tp ) +
              transformerEdgeParams( m, cfg.tp, role );
    p.expert = moe_layers * transformer_detail::moeLayerExpertParams( m, cfg.ep, cfg.expertTp() );
    return p;
}

//! edp: the ranks of a stage that hold the same experts, tp·cp·dp/(ep·etp) (at least 1).
KOKKOS_INLINE_FUNCTION int expertDataParallel( const ParallelConfig& cfg )
{
    const int stage_gpus = cfg.tp * math::max( 1, cfg.cp ) * math::max( 1, cfg.dp );
    return math::max( 1, stage_gpus / math::max( 1, cfg.ep * cfg.expertTp() ) );
}

//! Bytes per parameter of the model states.
struct ModelStateBytes
{
    double weights = 0.0;   //!< the dtype's copy used by forward and backward
    double gradients = 0.0; //!< fp32 main grads for bf16 (Megatron default), fp16 for fp16
    double optimizer = 0.0; //!< Adam: fp32 master (16-bit dtypes only), momentum, variance
    //! fp8: Transformer Engine's cached fp8 weight and its transpose (never sharded)
    double fp8_cache = 0.0;
};

//! fp8 training as NeMo's FP8 recipes run it (Transformer Engine, distributed Adam with
//! optim.grad_sync_dtype=bf16): bf16 weights and gradients, fp32 master weights and Adam states,
//! plus the fp8 weight copies.
KOKKOS_INLINE_FUNCTION ModelStateBytes modelStateBytes( DataType dtype )
{
    ModelStateBytes b;
    const bool half = dtype == DataType::fp16 || dtype == DataType::bf16 || dtype == DataType::fp8;
    b.weights = half ? 2.0 : 4.0;
    b.gradients = dtype == DataType::fp16 || dtype == DataType::fp8 ? 2.0 : 4.0;
    b.optimizer = half ? 12.0 : 8.0;
    b.fp8_cache = dtype == DataType::fp8 ? 2.0 : 0.0;
    return b;
}

//! Model-state bytes of `params` parameters with ZeRO stage `zero` over `dp` ranks (ZeRO §5:
//! stage 1 shards optimizer states, 2 also gradients, 3 also weights).
KOKKOS_INLINE_FUNCTION double modelStateBytesPerGpu( DataType dtype, double params, int zero,
                                                     int dp )
{
    const ModelStateBytes b = modelStateBytes( dtype );
    const double n = math::max( 1, dp );
    const double w = zero >= 3 ? b.weights / n : b.weights;
    const double g = zero >= 2 ? b.gradients / n : b.gradients;
    const double o = zero >= 1 ? b.optimizer / n : b.optimizer;
    return params * ( w + g + o + b.fp8_cache );
}

//! The expert layout of an MoE layer, for layerActivationBytes.
struct ExpertLayout
{
    int ep = 1;
    int etp = 1;
};

//! Activation bytes one layer keeps for its backward, per micro-batch, on one TP rank.
//! Korthikanti eq. 1 generalised to element size e and FFN width f: replicated part
//! sbh(4e + 2) (two LayerNorm inputs, QKV and FC1 inputs, two 1-byte dropout masks), TP-split part
//! (2 + 2g/a)·e·sbh (Q, K, V, projection input; g/a = 1 without grouped-query attention) + 2e·sbf
//! (GeLU input, FC2 input; OPT's ReLU keeps only one)
//! + (2e + 1)·a·s²·b (softmax output, dropout mask, dropout output). e = 2, f = 4h gives
//! sbh(10 + 24/t + 5as/(ht)). Sequence parallelism splits the replicated part over t too;
//! selective recompute and fused (flash) attention drop the s² term; full recompute keeps only
//! the layer input (e·sbh, split over t with SP). Context parallelism keeps s/cp tokens per rank
//! (and s/cp × s attention scores).
//! `moe` (an MoE layer with that expert layout): the FFN's mlp_copies·e·sbf/t is replaced by the
//! MoE block's saved tensors on the rank: the N permuted token copies (expert input), the
//! experts' FC1 output and FC2 input (N·f_e/etp each, as the dense FFN's copies), the R expert
//! outputs the weighted un-permutation reads, the router's fp32 logits and probabilities, and
//! the shared experts' as a dense FFN n_s·f_e wide (docs/model/moe.md).
KOKKOS_INLINE_FUNCTION double layerActivationBytes( const TransformerSpec& m, int tp,
                                                    int micro_batch, bool sequence_parallel,
                                                    bool fused, Recompute recompute, int cp = 1,
                                                    const ExpertLayout* moe = nullptr )
{
    const double e = transformer_detail::activationBytes( m.dtype );
    const double t = tp;
    const double sq = double( m.seq_len ) / math::max( 1, cp );
    const double sbh = sq * micro_batch * m.hidden;
    const double sp = sequence_parallel && tp > 1 ? t : 1.0;
    if ( recompute == Recompute::full )
        return e * sbh / sp;
    const double f = transformer_detail::ffnHidden( m );
    const double sbf = sq * micro_batch * f;
    // GeLU input and FC2 input; ReLU keeps one; SwiGLU gate, up and FC2 input (3f).
    const FfnType act = transformer_detail::ffnActivation( m );
    const double mlp_copies = act == FfnType::relu ? 1.0 : ( act == FfnType::swiglu ? 3.0 : 2.0 );
    const double replicated = sbh * ( 4.0 * e + 2.0 ) / sp;
    const double qkv_copies = 2.0 + 2.0 * transformer_detail::kvHeadRatio( m ); // Q, K, V, proj
    double split = ( qkv_copies * e * sbh + mlp_copies * e * sbf ) / t;
    if ( moe )
    {
        namespace td = transformer_detail;
        const double tokens = sq * micro_batch;
        const td::MoeTokens n = td::moeTokens( m, tokens / t, moe->ep, moe->etp );
        const double fe = td::moeFfnHidden( m );
        split = qkv_copies * e * sbh / t + n.computed * m.hidden * e +
                mlp_copies * e * n.computed * fe / moe->etp + n.dispatched * m.hidden * e +
                8.0 * n.routed_in * m.experts + mlp_copies * e * tokens * m.shared_experts * fe / t;
    }
    if ( !fused && recompute == Recompute::none )
        split += ( 2.0 * e + 1.0 ) * m.heads * sq * m.seq_len * micro_batch / t;
    return replicated + split;
}

//! Micro-batches whose activations stage `stage` of `pp` holds at once, in units of the stage's
//! layers: 1F1B min(pp − stage, m) (SC'21 §2.2.1; DeepSpeed num_pipe_buffers), GPipe all m,
//! inference 1. Interleaved with v chunks of 1/v of the stage's layers: Megatron's warm-up runs
//! 2(pp − stage − 1) + (v − 1)·pp chunk forwards and the steady state holds one more, at most all
//! m·v, i.e. (that count)/v stage-equivalents: 1 + (pp − 1)/(pp·v) times 1F1B's pp on the first
//! stage (Korthikanti et al. 2022, §4.2.3).
KOKKOS_INLINE_FUNCTION double inFlightMicroBatches( const ParallelConfig& cfg, int stage,
                                                    double micro_batches )
{
    if ( cfg.mode == RunMode::infer )
        return 1.0;
    if ( cfg.schedule == PipelineSchedule::gpipe )
        return micro_batches;
    if ( cfg.virtual_stages > 1 )
    {
        const double v = cfg.virtual_stages;
        const double chunks = 2.0 * ( cfg.pp - stage - 1 ) + ( v - 1.0 ) * cfg.pp + 1.0;
        return math::fmin( chunks, micro_batches * v ) / v;
    }
    return math::fmin( double( cfg.pp - stage ), micro_batches );
}

//! Memory of one GPU of pipeline stage `stage` (bytes): model states, activations of the
//! micro-batches in flight, the edge stages' extras (Korthikanti §4.3: embedding dropout mask on
//! the first; final LayerNorm input, LM-head input and fp32 logits on the last) and a fixed
//! workspace.
KOKKOS_INLINE_FUNCTION double transformerStageMemoryBytes( const TransformerConstants& c,
                                                           const TransformerSpec& m,
                                                           const ParallelConfig& cfg, int stage,
                                                           double micro_batches )
{
    const int layers = stageLayers( m, cfg, stage );
    StageRole role;
    role.first = stage == 0;
    role.last = stage == cfg.pp - 1;
    const StageParams params = transformerStageParamSplit( m, cfg, stage );
    const bool train = cfg.mode == RunMode::train;
    // Gradients are reduced, and ZeRO / the distributed optimizer shard, over dp·cp (experts: over
    // edp).
    double bytes = train ? modelStateBytesPerGpu( m.dtype, params.dense, zeroStage( cfg ),
                                                  cfg.dp * math::max( 1, cfg.cp ) )
                         : params.dense * modelStateBytes( m.dtype ).weights;
    if ( params.expert > 0.0 )
        bytes += train ? modelStateBytesPerGpu( m.dtype, params.expert, zeroStage( cfg ),
                                                expertDataParallel( cfg ) )
                       : params.expert * modelStateBytes( m.dtype ).weights;
    const double e = transformer_detail::activationBytes( m.dtype );
    const double t = cfg.tp;
    const double sp = cfg.sequence_parallel && cfg.tp > 1 ? t : 1.0;
    const double sq = double( m.seq_len ) / math::max( 1, cfg.cp ); // tokens per rank
    const double sbh = sq * cfg.micro_batch * m.hidden;
    const double in_flight = inFlightMicroBatches( cfg, stage, micro_batches );
    const int dense_layers = stageDenseLayers( m, cfg, stage );
    const ExpertLayout experts{ cfg.ep, cfg.expertTp() };
    auto layer_bytes = [&]( Recompute recompute, bool moe_layer )
    {
        return layerActivationBytes( m, cfg.tp, cfg.micro_batch, cfg.sequence_parallel, cfg.fused,
                                     recompute, cfg.cp, moe_layer ? &experts : nullptr );
    };
    // One layer's full activations: what inference and a recomputing backward hold transiently
    // (an MoE layer's where the stage has one).
    const double one_layer = layer_bytes( Recompute::none, dense_layers < layers );
    if ( train )
    {
        const double per_layer = layer_bytes( cfg.recompute, false );
        if ( dense_layers == layers )
            bytes += in_flight * layers * per_layer;
        else
            bytes += in_flight * ( dense_layers * per_layer +
                                   ( layers - dense_layers ) * layer_bytes( cfg.recompute, true ) );
        if ( cfg.recompute == Recompute::full )
            bytes += one_layer;
        if ( role.first )
            bytes += in_flight * sbh / sp; // embedding dropout mask
        if ( role.last )
        {
            const double V = transformer_detail::paddedVocab( m, cfg.tp );
            bytes += in_flight * ( 2.0 * e * sbh / sp + 4.0 * sq * cfg.micro_batch * V / t );
        }
    }
    else
    {
        bytes += one_layer;
        if ( role.last )
            bytes += 4.0 * sq * cfg.micro_batch * transformer_detail::paddedVocab( m, cfg.tp ) / t;
    }
    return bytes + c.workspace_GiB * 1073741824.0;
}

//! The fullest GPU of a configuration: its stage and its bytes.
struct TransformerPeakMemory
{
    double bytes = 0.0;
    int stage = 0;
};

//! The fullest stage among the first, the second (it holds the most micro-batches among middle
//! stages under 1F1B) and the last: what a step reports and what decides feasibility.
KOKKOS_INLINE_FUNCTION TransformerPeakMemory transformerPeakMemory( const TransformerConstants& c,
                                                                    const TransformerSpec& m,
                                                                    const ParallelConfig& cfg,
                                                                    double micro_batches )
{
    TransformerPeakMemory peak;
    auto consider = [&]( int stage )
    {
        const double bytes = transformerStageMemoryBytes( c, m, cfg, stage, micro_batches );
        if ( bytes > peak.bytes )
        {
            peak.bytes = bytes;
            peak.stage = stage;
        }
    };
    consider( 0 );
    if ( cfg.pp > 1 )
    {
        consider( 1 );
        consider( cfg.pp - 1 );
    }
    return peak;
}

} // namespace shardsweep
