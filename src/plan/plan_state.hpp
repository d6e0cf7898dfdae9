#pragma once
//! \file plan_state.hpp
//! \brief Incremental bookkeeping of a plan under the native step model, for the planners'
//! searches (not part of the public API).
//!
//! predictStep (model/step.hpp) composes an iteration from a handful of per-GPU sums: embedding
//! forward and backward time, HBM bytes, and the pooled values and ids each GPU owns (which fix
//! every GPU's all-to-all send and receive volumes). PlanState keeps those sums and each shard's
//! cost (embeddingShardCostFromStats with its table's statistics), so a candidate move, swap or
//! split is priced from the changed GPUs (the lookup maxima in O(1) from the top three of the
//! others; the all-to-alls by allToAllvTimeNs on the per-GPU volumes, O(P)), instead of
//! re-evaluating every shard. The formula is predictStep's, term for term; the planner still
//! prices its final plan with evaluateScenario.
//!
//! Memory is predictStep's full model too, so that the search never walks into a plan the kernel
//! calls infeasible: a GPU holds its shards' HBM state, their activations (the pooled output and
//! its gradient: 2·global·cols·elem for a model-parallel shard, 2·local·cols·elem for a replica),
//! the all-to-all buffers (ids received, pooled values sent and received and their gradients),
//! the dense replica and its activations, and the platform's reserve. Per GPU g with P GPUs:
//!   memory(g) = Σ_shards on g (hbm + activations + (P-1)·ids + 2(P-2)·pooled)
//!             + 2·Σ_all shards pooled + dense + reserve,
//! because g receives every other GPU's pooled values (total − own) and sends its own to P-1
//! GPUs. The first line is per GPU (PlanShard::memory_bytes); the second is shared by all GPUs.
#include <map>
#include <memory>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/model/embedding.hpp>
#include <shardsweep/model/learned_operator.hpp>
#include <shardsweep/model/learned_shard_cost.hpp>
#include <shardsweep/model/step.hpp>
#include <tuple>
#include <vector>

namespace shardsweep
{

struct PlanShard
{
    int table = 0;
    int gpu = 0;
    std::int64_t row_offset = 0, num_rows = 0;
    int col_offset = 0, num_cols = 0;
    double fwd_ms = 0.0, bwd_ms = 0.0;
    double hbm_bytes = 0.0;    //!< weights + optimizer state (or UVM cache) in HBM
    double memory_bytes = 0.0; //!< this shard's per-GPU share of memory(g), see above
    double pooled_bytes = 0.0; //!< sent to every other GPU (model-parallel shards)
    double id_bytes = 0.0;     //!< received from every other GPU
};

//! Per-GPU changes of a candidate on up to two GPUs.
struct GpuDelta
{
    int gpu = -1;
    double fwd = 0.0, bwd = 0.0, memory = 0.0, pooled = 0.0, ids = 0.0;
};

class PlanState
{
  public:
    //! `capacity_bytes`: the memory of one GPU a plan may fill, all of memory(g) included
    //! (gpuMemoryBytes( platform ) for the kernel's feasibility rule).
    //! An active `learned` model prices each shard's compute time as predictStep does with it
    //! (cost_model: learned); its parameters must outlive the state.
    PlanState( const Workload& workload, const Platform& platform, std::int64_t global_batch,
               double capacity_bytes, const LearnedShardCost& learned = {},
               const GemmPricer& gemm = {} );

    //! Replaces the state by `plan` (every table must be planned).
    void load( const Plan& plan );
    Plan toPlan() const;

    //! A shard of table t priced on any GPU (costs do not depend on which: GPUs are alike).
    PlanShard price( int table, int gpu, std::int64_t row_offset, std::int64_t num_rows,
                     int col_offset, int num_cols ) const;
    void setTablePlan( int table, const TablePlan& tp ); //!< re-derives the table's statistics
    const TablePlan& tablePlan( int t ) const { return tables_[t]; }
    //! Table t's statistics for its current plan (its kernel's cache share) at the global batch.
    const EmbeddingTableStats& tableStats( int t ) const { return stats_[t]; }
    double globalBatch() const { return global_; }
    void addShard( const PlanShard& s );
    void removeShard( int index ); //!< the last shard takes its index
    void moveShard( int index, int gpu );
    //! Removes every shard of table t.
    void removeTable( int t );

