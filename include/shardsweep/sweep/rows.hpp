#pragma once
//! \file rows.hpp
//! \brief The rows a sweep stores per scenario, per GPU and per shard (docs/HDF5_LAYOUT.md), as
//! plain structs: journals hold them byte for byte, and the HDF5 writer turns each field into one
//! 1-D dataset through the column tables below.

#include <array>
#include <cstdint>
#include <shardsweep/domain/dlrm_spec.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/domain/parallel_fields.hpp>
#include <shardsweep/domain/transformer_spec.hpp>
#include <shardsweep/io/hdf5.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/scenario/scenario_space.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! Schema of the results file and the journals (docs/HDF5_LAYOUT.md).
//! 2: /scenarios/lower_bound_ms added. 3: transformer columns (workload_kind, the
//! configuration, the transformer phases). 4: the tables' access features moved from every
//! /shards row to one /tables row per table (/shards/table_row points to it).
constexpr int kSweepSchemaVersion = 4;

//! `status` of a scenario row. No name table: files store the code (-1 is the column's fill
//! value; docs/HDF5_LAYOUT.md lists the meanings) and no file or printout names a status, and as
//! codes start at -1 an enumNameList would not be index = code.
enum class ScenarioStatus : std::int8_t
{
    pending = -1,
    evaluated = 0,
    no_plan = 1, //!< the planner found no plan
    error = 2,   //!< materialising or planning threw
};

//! An array of every knob set to `value` (the rows' "not a transformer" marker).
constexpr std::array<std::int32_t, kNumParallelFields> filledParallel( std::int32_t value )
{
    std::array<std::int32_t, kNumParallelFields> a{};
    for ( auto& x : a )
        x = value;
    return a;
}

//! One row of /scenarios (every member value-initialised: journals compare byte for byte).
struct ScenarioRow
{
    std::uint64_t id = 0;
    std::uint64_t task_seed = 0;
    std::uint64_t planner_seed = 0;
    std::int64_t task_index = -1;
    std::int64_t global_batch = 0;
    std::int64_t gpu_row_offset = 0;   //!< set when the file is laid out
    std::int64_t shard_row_offset = 0; //!< set when the file is laid out
    std::int32_t workload = -1;
    std::int32_t platform = -1;
    std::int32_t planner = -1;
    std::int32_t cost_model = -1;
    std::int32_t task_protocol = 0;
    std::int32_t generator = -1;
    std::int32_t gpu_count = 0;
    std::int32_t num_tables = 0;
    std::int32_t num_shards = 0;
    std::int32_t num_gpus_rows = 0;
    std::int32_t overflow_gpu = -1;
    std::int8_t status = -1;
    std::uint8_t done = 0;
    std::uint8_t feasible = 255;
    std::uint8_t pad_ = 0;
    double memory_cap_GiB = 0.0;
    double overflow_GiB = 0.0;
    double max_memory_GiB = 0.0;
    double iteration_ms = 0.0;
    double exposed_comm_ms = 0.0;
    //! iterationLowerBoundMs of the scenario's task (native model; NaN for other cost models).
    double lower_bound_ms = 0.0;
    double phase_ms[kNumPhases] = {};
    // Transformer scenarios: the configuration (-1 for DLRM rows and rows without a plan, but an
    // explicit configuration, planner none, is stored either way) and the iteration's phases and
    // model FLOPs (NaN for DLRM rows).
    std::int32_t workload_kind = -1; //!< WorkloadKind
    std::int32_t tp = -1;
    std::int32_t pp = -1;
    std::int32_t dp = -1;
    //! The knobs of parallelFields() in its order (domain/parallel_fields.hpp), as ints.
    std::array<std::int32_t, kNumParallelFields> parallel = filledParallel( -1 );
    std::int32_t peak_memory_stage = -1;
    double transformer_phase_ms[kNumTransformerPhases] = {};
    double model_flops = 0.0;
};

