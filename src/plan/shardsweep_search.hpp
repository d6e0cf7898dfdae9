#pragma once
//! \file shardsweep_search.hpp
//! \brief The steps of shardsweep's own embedding planner (docs/PLANNERS.md), shared by its three
//! sources: the greedy placement and the shard moves (src/plan/shardsweep_greedy.cpp), the local
//! and iterated search (src/plan/shardsweep_search.cpp), and planShardsweep, which seeds and
//! checks them (src/plan/shardsweep_planner.cpp). Not part of the public API.
#include "plan_state.hpp"

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

namespace shardsweep
{
namespace planner_detail
{

//! Relative change below which two objectives count as equal (summation-order noise).
constexpr double kTie = 1e-12;

//! The change on `gpu` when shard `add` arrives there and `remove` (if any) leaves.
GpuDelta deltaOf( int gpu, const PlanShard& add, const PlanShard* remove );
//! The change on a shard's GPU when it leaves.
GpuDelta removal( const PlanShard& s );
//! True for the kernels that keep a table's rows in host memory (UVM, with or without a cache).
inline bool inHostMemory( ComputeKernel kernel )
{
    return kernel == ComputeKernel::uvm || kernel == ComputeKernel::uvm_caching;
}
//! Shards the search may re-shard: table-wise and column blocks in HBM.
bool reshardable( const PlanState& st, const PlanShard& s );
//! Shards the search may move: the reshardable ones, and whole tables kept in host memory (UVM,
//! with or without an HBM cache), which the packing's per-node host budget (placeInHostMemory)
//! keeps on their node (mayGoTo).
bool movable( const PlanState& st, const PlanShard& s );
//! True if movable shard s may go to `gpu`: any GPU for HBM shards; a UVM table's host memory is
//! its node's, so it moves only within its node, which keeps every node's host bytes as they are.
bool mayGoTo( const PlanState& st, const PlanShard& s, int gpu );
//! Removes every shard of table t and sets its sharding to `type` (its kernel and cache kept);
//! the caller adds the table's new shards.
void resetSharding( PlanState& st, int t, ShardingType type );
//! Row blocks of table t over `count` consecutive GPUs from `first`, `blocks_per_gpu` on each
//! (block k on GPU first + k % count), priced; false if the table has fewer rows than blocks or
//! (check_capacity) a GPU's memory would overflow.
bool reshardRows( PlanState& st, const Workload& w, int t, ShardingType type, int first, int count,
                  bool check_capacity = true, int blocks_per_gpu = 1 );
//! Table t in `col_blocks` column blocks, each in `row_blocks` row blocks, priced; block k (column
//! block by column block) on gpus[k % gpus.size()]. False if the table has fewer rows than row
//! blocks or its columns do not split evenly.
bool reshardBlocksOn( PlanState& st, const Workload& w, int t, ShardingType type, int col_blocks,
                      int row_blocks, const std::vector<int>& gpus );
//! The same with row blocks of `block_rows` rows each, the last one the rest.
bool reshardBlockRowsOn( PlanState& st, const Workload& w, int t, ShardingType type, int col_blocks,
                         std::int64_t block_rows, const std::vector<int>& gpus );

//! Step 1: longest processing time first on the predicted per-table cost; "" or why a table fits
//! nowhere.
std::string greedyPlacement( PlanState& st, const Workload& w, const Platform& platform );
//! Step 1b, for tasks whose tables barely fit in HBM: the least costly bytes in host memory, the
//! rest first-fit decreasing by bytes; "" or why a table fits nowhere.
std::string packedPlacement( PlanState& st, const Workload& w, const Platform& platform );

//! Shares each GPU's room among the HBM caches of the tables of `tables` it holds (whole, in host
//! memory): from plain UVM, the cache step that saves most lookup time per byte, among those
//! that fit, until none fits.
void shareCaches( PlanState& st, const Workload& w, const std::vector<int>& tables );
//! Options for the host-memory table of shard s: the table on each other GPU of its node
//! (mayGoTo), where it and the host-memory tables there share the room for HBM caches anew,
//! and the caches of the host-memory tables left on its GPU grow into the room it leaves. The
//! packing fills every GPU's memory with caches, so a plain move never fits there; this trades
//! cache between GPUs to balance their lookups.
std::vector<PlanState> hostTableMoves( const PlanState& st, const Workload& w, int s );
//! Re-sharding options for shard s: its two column halves (the second on the GPU where it costs
//! least), and for a whole table its rows over all GPUs, over its node, or over 2 or 3 GPUs of
//! its node, or its column halves in 2 or 3 row blocks, the last two where their blocks look up
//! less in total (shardsweep_reshard.cpp).
std::vector<PlanState> reshardings( const PlanState& st, const Workload& w,
                                    const Platform& platform, int s );

//! Budget of one search: iterations and candidate evaluations (both deterministic: a task and
//! seed give one plan on any machine) and wall time (a safety net, machine-dependent).
//! Evaluations (objectiveWith calls: one per move or swap priced) track the search's work, which
//! an iteration (one round of moves over every shard of the critical GPUs) does not: a round's
//! cost grows with the task's tables and GPUs.
struct Budget
{
    int iterations_left;
    double deadline_s;
    const std::function<double()>* elapsed;
    std::int64_t evaluations_left = std::numeric_limits<std::int64_t>::max();
    //! Set when spent() found the clock past the deadline with counts left: the search stopped
    //! on the clock, so its result depends on the machine (PlanResult::stopped_on_clock).
    mutable bool stopped_on_clock = false;
    bool spent() const
    {
        if ( iterations_left <= 0 || evaluations_left <= 0 )
            return true;
        stopped_on_clock = stopped_on_clock || ( *elapsed )() >= deadline_s;
        return stopped_on_clock;
    }
    //! Charges the work a sub-search used: `part` was granted `granted`'s counts. A sub-search
    //! the clock stopped (its own deadline may be earlier) makes this search's result
    //! machine-dependent too.
    void charge( const Budget& granted, const Budget& part )
    {
        iterations_left -= granted.iterations_left - part.iterations_left;
        evaluations_left -= granted.evaluations_left - part.evaluations_left;
        stopped_on_clock = stopped_on_clock || part.stopped_on_clock;
    }
};

//! Lookup time (forward and backward, all its shards) and number of shards of every table.
struct TableLoad
{
    double ms = 0.0;
    int shards = 0;
};
std::vector<TableLoad> tableLoads( const PlanState& st, std::size_t tables );
//! Table t data-parallel (in HBM): every GPU holds all of it and looks it up for its own
//! samples, which sends no pooled values or ids but costs P lookups at the local batch and adds
//! the table's gradient to the all-reduce.
PlanState replicated( const PlanState& st, const Workload& w, int t );
//! Moves the overflow of over-full GPUs away; false if some GPU cannot be brought under capacity.
bool repairMemory( PlanState& st, Budget& budget );
//! Step 3: moves, swaps and re-sharding until none helps; with `try_replicas`, then also tables
//! made data-parallel (the first search only: the restarts keep what it replicated). Table
//! `keep_whole` (if not -1) is not re-sharded: an iterated-search kick just made it whole.
void localSearch( PlanState& st, const Workload& w, const Platform& platform, Budget& budget,
                  bool try_replicas, int keep_whole = -1 );
//! Step 4: random and structural kicks (tables made data-parallel or whole again), each searched
//! again, while budget is left; the seed decides the random kicks.
void iteratedSearch( PlanState& best, const Workload& w, const Platform& platform, Budget& budget,
                     std::uint64_t seed );
//! True if every GPU's memory fits under the full model (PlanState::fits).
bool allFit( const PlanState& st );

} // namespace planner_detail
} // namespace shardsweep
