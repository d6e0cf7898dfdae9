#pragma once
//! \file plan_yaml.hpp
//! \brief Plan files (`kind: plan`): per table the TorchRec sharding type and compute kernel and
//! every shard (gpu, row_offset, num_rows, col_offset, num_cols). `shardsweep plan --output`
//! writes them with writePlanYaml; `evaluate` reads them back (docs/INPUTS.md).

#include <iosfwd>
#include <shardsweep/io/yaml_util.hpp>
#include <shardsweep/scenario/task.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! Parses a plan document. With `workload`, table names resolve to workload indices, every table
//! must have exactly one entry, and shards must lie inside their table and tile it (data-parallel:
//! one full copy per GPU). With `platform`, shard GPUs must exist and (table_)row-wise-in-a-node
//! types must stay inside one node. Without them only the file's own consistency is checked and
//! tables are numbered in file order. `embedded`: a `plan:` mapping inside a scenario file.
Plan parsePlan( const YamlView& root, const Workload* workload, const Platform* platform,
                bool embedded = false );
Plan readPlanFile( const std::string& path, const Workload* workload, const Platform* platform );
Plan parsePlanString( const std::string& text, const std::string& name, const Workload* workload,
                      const Platform* platform );

//! Writes `plan` as a `kind: plan` document; `table_names[i]` names table i. Reading it back with
//! the same workload gives the same plan, shards grouped by table in their original order.
void writePlanYaml( std::ostream& out, const Plan& plan,
                    const std::vector<std::string>& table_names,
                    const std::string& workload_name = "" );
std::string planToYaml( const Plan& plan, const std::vector<std::string>& table_names,
                        const std::string& workload_name = "" );

//! TorchRec's names: "table_wise", ... and "fused", "fused_uvm", "fused_uvm_caching", "dense".
const char* shardingTypeName( ShardingType t );
const char* computeKernelName( ComputeKernel k );

} // namespace shardsweep