    //! The iteration time (predictStep's composition) of the current state.
    double objective() const;
    //! The iteration time after applying `a` and `b` (gpu -1: unused); refresh() must have run
    //! since the last change. Returns +inf if a GPU whose memory grows would exceed the
    //! capacity (memory(g) as predictStep counts it).
    double objectiveWith( const GpuDelta& a, const GpuDelta& b ) const;
    //! Σ over GPUs of (fwd² + bwd²) after the deltas: the tie-breaker that spreads load when
    //! several GPUs share the maximum.
    double spreadWith( const GpuDelta& a, const GpuDelta& b ) const;
    void refresh(); //!< recomputes the top-three of each per-GPU sum

    int numGpus() const { return num_gpus_; }
    int gpusPerNode() const { return platform_->gpus_per_node; }
    int numShards() const { return static_cast<int>( shards_.size() ); }
    const PlanShard& shard( int i ) const { return shards_[i]; }
    double fwd( int g ) const { return fwd_[g]; }
    double bwd( int g ) const { return bwd_[g]; }
    double hbm( int g ) const { return hbm_[g]; }
    //! memory(g): every byte predictStep counts on GPU g.
    double memory( int g ) const { return memory_[g] + sharedMemory(); }
    //! True if memory(g) is within the capacity (with a relative margin of 1e-9 for the
    //! kernel's other order of summation).
    bool fits( int g ) const { return memory( g ) <= limit(); }
    //! Bytes GPU g can still take before fits( g ) turns false (negative: overflowing).
    double room( int g ) const { return limit() - memory( g ); }
    //! The GPU with the most memory(g).
    int fullestGpu() const { return top_memory_[0]; }
    double pooled( int g ) const { return pooled_[g]; }
    double ids( int g ) const { return ids_[g]; }
    double capacity() const { return capacity_; }
    double spread() const { return spread_; }
    int hottestFwd() const { return top_fwd_[0]; }
    int hottestBwd() const { return top_bwd_[0]; }
    int mostPooled() const { return top_pooled_[0]; }
    int mostIds() const { return top_ids_[0]; }

  private:
    double sharedMemory() const { return fixed_bytes_ + 2.0 * total_pooled_; }
    double limit() const { return capacity_ * ( 1.0 - 1e-9 ); }
    double compose( double max_fwd, double max_bwd, double index_ms, double a2a_fwd_ms,
                    double a2a_bwd_ms ) const;

    const Workload* workload_;
    const Platform* platform_;
    double global_ = 0.0, local_ = 0.0, capacity_ = 0.0;
    int num_gpus_ = 0;
    LearnedShardCost learned_;      //!< inactive: the native shard cost
    StepDurations dense_durations_; //!< the plan-independent parts of the timeline
    double allreduce_ms_ = 0.0;
    double dense_gradient_bytes_ = 0.0;
    double fixed_bytes_ = 0.0; //!< dense replica + its activations + the platform's reserve
    std::vector<TablePlan> tables_;
    std::vector<EmbeddingTableStats> stats_;
    //! embeddingTableStats by (table, batch, cache share), shared by the copies of a state: a
    //! search copies the state for every option it tries, and the packing and the cache trading
    //! set the same tables to the same cache shares again and again.
    std::shared_ptr<std::map<std::tuple<int, double, double>, EmbeddingTableStats>> stats_memo_;
    std::vector<PlanShard> shards_;
    std::vector<double> fwd_, bwd_, hbm_, memory_, pooled_, ids_;
    double total_pooled_ = 0.0, total_ids_ = 0.0, dp_gradient_bytes_ = 0.0;
    // Three largest per-GPU values, by GPU index.
    int top_fwd_[3], top_bwd_[3], top_pooled_[3], top_ids_[3], top_memory_[3];
    double spread_ = 0.0;
    // Per-GPU all-to-all volumes of a candidate (scratch for allToAllvTimeNs).
    mutable std::vector<double> send_pooled_, recv_pooled_, send_ids_, recv_ids_;
};

} // namespace shardsweep
