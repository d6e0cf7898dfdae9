#pragma once
//! \file scenario_space.hpp
//! \brief The numbered scenario space of a sweep, materialised one scenario at a time.
//!
//! Ids run over the grid first, then over each task generator in file order (docs/SWEEPS.md):
//!
//!   grid id = ((((w · P + p) · G + g) · B + b) · K + k) · C + c
//!     w workload, p platform, g GPU count, b batch, k plan, c cost model (c fastest)
//!   k < planners: the planner k chooses the plan; then one k per explicit configuration of the
//!   `parallel:` grid (planner none)
//!   generator j id = offset_j + ((t · B_j + b) · K_j + k) · C_j + c,   t = task index
//!
//! so consecutive ids share a workload and platform (planners and cost models vary fastest:
//! neighbouring results compare plans for the same task). materialize(id) is a pure function of
//! (configuration, id): generated tasks depend on (generator seed, task index) only, a scenario's
//! planner seed on (sweep seed, id) only. Workloads, platforms and pools are loaded once, up front
//! (io/sweep_yaml.hpp: loadScenarioSpace), and shared by every materialised scenario.

#include <cstdint>
#include <memory>
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/plan/planner.hpp>
#include <shardsweep/scenario/sweep_config.hpp>
#include <shardsweep/scenario/table_pool.hpp>
#include <shardsweep/scenario/task_generator.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! Everything one scenario needs, ready for a planner and the cost kernel.
struct ScenarioSpec
{
    std::uint64_t id = 0;
    //! Shared with the space (grid workloads) or owned (generated tasks); never null.
    std::shared_ptr<const Workload> workload;
    //! The platform with its GPU count applied (nodes and network rebuilt, see
    //! resizePlatform) and, for generated tasks, the protocol's memory cap applied.
    Platform platform;
    int workload_index = 0; //!< into ScenarioSpace::workloadNames()
    int platform_index = 0; //!< into ScenarioSpace::platformNames()
    PlannerKind planner = PlannerKind::round_robin;
    CostModel cost_model = CostModel::native;
    LearnedCostBinding learned; //!< the sweep's learned model (cost_model == learned)
    const LearnedGemmModel* learned_gemm = nullptr; //!< gemm_model: learned on a trained GPU
    std::int64_t global_batch = 0; //!< always explicit (the workload's own resolved)
    int gpu_count = 0;
    TaskProtocol protocol = TaskProtocol::none;
    int generator_index = -1;       //!< -1 for grid scenarios
    std::int64_t task_index = -1;   //!< -1 for grid scenarios
    std::uint64_t task_seed = 0;    //!< the generator's seed (0 for grid scenarios)
    double memory_cap_GiB = 0.0;    //!< 0: none
    std::uint64_t planner_seed = 0; //!< for PlannerOptions::seed; from (sweep seed, id)
    //! planner == none: the configuration of the grid's `parallel:` section this scenario
    //! prices (tp = pp = 0 when the layout does not exist for the GPU count).
    ParallelConfig parallel;
    //! Where the features of the workload's tables are in the sweep's table catalogue
    //! (ScenarioSpace::tableCatalog(), the results file's /tables): see tableCatalogRow().
    std::int32_t table_catalog_offset = 0;
    //! Pool index of each table of a generated task (empty for grid workloads).
    std::vector<int> pool_ids;

    const Workload& workloadRef() const { return *workload; }
    //! The catalogue row of table t: a grid workload's tables are consecutive rows, a task's
    //! tables are rows of its generator's pool (tasks draw the pool's tables).
    std::int32_t tableCatalogRow( int t ) const
    {
        return table_catalog_offset + ( pool_ids.empty() ? t : pool_ids[std::size_t( t )] );
    }
};

//! One row of a sweep's table catalogue: an embedding table whose access features (rows,
//! pooling factor, distribution, reuse histogram) scenarios share. A task sets its own dim and
//! dtype per table, so those stay with the scenario's rows.
struct CatalogTable
{
    const TableSpec* table = nullptr; //!< owned by the space
    std::string name;
    int workload = -1;  //!< grid workload (index into workloadNames()), -1 for a pool table
    int generator = -1; //!< generator whose pool holds it, -1 for a workload's table
    int index = 0;      //!< table index in the workload, or pool index
};

