// `shardsweep plan` for a transformer workload: the best Megatron-LM configuration on N GPUs with
// its phases and per-stage memory, the next best (--top K), every transformer planner on the same
// task, and a plan file `evaluate` reads back (docs/model/transformer_planner.md).
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <iostream>
#include <ostream>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/io/plan_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/model/transformer/memory.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <shardsweep/model/transformer/throughput.hpp>
#include <shardsweep/model/transformer/validated_range.hpp>
#include <shardsweep/plan/transformer_planner.hpp>
#include <shardsweep/scenario/scenario_space.hpp>
#include <sstream>
#include <stdexcept>

namespace shardsweep
{
namespace
{

//! A checked transformer planning request: the chosen planner, the batch and the platform.
struct TransformerPlanTask
{
    PlannerKind chosen;
    std::int64_t batch;
    Platform platform;    //!< resized to --gpus when given
    std::string gpu_name; //!< the platform's GPU (catalog name), for the validated range
};

//! A candidate's throughput (model/transformer/throughput.hpp) on the task's platform.
TransformerThroughput candidateThroughput( const TransformerCandidate& c, const Platform& p,
                                           const TransformerSpec& model )
{
    return transformerThroughput( c.summary, p.gpu, p.numGpus(), model.dtype,
                                  double( c.config.global_batch ) * model.seq_len );
}

//! One candidate's row of the comparison (csv/json) and top-K tables.
std::vector<ResultTable::Cell> candidateRow( const std::string& planner, long long rank,
                                             const TransformerPlanResult& r,
                                             const TransformerCandidate* c, double best_ms,
                                             const TransformerPlanTask& task,
                                             const TransformerSpec& model )
{
    if ( !c )
        return { planner,
                 rank,
                 0LL,
                 NAN,
                 NAN,
                 NAN,
                 NAN,
                 0LL,
                 0LL,
                 0LL,
                 0LL,
                 std::string(),
                 0LL,
                 0LL,
                 std::string(),
                 0LL,
                 0LL,
                 0LL,
                 NAN,
                 static_cast<long long>( r.stats.priced ),
                 static_cast<long long>( r.stats.space ),
                 r.plan_seconds,
                 std::string(),
                 r.reason };
    const ParallelConfig& k = c->config;
    const TransformerThroughput throughput = candidateThroughput( *c, task.platform, model );
    return { planner,
             rank,
             1LL,
             c->summary.iteration_ms,
             best_ms > 0 ? c->summary.iteration_ms / best_ms : NAN,
             throughput.mfu_pct,
             throughput.tokens_per_s,
             static_cast<long long>( k.tp ),
             static_cast<long long>( k.pp ),
             static_cast<long long>( k.dp ),
             static_cast<long long>( k.micro_batch ),
             std::string( nameOf( k.recompute ) ),
             static_cast<long long>( k.zero ),
             static_cast<long long>( k.sequence_parallel ),
             std::string( nameOf( k.schedule ) ),
             static_cast<long long>( k.virtual_stages ),
             static_cast<long long>( k.ep ),
             static_cast<long long>( model.moe() ? k.expertTp() : 1 ),
             c->summary.peak_memory_GiB,
             static_cast<long long>( r.stats.priced ),
             static_cast<long long>( r.stats.space ),
             r.plan_seconds,
             joinValidationNotes( transformerValidationNotes( task.gpu_name, task.platform, model,
                                                              k, throughput.mfu_pct ) ),
             std::string() };
}

//! The plan file, with its `source:` so that evaluate and export-et read it as their scenario.
void writePlanFile( const std::string& path, const ParallelConfig& config,
                    const std::string& workload_name, const PlanSource& source )
{
    std::ofstream out( path );
    writeTransformerPlanYaml( out, config, workload_name );
    out << planSourceYaml( source, path );
    if ( !out )
        throw UsageError( fmt::format( "cannot write '{}'", path ) );
}

//! Checks the request (planner, --top, batch, --gpus) and resolves its batch and platform.
TransformerPlanTask checkedPlanTask( const Workload& workload, const NamedPlatform& named,
                                     const TransformerPlanRequest& request )
{
    const PlannerKind chosen = parsePlannerName( request.planner );
    if ( !plannerPlans( chosen, WorkloadKind::transformer ) )
        throw UsageError( fmt::format( "--planner {}: plans DLRM workloads; '{}' is a transformer "
                                       "(planners: megatron, exhaustive, shardsweep)",
                                       request.planner, workload.name ) );
    if ( request.top < 1 )
        throw UsageError( fmt::format( "--top: expected >= 1, found {}", request.top ) );
    const std::int64_t batch =
        request.global_batch > 0 ? request.global_batch : workload.global_batch;
    if ( batch <= 0 )
        throw UsageError( fmt::format( "--global-batch: expected > 0, found {}", batch ) );
    Platform platform = named.platform;
    if ( request.gpus > 0 )
    {
        try
        {
            platform = resizePlatform( named.platform, request.gpus );
        }
        catch ( const std::invalid_argument& e )
        {
            throw UsageError( fmt::format( "--gpus {}: {}", request.gpus, e.what() ) );
        }
    }
    return { chosen, batch, platform, named.gpu_name };
}

using PlannerResults = std::vector<std::pair<PlannerKind, TransformerPlanResult>>;

//! Every transformer planner on the same task; the chosen one returns its top K.
PlannerResults runTransformerPlanners( const TransformerPlanTask& task,
                                       const TransformerSpec& model,
                                       const TransformerPlanRequest& request )
{
    PlannerResults results;
    for ( int k = 0; k < kNumPlanners; ++k )
    {
        const PlannerKind kind = static_cast<PlannerKind>( k );
        if ( !plannerPlans( kind, WorkloadKind::transformer ) )
            continue;
        TransformerPlanOptions o;
        o.top_k = kind == task.chosen ? request.top : 1;
        o.overlap = request.overlap;
        o.interleave = !request.no_interleave;
        results.emplace_back( kind, planTransformer( kind, model, task.platform, task.batch, o ) );
    }
    return results;
}

//! The chosen planner's top K (or its reason when infeasible), then the best of every other one.
ResultTable comparisonTable( const TransformerPlanRequest& request, const PlannerResults& results,
                             const TransformerPlanTask& task, const TransformerPlanResult& best,
                             double best_ms, const TransformerSpec& model )
{
    ResultTable table( { "planner",
                         "rank",
                         "feasible",
                         "iteration_ms",
                         "ratio_to_best",
                         "mfu_pct",
                         "tokens_per_s",
                         "tp",
                         "pp",
                         "dp",
                         "micro_batch",
                         "recompute",
                         "zero",
                         "sequence_parallel",
                         "schedule",
                         "virtual_stages",
                         "ep",
                         "etp",
                         "peak_memory_GiB",
                         "priced",
                         "configurations",
                         "plan_seconds",
                         "outside_validated_range",
                         "reason" } );
    for ( std::size_t i = 0; i < best.top.size() || ( i == 0 && !best.feasible ); ++i )
        table.addRow( candidateRow( request.planner, static_cast<long long>( i + 1 ), best,
                                    best.feasible ? &best.top[i] : nullptr, best_ms, task,
                                    model ) );
    for ( const auto& [kind, r] : results )
        if ( kind != task.chosen )
            table.addRow( candidateRow( plannerName( kind ), 1, r,
                                        r.feasible ? &r.top.front() : nullptr, best_ms, task,
                                        model ) );
    return table;
}

//! The best configuration of a feasible result: summary line, phase shares and stages.
void printBestConfiguration( std::ostream& out, const Workload& workload,
                             const TransformerPlanTask& task, const TransformerPlanResult& best )
{
    const TransformerSpec& model = workload.transformer;
    const Platform& platform = task.platform;
    const TransformerCandidate& c = best.top.front();
    Plan plan;
    plan.parallel = c.config;
    const ScenarioResult e =
        evaluateScenario( { &workload, &platform, &plan, task.batch, CostModel::native } );
    const TransformerThroughput throughput = candidateThroughput( c, platform, model );
    out << fmt::format(
        "best: {}\niteration {:.4f} ms, {:.1f} model TFLOP/s per GPU (MFU {:.1f} %), {:.4g} "
        "tokens/s, peak memory {:.3f} GiB (stage {}); planned in {:.4f} s: {} of {} "
        "configurations priced, {} memory-checked, {} operator cases, {} stage bounds\n",
        parallelConfigSummary( c.config ), c.summary.iteration_ms, throughput.tflops_per_gpu,
        throughput.mfu_pct, throughput.tokens_per_s, c.summary.peak_memory_GiB,
        c.summary.peak_memory_stage, best.plan_seconds, best.stats.priced, best.stats.space,
        best.stats.memory_checked, best.stats.operator_cases, best.stats.stage_bounds );
    out << validationLine( transformerValidationNotes( task.gpu_name, platform, model, c.config,
                                                       throughput.mfu_pct ) )
        << "\n";
    ResultTable phases( { "phase", "ms", "share_pct" } );
    for ( int k = 0; k < kNumTransformerPhases; ++k )
        phases.addRow( { std::string( nameOf( TransformerPhase( k ) ) ), c.summary.phase_ms[k],
                         100.0 * c.summary.phase_ms[k] / c.summary.iteration_ms } );
    phases.print( out, OutputFormat::table );
    out << "\n";
    ResultTable stages( { "stage", "layers", "busy_ms", "memory_GiB" } );
    for ( std::size_t i = 0; i < e.stage_ms.size(); ++i )
        stages.addRow( { static_cast<long long>( i ),
                         static_cast<long long>( stageLayers( model, c.config, int( i ) ) ),
                         e.stage_ms[i], e.stage_memory_GiB[i] } );
    stages.print( out, OutputFormat::table );
}

//! The table format: the task, the chosen planner's best configuration and the comparison.
void printPlanReport( std::ostream& out, const Workload& workload, const NamedPlatform& named,
                      const TransformerPlanRequest& request, const TransformerPlanTask& task,
                      const TransformerPlanResult& best, const ResultTable& table )
{
    const TransformerSpec& model = workload.transformer;
    const Platform& platform = task.platform;
    const double usable = platform.gpu.memory_GiB - platform.hbm_reserve_GiB;
    out << fmt::format( "workload {} (transformer, {} layers x {} hidden, {} heads, sequence "
                        "{}), platform {} ({} x {} GPUs, {:.1f} GiB usable each), global batch "
                        "{}, planner {}\n",
                        workload.name, model.layers, model.hidden, model.heads, model.seq_len,
                        named.name, platform.num_nodes, platform.gpus_per_node, usable, task.batch,
                        request.planner );
    if ( best.feasible )
        printBestConfiguration( out, workload, task, best );
    else
        out << "no feasible configuration: " << best.reason << "\n";
    out << fmt::format( "\ntop {} of planner {} and every planner on this task (ratio to the "
                        "fastest):\n",
                        request.top, request.planner );
    table.print( out, OutputFormat::table );
}

} // namespace

int planTransformerWorkload( const CommandContext& ctx, const Workload& workload,
                             const NamedPlatform& named, const TransformerPlanRequest& request )
{
    const TransformerPlanTask task = checkedPlanTask( workload, named, request );
    const TransformerSpec& model = workload.transformer;

    const PlannerResults results = runTransformerPlanners( task, model, request );
    const TransformerPlanResult* best = nullptr;
    double best_ms = 0.0; // the fastest of all planners (exhaustive's when it ran)
    for ( const auto& [kind, r] : results )
    {
        if ( kind == task.chosen )
            best = &r;
        if ( r.feasible && ( best_ms == 0.0 || r.top.front().summary.iteration_ms < best_ms ) )
            best_ms = r.top.front().summary.iteration_ms;
    }
    const ResultTable table = comparisonTable( request, results, task, *best, best_ms, model );

    std::ostream& out = ctx.print();
    const OutputFormat format = parseOutputFormat( request.format );
    if ( format != OutputFormat::table )
        table.print( out, format );
    else
        printPlanReport( out, workload, named, request, task, *best, table );
    if ( !best->feasible )
    {
        if ( ctx.isRoot() )
            std::cerr << "shardsweep: plan: " << best->reason << "\n";
        return kExitBadInput;
    }
    if ( !request.output.empty() && ctx.isRoot() )
    {
        const ParallelConfig& config = best->top.front().config;
        writePlanFile( request.output, config, workload.name,
                       { request.workload_path, request.platform_path, task.platform.numGpus(),
                         config.global_batch } );
    }
    return 0;
}

} // namespace shardsweep
