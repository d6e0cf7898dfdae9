// `shardsweep bench planners`: plan quality and speed of every planner over the papers' task
// protocols (tables from the synthetic pool), and planning time for 856 tables on 128 GPUs.
#include "command_line.hpp"

#include <algorithm>
#include <boost/program_options.hpp>
#include <cmath>
#include <fmt/format.h>
#include <iostream>
#include <limits>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/locality_stats.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/plan/planner.hpp>
#include <shardsweep/scenario/scenario_space.hpp>
#include <shardsweep/scenario/table_pool.hpp>
#include <shardsweep/scenario/task_generator.hpp>

namespace shardsweep
{
namespace
{
namespace po = boost::program_options;

constexpr PlannerKind kBaselines[] = {
    PlannerKind::random,      PlannerKind::round_robin,   PlannerKind::dim_greedy,
    PlannerKind::size_greedy, PlannerKind::lookup_greedy, PlannerKind::size_lookup_greedy };

struct PlannerStats
{
    int tasks = 0;       //!< tasks where the planner's plan fits (the kernel's full memory model)
    int clock_stops = 0; //!< tasks where the search stopped on --budget-s (machine-dependent)
    double sum_improvement = 0.0, worst_improvement = std::numeric_limits<double>::infinity();
    int best = 0;
    int misses = 0; //!< tasks where its plan does not fit but another planner's does
    double sum_gap = 0.0, sum_seconds = 0.0;
};

//! The options of `bench planners`.
struct BenchOptions
{
    int tasks = 100;
    int large_tasks = 1;
    std::string format = "table", platform_file, locality_file;
    double budget = 60.0;
    long long evaluations = 5000000;
    std::string protocol = "dlrm";
    std::vector<int> gpu_counts = { 64, 256, 1024, 4096 };
    int detail_task = -1; //!< --detail-task: the task whose plan and bound are shown term by term
};

//! Reads the options into `o`; false after --help (the command then returns 0).
bool parseOptions( const CommandContext& ctx, const Arguments& args, BenchOptions& o )
{
    po::options_description options( "Options of 'shardsweep bench planners'" );
    options.add_options()( "help,h", "show this help" )(
        "protocol", po::value( &o.protocol )->default_value( o.protocol ),
        "dlrm (the embedding-sharding protocols below) | transformer (GPT-3 125M..175B x "
        "--gpu-counts x the DGX-A100-HDR800 and H100-16node-IB400 clusters: megatron, exhaustive "
        "and shardsweep; a last row set times GPT-3 175B on 4096 A100s alone)" )(
        "gpu-counts", po::value( &o.gpu_counts )->multitoken(),
        "transformer protocol: GPU counts (default 64 256 1024 4096)" )(
        "tasks", po::value( &o.tasks )->default_value( o.tasks ), "tasks per protocol" )(
        "large-tasks", po::value( &o.large_tasks )->default_value( o.large_tasks ),
        "tasks of the large-856x128 protocol (0: skip it)" )(
        "max-evaluations", po::value( &o.evaluations )->default_value( o.evaluations ),
        "the shardsweep planner's search per task stops after N candidate moves and swaps "
        "priced: the same plans, so the same gaps, on any machine (5e6: about 0.5-0.8 s per "
        "task on 4-8 GPUs, 4.4 s on the large task, on the machine of docs/PERFORMANCE.md)" )(
        "budget-s", po::value( &o.budget )->default_value( o.budget ),
        "time limit of the shardsweep planner's search per task, a safety net: a task it "
        "stops is counted on standard error, since its plan depends on the machine" )(
        "platform", po::value( &o.platform_file ),
        "platform whose GPU and network the tasks run on (default "
        "inputs/platforms/dgx-a100-4node-ib.yaml, "
        "resized to each protocol's GPU count, with the protocol's memory cap)" )(
        "locality", po::value( &o.locality_file ),
        "dlrm_datasets locality file the synthetic pool is fitted to (default "
        "inputs/locality/dlrm_datasets_2021_locality_stats.txt, block 0)" )(
        "detail-task", po::value( &o.detail_task ),
        "also show task N of each DLRM protocol term by term: shardsweep's plan (its critical-"
        "path phases and pooled columns sent per sample) next to the bound's terms" )(
        "format,f", po::value( &o.format )->default_value( o.format ),
        enumChoices<OutputFormat>().c_str() );
    po::variables_map vm;
    const CommandHelp help{
        "Usage: shardsweep bench planners [options]\n\n"
        "For each protocol (NeuroShard: 4 GPUs, 10-59 tables, 4 GB; DreamShard: 4 GPUs,\n"
        "50 tables of dim 16, 5 GB; AutoShard: 8 GPUs, 80 tables; docs/PLANNERS.md)\n"
        "and each planner: the tasks where its plan fits in memory (the cost kernel's\n"
        "full model: tables, activations, buffers, dense replica, reserve) and the share\n"
        "where it has no plan that fits; over the tasks where it fits, the mean and worst\n"
        "improvement of the predicted iteration time over the best of the six paper\n"
        "baselines that fit on the same task, the share of tasks where the planner is\n"
        "best of all, the mean gap to the lower bound, and the mean planning time.\n"
        "Times are the native model's. 'large-856x128' plans 856 tables on 16 nodes x\n"
        "8 GPUs.\n\n"
        "--protocol transformer: per transformer planner the tasks (GPT-3 size x GPU\n"
        "count x cluster where some configuration fits), the share where it returns\n"
        "exhaustive's optimum, its mean improvement of the iteration time over\n"
        "megatron's rule, and its mean and worst planning time; the same for the\n"
        "mixtures of experts (row moe: Mixtral 8x7B and DeepSeek-V3 x GPU count on the\n"
        "H100 cluster; row deepseek-v3-2048-h800: DeepSeek-V3 on its own cluster).\n\n",
        "\n" };
    return parseCommandLine( ctx, "bench planners", args, options, vm, help );
}

//! Every planner's plan of one task, and which planners ran on it.
struct TaskPlans
{
    PlanResult results[kNumPlanners];
    bool ran[kNumPlanners] = {};
};

//! Runs the DLRM planners on `task` (on the large task only a few); a plan stays feasible only
//! if the cost kernel's full memory model accepts it.
TaskPlans planTask( const GeneratedTask& task, const Platform& platform, std::int64_t batch,
                    const PlannerOptions& o, bool large )
{
    TaskPlans plans;
    PlanResult* results = plans.results;
    for ( int k = 0; k < kNumPlanners; ++k )
    {
        if ( !plannerPlans( static_cast<PlannerKind>( k ), WorkloadKind::dlrm ) )
            continue;
        // On the large task only the two planners whose speed is the question run.
        if ( large && k != static_cast<int>( PlannerKind::torchrec ) &&
             k != static_cast<int>( PlannerKind::shardsweep ) &&
             k != static_cast<int>( PlannerKind::size_lookup_greedy ) )
            continue;
        results[k] = makePlan( static_cast<PlannerKind>( k ), task.workload, platform, batch, o );
        plans.ran[k] = true;
        // Feasibility first: a plan counts only if it fits under the kernel's full
        // memory model (tables, activations, buffers, dense replica, reserve), not just
        // under the planner's own table-size rule.
        if ( results[k].feasible )
            results[k].feasible = evaluateScenario( { &task.workload, &platform, &results[k].plan,
                                                      batch, CostModel::native } )
                                      .feasible;
    }
    return plans;
}

//! Adds one task's plans to `stats` (indexed by PlannerKind): misses, the improvement over the
//! best feasible baseline, best of all, the gap to the lower bound `bound` and planning time.
void addTaskStats( const TaskPlans& plans, double bound, PlannerStats* stats )
{
    const PlanResult* results = plans.results;
    double best_baseline = std::numeric_limits<double>::infinity();
    double best_any = std::numeric_limits<double>::infinity();
    for ( PlannerKind b : kBaselines )
        if ( results[static_cast<int>( b )].feasible )
            best_baseline = std::min( best_baseline, results[static_cast<int>( b )].predicted_ms );
    for ( const PlanResult& r : plans.results )
        if ( r.feasible )
            best_any = std::min( best_any, r.predicted_ms );
    for ( int k = 0; k < kNumPlanners; ++k )
        if ( plans.ran[k] && !results[k].feasible && std::isfinite( best_any ) )
            ++stats[k].misses;
    for ( int k = 0; k < kNumPlanners; ++k )
    {
        const PlanResult& r = results[k];
        if ( !r.feasible )
            continue;
        PlannerStats& s = stats[k];
        ++s.tasks;
        if ( std::isfinite( best_baseline ) )
        {
            const double improvement = 100.0 * ( best_baseline - r.predicted_ms ) / best_baseline;
            s.sum_improvement += improvement;
            s.worst_improvement = std::min( s.worst_improvement, improvement );
        }
        s.best += r.predicted_ms <= best_any * ( 1.0 + 1e-12 ) ? 1 : 0;
        s.sum_gap += 100.0 * ( r.predicted_ms - bound ) / bound;
        s.sum_seconds += r.plan_seconds;
        s.clock_stops += r.stopped_on_clock ? 1 : 0;
    }
}

//! The columns of --detail-task: shardsweep's plan of one task and the bound, term by term.
ResultTable detailTable()
{
    return ResultTable( { "protocol", "task", "bound_ms", "plan_ms", "gap_pct", "input_dist_ms",
                          "embedding_ms", "embedding_comm_ms", "dense_ms",
                          "pooled_columns_per_sample", "bound_pooled_columns_per_sample",
                          "row_split_tables" } );
}

//! One --detail-task row. The plan's terms are its critical-path phases, which add up to plan_ms
//! (embedding: the slowest GPU's lookups forward and backward; embedding_comm: both pooled
//! all-to-alls; dense: the MLPs, the interaction and the exposed all-reduce); its pooled
//! columns are what its model-parallel shards send per sample (a row block sends all its
//! columns), against the Σ dim of the tables that the bound's balanced all-to-all carries.
void addDetailRow( ResultTable& t, TaskProtocol protocol, int task, const Workload& w,
                   const Platform& platform, std::int64_t batch, double bound, const PlanResult& r )
{
    if ( !r.feasible )
        return;
    const ScenarioResult e =
        evaluateScenario( { &w, &platform, &r.plan, batch, CostModel::native } );
    const auto phase = [&]( Phase p ) { return e.phase_ms[static_cast<int>( p )]; };
    long long columns = 0, bound_columns = 0, row_split = 0;
    for ( const TableSpec& spec : w.tables )
        bound_columns += spec.dim;
    for ( std::size_t k = 0; k < r.plan.tables.size(); ++k )
    {
        const ShardingType type = r.plan.tables[k].sharding;
        row_split += type == ShardingType::row_wise || type == ShardingType::table_row_wise ||
                     type == ShardingType::grid_shard;
        if ( type != ShardingType::data_parallel )
            for ( const ShardSpec& sh : r.plan.shards )
                columns += sh.table == static_cast<int>( k ) ? sh.num_cols : 0;
    }
    t.addRow( { std::string( nameOf( protocol ) ), static_cast<long long>( task ), bound,
                e.iteration_ms, 100.0 * ( e.iteration_ms - bound ) / bound,
                phase( Phase::input_dist ),
                phase( Phase::embedding_fwd ) + phase( Phase::embedding_bwd ),
                phase( Phase::embedding_comm_fwd ) + phase( Phase::embedding_comm_bwd ),
                phase( Phase::bottom_mlp_fwd ) + phase( Phase::top_fwd ) + phase( Phase::top_bwd ) +
                    phase( Phase::bottom_mlp_bwd ) + phase( Phase::dense_allreduce ),
                columns, bound_columns, row_split } );
}

//! Plans `count` tasks of `protocol` with every planner on `base` (resized to each task, with
//! its memory cap), accumulating `stats` (indexed by PlannerKind).
void runProtocol( TaskProtocol protocol, int count, const TablePool& pool, const Platform& base,
                  const PlannerOptions& search, PlannerStats* stats, int detail_task,
                  ResultTable* detail )
{
    const std::vector<int> split = dreamshardSplit( static_cast<int>( pool.size() ), 1 );
    for ( int i = 0; i < count; ++i )
    {
        const GeneratedTask task =
            generateTask( protocol, pool, 1, i, TaskOptions{}, DenseModel{}, &split );
        Platform platform = resizePlatform( base, task.num_gpus, task.gpus_per_node );
        if ( task.memory_cap_GiB > 0 )
            platform = applyMemoryCap( platform, task.memory_cap_GiB );
        const std::int64_t batch = task.workload.global_batch;
        const double bound = iterationLowerBoundMs( task.workload, platform, batch );
        PlannerOptions o = search;
        o.seed = i;
        const bool large = protocol == TaskProtocol::large_856x128;
        const TaskPlans plans = planTask( task, platform, batch, o, large );
        addTaskStats( plans, bound, stats );
        if ( i == detail_task && detail )
            addDetailRow( *detail, protocol, i, task.workload, platform, batch, bound,
                          plans.results[static_cast<int>( PlannerKind::shardsweep )] );
    }
}

//! One table row per planner that had a feasible plan on some task of `protocol`.
void addProtocolRows( ResultTable& table, TaskProtocol protocol, int count,
                      const PlannerStats* stats )
{
    for ( int k = 0; k < kNumPlanners; ++k )
    {
        const PlannerStats& s = stats[k];
        if ( s.tasks == 0 )
            continue;
        const bool has_baseline = std::isfinite( s.worst_improvement );
        table.addRow( { std::string( nameOf( protocol ) ),
                        std::string( plannerName( static_cast<PlannerKind>( k ) ) ),
                        static_cast<long long>( s.tasks ), 100.0 * ( count - s.tasks ) / count,
                        static_cast<long long>( s.misses ),
                        has_baseline ? s.sum_improvement / s.tasks : NAN,
                        has_baseline ? s.worst_improvement : NAN, 100.0 * s.best / count,
                        s.sum_gap / s.tasks, s.sum_seconds / s.tasks } );
    }
}
} // namespace

int benchPlanners( const CommandContext& ctx, const Arguments& args )
{
    BenchOptions o;
    if ( !parseOptions( ctx, args, o ) )
        return 0;
    if ( o.protocol == "transformer" )
    {
        if ( o.gpu_counts.empty() ||
             *std::min_element( o.gpu_counts.begin(), o.gpu_counts.end() ) < 1 )
            throw UsageError( "--gpu-counts: expected GPU counts >= 1" );
        return benchTransformerPlanners( ctx, o.format, o.gpu_counts );
    }
    if ( o.protocol != "dlrm" )
        throw UsageError(
            fmt::format( "--protocol: expected dlrm or transformer, found '{}'", o.protocol ) );
    const OutputFormat out_format = parseOutputFormat( o.format );
    if ( o.tasks < 1 || o.large_tasks < 0 || o.budget <= 0 || o.evaluations < 1 )
        throw UsageError(
            "--tasks must be >= 1, --large-tasks >= 0, --budget-s > 0, --max-evaluations >= 1" );
    if ( o.detail_task < -1 || o.detail_task >= o.tasks )
        throw UsageError( fmt::format( "--detail-task: expected a task from 0 to {} (--tasks {}), "
                                       "found {}",
                                       o.tasks - 1, o.tasks, o.detail_task ) );
    const std::string source = SHARDSWEEP_SOURCE_DIR;
    if ( o.platform_file.empty() )
        o.platform_file = source + "/inputs/platforms/dgx-a100-4node-ib.yaml";
    if ( o.locality_file.empty() )
        o.locality_file = source + "/inputs/locality/dlrm_datasets_2021_locality_stats.txt";
    const NamedPlatform base = readPlatformFile( o.platform_file );
    const TablePool pool =
        syntheticTablePool( readLocalityStats( o.locality_file ).at( 0 ), SyntheticPoolOptions{} );

    ResultTable table( { "protocol", "planner", "tasks", "no_feasible_plan_pct",
                         "no_fit_while_another_fits", "mean_improvement_vs_best_baseline_pct",
                         "worst_improvement_vs_best_baseline_pct", "share_best_pct",
                         "mean_gap_to_bound_pct", "mean_plan_seconds" } );
    ResultTable detail = detailTable();
    const std::pair<TaskProtocol, int> protocols[] = {
        { TaskProtocol::neuroshard, o.tasks },
        { TaskProtocol::dreamshard, o.tasks },
        { TaskProtocol::autoshard, o.tasks },
        { TaskProtocol::large_856x128, o.large_tasks } };
    PlannerOptions search;
    search.time_budget_s = o.budget;
    search.max_evaluations = o.evaluations;
    for ( const auto& [protocol, count] : protocols )
    {
        if ( count == 0 )
            continue;
        PlannerStats stats[kNumPlanners];
        runProtocol( protocol, count, pool, base.platform, search, stats, o.detail_task, &detail );
        addProtocolRows( table, protocol, count, stats );
        const int stops = stats[static_cast<int>( PlannerKind::shardsweep )].clock_stops;
        if ( stops > 0 )
            std::cerr << fmt::format( "note: {}: the --budget-s {} s clock stopped shardsweep's "
                                      "search on {} of {} tasks before --max-evaluations {}: "
                                      "their plans depend on this machine's speed and load\n",
                                      nameOf( protocol ), o.budget, stops, count, o.evaluations );
    }
    table.print( ctx.print(), out_format );
    if ( o.detail_task >= 0 )
    {
        ctx.print() << "\n";
        detail.print( ctx.print(), out_format );
    }
    return 0;
}

} // namespace shardsweep