//! Inputs loaded from the files a SweepConfig names, in the config's order.
struct SweepInputs
{
    std::vector<Workload> workloads;       //!< one per config.workloads
    std::vector<NamedPlatform> platforms;  //!< config.platforms, then generator platforms
    std::vector<int> generator_platform;   //!< per generator: index into platforms
    std::vector<TablePool> generator_pool; //!< per generator: its pool
    //! The sweep's cost_model_file, loaded once (null: none).
    std::shared_ptr<const LearnedCostModel> learned_cost_model;
    //! gemm_model: learned: the model, and per platform whether its GPU was trained on.
    std::shared_ptr<const LearnedGemmModel> learned_gemm_model;
    std::vector<char> platform_learned_gemm;
    //! InputFileRecorder's fingerprint of every file the inputs were read from (workloads,
    //! platforms and the network, system and calibration files they name, table pools, models):
    //! part of the configuration hash a resumed run is checked against.
    std::uint64_t files_fingerprint = 0;
};

class ScenarioSpace
{
  public:
    //! Validates the combination (throws std::invalid_argument naming the offending entry, e.g. a
    //! GPU count a platform cannot be resized to) and precomputes the mixed-radix strides.
    ScenarioSpace( SweepConfig config, SweepInputs inputs );

    //! Total number of scenarios: grid + Σ generators.
    std::uint64_t size() const { return _size; }
    std::uint64_t gridSize() const { return _grid_size; }
    //! First id of generator j (j = numGenerators() gives size()).
    std::uint64_t generatorOffset( int j ) const;
    int numGenerators() const { return static_cast<int>( _config.generators.size() ); }

    //! Scenario `id` (0 <= id < size(); throws std::out_of_range otherwise).
    ScenarioSpec materialize( std::uint64_t id ) const;

    const SweepConfig& config() const { return _config; }
    const SweepInputs& inputs() const { return _inputs; }

    // String tables for the results file: indices in ScenarioSpec refer to these.
    //! Grid workload names, then one entry per generator (its name).
    const std::vector<std::string>& workloadNames() const { return _workload_names; }
    //! Platform names (grid platforms, then generator platforms not already listed).
    const std::vector<std::string>& platformNames() const { return _platform_names; }
    //! Every table a scenario can hold, once: the grid workloads' tables in order, then each
    //! generator's pool (ScenarioSpec::tableCatalogRow() indexes it). Valid while the space is.
    std::vector<CatalogTable> tableCatalog() const;

  private:
    SweepConfig _config;
    SweepInputs _inputs;
    std::vector<std::shared_ptr<const Workload>> _workloads;
    std::vector<std::string> _workload_names;
    std::vector<std::string> _platform_names;
    std::vector<std::uint64_t> _generator_offsets; //!< size numGenerators() + 1
    std::vector<std::vector<int>> _splits;         //!< per generator: DreamShard's pool split
    //! First catalogue row of each grid workload's tables, then of each generator's pool.
    std::vector<std::int32_t> _catalog_offsets;
    std::uint64_t _grid_size = 0;
    //! SweepConfig::plannerAxisSize(), once (it enumerates every GPU count's layouts).
    std::uint64_t _planner_axis_size = 0;
    std::uint64_t _size = 0;
};

//! `platform` resized to `num_gpus` GPUs (docs/SWEEPS.md, "GPU counts"):
//! - num_gpus <= gpus_per_node: one node of num_gpus GPUs; the network keeps dim 0 only, with
//!   npus_count = num_gpus;
//! - otherwise num_gpus must be a multiple of gpus_per_node: nodes = num_gpus / gpus_per_node,
//!   dim 0 unchanged, the outer dims re-sized so that their product is the node count (inner
//!   outer-dims keep their size while it divides the remainder; the outermost takes the rest;
//!   dims of size 1 are dropped). A platform with no inter-node dim cannot grow past one node.
//! `gpus_per_node_hint` > 0 overrides the node size (large-856x128: 8 per node).
//! Throws std::invalid_argument with the reason when the platform cannot be resized.
Platform resizePlatform( const Platform& platform, int num_gpus, int gpus_per_node_hint = 0 );

//! `platform` with at most `cap_GiB` of usable memory per GPU (gpu.memory_GiB = min(own, cap),
//! hbm_reserve_GiB = 0: the papers' caps bound everything a GPU holds). cap_GiB <= 0: unchanged.
Platform applyMemoryCap( const Platform& platform, double cap_GiB );

} // namespace shardsweep