//! One row of /gpus.
struct GpuRow
{
    std::uint64_t scenario_id = 0;
    std::int32_t gpu = 0;
    std::int32_t pad_ = 0;
    double phase_ms[kNumPhases] = {};
    double memory_GiB = 0.0;
};

//! One row of /shards: the table (its access features are row `table_row` of /tables), the
//! placement and the predicted costs.
struct ShardRow
{
    std::uint64_t scenario_id = 0;
    std::int64_t row_offset = 0;
    std::int64_t num_rows = 0;
    std::int32_t shard = 0;
    std::int32_t table = 0;
    std::int32_t table_row = 0;
    std::int32_t dim = 0;
    std::int32_t gpu = 0;
    std::int32_t col_offset = 0;
    std::int32_t num_cols = 0;
    std::uint8_t dtype = 0;
    std::uint8_t sharding_type = 0;
    std::uint8_t compute_kernel = 0;
    std::uint8_t pad_ = 0;
    double cache_fraction = 0.0;
    double fwd_ms = 0.0;
    double bwd_ms = 0.0;
};

//! One row of /tables: the access features of one table of the sweep's catalogue
//! (ScenarioSpace::tableCatalog()), shared by every shard row of that table. A learned cost
//! model's 20 NeuroShard features are these plus /shards' dim.
struct TableRow
{
    std::int64_t rows = 0;
    std::int32_t workload = -1;
    std::int32_t generator = -1;
    std::int32_t index = 0;
    std::uint8_t distribution = 0;
    std::uint8_t pad_[3] = {};
    double pooling_factor = 0.0;
    double zipf_alpha = 0.0;
    double bins[kReuseBins] = {};
};

//! The /tables row of a catalogue table.
TableRow tableRow( const CatalogTable& table );

//! A field of a row struct stored as one dataset.
struct ColumnSpec
{
    std::string name;
    h5::Type type;
    std::size_t offset; //!< byte offset in the row struct
    std::string units;
    std::string codes; //!< the /names table the codes index ("" if none)
};

const std::vector<ColumnSpec>& scenarioColumns();
const std::vector<ColumnSpec>& gpuColumns();
const std::vector<ColumnSpec>& shardColumns();
const std::vector<ColumnSpec>& tableColumns();

//! Bytes of one element of `type`.
std::size_t typeBytes( h5::Type type );

//! The value (as double) of a column in a row, for tests and summaries.
double columnValue( const ColumnSpec& column, const void* row );

//! Which row groups a run stores (`--detail`).
enum class SweepDetail : std::uint8_t
{
    scenarios = 0, //!< /scenarios only
    gpus = 1,      //!< and /gpus
    all = 2,       //!< and /shards
};

// The results file's `detail` attribute and the journal manifest hold these names.
SHARDSWEEP_ENUM_NAMES( SweepDetail, "detail",
                       { SweepDetail::scenarios, "scenarios", "/scenarios only" },
                       { SweepDetail::gpus, "gpus", "/scenarios and /gpus" },
                       { SweepDetail::all, "all", "/scenarios, /gpus and /shards" } );

SweepDetail parseSweepDetail( const std::string& text ); //!< throws UsageError

//! Rows of one evaluated scenario (fills num_shards, num_gpus_rows and every result field).
//! `row` already holds the inputs; `plan` may be null when there is no plan (and the scenario's
//! workload null when materialising it failed).
//! The row's tp, pp, dp and knob columns: the configuration a transformer scenario was evaluated
//! with, or (planner none) the explicit configuration it stands for, evaluated or not.
void setParallelColumns( ScenarioRow& row, const ParallelConfig& config );

void fillResultRows( ScenarioRow& row, const ScenarioSpec& scenario, const Plan* plan,
                     const ScenarioResult* result, SweepDetail detail, std::vector<GpuRow>& gpus,
                     std::vector<ShardRow>& shards );

} // namespace shardsweep
