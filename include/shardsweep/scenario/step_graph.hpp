#pragma once
//! \file step_graph.hpp
//! \brief One training step as a per-rank dependency graph of compute, collective and
//! point-to-point operations (docs/model/chakra.md): what `shardsweep export-et` writes as
//! Chakra execution traces and what `inspect-et` reads back.
//!
//! The graph is the step exactly as the native cost model composes it: compute nodes carry the
//! model's per-GPU phase times, collective nodes the ASTRA-sim `comm_size` whose time (on the
//! platform's network, with ASTRA-sim's congestion-unaware semantics, model/collectives.hpp) is
//! the model's, and the dependencies encode the model's timeline (which phase waits for which,
//! what overlaps). Replaying it (stepGraphReplay) with ASTRA-sim's rules gives back the model's
//! iteration time. A builder per workload kind produces the same node lists: buildDlrmStepGraph
//! and buildTransformerStepGraph (send/recv nodes between pipeline stages, collectives on
//! tensor-, data-parallel and tied-embedding sub-groups).

#include <cstdint>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! One operation of one rank.
struct StepGraphNode
{
    enum class Kind : std::uint8_t
    {
        compute,
        collective,
        send,
        recv,
    };

    Kind kind = Kind::compute;
    std::string name;
    double duration_ns = 0.0; //!< compute: the model's time (not yet rounded to whole µs)
    Collective collective = Collective::all_reduce;
    std::uint64_t comm_bytes = 0; //!< collective: ASTRA-sim comm_size; send/recv: message bytes
    //! Collective: 0 = all ranks, g > 0 = StepGraph::groups[g - 1] (ASTRA-sim's pg_name "g").
    int group = 0;
    //! Collective: which network dimensions it spans (ASTRA-sim's involved_dim); empty = all.
    std::vector<bool> involved_dims;
    int peer = -1;         //!< send: destination rank; recv: source rank
    int tag = 0;           //!< send/recv: matching tag
    std::vector<int> deps; //!< indices (in this rank's list) of the nodes this one waits for
};

//! The per-rank graphs of one step.
struct StepGraph
{
    std::string workload_kind; //!< "dlrm" or "transformer"
    std::vector<std::vector<StepGraphNode>> ranks;
    std::vector<std::vector<int>> groups; //!< sub-group g + 1 = these ranks (sorted)
    double iteration_ms = 0.0;            //!< the model's own prediction of the step

    int numRanks() const { return static_cast<int>( ranks.size() ); }
};

//! The DLRM step of one scenario (workload, platform, plan, batch) under the native cost model
//! (docs/model/step.md's timeline). `input.model` is ignored: the TorchRec estimator has no
//! timeline to export.
StepGraph buildDlrmStepGraph( const ScenarioInput& input );

//! The transformer step of one scenario (Megatron-LM tp-dp-pp rank order, the plan's pipeline
//! schedule; model/transformer/step.hpp's composition, docs/model/chakra.md): per rank a serial
//! chain of per-layer compute, TP collectives, pipeline sends/receives per micro-batch in 1F1B
//! or GPipe order, then the DP (ZeRO) and tied-embedding collectives and the optimizer.
StepGraph buildTransformerStepGraph( const ScenarioInput& input );

//! How ASTRA-sim prices a collective on a communicator group smaller than the network
//! (astra-sim's CommunicatorGroup::get_collective_plan): one logical ring over the members in
//! rank order, with the ring algorithm when the system lists more than one dimension (else the
//! first dimension's algorithm), each message on the first network dimension in which the two
//! NPUs differ. As a one-dimension network for the model's collective functions: that
//! dimension's bandwidth and latency × the largest hop count among the ring's pairs (exact when
//! all pairs have the same hop count: always on Switch and FullyConnected dimensions).
struct GroupView
{
    Network network;
    SystemConfig system;
};
GroupView subGroupView( const Network& net, const SystemConfig& sys,
                        const std::vector<int>& members );

//! ASTRA-sim's congestion-unaware time of one point-to-point message (ns): the first dimension
//! in which the two NPUs' coordinates differ (ASTRA-sim's analytical backend,
//! astra-network-analytical).
double pointToPointNs( const Network& net, int src, int dst, double bytes );

