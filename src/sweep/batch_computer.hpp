#pragma once
// The sweep engine's per-batch work (not installed): scenario ids in, journal rows out.
#include "cost_weighted_eta.hpp"

#include <cstdint>
#include <shardsweep/sweep/journal.hpp>
#include <shardsweep/sweep/sweep_engine.hpp>
#include <string>
#include <utility>
#include <vector>

namespace shardsweep
{
namespace detail
{

//! Turns a batch of scenario ids into journal rows, one tile of the batch at a time: materialise,
//! bound and plan the tile's scenarios, evaluate the planned ones in one kernel call, fill the
//! rows. A tile's workloads, plans and packed data stay in cache from materialising to filling
//! (SweepOptions::evaluate_tile). The tiles of a batch run concurrently, one per host thread
//! (each tile's work then runs in its thread; on a device backend the threads take turns on the
//! device); otherwise (one tile or one thread) tiles run one after the other on the calling
//! thread, and a tile's scenarios are materialised and planned on the host threads. Either way
//! the rows depend on nothing but the ids. Keeps its buffers across batches.
class BatchComputer
{
  public:
    //! `tile`: scenarios per evaluate call (0: the kernel's preferredScenariosPerCall()) on
    //! `backend`, the one `evaluate_fn` runs the kernel in.
    BatchComputer( const SweepProblem& problem, const SweepPlanFunction& plan_fn,
                   const SweepEvaluateFunction& evaluate_fn, SweepDetail detail, std::uint64_t tile,
                   Backend backend, int rank );

    //! Fills `batch` with the rows of `ids` (in their order); adds phase times to `times`.
    void compute( const std::vector<std::uint64_t>& ids, JournalBatch& batch, SweepTimes& times );

    std::int64_t noPlan() const { return _no_plan; } //!< of the last batch
    std::int64_t failed() const { return _failed; }  //!< of the last batch (errors)
    //! The last batch's scenarios and thread-seconds per cost class (for the ETA).
    const ClassWork& work() const { return _work; }

  private:
    //! What one thread needs to prepare and evaluate a tile, kept across tiles and batches (one
    //! per host thread: a tile's specs, plans and packed data then stay in that core's cache).
    struct Workspace
    {
        // Per slot (scenario of the tile).
        std::vector<ScenarioSpec> specs;
        std::vector<PlanResult> plans;
        std::vector<ScenarioStatus> status;
        std::vector<std::string> errors; //!< what materialising or planning threw
        std::vector<double> seconds;     //!< materialise and plan thread-seconds
        // Per evaluated scenario.
        std::vector<ScenarioInput> inputs;
        std::vector<std::size_t> input_row;
    };
    //! What a tile produced besides its scenario rows (written in place in the batch).
    struct TileOutput
    {
        std::size_t first = 0, end = 0; //!< rows [first, end) of the batch
        //! GPU and shard rows of a tile run on another thread (appended to the batch in order).
        std::vector<GpuRow> gpus;
        std::vector<ShardRow> shards;
        double materialize_s = 0, plan_s = 0, evaluate_s = 0;
        std::int64_t no_plan = 0, failed = 0;
        std::vector<std::pair<std::uint64_t, std::string>> errors; //!< (id, message)
        ClassWork work; //!< the tile's scenarios and thread-seconds per cost class
    };

    //! The whole work of one tile in `work`; its GPU and shard rows go to `gpus` and `shards`.
    void computeTile( Workspace& work, TileOutput& out, const std::vector<std::uint64_t>& ids,
                      JournalBatch& batch, std::vector<GpuRow>& gpus,
                      std::vector<ShardRow>& shards );
    //! Materialises, bounds and plans the tile's scenarios (on the host threads, unless called
    //! from inside a parallel region, where it runs in the calling thread).
    void materialiseAndPlan( Workspace& work, const TileOutput& out,
                             const std::vector<std::uint64_t>& ids, JournalBatch& batch );
    //! One scenario (slot i): runs on any host thread, touches only slot i and `row`.
    void materialiseAndPlanOne( Workspace& work, std::uint64_t id, std::size_t i,
                                ScenarioRow& row );
    //! Evaluates the tile's planned scenarios in one call and fills the tile's rows.
    void evaluateAndFill( Workspace& work, TileOutput& out, JournalBatch& batch,
                          std::vector<GpuRow>& gpus, std::vector<ShardRow>& shards );

    const SweepProblem& _problem;
    const SweepPlanFunction& _plan_fn;
    const SweepEvaluateFunction& _evaluate_fn;
    SweepDetail _detail;
    std::uint64_t _tile; //!< scenarios per evaluate call (0: the whole batch)
    int _rank;
    int _errors_logged = 0;
    std::int64_t _failed = 0, _no_plan = 0;
    ClassWork _work;
    std::vector<Workspace> _workspaces;
    std::vector<TileOutput> _tiles;
};

} // namespace detail
} // namespace shardsweep
