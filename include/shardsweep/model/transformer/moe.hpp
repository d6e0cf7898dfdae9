#pragma once
//! \file moe.hpp
//! \brief Mixture-of-experts layers as Megatron-Core runs them (token-choice top-k routing, the
//! all-to-all token dispatcher, grouped expert GEMMs, MoE parallel folding: Liu et al., "MoE
//! Parallel Folding", arXiv:2504.14960; DeepSeek-V3, arXiv:2412.19437, §3.2): the token counts of
//! one rank, the expert and router parameters, the MoE FFN's operators on one rank for one
//! micro-batch, and the bytes of its all-to-alls (docs/model/moe.md).
//!
//! Routing is taken as uniform (the load-balancing loss's goal): each of the ep·etp ranks of an
//! expert group computes 1/(ep·etp) of the group's token copies. A capacity factor C pads every
//! expert's buffer to C times that load (Megatron's --moe-pad-expert-input-to-capacity); dropless
//! (C empty) computes the load itself.
#include <Kokkos_Core.hpp>
#include <shardsweep/model/transformer/groups.hpp>
#include <shardsweep/model/transformer/operator_context.hpp>

namespace shardsweep
{

namespace transformer_detail
{

//! f_e: moe_ffn_hidden, or ffn_hidden (4·hidden when 0) when 0.
KOKKOS_INLINE_FUNCTION double moeFfnHidden( const TransformerSpec& m )
{
    return m.moe_ffn_hidden > 0 ? double( m.moe_ffn_hidden ) : ffnHidden( m );
}

//! The share of the uniform load each expert's buffer holds: C with a capacity factor (padded),
//! 1 dropless.
KOKKOS_INLINE_FUNCTION double moeCapacityScale( const TransformerSpec& m )
{
    return m.capacity_factor > 0.0 ? m.capacity_factor : 1.0;
}

//! Token counts of one rank's MoE block for one micro-batch.
struct MoeTokens
{
    double routed_in = 0.0;     //!< Tl: tokens entering the block on this rank (T/t under SP)
    double dispatched = 0.0;    //!< R = Tl·k·C: copies it sends to the experts (and receives)
    double computed = 0.0;      //!< N = R·etp: copies its experts compute (after the ETP gather)
    double local_experts = 0.0; //!< E/ep
};

//! The token counts of a rank holding `tokens_in` tokens of the micro-batch (T/t: Megatron runs
//! MoE with tensor parallelism only under sequence parallelism, so each TP rank routes its own).
KOKKOS_INLINE_FUNCTION MoeTokens moeTokens( const TransformerSpec& m, double tokens_in, int ep,
                                            int etp )
{
    MoeTokens n;
    n.routed_in = tokens_in;
    n.dispatched = tokens_in * m.top_k * moeCapacityScale( m );
    n.computed = n.dispatched * etp;
    n.local_experts = double( m.experts ) / math::max( 1, ep );
    return n;
}

//! ASTRA-sim comm_size of one dispatch (or combine) all-to-all of a rank holding `tokens_in`
//! tokens: its R token copies, h wide (under uniform routing (ep − 1)/ep of it leaves the GPU).
KOKKOS_INLINE_FUNCTION double moeAllToAllBytes( const TransformerSpec& m, double tokens_in,
                                                double e )
{
    return tokens_in * m.top_k * moeCapacityScale( m ) * m.hidden * e;
}

//! Parameters of one MoE layer on one rank outside its experts: the attention half of the dense
//! layer (QKV, projection, their biases, two LayerNorms), the router [E, h] (replicated) and the
//! shared experts (n_s·f_e wide, split over tp, no biases).
KOKKOS_INLINE_FUNCTION double moeLayerDenseParams( const TransformerSpec& m, int tp )
{
    const double h = m.hidden;
    const double kv = kvHeadRatio( m );
    const double shared = m.shared_experts * moeFfnHidden( m );
    return ( ( 2.0 + 2.0 * kv ) * h * h + ( 1.0 + 2.0 * kv ) * h +
             ( 1.0 + ffnGateFactor( m ) ) * h * shared ) /
               tp +
           h + 4.0 * h + double( m.experts ) * h;
}

//! Parameters of one MoE layer's experts on one rank: E/ep experts of (1 + gate)·h·f_e/etp (FC1,
//! 2·f_e wide for SwiGLU, and FC2; no biases, as Mixtral's and DeepSeek's).
KOKKOS_INLINE_FUNCTION double moeLayerExpertParams( const TransformerSpec& m, int ep, int etp )
{
    return double( m.experts ) / math::max( 1, ep ) * ( 1.0 + ffnGateFactor( m ) ) * m.hidden *
           moeFfnHidden( m ) / math::max( 1, etp );
}

//! The MoE FFN of one layer on one rank for one micro-batch, ms.
struct MoeFfnMs
{
    double fwd = 0.0;
    double bwd = 0.0;
    double gemm_fwd = 0.0;
    double gemm_bwd = 0.0;
};

//! The MoE block that replaces a layer's FFN: router GEMM [Tl, h]·[h, E] in 16 bits (Transformer
//! Engine keeps it out of fp8) with softmax and top-k on its fp32 logits; the permutation of the
//! R dispatched copies into expert order and the probability-weighted un-permutation back (each a
//! gather: read and write); the E/ep local experts as grouped GEMMs of N/(E/ep) rows each and
//! the activation on N·f_e/etp; the shared experts as a TP-split MLP on all T tokens. `p`: the
//! case's shape (T tokens, t = tp; Tsp = T/t under SP).
KOKKOS_INLINE_FUNCTION MoeFfnMs moeFfnMs( const OperatorContext& x, const TransformerSpec& m,
                                          const OperatorShape& p, int ep, int etp )
{
    MoeFfnMs r;
    const MoeTokens n = moeTokens( m, p.Tsp, ep, etp );
    const double h = p.h, e = p.e, E = m.experts, fe = moeFfnHidden( m );
    const double gate = ffnGateFactor( m );

    OperatorContext router_x = x;
    router_x.dtype = attentionDataType( x.dtype );
    const LinearMs router = linearMs( router_x, n.routed_in, h, E, false );
    const double logits = n.routed_in * E * 4.0;
    // softmax (read, write) and top-k (read) forward; softmax backward (read y, dy, write dx).
    const double route_fwd = x.mem( 3.0 * logits, 2.0 );
    const double route_bwd = x.mem( 3.0 * logits );
    const double permute = x.mem( 2.0 * n.dispatched * h * e );
    const double unpermute = x.mem( ( n.dispatched + n.routed_in ) * h * e );

    const double rows = n.computed / n.local_experts;
    const LinearMs fc1 = linearMs( x, rows, h, gate * fe / etp, false, n.local_experts );
    const LinearMs fc2 = linearMs( x, rows, fe / etp, h, false, n.local_experts );
    const FwdBwdMs act = ffnActivationMs( x, m, p.fast, n.computed * fe / etp, e );

    r.gemm_fwd = router.gemm_fwd + fc1.gemm_fwd + fc2.gemm_fwd;
    r.gemm_bwd = router.gemm_bwd + fc1.gemm_bwd + fc2.gemm_bwd;
    r.fwd = router.fwd + route_fwd + permute + fc1.fwd + act.fwd + fc2.fwd + unpermute;
    r.bwd = router.bwd + route_bwd + permute + fc1.bwd + act.bwd + fc2.bwd + unpermute;
    if ( m.shared_experts > 0 )
    {
        const double fs = m.shared_experts * fe;
        const LinearMs up = linearMs( x, p.T, h, gate * fs / p.t, false );
        const LinearMs down = linearMs( x, p.T, fs / p.t, h, false );
        const FwdBwdMs shared_act = ffnActivationMs( x, m, p.fast, p.T * fs / p.t, e );
        r.gemm_fwd += up.gemm_fwd + down.gemm_fwd;
        r.gemm_bwd += up.gemm_bwd + down.gemm_bwd;
        r.fwd += up.fwd + shared_act.fwd + down.fwd;
        r.bwd += up.bwd + shared_act.bwd + down.bwd;
    }
    return r;
}

//! Forward FLOPs of one MoE layer's FFN over T tokens, whole model: the router and k routed plus
//! n_s shared experts per token (padding to capacity is not model work).
KOKKOS_INLINE_FUNCTION double moeFfnFlops( const TransformerSpec& m, double T )
{
    const double h = m.hidden;
    return 2.0 * T * h * m.experts + 2.0 * ( 1.0 + ffnGateFactor( m ) ) * T * h *
                                         moeFfnHidden( m ) * ( m.top_k + m.shared_experts );
}

//! One all-to-all of comm_size `bytes` per rank within group `g`, as NCCL runs Megatron's
//! dispatch: every rank sends bytes/P to each of the P − 1 others at once, what goes to peers
//! that differ from it in dimension d (and agree below it) leaves through dimension d's link, and
//! the dimensions carry their shares concurrently: max_d (f_d·bytes/B_d + hops·L_d) with f_d =
//! (Π_{i≤d} n_i − Π_{i<d} n_i)/P, ms. ASTRA-sim's hierarchical all-to-all (model/collectives.hpp)
//! instead passes the whole buffer through the dimensions one after the other, which prices a
//! multi-node expert all-to-all about twice as long as its slowest link needs.
KOKKOS_INLINE_FUNCTION double expertAllToAllMs( const GroupNetwork& g, double bytes )
{
    if ( g.members <= 1 || g.network.num_dims == 0 || bytes <= 0.0 )
        return 0.0;
    double P = 1.0;
    for ( int d = 0; d < g.network.num_dims; ++d )
        P *= g.network.dims[d].npus_count;
    double below = 1.0, worst = 0.0;
    for ( int d = 0; d < g.network.num_dims; ++d )
    {
        const NetworkDim& dim = g.network.dims[d];
        const double within = below * dim.npus_count;
        const double share = ( within - below ) / P * bytes;
        const double h = collective_detail::hops( dim.topology, dim.npus_count, 1 );
        worst = math::fmax( worst, collective_detail::message( dim, share, h ) );
        below = within;
    }
    return ( worst + 2.0 * g.system.endpoint_delay_ns + callOverheadNs( g.system, bytes ) ) *
           1.0e-6;
}

//! Exposed expert-parallel communication of one MoE layer per micro-batch on one rank, ms.
struct MoeCommMs
{
    double fwd = 0.0;
    double bwd = 0.0;
};

//! The forward's dispatch and combine all-to-alls among the ep ranks of an EP group (stride etp)
//! of moeAllToAllBytes each (expertAllToAllMs), with etp > 1 an all-gather of the received copies
//! over the etp ranks before the experts and a reduce-scatter after them (Megatron-Core's alltoall
//! dispatcher); the backward runs the same four on the gradients; full recompute repeats the
//! forward's. Each is a kernel the host issues. Not overlapped with compute (as Megatron runs it
//! without
//! --moe-shared-expert-overlap or DeepSeek's DualPipe).
KOKKOS_INLINE_FUNCTION MoeCommMs moeCommMs( const TransformerConstants& c, const Platform& platform,
                                            const TransformerSpec& m, const ParallelConfig& cfg,
                                            double tokens_in, double e, bool train )
{
    MoeCommMs r;
    const int etp = cfg.expertTp();
    const double a2a = moeAllToAllBytes( m, tokens_in, e );
    double fwd = 0.0;
    if ( cfg.ep > 1 )
    {
        const GroupNetwork epg = groupNetwork( platform, cfg.ep, double( etp ) );
        fwd += 2.0 * issuedMs( c, expertAllToAllMs( epg, a2a ), 1.0 );
    }
    if ( etp > 1 )
    {
        const GroupNetwork etpg = groupNetwork( platform, etp, 1.0 );
        fwd += issuedMs( c, groupCollectiveMs( etpg, Collective::all_gather, a2a ), 1.0 ) +
               issuedMs( c, groupCollectiveMs( etpg, Collective::reduce_scatter, a2a * etp ), 1.0 );
    }
    r.fwd = fwd;
    if ( train )
        r.bwd = cfg.recompute == Recompute::full ? 2.0 * fwd : fwd;
    return r;
}

} // namespace transformer_detail

} // namespace shardsweep
