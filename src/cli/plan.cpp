// `shardsweep plan WORKLOAD PLATFORM`: the best plan for one workload on one platform, its
// per-GPU breakdown, its gap to the lower bound and how every other planner compares.
#include "command_line.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <fmt/format.h>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/cli/cost_model_option.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/plan_yaml.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/io/workload_yaml.hpp>
#include <shardsweep/plan/planner.hpp>
#include <shardsweep/scenario/scenario_space.hpp>
#include <shardsweep/scenario/sweep_config.hpp>

namespace shardsweep
{
namespace
{
namespace po = boost::program_options;

bool endsWith( const std::string& s, const std::string& suffix )
{
    return s.size() >= suffix.size() &&
           s.compare( s.size() - suffix.size(), suffix.size(), suffix ) == 0;
}

//! The GPUs that hold table t's shards: "all" when every GPU holds one (data-parallel, row-wise
//! over all GPUs), else the distinct GPUs in increasing order ("0,3,5").
std::string gpuListText( const Plan& plan, int table, int num_gpus )
{
    std::set<int> holders;
    for ( const ShardSpec& s : plan.shards )
        if ( s.table == table )
            holders.insert( s.gpu );
    if ( num_gpus > 1 && static_cast<int>( holders.size() ) == num_gpus )
        return "all";
    std::string text;
    for ( int g : holders )
        text += fmt::format( "{}{}", text.empty() ? "" : ",", g );
    return text;
}

//! The plan as JSON with the same fields as the YAML plan format (evaluate reads both: JSON is
//! YAML).
std::string planToJson( const Plan& plan, const Workload& workload )
{
    std::string out =
        fmt::format( "{{\n  \"kind\": \"plan\",\n  \"workload\": {},\n  \"tables\": [",
                     jsonQuoted( workload.name ) );
    for ( std::size_t t = 0; t < plan.tables.size(); ++t )
    {
        const TablePlan& tp = plan.tables[t];
        out += fmt::format(
            "{}\n    {{\"table\": {}, \"sharding\": \"{}\", \"compute_kernel\": \"{}\"",
            t ? "," : "", jsonQuoted( workload.table_names[t] ), nameOf( tp.sharding ),
            nameOf( tp.kernel ) );
        if ( tp.kernel == ComputeKernel::uvm_caching )
            out += fmt::format( ", \"cache_fraction\": {}", tp.cache_fraction );
        out += ", \"shards\": [";
        bool first = true;
        for ( const ShardSpec& s : plan.shards )
            if ( s.table == static_cast<int>( t ) )
            {
                out += fmt::format( "{}{{\"gpu\": {}, \"row_offset\": {}, \"num_rows\": {}, "
                                    "\"col_offset\": {}, \"num_cols\": {}}}",
                                    first ? "" : ", ", s.gpu, s.row_offset, s.num_rows,
                                    s.col_offset, s.num_cols );
                first = false;
            }
        out += "]}";
    }
    return out + "\n  ]\n}\n";
}

//! TorchRec ParameterConstraints-style JSON: per table the sharding type and compute kernel the
//! plan chose (what a TorchRec user passes to EmbeddingShardingPlanner(constraints=...)).
std::string torchrecConstraints( const Plan& plan, const Workload& workload )
{
    std::string out = "{";
    for ( std::size_t t = 0; t < plan.tables.size(); ++t )
    {
        std::set<int> ranks;
        for ( const ShardSpec& s : plan.shards )
            if ( s.table == static_cast<int>( t ) )
                ranks.insert( s.gpu );
        std::string rank_list;
        for ( int r : ranks )
            rank_list += fmt::format( "{}{}", rank_list.empty() ? "" : ", ", r );
        out += fmt::format(
            "{}\n  {}: {{\"sharding_types\": [\"{}\"], \"compute_kernels\": [\"{}\"], "
            "\"ranks\": [{}]}}",
            t ? "," : "", jsonQuoted( workload.table_names[t] ), nameOf( plan.tables[t].sharding ),
            nameOf( plan.tables[t].kernel ), rank_list );
    }
    return out + "\n}\n";
}

void writeFile( const std::string& path, const std::string& text )
{
    std::ofstream out( path );
    out << text;
    if ( !out )
        throw UsageError( fmt::format( "cannot write '{}'", path ) );
}

//! The options of `plan`, for both workload kinds.
struct PlanArguments
{
    std::string planner_name = "shardsweep", output, torchrec_output, format = "table",
                cost_model = "native", cost_model_file, gemm_model = "analytic";
    long long batch = 0;
    TransformerPlanRequest transformer;
    std::uint64_t seed = 0;
    double budget = 0.5;
    int iterations = 100000;
    long long evaluations = 0;
    std::vector<std::string> files;
    std::vector<std::string> calibrations;
    po::variables_map vm;
    // Checked before any file is read:
    PlannerKind planner = PlannerKind::shardsweep;
    OutputFormat out_format = OutputFormat::table;
};

//! --planner's help: the planners of each workload kind, from their descriptor table.
std::string plannerOptionHelp()
{
    std::string text;
    for ( const WorkloadKind kind : { WorkloadKind::dlrm, WorkloadKind::transformer } )
    {
        text += fmt::format( "{}{} workloads: ", text.empty() ? "" : "; ", nameOf( kind ) );
        const char* separator = "";
        for ( int k = 0; k < kNumPlanners; ++k )
            if ( plannerPlans( PlannerKind( k ), kind ) )
            {
                text += fmt::format( "{}{} ({})", separator, nameOf( PlannerKind( k ) ),
                                     helpOf( PlannerKind( k ) ) );
                separator = " | ";
            }
    }
    return text;
}

//! Parses plan's arguments into `a`; false after printing --help.
bool parsePlanArguments( const CommandContext& ctx, const Arguments& args, PlanArguments& a )
{
    po::options_description options( "Options of 'shardsweep plan'" );
    options.add_options()( "help,h", "show this help" )(
        "planner", po::value( &a.planner_name )->default_value( a.planner_name ),
        plannerOptionHelp().c_str() )( "batch", po::value( &a.batch ),
                                       "global batch size (default: the workload's)" )(
        "global-batch", po::value( &a.transformer.global_batch ),
        "the same as --batch (sequences per optimizer step for a transformer)" )(
        "gpus", po::value( &a.transformer.gpus ),
        "plan on N GPUs (the platform resized as a sweep's gpu_counts resize it: N up to a "
        "node's GPUs on one node, else whole nodes; default: the platform's own count)" )(
        "top", po::value( &a.transformer.top )->default_value( a.transformer.top ),
        "transformer: list the chosen planner's K best configurations" )(
        "overlap", po::bool_switch( &a.transformer.overlap ),
        "transformer: plan for a run that overlaps DP communication with the backward/forward "
        "and TP communication with the GEMMs (Megatron's --overlap-grad-reduce, "
        "--overlap-param-gather, --tp-comm-overlap); it is a property of the run, as fused "
        "attention is, not searched" )(
        "no-interleave", po::bool_switch( &a.transformer.no_interleave ),
        "transformer: search one model chunk per pipeline stage only (no interleaved 1F1B)" )(
        "seed", po::value( &a.seed )->default_value( a.seed ),
        "DLRM: seed of the random planner and of tie-breaking" )(
        "budget-s", po::value( &a.budget )->default_value( a.budget ),
        "DLRM: time budget of the shardsweep planner's search, seconds (where it stops the "
        "search, the plan depends on the machine's speed and load; the output says so)" )(
        "max-iterations", po::value( &a.iterations )->default_value( a.iterations ),
        "DLRM: iteration budget of the shardsweep planner's search (rounds of moves)" )(
        "max-evaluations", po::value( &a.evaluations ),
        "DLRM: the shardsweep planner's search stops after N candidate moves and swaps priced "
        "(default: no limit); the same plan on any machine, about 0.1 us each on 4-8 GPUs "
        "(raise --budget-s so that the clock does not stop it first)" )(
        "cost-model", po::value( &a.cost_model )->default_value( a.cost_model ),
        "native | torchrec | learned: the model plans are priced (and the shardsweep planner "
        "searches) with" )( "cost-model-file", po::value( &a.cost_model_file ),
                            "the learned model of --cost-model learned (shardsweep-mlp file, "
                            "family dlrm: postprocess/train_cost_model.py --export-mlp)" )(
        "gemm-model", po::value( &a.gemm_model )->default_value( a.gemm_model ),
        "GEMMs of the dense part: analytic | learned (<models>/gemm.mlp on the GPUs it was "
        "trained on, else analytic)" )(
        "output,o", po::value( &a.output ),
        "write the plan to FILE (.yaml or .json; 'shardsweep evaluate' reads it back; for a "
        "transformer a YAML `kind: plan` file with the `parallel:` configuration)" )(
        "torchrec", po::value( &a.torchrec_output ),
        "DLRM: write TorchRec ParameterConstraints-style JSON (sharding type, compute kernel, "
        "ranks per "
        "table)" )(
        "format,f", po::value( &a.format )->default_value( a.format ),
        "table (plan, per-GPU breakdown, comparison; transformer: configuration, phases, "
        "per-stage memory, top K and every planner) | csv | json (the comparison table)" )(
        "calibration", po::value( &a.calibrations )->multitoken(), kCalibrationOptionHelp );
    po::options_description hidden;
    hidden.add_options()( "files", po::value( &a.files ) );
    po::positional_options_description positional;
    positional.add( "files", 2 );
    const CommandHelp help{
        "Usage: shardsweep plan WORKLOAD.yaml PLATFORM.yaml [options]\n\n"
        "Finds the best way to train the workload on the platform with the chosen planner\n"
        "and compares it with every other planner on the same task.\n\n"
        "For a DLRM workload (kind: workload) it shards the embedding tables and prints the\n"
        "plan (table -> sharding type, GPUs, kernel), its per-GPU breakdown and its gap to\n"
        "the lower bound on any plan that fits in memory (docs/PLANNERS.md).\n\n"
        "For a transformer workload (kind: transformer) it searches the Megatron-LM\n"
        "configuration on --gpus N GPUs at --global-batch B: tensor parallel (dividing\n"
        "the heads), pipeline parallel (even stages, or uneven where pp does not divide\n"
        "the layers; 1F1B, interleaved 1F1B or GPipe), context parallel (sequences of\n"
        "4096 tokens and more), data parallel, micro-batch, recompute\n"
        "none/selective/full, ZeRO 0-3, sequence parallelism and, for a mixture of\n"
        "experts, expert parallel ep and expert tensor parallel etp, keeping\n"
        "configurations that fit in memory. It prints the best one\n"
        "with its phases and per-stage memory, the next best (--top K) and every\n"
        "transformer planner on the same task; exit 2 when no configuration fits\n"
        "(docs/model/transformer_planner.md).\n\n",
        "\n" };
    return parseCommandLine( ctx, "plan", args, options, a.vm, help, hidden, positional );
}

//! Every planner that plans the workload's kind, on the same task. A plan counts only if it fits
//! under the cost kernel's full memory model (tables, activations, buffers, dense replica,
//! reserve), whatever the planner's own memory rule.
struct PlannerRuns
{
    std::map<int, PlanResult> results; //!< by PlannerKind
    int fitting = 0;
    int applicable = 0;
};

PlannerRuns runEveryPlanner( const Workload& workload, const Platform& platform,
                             std::int64_t global_batch, const PlannerOptions& popts )
{
    PlannerRuns runs;
    for ( int k = 0; k < kNumPlanners; ++k )
    {
        if ( !plannerPlans( static_cast<PlannerKind>( k ), workload.kind ) )
            continue;
        ++runs.applicable;
        PlanResult& r = runs.results[k];
        r = makePlan( static_cast<PlannerKind>( k ), workload, platform, global_batch, popts );
        if ( r.feasible )
        {
            const ScenarioResult e =
                evaluateScenario( { &workload, &platform, &r.plan, global_batch, popts.model,
                                    popts.learned, popts.learned_gemm } );
            if ( !e.feasible )
            {
                r.feasible = false;
                r.reason = fmt::format( "GPU {} needs {:.3f} GiB, {:.3f} GiB more than its "
                                        "{:.3f} GiB",
                                        e.overflow_gpu, platform.gpu.memory_GiB + e.overflow_GiB,
                                        e.overflow_GiB, platform.gpu.memory_GiB );
            }
        }
        runs.fitting += r.feasible ? 1 : 0;
    }
    return runs;
}

//! One row per planner: feasibility, time, gap to the bound, difference to the chosen plan.
ResultTable comparisonTable( const PlannerRuns& runs, const PlanResult& best, double bound )
{
    ResultTable comparison( { "planner", "feasible", "iteration_ms", "gap_to_bound_pct",
                              "vs_chosen_pct", "plan_seconds", "reason" } );
    for ( const auto& [k, r] : runs.results )
    {
        const double gap = r.feasible ? 100.0 * ( r.predicted_ms - bound ) / bound : NAN;
        const double vs = r.feasible && best.feasible
                              ? 100.0 * ( r.predicted_ms - best.predicted_ms ) / best.predicted_ms
                              : NAN;
        comparison.addRow( { std::string( plannerName( static_cast<PlannerKind>( k ) ) ),
                             static_cast<long long>( r.feasible ),
                             r.feasible ? r.predicted_ms : NAN, gap, vs, r.plan_seconds,
                             r.reason } );
    }
    return comparison;
}

//! The chosen plan as a table: its placement and its per-GPU breakdown.
void printChosenPlan( std::ostream& out, const Workload& workload, const Platform& platform,
                      std::int64_t global_batch, const PlanResult& best,
                      const PlannerOptions& popts )
{
    const int gpus = platform.numGpus();
    ResultTable placement( { "table", "name", "sharding", "kernel", "gpus" } );
    for ( std::size_t t = 0; t < best.plan.tables.size(); ++t )
        placement.addRow( { static_cast<long long>( t ), workload.table_names[t],
                            std::string( nameOf( best.plan.tables[t].sharding ) ),
                            std::string( nameOf( best.plan.tables[t].kernel ) ),
                            gpuListText( best.plan, static_cast<int>( t ), gpus ) } );
    placement.print( out, OutputFormat::table );
    const ScenarioResult r = evaluateScenario( { &workload, &platform, &best.plan, global_batch,
                                                 popts.model, popts.learned, popts.learned_gemm } );
    ResultTable per_gpu(
        { "gpu", "embedding_fwd_ms", "embedding_bwd_ms", "comm_ms", "memory_GiB" } );
    for ( int g = 0; g < r.num_gpus; ++g )
    {
        auto phase = [&]( Phase p )
        { return r.gpu_phase_ms[g * kNumPhases + static_cast<int>( p )]; };
        per_gpu.addRow( { static_cast<long long>( g ), phase( Phase::embedding_fwd ),
                          phase( Phase::embedding_bwd ),
                          phase( Phase::input_dist ) + phase( Phase::embedding_comm_fwd ) +
                              phase( Phase::embedding_comm_bwd ) + phase( Phase::dense_allreduce ),
                          r.gpu_memory_GiB[g] } );
    }
    out << "\n";
    per_gpu.print( out, OutputFormat::table );
}

//! `plan` for a transformer workload: the options it takes, then plan_transformer.cpp.
int planTransformer( const CommandContext& ctx, PlanArguments& a, const Workload& workload,
                     const NamedPlatform& platform )
{
    TransformerPlanRequest& transformer = a.transformer;
    const po::variables_map& vm = a.vm;
    transformer.planner = a.planner_name;
    if ( endsWith( a.output, ".json" ) )
        throw UsageError( "--output: a transformer plan is written as YAML (FILE.yaml)" );
    transformer.output = a.output;
    transformer.workload_path = a.files[0];
    transformer.platform_path = a.files[1];
    transformer.format = a.format;
    transformer.global_batch = vm.count( "batch" ) || vm.count( "global-batch" ) ? a.batch : 0;
    if ( vm.count( "global-batch" ) + vm.count( "batch" ) > 0 && a.batch <= 0 )
        throw UsageError( fmt::format( "--global-batch: expected > 0, found {}", a.batch ) );
    if ( !vm["cost-model"].defaulted() && a.cost_model != "native" )
        throw UsageError( "--cost-model: transformer workloads have only 'native'" );
    if ( vm.count( "max-evaluations" ) )
        throw UsageError( "--max-evaluations applies to DLRM workloads (the transformer "
                          "planners search exhaustively)" );
    if ( !vm["gemm-model"].defaulted() && a.gemm_model != "analytic" )
        throw UsageError( "--gemm-model: the transformer planners price GEMMs with the "
                          "analytic model only" );
    if ( vm.count( "gpus" ) && transformer.gpus < 1 )
        throw UsageError( fmt::format( "--gpus: expected >= 1, found {}", transformer.gpus ) );
    return planTransformerWorkload( ctx, workload, platform, transformer );
}

//! `plan` for a DLRM workload: every planner on the task, the chosen plan in full.
int planDlrm( const CommandContext& ctx, const PlanArguments& a, const Workload& workload,
              NamedPlatform platform )
{
    const po::variables_map& vm = a.vm;
    const PlannerKind chosen = a.planner;
    const OutputFormat out_format = a.out_format;
    if ( !vm["top"].defaulted() )
        throw UsageError( "--top applies to transformer workloads" );
    if ( !vm["overlap"].defaulted() || !vm["no-interleave"].defaulted() )
        throw UsageError( "--overlap and --no-interleave apply to transformer workloads" );
    if ( vm.count( "gpus" ) )
    {
        // As a sweep's gpu_counts do (docs/SWEEPS.md, "GPU counts").
        try
        {
            platform.platform = resizePlatform( platform.platform, a.transformer.gpus );
        }
        catch ( const std::invalid_argument& e )
        {
            throw UsageError( fmt::format( "--gpus {}: {}", a.transformer.gpus, e.what() ) );
        }
    }
    if ( !plannerPlans( chosen, workload.kind ) )
        throw UsageError( fmt::format( "--planner {}: plans transformer workloads; '{}' is a DLRM",
                                       a.planner_name, workload.name ) );
    const std::int64_t global_batch = vm.count( "batch" ) ? a.batch : workload.global_batch;
    const int gpus = platform.platform.numGpus();
    if ( global_batch <= 0 || global_batch % gpus != 0 )
        throw UsageError(
            fmt::format( "--batch: expected a positive multiple of the {} GPUs, found {}", gpus,
                         global_batch ) );

    PlannerOptions popts;
    popts.seed = a.seed;
    popts.time_budget_s = a.budget;
    popts.max_iterations = a.iterations;
    if ( vm.count( "max-evaluations" ) && a.evaluations < 1 )
        throw UsageError(
            fmt::format( "--max-evaluations: expected >= 1, found {}", a.evaluations ) );
    popts.max_evaluations = a.evaluations;
    const CostModelChoice choice =
        chooseCostModel( ctx, a.cost_model, a.cost_model_file, "--cost-model-file", platform.name );
    popts.model = choice.model;
    popts.learned = choice.binding;
    const std::unique_ptr<LearnedGemmModel> learned_gemm =
        chooseGemmModel( ctx, a.gemm_model, platform.gpu_name );
    popts.learned_gemm = learned_gemm.get();
    // The bound is on the native model's iteration time; under TorchRec's estimator there is
    // none to compare with.
    const double bound = popts.model == CostModel::native
                             ? iterationLowerBoundMs( workload, platform.platform, global_batch )
                             : NAN;

    const PlannerRuns runs = runEveryPlanner( workload, platform.platform, global_batch, popts );
    const PlanResult& best = runs.results.at( static_cast<int>( chosen ) );
    const ResultTable comparison = comparisonTable( runs, best, bound );

    std::ostream& out = ctx.print();
    if ( out_format != OutputFormat::table )
        comparison.print( out, out_format );
    else
    {
        out << fmt::format( "workload {} ({} tables), platform {} ({} GPUs), global batch {}, "
                            "planner {}, cost model {}\n",
                            workload.name, workload.tables.size(), platform.name, gpus,
                            global_batch, a.planner_name, a.cost_model );
        if ( !best.feasible )
            out << "no feasible plan: " << best.reason << "\n";
        else
        {
            if ( std::isnan( bound ) )
                out << fmt::format( "iteration {:.4f} ms ({} cost model: no lower bound); "
                                    "planned in {:.3f} s\n",
                                    best.predicted_ms, a.cost_model, best.plan_seconds );
            else
                out << fmt::format( "iteration {:.4f} ms; lower bound {:.4f} ms (gap {:.2f} %); "
                                    "planned in {:.3f} s\n",
                                    best.predicted_ms, bound,
                                    100.0 * ( best.predicted_ms - bound ) / bound,
                                    best.plan_seconds );
            if ( best.stopped_on_clock )
                out << fmt::format( "note: the search stopped on its {} s clock (--budget-s), "
                                    "so a rerun on a faster or less loaded machine may find "
                                    "another plan; --max-evaluations N with a larger --budget-s "
                                    "gives the same plan on any machine\n",
                                    a.budget );
            out << "\n";
            printChosenPlan( out, workload, platform.platform, global_batch, best, popts );
        }
        out << fmt::format( "\nall planners on this task ({} of {} have a plan that fits in "
                            "memory):\n",
                            runs.fitting, runs.applicable );
        comparison.print( out, OutputFormat::table );
    }

    if ( best.feasible && ctx.isRoot() )
    {
        // A YAML plan records what it was planned for: evaluate and export-et then read it as
        // their scenario.
        if ( !a.output.empty() )
            writeFile( a.output,
                       endsWith( a.output, ".json" )
                           ? planToJson( best.plan, workload )
                           : planToYaml( best.plan, workload.table_names, workload.name ) +
                                 planSourceYaml( { a.files[0], a.files[1], gpus, global_batch },
                                                 a.output ) );
        if ( !a.torchrec_output.empty() )
            writeFile( a.torchrec_output, torchrecConstraints( best.plan, workload ) );
    }
    return best.feasible ? 0 : 1;
}

} // namespace

int plan( const CommandContext& ctx, const Arguments& args )
{
    PlanArguments a;
    if ( !parsePlanArguments( ctx, args, a ) )
        return 0;
    if ( a.files.size() != 2 )
        throw UsageError(
            "plan: needs WORKLOAD.yaml and PLATFORM.yaml (see 'shardsweep plan --help')" );
    a.out_format = parseOutputFormat( a.format );
    a.planner = parsePlannerName( a.planner_name );
    if ( a.vm.count( "batch" ) && a.vm.count( "global-batch" ) &&
         a.batch != a.transformer.global_batch )
        throw UsageError( "--batch and --global-batch differ: give one" );
    if ( a.vm.count( "global-batch" ) )
        a.batch = a.transformer.global_batch;

    const Workload workload = readWorkloadFile( a.files[0] );
    NamedPlatform platform = readPlatformFile( a.files[1] );
    calibratePlatform( platform, readCalibrationFiles( a.calibrations ), "plan" );
    if ( workload.isTransformer() )
        return planTransformer( ctx, a, workload, platform );
    return planDlrm( ctx, a, workload, platform );
}

} // namespace shardsweep
