#pragma once
//! \file task.hpp
//! \brief Host-side descriptions of what one scenario is made of: a named workload, a named
//! platform and a sharding plan. I/O turns files into these; planners produce Plans; the batched
//! kernel flattens them into struct-of-arrays Views.

#include <cstdint>
#include <shardsweep/model/hardware.hpp>
#include <shardsweep/model/workload.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! A DLRM model: embedding tables and the dense part, trained at a global batch size.
struct Workload
{
    std::string name;
    std::vector<std::string> table_names; //!< one per table
    std::vector<TableSpec> tables;
    DenseModel dense;
    std::int64_t global_batch = 0;
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

//! A full plan: one TablePlan per workload table and the shards that realise it.
struct Plan
{
    std::vector<TablePlan> tables;
    std::vector<ShardSpec> shards; //!< every shard of every table (data-parallel: one per GPU)
};

} // namespace shardsweep
