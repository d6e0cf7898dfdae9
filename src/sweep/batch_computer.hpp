#pragma once
// The sweep engine's per-batch work (not installed): scenario ids in, journal rows out.
#include <cstdint>
#include <shardsweep/sweep/journal.hpp>
#include <shardsweep/sweep/sweep_engine.hpp>
#include <string>
#include <vector>

namespace shardsweep
{
namespace detail
{

//! Turns a batch of scenario ids into journal rows, one tile of the batch at a time: materialise,
//! bound and plan each scenario of the tile on the host threads, evaluate every planned one in
//! one kernel call, fill the rows. Tiles keep a tile's workloads, plans and packed data in cache
//! from materialising to filling (SweepOptions::evaluate_tile). Keeps its buffers across batches.
class BatchComputer
{
  public:
    //! `tile`: scenarios per evaluate call (0: the kernel's preferredScenariosPerCall()).
    BatchComputer( const SweepProblem& problem, const SweepPlanFunction& plan_fn,
                   const SweepEvaluateFunction& evaluate_fn, SweepDetail detail, std::uint64_t tile,
                   int rank );

    //! Fills `batch` with the rows of `ids` (in their order); adds phase times to `times`.
    void compute( const std::vector<std::uint64_t>& ids, JournalBatch& batch, SweepTimes& times );

    std::int64_t noPlan() const { return _no_plan; } //!< of the last batch
    std::int64_t failed() const { return _failed; }  //!< of the last batch (errors)

  private:
    //! Scenarios [first, end) of the batch: their rows' inputs, bounds and plans.
    void materialiseAndPlan( const std::vector<std::uint64_t>& ids, std::size_t first,
                             std::size_t end, JournalBatch& batch, SweepTimes& times );
    //! One scenario of the tile (slot i): runs on any host thread, touches only slot i and `row`.
    void materialiseAndPlanOne( std::uint64_t id, std::size_t i, ScenarioRow& row );
    //! Evaluates the tile starting at row `first` and fills its rows; appends its GPU and shard
    //! rows (tiles come in id order, so the batch's rows stay in id order).
    void evaluateAndFill( std::size_t first, JournalBatch& batch );

    const SweepProblem& _problem;
    const SweepPlanFunction& _plan_fn;
    const SweepEvaluateFunction& _evaluate_fn;
    SweepDetail _detail;
    std::uint64_t _tile; //!< scenarios per evaluate call (0: the whole batch)
    int _rank;
    int _errors_logged = 0;
    std::int64_t _failed = 0, _no_plan = 0;
    // Per tile slot.
    std::vector<ScenarioSpec> _specs;
    std::vector<PlanResult> _plans;
    std::vector<ScenarioStatus> _status;
    std::vector<std::string> _errors; //!< what materialising or planning threw
    std::vector<double> _seconds;     //!< materialise and plan thread-seconds
    // Per evaluated scenario of the tile.
    std::vector<ScenarioInput> _inputs;
    std::vector<std::size_t> _input_row;
};

} // namespace detail
} // namespace shardsweep
