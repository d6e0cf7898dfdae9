#pragma once
//! \file sweep_config.hpp
//! \brief The parsed form of a sweep file (`kind: sweep`, docs/SWEEPS.md): grids and generators.
//!
//! Plain data: io/sweep_yaml.hpp fills it from YAML (ranges already expanded into value lists,
//! paths already resolved against the sweep file), scenario/scenario_space.hpp numbers it.

#include <cstdint>
#include <shardsweep/domain/transformer_spec.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/plan/planner.hpp>
#include <shardsweep/scenario/table_pool.hpp>
#include <shardsweep/scenario/task_generator.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! Inverse of costModelName; throws UsageError on unknown names.
CostModel parseCostModelName( const std::string& name );

//! Where a generator's tables come from.
struct TablePoolSource
{
    //! CSV path (resolved); empty: synthetic.
    std::string csv;
    //! Synthetic pool: size, seed and the other knobs of SyntheticPoolOptions.
    SyntheticPoolOptions synthetic;
    //! Synthetic pool: locality_stats.txt file and block fitted to (resolved path).
    std::string locality_file;
    int locality_block = 0;
};

//! A random task generator: `count` tasks of one protocol, each evaluated for every
//! planner × batch × cost model of the generator.
struct TaskGeneratorConfig
{
    std::string name; //!< defaults to the protocol name; unique within the sweep
    TaskProtocol protocol = TaskProtocol::neuroshard;
    std::uint64_t count = 0;
    std::uint64_t seed = 0; //!< the generator's task seed (default: mixSeed(sweep seed, ordinal))
    TaskOptions options;
    TablePoolSource pool;
    std::string platform;               //!< platform YAML (resolved): GPU, network, node size
    std::vector<PlannerKind> planners;  //!< default: the sweep's planners
    std::vector<std::int64_t> batches;  //!< default: { options.global_batch }
    std::vector<CostModel> cost_models; //!< default: the sweep's cost models
};

//! The grid's `parallel:` section: explicit transformer configurations, every combination of
//! the lists below. dp = the scenario's GPU count / (tp·pp). With every_layout the (tp, pp)
//! axis is every layout of the GPU count (gpuLayouts), padded to the longest over gpu_counts.
struct ParallelGrid
{
    bool every_layout = false;
    std::vector<int> tp = { 1 };
    std::vector<int> pp = { 1 };
    //! The values of each knob of parallelFields() (domain/parallel_fields.hpp), in its order:
    //! the number, 0/1 for a flag, the enum's code for a choice. Default: the field's default.
    std::vector<std::vector<int>> values = defaultValues();

    static std::vector<std::vector<int>> defaultValues();

    //! Entries of the (tp, pp) axis.
    std::uint64_t layoutCount( const std::vector<int>& gpu_counts ) const;
    //! Configurations per grid point (0: no parallel section).
    std::uint64_t size( const std::vector<int>& gpu_counts ) const;
    //! Configuration `index` for `num_gpus` GPUs; tp = pp = 0 when the layout index is past the
    //! layouts of num_gpus (every_layout) or tp·pp does not divide num_gpus.
    ParallelConfig at( std::uint64_t index, int num_gpus, std::int64_t global_batch ) const;
};

struct SweepConfig
{
    std::string file; //!< the sweep file as given
    std::string name;
    std::string description;
    std::uint64_t seed = 0;

    // ---- the grid: every combination is one scenario --------------------------------------
    std::vector<std::string> workloads; //!< workload YAML paths (resolved)
    std::vector<std::string> platforms; //!< platform YAML paths (resolved)
    std::vector<PlannerKind> planners;  //!< default { round_robin }
    std::vector<std::int64_t> batches;  //!< global batch sizes; 0 = the workload's own
    std::vector<int> gpu_counts;        //!< 0 = the platform's own
    std::vector<CostModel> cost_models; //!< default { native }
    //! The learned shard cost model of `learned` scenarios (resolved path; required with them).
    std::string cost_model_file;
    //! GEMM model of the DLRM dense part: "analytic" (default) or "learned" (<models>/gemm.mlp on
    //! the platforms whose GPU it was trained on, the analytic model on the others).
    std::string gemm_model = "analytic";
    bool has_parallel = false; //!< a `parallel:` section (transformer workloads)
    ParallelGrid parallel;

    // ---- random task generators, numbered after the grid -----------------------------------
    std::vector<TaskGeneratorConfig> generators;

    //! The sweep file's text, verbatim (for the results file and the configuration hash).
    std::string text;
    //! GPU calibrations given to `run --calibration` (applied to every platform of their GPU; like
    //! every file the inputs are read from, their text is part of the configuration hash).
    std::vector<std::string> calibrations;

    //! Number of grid scenarios (0 when there are no workloads or no platforms). The plan axis
    //! holds the planners, then the parallel configurations (planner none).
    std::uint64_t gridSize() const;
    std::uint64_t plannerAxisSize() const;
};

//! Whether the grid or any generator prices scenarios with `model`.
bool usesCostModel( const SweepConfig& config, CostModel model );

//! FNV-1a 64 of the sweep text, continued over `files_fingerprint` (SweepInputs: the files the
//! inputs were read from): the configuration hash a resumed run is checked against.
std::uint64_t sweepConfigHash( const SweepConfig& config, std::uint64_t files_fingerprint );

} // namespace shardsweep
