#pragma once
//! \file plan_yaml.hpp
//! \brief Plan files (`kind: plan`): for a DLRM per table the TorchRec sharding type and compute
//! kernel and every shard (gpu, row_offset, num_rows, col_offset, num_cols); for a transformer
//! the `parallel:` configuration (tp, pp, dp, micro_batch, schedule, recompute, zero,
//! sequence_parallel, fused, mode). `shardsweep plan --output` writes them with writePlanYaml;
//! `evaluate` reads them back (docs/INPUTS.md).

#include <iosfwd>
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/io/yaml_util.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! Parses a `parallel:` mapping. Every key is optional: tp, pp, micro_batch 1, schedule 1f1b,
//! recompute none, zero 0, sequence_parallel false, fused true, mode train; dp defaults to
//! num_gpus / (tp·pp) (1 when num_gpus is 0), global_batch to `global_batch`. With `model` the
//! heads, FFN width and layers must divide; with num_gpus > 0 tp·pp·dp must equal it; with a
//! global batch > 0 micro_batch·dp must divide it. Errors name the offending key.
ParallelConfig parseParallelConfig( const YamlView& node, const TransformerSpec* model,
                                    int num_gpus, std::int64_t global_batch );
//! Writes `config` as a YAML flow mapping ("{ tp: 8, pp: 4, ... }") that parseParallelConfig
//! reads back to the same configuration.
std::string parallelConfigYaml( const ParallelConfig& config );

//! Parses a plan document. With `workload`, table names resolve to workload indices, every table
//! must have exactly one entry, and shards must lie inside their table and tile it (data-parallel:
//! one full copy per GPU). With `platform`, shard GPUs must exist and (table_)row-wise-in-a-node
//! types must stay inside one node. Without them only the file's own consistency is checked and
//! tables are numbered in file order. `embedded`: a `plan:` mapping inside a scenario file. The
//! optional `source:` (PlanSource) is not part of the plan; scenario_yaml reads it.
Plan parsePlan( const YamlView& root, const Workload* workload, const Platform* platform,
                bool embedded = false );
Plan readPlanFile( const std::string& path, const Workload* workload, const Platform* platform );
Plan parsePlanString( const std::string& text, const std::string& name, const Workload* workload,
                      const Platform* platform );

//! Writes `plan` as a `kind: plan` document; `table_names[i]` names table i. A plan without tables
//! but with a workload of kind transformer is written with writeTransformerPlanYaml. Reading it
//! back with the same workload gives the same plan, shards grouped by table in their original
//! order.
void writePlanYaml( std::ostream& out, const Plan& plan,
                    const std::vector<std::string>& table_names,
                    const std::string& workload_name = "" );
//! A transformer plan: `kind: plan`, `workload:`, `parallel: { ... }`.
void writeTransformerPlanYaml( std::ostream& out, const ParallelConfig& config,
                               const std::string& workload_name = "" );

//! What a plan was made for, as `shardsweep plan -o` records it in the file (`source:`), so that
//! `evaluate` and `export-et` take the plan file itself as their scenario (io/scenario_yaml).
struct PlanSource
{
    std::string workload_path, platform_path; //!< as the user gave them to `plan`
    int gpus = 0;                             //!< the platform's GPU count the plan is for
    std::int64_t global_batch = 0;
};
//! The `source:` line of a plan file to be written at `plan_path`: the workload and platform
//! paths relative to that file's folder (as scenario files resolve them), the GPUs and the batch.
std::string planSourceYaml( const PlanSource& source, const std::string& plan_path );

std::string planToYaml( const Plan& plan, const std::vector<std::string>& table_names,
                        const std::string& workload_name = "" );

} // namespace shardsweep
