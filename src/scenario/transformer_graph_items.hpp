#pragma once
//! \file transformer_graph_items.hpp
//! \brief The pieces transformer_step_graph.cpp builds a rank's chain from (internal to
//! src/scenario): one operation of a stage (Item), the rank layout, the TP collectives of a stage
//! and an MoE layer's expert-parallel collectives, each at the model's time (step.hpp, moe.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <shardsweep/model/transformer.hpp>
#include <shardsweep/scenario/step_graph.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace shardsweep
{
namespace transformer_graph
{

using Kind = StepGraphNode::Kind;

//! Which communicator a collective runs on.
enum class GroupKind
{
    tp,
    dp,
    embedding,
    cp,  //!< context parallelism: the cp ranks of a ring (stride tp)
    ep,  //!< MoE: the ep ranks that exchange tokens (stride etp)
    etp, //!< MoE: the etp ranks of one expert's tensor parallelism
    edp, //!< MoE: the ranks that hold the same experts (stride ep·etp)
};

//! Per kind of communicator, every rank's group of that kind (0 = every rank, -1 = none).
struct GroupMaps
{
    std::vector<int> tp, dp, embedding, cp, ep, etp, edp;
    void assign( int ranks )
    {
        for ( std::vector<int>* m : { &tp, &dp, &embedding, &cp, &ep, &etp, &edp } )
            m->assign( ranks, -1 );
    }
    const std::vector<int>& of( GroupKind k ) const
    {
        switch ( k )
        {
        case GroupKind::tp:
            return tp;
        case GroupKind::dp:
            return dp;
        case GroupKind::embedding:
            return embedding;
        case GroupKind::cp:
            return cp;
        case GroupKind::ep:
            return ep;
        case GroupKind::etp:
            return etp;
        case GroupKind::edp:
            break;
        }
        return edp;
    }
};

//! What a collective runs under when the configuration overlaps communication (`overlap`):
//! the gradient reduction under the last backward, the weight gather under the first forward.
//! TP and expert collectives are told apart by their group.
enum class Overlap : std::uint8_t
{
    none,
    gradient_reduction,
    weight_gather,
};

//! One operation of a stage's micro-batch forward or backward, or of its post-pipeline part.
struct Item
{
    Kind kind = Kind::compute;
    std::string name;
    double ms = 0.0; //!< compute: duration; collective: the model's network time
    //! Collective: the framework's time beyond the network (TP: the host's issue floor and the
    //! rank-skew sync), written as a compute node `NAME.host` after the collective.
    double host_ms = 0.0;
    Collective collective = Collective::all_reduce;
    GroupKind group = GroupKind::tp;
    double payload_bytes = 0.0; //!< the model's ASTRA-sim comm_size (before matching the time)
    Overlap overlap = Overlap::none;
};

//! Whether `i` runs on an MoE communicator (expert parallel or expert tensor parallel), whose
//! time the model books as its EP phase, not its TP phase.
inline bool onExpertGroup( const Item& i )
{
    return i.group == GroupKind::ep || i.group == GroupKind::etp;
}

//! A stage's operations: one micro-batch's forward and backward per model chunk (one chunk
//! without interleaving), and the part after the pipeline.
struct StageItems
{
    std::vector<std::vector<Item>> fwd, bwd;
    std::vector<Item> post;
};

//! The operations of pipeline stage `stage` (transformer_stage_items.cpp), their times adding
//! up to `st`, the model's (checkStageSums); `micro_batches` per step and replica.
StageItems stageItems( const Platform& platform, const TransformerSpec& model,
                       const ParallelConfig& cfg, const TransformerOperatorCost& ops,
                       int micro_batches, int stage, const transformer_detail::StageTimes& st );

//! The rank layout (model/transformer/step.hpp: global rank = t + tp·(d + dp·s)).
struct Layout
{
    int tp = 1, dp = 1, pp = 1;
    int rank( int t, int d, int s ) const { return t + tp * ( d + dp * s ); }
};

//! Appends a compute item (none of zero duration).
inline void addCompute( std::vector<Item>& v, std::string name, double ms )
{
    if ( ms > 0.0 )
        v.push_back( { Kind::compute, std::move( name ), ms } );
}

//! A stage's TP collectives (the group's network and sync are the same for all of them).
struct TpItems
{
    int ranks = 1;      //!< the TP degree
    bool sp = false;    //!< sequence parallelism (with TP)
    double bytes = 0.0; //!< a micro-batch's activations
    GroupNetwork net;
    double sync = 0.0; //!< the rank-skew sync per collective
    //! One collective (none without TP): network time, then the host's issue floor and sync.
    void add( std::vector<Item>& v, const std::string& name, Collective k, double size ) const
    {
        if ( ranks <= 1 )
            return;
        const double net_ms = groupCollectiveMs( net, k, size );
        const double host =
            transformer_detail::issuedMs( shippedTransformerConstants(), net_ms, 1.0 ) + sync -
            net_ms;
        v.push_back( { Kind::collective, name, net_ms, host, k, GroupKind::tp, size } );
    }
    //! One TP "pair": an all-reduce, or with sequence parallelism an all-gather of the 1/t
    //! shard and a reduce-scatter.
    void pair( std::vector<Item>& v, const std::string& name ) const
    {
        if ( sp )
        {
            add( v, name + "_ag", Collective::all_gather, bytes / ranks );
            add( v, name + "_rs", Collective::reduce_scatter, bytes );
        }
        else
            add( v, name, Collective::all_reduce, bytes );
    }
};

//! An MoE layer's expert-parallel collectives on one rank (model/transformer/moe.hpp,
//! moeCommMs): the dispatch and combine all-to-alls among the EP group and, with etp > 1, the
//! all-gather and reduce-scatter among the ETP group, each at the model's network time with the
//! host's issue floor after it.
struct ExpertItems
{
    int ep = 1, etp = 1;
    double a2a_bytes = 0.0; //!< comm_size of one all-to-all (R·h·e)
    GroupNetwork ep_net, etp_net;
    void add( std::vector<Item>& v, const std::string& name, Collective k, GroupKind g,
              double net_ms, double size ) const
    {
        const double host =
            transformer_detail::issuedMs( shippedTransformerConstants(), net_ms, 1.0 ) - net_ms;
        v.push_back( { Kind::collective, name, net_ms, host, k, g, size } );
    }
    //! The forward's four (the backward runs the same on the gradients).
    void layer( std::vector<Item>& v, const std::string& name ) const
    {
        if ( ep > 1 )
            add( v, name + ".ep_dispatch", Collective::all_to_all, GroupKind::ep,
                 transformer_detail::expertAllToAllMs( ep_net, a2a_bytes ), a2a_bytes );
        if ( etp > 1 )
        {
            add( v, name + ".etp_ag", Collective::all_gather, GroupKind::etp,
                 groupCollectiveMs( etp_net, Collective::all_gather, a2a_bytes ), a2a_bytes );
            add( v, name + ".etp_rs", Collective::reduce_scatter, GroupKind::etp,
                 groupCollectiveMs( etp_net, Collective::reduce_scatter, a2a_bytes * etp ),
                 a2a_bytes * etp );
        }
        if ( ep > 1 )
            add( v, name + ".ep_combine", Collective::all_to_all, GroupKind::ep,
                 transformer_detail::expertAllToAllMs( ep_net, a2a_bytes ), a2a_bytes );
    }
};

//! The items add up to the model's stage times (a builder that drifted from step.hpp fails
//! here rather than writing a graph that disagrees with `evaluate`).
inline void checkStageSums( int s, const transformer_detail::StageTimes& st,
                            const StageItems& items )
{
    // Collectives by communicator: TP ones against the TP phase, the MoE ones (EP, ETP)
    // against the EP phase.
    auto sum = [&]( const std::vector<Item>& v, Kind k, bool optimizer, bool moe )
    {
        double t = 0.0;
        for ( const Item& i : v )
            if ( i.kind == k && ( i.name.rfind( "optimizer", 0 ) == 0 ) == optimizer &&
                 ( k != Kind::collective || onExpertGroup( i ) == moe ) )
                t += i.ms + i.host_ms;
        return t;
    };
    auto passes = [&]( const std::vector<std::vector<Item>>& chunks, Kind k, bool moe = false )
    {
        double t = 0.0;
        for ( const std::vector<Item>& v : chunks )
            t += sum( v, k, false, moe );
        return t;
    };
    auto same = [&]( double a, double b, const char* what )
    {
        if ( std::fabs( a - b ) > 1e-9 * std::max( 1.0, std::fabs( b ) ) )
            throw std::logic_error( fmt::format(
                "transformer graph of stage {}: {} {} ms, the model {} ms", s, what, a, b ) );
    };
    same( passes( items.fwd, Kind::compute ), st.compute_f, "forward compute" );
    same( passes( items.fwd, Kind::collective ), st.tp_f, "forward TP" );
    same( passes( items.fwd, Kind::collective, true ), st.ep_f, "forward EP" );
    same( passes( items.bwd, Kind::compute ), st.compute_b, "backward compute" );
    same( passes( items.bwd, Kind::collective ), st.tp_b, "backward TP" );
    same( passes( items.bwd, Kind::collective, true ), st.ep_b, "backward EP" );
    same( sum( items.post, Kind::collective, false, false ), st.dp, "DP" );
    same( sum( items.post, Kind::compute, true, false ), st.opt, "optimizer" );
}

} // namespace transformer_graph
} // namespace shardsweep
