#pragma once
//! \file torchrec_planner.hpp
//! \brief TorchRec's EmbeddingShardingPlanner on the TorchRec-compatible cost model: enumerator
//! (sharding types x kernels, shard shapes), GridSearch / Greedy / Uniform proposers, the
//! greedy-perf partitioner and the planner loop (TorchRec a48cef79, torchrec/distributed/planner/).
//!
//! Entry points for the rest of shardsweep:
//!  * planTorchrec(): the PlannerKind::torchrec planner (makePlan calls it);
//!  * torchrecPlanCost(): prices any shardsweep Plan with TorchRec's estimator on the host.
//!    Inside the batched kernel use the per-shard KOKKOS_INLINE_FUNCTION torchrecShardPerf()
//!    of model/torchrec/adapter.hpp instead (same numbers).
#include <cstdint>
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/model/torchrec/storage.hpp>
#include <shardsweep/plan/planner.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! One table as the TorchRec planner sees it.
struct TorchrecTableInput
{
    std::int64_t rows = 0;
    int dim = 0;
    double lookups = 0.0;        //!< S_in per rank
    double pooled_outputs = 0.0; //!< S_out per rank (batch x features)
    double dtype_bytes = 4.0;
    bool weighted = false;
    double optimizer_multiplier = 0.0; //!< see torchrecOptimizerMultiplier
    int min_partition = 0;             //!< column-wise block lower bound (0: 128)
    double cache_load_factor = -1.0;   //!< UVM-caching clf (< 0: 0.2)
};

struct TorchrecShardPlacement
{
    std::int64_t rows = 0, row_offset = 0;
    int cols = 0, col_offset = 0;
    TorchrecPerf perf;
    TorchrecStorage storage;
    int rank = -1;
};

//! One sharding option: a table under one sharding type and kernel, with its shards.
struct TorchrecOption
{
    int table = 0;
    ShardingType type = ShardingType::table_wise;
    TorchrecKernel kernel = TorchrecKernel::fused;
    std::vector<TorchrecShardPlacement> shards;
    double score( bool use_depth ) const; //!< max (use_depth) or sum of the shards' perf.total
    TorchrecStorage totalStorage() const;
};

struct TorchrecPlannerConfig
{
    TorchrecTopology topology;
    //! Sharding types offered, in the sharder's order (EBC: DP, TW, CW, TWCW, RW, TWRW, GRID).
    std::vector<ShardingType> sharding_types = {
        ShardingType::data_parallel,     ShardingType::table_wise, ShardingType::column_wise,
        ShardingType::table_column_wise, ShardingType::row_wise,   ShardingType::table_row_wise };
    //! Kernels for non-DP types (DP always gets dense).
    std::vector<TorchrecKernel> kernels = { TorchrecKernel::fused, TorchrecKernel::fused_uvm,
                                            TorchrecKernel::fused_uvm_caching };
    TorchrecStorageOptions storage;
    double reservation_percentage = 0.15;
    double dense_param_bytes = 0.0; //!< parameters outside the embedding tables
    bool use_grid_search = true;    //!< GridSearchProposer (skipped above 1e4 combinations)
    double timeout_seconds = 0.0;   //!< checked between proposals; 0 = none
};

enum class TorchrecPlannerError : std::uint8_t
{
    none = 0,
    insufficient_storage = 1,
    strict_constraints = 2,
};

struct TorchrecPlanOutcome
{
    TorchrecPlannerError error = TorchrecPlannerError::none;
    std::string message;
    std::vector<TorchrecOption> best; //!< one option per table, shards with ranks
    double rating = 0.0;              //!< max over ranks of summed perf.total
    int num_proposals = 0;            //!< proposals partitioned (cache replays excluded)
};

//! The storage order of TorchRec's partitioner and planner (hbm first, then ddr).
bool torchrecStorageLess( const TorchrecStorage& a, const TorchrecStorage& b );

//! EmbeddingEnumerator: every option of every table, perf and storage estimated.
std::vector<std::vector<TorchrecOption>>
torchrecEnumerate( const std::vector<TorchrecTableInput>& tables,
                   const TorchrecPlannerConfig& config );

//! Device capacity left after HeuristicalStorageReservation (hbm may be negative).
struct TorchrecRankState
{
    int rank = 0;
    double hbm = 0.0, ddr = 0.0;
    double perf = 0.0;
};
std::vector<TorchrecRankState>
torchrecReservedDevices( const std::vector<TorchrecTableInput>& tables,
                         const TorchrecPlannerConfig& config );

//! GreedyPerfPartitioner (sort by storage). Assigns ranks in `proposal` (one option per
//! table); false (and `why`) when something does not fit.
bool torchrecPartition( std::vector<TorchrecOption>& proposal,
                        std::vector<TorchrecRankState> devices, int local_world_size,
                        std::string* why );

//! NoopPerfModel.rate: max over ranks of the summed shard perf.total.
double torchrecRating( const std::vector<TorchrecOption>& proposal, int world_size );

//! GreedyProposer(use_depth, threshold): the sequence of proposals (option index per table) it
//! makes when every proposal rates `ratings[i]` (empty: it never stops early).
std::vector<std::vector<int>>
torchrecGreedyProposals( const std::vector<std::vector<TorchrecOption>>& options, bool use_depth,
                         int threshold, const std::vector<double>& ratings );

//! The planner loop over GridSearch, Greedy(depth), Greedy(sum) and Uniform.
TorchrecPlanOutcome torchrecPlan( const std::vector<TorchrecTableInput>& tables,
                                  const TorchrecPlannerConfig& config );

//! PlannerKind::torchrec on shardsweep's types: TorchRec's planner with the Topology of
//! torchrecTopologyFor(platform), per-rank batch global_batch / num_gpus, the tables' optimizers
//! explicit, 15 % HBM reservation plus the dense model. predicted_ms = TorchRec's objective.
PlanResult planTorchrec( const Workload& workload, const Platform& platform,
                         std::int64_t global_batch, const PlannerOptions& options );

//! Prices a shardsweep Plan with TorchRec's estimator: per shard (plan.shards order) fwd =
//! fwd_compute + fwd_comms, bwd = bwd_compute + bwd_comms + prefetch; per GPU the summed
//! perf.total (the objective is its maximum). Null pointers are skipped. Returns the objective.
double torchrecPlanCost( const Workload& workload, const Platform& platform, const Plan& plan,
                         std::int64_t global_batch, double* shard_fwd_ms, double* shard_bwd_ms,
                         double* rank_total_ms );

} // namespace shardsweep
