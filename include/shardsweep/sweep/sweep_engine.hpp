#pragma once
//! \file sweep_engine.hpp
//! \brief The sweep engine behind `shardsweep run`: scenarios handed out in batches to MPI ranks
//! through a one-sided atomic counter, planned and evaluated, journaled per batch, and laid out
//! in one parallel HDF5 file when every scenario is done (docs/HDF5_LAYOUT.md).
//!
//! The engine does not know where scenarios, plans and costs come from: the caller passes a
//! SweepProblem (usually a ScenarioSpace) and the planning and evaluation functions (makePlan and
//! evaluateScenarios in `shardsweep run`, doubles in tests).

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <mpi.h>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/plan/planner.hpp>
#include <shardsweep/scenario/scenario_space.hpp>
#include <shardsweep/sweep/rows.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! What the engine sweeps over. `materialize` and `lower_bound` are called concurrently from the
//! rank's host threads (a tile's scenarios are prepared in parallel): they must be thread-safe.
struct SweepProblem
{
    std::uint64_t num_scenarios = 0;
    std::function<ScenarioSpec( std::uint64_t )> materialize;
    //! A lower bound on the iteration time of any plan of the scenario's task (stored next to
    //! its iteration time; NaN where it does not apply). Unset: NaN for every scenario.
    std::function<double( const ScenarioSpec& )> lower_bound;
    std::vector<std::string> workload_names;
    std::vector<std::string> platform_names;
    std::vector<std::string> generator_names;
    std::vector<std::string> planner_names;    //!< index = PlannerKind
    std::vector<std::string> cost_model_names; //!< index = CostModel
    std::vector<std::string> protocol_names;   //!< index = TaskProtocol
    //! The table catalogue (/tables, written with the shard rows): row k holds the access
    //! features of every shard row whose table_row is k (ScenarioSpec::tableCatalogRow()).
    std::vector<TableRow> tables;
    std::vector<std::string> table_names; //!< /names/tables, one per row of `tables`
    std::string config_text;              //!< the sweep file, verbatim
    std::string config_file;
    std::uint64_t config_hash = 0;
};

//! Plans one scenario (feasible = false: no plan, the scenario's status becomes no_plan). Called
//! concurrently from the rank's host threads, one scenario per call: it must be thread-safe.
using SweepPlanFunction = std::function<PlanResult( const ScenarioSpec& )>;
//! Evaluates a batch of planned scenarios (evaluateScenarios); called from one thread.
using SweepEvaluateFunction =
    std::function<std::vector<ScenarioResult>( const std::vector<ScenarioInput>& )>;

struct SweepOptions
{
    std::string output;              //!< OUT.h5 (journals go to OUT.h5.journal/)
    std::uint64_t batch_size = 2048; //!< scenarios per batch (and per journal record)
    //! Scenarios materialised, planned and evaluated together within a batch (one evaluate
    //! call each; the batch is still journaled as one record). 0: the kernel's
    //! preferredScenariosPerCall(): 256 (cache-sized tiles) on host backends, 1024 on devices.
    //! Results do not depend on it.
    std::uint64_t evaluate_tile = 0;
    //! Where the evaluate function runs the kernel (`--backend`); it sets the default tile
    //! (preferredScenariosPerCall). Recorded in the file (/meta kokkos_backend).
    Backend backend = defaultBackend();
    double progress_interval_s = 10.0; //!< rank 0 prints one line per interval (<= 0: never)
    bool fresh = false;                //!< delete journals and output first
    bool compress = false;             //!< gzip the finished file (serial rewrite on rank 0)
    std::uint64_t max_scenarios = 0;   //!< 0: the whole space; else ids [0, max)
    //! `run --slice I/N`: only part I (0-based) of N contiguous, equal parts of the ids; the
    //! file keeps every id's row (the others not done), so that the parts' files combine.
    std::uint64_t slice_index = 0;
    std::uint64_t slice_count = 1;
    SweepDetail detail = SweepDetail::all;
    //! Scenario ids laid out per round (one allreduce of row counts); 0: the smallest multiple of
    //! batch_size that is >= 2048 with shard rows (--detail all), >= 16384 without. Two windows of
    //! column buffers are held (one written while the next is read). A journal record is read whole
    //! by every window its ids overlap, so windows aligned with the batches read each record of a
    //! fresh run once; ~2048 ids kept the writer fastest in `bench sweep` (docs/PERFORMANCE.md:
    //! larger windows fault in more fresh memory).
    std::uint64_t finalize_window = 0;
    std::string command_line; //!< stored in the file
    bool quiet = false;       //!< no progress lines or summary
    //! Seconds to wait for the output's lock (held by every rank of a run on it, and by ranks of
    //! an earlier run that go on after their mpirun was killed) before refusing.
    double lock_wait_s = 60.0;
};

