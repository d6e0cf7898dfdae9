#pragma once
//! \file task.hpp
//! \brief Host-side descriptions of what one scenario is made of: a named workload, a named
//! platform and a plan. I/O turns files into these; planners produce Plans; the batched kernel
//! flattens them into struct-of-arrays Views.
//!
//! Workload kinds share these structs: a DLRM workload fills tables and dense and its plan the
//! table shards; a transformer workload fills `transformer` and its plan `parallel` (the
//! Megatron-LM 3D-parallel configuration). Everything downstream (scenario space, kernel, HDF5,
//! CLI) dispatches on Workload::kind.

#include <cstdint>
#include <shardsweep/model/hardware.hpp>
#include <shardsweep/model/transformer_spec.hpp>
#include <shardsweep/model/workload.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! Which model family a workload describes (the kernel's per-scenario switch).
enum class WorkloadKind : std::uint8_t
{
    dlrm = 0,        //!< embedding tables + dense MLPs, sharded by a table plan
    transformer = 1, //!< GPT / BERT / OPT, parallelised by a ParallelConfig
};
constexpr int kNumWorkloadKinds = 2;
const char* workloadKindName( WorkloadKind kind ); //!< "dlrm", "transformer"

//! A model trained at a global batch size: a DLRM (embedding tables and the dense part) or a
//! transformer (`transformer`; tables empty). global_batch counts samples (DLRM) or sequences.
struct Workload
{
    std::string name;
    WorkloadKind kind = WorkloadKind::dlrm;
    std::vector<std::string> table_names; //!< one per table
    std::vector<TableSpec> tables;
    DenseModel dense;
    TransformerSpec transformer; //!< kind == transformer only
    std::int64_t global_batch = 0;

    bool isTransformer() const { return kind == WorkloadKind::transformer; }
};

//! A platform with the catalog name of its GPU.
struct NamedPlatform
{
    std::string name;
    std::string gpu_name;
    Platform platform;
};

//! The sharding decision for one table.
struct TablePlan
{
    ShardingType sharding = ShardingType::table_wise;
    ComputeKernel kernel = ComputeKernel::hbm;
    double cache_fraction = 0.0; //!< HBM cache share of the rows, uvm_caching only
};

//! A full plan. DLRM: one TablePlan per workload table and the shards that realise it.
//! Transformer: the parallel configuration (tables and shards empty).
struct Plan
{
    std::vector<TablePlan> tables;
    std::vector<ShardSpec> shards; //!< every shard of every table (data-parallel: one per GPU)
    ParallelConfig parallel;       //!< transformer workloads only
};

} // namespace shardsweep
