#pragma once
//! \file chakra_export.hpp
//! \brief A StepGraph as Chakra execution traces plus the ASTRA-sim input files that replay
//! them (`shardsweep export-et`), and traces read back into a StepGraph (`inspect-et`).
//! docs/model/chakra.md describes the mapping.

#include <map>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/io/chakra_et.hpp>
#include <shardsweep/scenario/step_graph.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! One trace per rank. Node ids are the indices in the rank's list; dependencies become
//! data_deps. Compute durations are rounded to whole microseconds with the remainder carried
//! along the rank's compute nodes (each node ends at the rounded cumulative exact time), so a
//! rank's total is its exact total rounded once. Collectives carry comm_type, comm_size,
//! pg_name ("0" = all ranks, else the group id) and involved_dim; sends and receives
//! comm_src/comm_dst/comm_tag/comm_size. Every node sets is_cpu_op = false.
std::vector<chakra::Trace> stepGraphToTraces( const StepGraph& graph );
//! Rank r's trace alone (what stepGraphToTraces writes for it).
chakra::Trace stepGraphRankToTrace( const StepGraph& graph, int r );

//! Traces (rank r = traces[r]) back to a graph. `groups` maps ASTRA-sim communicator group ids
//! (comm_groups.json) to ranks. Compute nodes last duration_micros · 1000 ns (0 → 1 ns, as in
//! ASTRA-sim); dependencies are data_deps and ctrl_deps. Node types other than compute and
//! communication become 0 ns compute nodes. `sources` name the files in errors (InputError).
StepGraph tracesToStepGraph( const std::vector<chakra::Trace>& traces,
                             const std::map<int, std::vector<int>>& groups,
                             const std::vector<std::string>& sources );

//! Traces read as tracesToStepGraph reads them, one rank at a time and packed for the replay, so
//! that a caller holds one trace and the packed graph, not every trace and every node at once
//! (inspect-et of 1024 traces: a decoded trace takes several times the memory of its packed
//! nodes).
class TraceGraphReader
{
  public:
    //! `groups` as for tracesToStepGraph.
    explicit TraceGraphReader( const std::map<int, std::vector<int>>& groups );
    //! Appends the nodes of rank graph().numRanks() read from `trace` (`source` names its file in
    //! errors).
    void addRank( const chakra::Trace& trace, const std::string& source );
    const PackedStepGraph& graph() const { return _graph; }
    PackedStepGraph take() { return std::move( _graph ); }

  private:
    PackedStepGraph _graph;
    std::map<int, int> _group_index; //!< ASTRA-sim group id -> StepGraph group (1-based)
};

//! ASTRA-sim's analytical network YAML for `net` (topology, npus_count, bandwidth, latency).
std::string astraNetworkYaml( const Network& net );
//! ASTRA-sim's system JSON for `sys`: every key shardsweep's collective model reads, one
//! implementation per dimension, and roofline off (the traces carry compute durations).
std::string astraSystemJson( const SystemConfig& sys, int num_dims );
//! `{"memory-type": "NO_MEMORY_EXPANSION"}`.
std::string astraRemoteMemoryJson();
//! ASTRA-sim's --comm-group-configuration: {"1": [ranks], "2": [...]}.
std::string astraCommGroupsJson( const std::vector<std::vector<int>>& groups );
//! Reads a --comm-group-configuration file (InputError naming the file on bad content).
std::map<int, std::vector<int>> readAstraCommGroups( const std::string& path, int num_ranks );

} // namespace shardsweep