//! Per-rank seconds spent in each engine phase.
struct SweepTimes
{
    //! `journal` is the time the engine waits for its journal (the append of a batch runs in
    //! the background while the next one is computed: only what is left of it when the next
    //! batch is ready counts).
    double materialize = 0, plan = 0, evaluate = 0, journal = 0, dispatch = 0, hdf5 = 0;
    //! CPU seconds of the journal's background thread (checksums, writes, fsyncs): off the
    //! critical path, not in busy() nor in the I/O fraction, but spent.
    double journal_thread_cpu = 0;
    double busy() const { return materialize + plan + evaluate + journal; }
};

struct SweepReport
{
    int exit_code = 0;   //!< 0 complete, kExitResumable stopped by a signal
    int stop_signal = 0; //!< the signal this rank stopped for (0: none, or another rank's)
    bool already_complete = false; //!< the file existed, complete, with the same config
    std::uint64_t num_scenarios = 0;
    std::uint64_t done_before = 0;    //!< scenarios found in journals at start
    std::uint64_t computed = 0;       //!< scenarios computed by this run (all ranks)
    std::uint64_t failures = 0;       //!< of those, status error (materialising/planning threw)
    std::uint64_t no_plan = 0;        //!< of those, status no_plan (the planner found none)
    std::uint64_t duplicates = 0;     //!< scenarios found in two journal records (one copy kept)
    std::uint64_t local_computed = 0; //!< by this rank
    double wall_s = 0.0;
    SweepTimes local;           //!< this rank's phase times
    std::vector<double> busy_s; //!< every rank's busy time (on every rank)
    std::vector<double> computed_per_rank;
    double io_s_max = 0.0; //!< max over ranks of journal + hdf5 seconds
};

//! Runs (or resumes) the sweep; collective over `comm`. Throws UsageError when a resume is
//! refused (other config, schema or scenario count, damaged file or journal).
SweepReport runSweepEngine( MPI_Comm comm, const SweepProblem& problem,
                            const SweepPlanFunction& plan, const SweepEvaluateFunction& evaluate,
                            const SweepOptions& options, std::ostream& out );

//! Round-robin table-wise placement (table t on GPU t mod num_gpus, HBM): the sweep's simple
//! placement, and the fallback while no planner is linked.
Plan roundRobinTableWisePlan( const Workload& workload, int num_gpus );

//! Scenario ids [first, end) of part `index` of `count` equal contiguous parts of [0, n).
struct SliceRange
{
    std::uint64_t first = 0, end = 0;
};
SliceRange sliceRange( std::uint64_t n, std::uint64_t index, std::uint64_t count );

//! Parses "I/N" (0 <= I < N); throws UsageError naming `option` otherwise.
void parseSlice( const std::string& text, const std::string& option, std::uint64_t& index,
                 std::uint64_t& count );

//! The journal directory of an output file.
std::string journalDirectory( const std::string& output );

} // namespace shardsweep