//! The smallest comm_size that is a multiple of `align` whose ASTRA-sim time on dims
//! [first_dim, first_dim + num_dims) is at least `target_ns`, searched in [0, upper] (upper is
//! raised to a multiple of align). The model's collective time is non-decreasing in the size.
//! ASTRA-sim's time leaves out sys's call terms (astraSystem), the model's `target_ns` has them:
//! a calibrated platform's call overhead reaches ASTRA-sim as bytes.
std::uint64_t commSizeForTime( const Network& net, const SystemConfig& sys, Collective c,
                               double target_ns, double upper, std::uint64_t align, int first_dim,
                               int num_dims );

//! comm_size of a collective on `members` (every rank, or a sub-group priced as ASTRA-sim
//! prices it, subGroupView) whose ASTRA-sim time is the model's `target_ns`: `model_bytes`
//! rounded to a multiple of splits × members when that gives it within 1 ns (the group is
//! priced alike), else the smallest such multiple that takes at least as long.
std::uint64_t groupCommSizeForTime( const Network& net, const SystemConfig& sys,
                                    const std::vector<int>& members, Collective c, double target_ns,
                                    double model_bytes );

//! The smallest message size whose ASTRA-sim time from `src` to `dst` (pointToPointNs) is at
//! least `target_ns` (1 when even an empty message takes that long).
std::uint64_t pointToPointSizeForTime( const Network& net, int src, int dst, double target_ns );

//! Time of one collective node on the platform as ASTRA-sim prices it (no call terms), ns.
double collectiveNodeNs( const Network& net, const SystemConfig& sys, const StepGraphNode& node );

//! A step graph packed for the replay: what the replay reads of each node in 40 bytes, the
//! dependencies of a rank in one array and its node names in one string. inspect-et reads the
//! 11.9 million nodes of a 1024-rank GPT-3 step into it (a StepGraphNode with its own name and
//! vectors takes about 200 bytes), and export-et packs each rank once its trace is written.
class PackedStepGraph
{
  public:
    //! The fields of a StepGraphNode that the replay reads (see there).
    struct Node
    {
        double duration_ns = 0.0;
        std::uint64_t comm_bytes = 0;
        std::int32_t group = 0, peer = -1, tag = 0;
        StepGraphNode::Kind kind = StepGraphNode::Kind::compute;
        Collective collective = Collective::all_reduce;
        //! involved_dims as bits (bit d: dimension d); all_dims for an empty involved_dims.
        std::uint8_t dims_mask = 0;
        bool all_dims = true;
    };
    //! One rank's dependency list, [begin, end).
    struct Dependencies
    {
        const int* first;
        const int* last;
        const int* begin() const { return first; }
        const int* end() const { return last; }
    };

    std::vector<std::vector<int>> groups; //!< as StepGraph::groups

    //! `graph`'s nodes and groups, packed.
    static PackedStepGraph pack( const StepGraph& graph );
    //! Starts the next rank (its nodes are appended with append).
    void addRank() { _ranks.emplace_back(); }
    //! Appends `node` to the last rank added.
    void append( const StepGraphNode& node );
    //! The replay's view of one node.
    static Node packNode( const StepGraphNode& node );

    int numRanks() const { return static_cast<int>( _ranks.size() ); }
    std::size_t size( int r ) const { return _ranks[r].nodes.size(); }
    const Node& node( int r, std::size_t i ) const { return _ranks[r].nodes[i]; }
    Dependencies deps( int r, std::size_t i ) const;
    std::string name( int r, std::size_t i ) const;

  private:
    struct Rank
    {
        std::vector<Node> nodes;
        std::vector<std::uint32_t> deps_end, names_end; //!< per node: end in deps, names
        std::vector<int> deps;
        std::string names;
    };
    std::vector<Rank> _ranks;
};

//! Replays the graph with ASTRA-sim's rules: a node starts when its dependencies have finished;
//! the k-th collective of a group on every member starts when the last member is ready and
//! lasts collectiveNodeNs (on a group smaller than the network: on its subGroupView); a receive
//! completes when its matching send (same source, destination, tag, in order) has been issued plus
//! the message time; compute nodes last duration_ns.
struct StepGraphReplay
{
    std::vector<double> rank_finish_ns; //!< when each rank's last node finishes
    double finish_ns = 0.0;             //!< the slowest rank
    double compute_ns = 0.0;            //!< largest per-rank sum of compute durations
};
//! Throws std::invalid_argument for graphs that cannot finish (cycles, unmatched collectives or
//! messages), naming the rank and node.
StepGraphReplay replayStepGraph( const StepGraph& graph, const Network& net,
                                 const SystemConfig& sys );
StepGraphReplay replayStepGraph( const PackedStepGraph& graph, const Network& net,
                                 const SystemConfig& sys );

} // namespace shardsweep
