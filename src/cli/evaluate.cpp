// `shardsweep evaluate SCENARIO.yaml`: the per-GPU, per-phase cost of one given plan.
#include "command_line.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <fmt/format.h>
#include <ostream>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/cli/cost_model_option.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/scenario_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/model/transformer/memory.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <shardsweep/model/transformer/throughput.hpp>
#include <shardsweep/model/transformer/validated_range.hpp>
#include <shardsweep/scenario/sweep_config.hpp>

namespace shardsweep
{
namespace
{
namespace po = boost::program_options;

//! One row per GPU and a last row for the critical path; phases in execution order.
ResultTable breakdownTable( const ScenarioResult& r )
{
    std::vector<std::string> columns = { "gpu" };
    for ( int k = 0; k < kNumPhases; ++k )
        columns.push_back( std::string( nameOf( static_cast<Phase>( k ) ) ) + "_ms" );
    columns.insert( columns.end(), { "total_ms", "memory_GiB" } );
    ResultTable table( columns );
    for ( int g = 0; g < r.num_gpus; ++g )
    {
        // Cells are built in place (emplace_back with the alternative's type): moving a
        // temporary variant into the vector makes GCC 12 warn that its (inactive) string
        // member may be used uninitialised (-Wmaybe-uninitialized, a false positive).
        std::vector<ResultTable::Cell> row;
        row.reserve( columns.size() );
        row.emplace_back( std::in_place_type<std::string>, std::to_string( g ) );
        double total = 0.0;
        for ( int k = 0; k < kNumPhases; ++k )
        {
            row.emplace_back( std::in_place_type<double>, r.gpu_phase_ms[g * kNumPhases + k] );
            total += r.gpu_phase_ms[g * kNumPhases + k];
        }
        row.emplace_back( std::in_place_type<double>, total );
        row.emplace_back( std::in_place_type<double>, r.gpu_memory_GiB[g] );
        table.addRow( std::move( row ) );
    }
    std::vector<ResultTable::Cell> path;
    path.reserve( columns.size() );
    path.emplace_back( std::in_place_type<std::string>, "critical_path" );
    for ( int k = 0; k < kNumPhases; ++k )
        path.emplace_back( std::in_place_type<double>, r.phase_ms[k] );
    path.emplace_back( std::in_place_type<double>, r.iteration_ms );
    double max_memory = 0.0;
    for ( double m : r.gpu_memory_GiB )
        max_memory = std::max( max_memory, m );
    path.emplace_back( std::in_place_type<double>, max_memory );
    table.addRow( std::move( path ) );
    return table;
}

//! A transformer scenario: one row per pipeline stage (its layers, the busy time of its GPUs and
//! the memory of one of them) and a last row 'critical_path' with the phase breakdown of the
//! iteration (critical-path shares adding up to iteration_ms) and the peak memory.
ResultTable transformerBreakdownTable( const ScenarioResult& r, const TransformerSpec& model,
                                       const ParallelConfig& config )
{
    std::vector<std::string> columns = { "stage", "layers", "busy_ms" };
    for ( const std::string& c : enumNameList<TransformerPhase>( "_ms" ) )
        columns.push_back( c );
    columns.insert( columns.end(), { "iteration_ms", "memory_GiB" } );
    ResultTable table( columns );
    const int pp = static_cast<int>( r.stage_ms.size() );
    for ( int i = 0; i < pp; ++i )
    {
        // In place, as in breakdownTable (GCC 12 -Wmaybe-uninitialized on moved variants).
        std::vector<ResultTable::Cell> row;
        row.reserve( columns.size() );
        row.emplace_back( std::in_place_type<std::string>, std::to_string( i ) );
        row.emplace_back( std::in_place_type<long long>, stageLayers( model, config, i ) );
        row.emplace_back( std::in_place_type<double>, r.stage_ms[i] );
        for ( int k = 0; k <= kNumTransformerPhases; ++k )
            row.emplace_back( std::in_place_type<std::string> );
        row.emplace_back( std::in_place_type<double>, r.stage_memory_GiB[i] );
        table.addRow( std::move( row ) );
    }
    std::vector<ResultTable::Cell> path;
    path.reserve( columns.size() );
    path.emplace_back( std::in_place_type<std::string>, "critical_path" );
    path.emplace_back( std::in_place_type<long long>, model.layers );
    path.emplace_back( std::in_place_type<std::string> );
    for ( int k = 0; k < kNumTransformerPhases; ++k )
        path.emplace_back( std::in_place_type<double>, r.transformer.phase_ms[k] );
    path.emplace_back( std::in_place_type<double>, r.iteration_ms );
    path.emplace_back( std::in_place_type<double>, r.transformer.peak_memory_GiB );
    table.addRow( std::move( path ) );
    return table;
}

//! evaluate's command line; the has_* flags say which options were given.
struct EvaluateOptions
{
    std::string scenario_path;
    OutputFormat format = OutputFormat::table;
    std::string cost_model, cost_model_file, gemm_model;
    long long batch = 0, global_batch = 0;
    bool has_batch = false, has_global_batch = false;
    bool has_cost_model = false, has_cost_model_file = false;
    std::vector<std::string> calibrations;
};

//! Parses and checks evaluate's arguments; returns false after printing --help.
bool parseEvaluateArguments( const CommandContext& ctx, const Arguments& args, EvaluateOptions& o )
{
    po::options_description options( "Options of 'shardsweep evaluate'" );
    std::string format = "table", cost_model, cost_model_file, gemm_model = "analytic";
    long long batch = 0, global_batch = 0;
    options.add_options()( "help,h", "show this help" )(
        "format,f", po::value( &format )->default_value( format ),
        "output: table (summary + per-GPU breakdown), csv or json (the breakdown: one row per "
        "GPU, a last row 'critical_path')" )(
        "cost-model", po::value( &cost_model ),
        "native | torchrec | learned: overrides the scenario file's cost_model" )(
        "cost-model-file", po::value( &cost_model_file ),
        "the learned model of cost model learned (shardsweep-mlp file, family dlrm: "
        "postprocess/train_cost_model.py --export-mlp); overrides the scenario's "
        "cost_model_file" )( "gemm-model", po::value( &gemm_model )->default_value( gemm_model ),
                             "GEMMs of the DLRM dense part: analytic | learned "
                             "(<models>/gemm.mlp on the GPUs it was trained on, else analytic)" )(
        "batch", po::value( &batch ), "global batch size: overrides the scenario file's" )(
        "global-batch", po::value( &global_batch ), "the same as --batch (plan's name for it)" )(
        "calibration", po::value( &o.calibrations )->multitoken(), kCalibrationOptionHelp );
    po::options_description hidden;
    std::string scenario_path;
    hidden.add_options()( "scenario", po::value( &scenario_path ) );
    po::positional_options_description positional;
    positional.add( "scenario", 1 );
    po::variables_map vm;
    const CommandHelp help{
        "Usage: shardsweep evaluate SCENARIO.yaml [options]\n\n"
        "Predicts one training iteration of the plan in SCENARIO.yaml (kind: scenario:\n"
        "workload, platform and plan, as paths or inline; docs/INPUTS.md), or of a plan file\n"
        "that 'shardsweep plan -o' wrote (its source: names the workload and platform), and\n"
        "prints its\n"
        "per-GPU busy time of every phase, the memory per GPU and the critical path.\n"
        "Phases (ms): input_dist, embedding_fwd, bottom_mlp_fwd, embedding_comm_fwd,\n"
        "top_fwd, top_bwd, embedding_comm_bwd, bottom_mlp_bwd, embedding_bwd,\n"
        "dense_allreduce (docs/model/step.md). Memory in GiB (2^30 B).\n"
        "A transformer scenario (parallel: configuration) prints one row per pipeline\n"
        "stage (layers, busy time of its GPUs, memory per GPU) and a row 'critical_path'\n"
        "with the iteration's phases: compute, tp_comm, pp_comm, dp_comm, bubble,\n"
        "optimizer, ep_comm (an MoE model's all-to-alls) (docs/model/transformer.md).\n\n",
        "\n" };
    if ( !parseCommandLine( ctx, "evaluate", args, options, vm, help, hidden, positional ) )
        return false;
    if ( scenario_path.empty() )
        throw UsageError(
            "evaluate: a scenario file is required (see 'shardsweep evaluate --help')" );
    if ( vm.count( "batch" ) && vm.count( "global-batch" ) && batch != global_batch )
        throw UsageError( "evaluate: --batch and --global-batch name the same setting: give one" );
    o.format = parseOutputFormat( format );
    o.scenario_path = scenario_path;
    o.cost_model = cost_model;
    o.cost_model_file = cost_model_file;
    o.gemm_model = gemm_model;
    o.batch = batch;
    o.global_batch = global_batch;
    o.has_batch = vm.count( "batch" ) > 0;
    o.has_global_batch = vm.count( "global-batch" ) > 0;
    o.has_cost_model = vm.count( "cost-model" ) > 0;
    o.has_cost_model_file = vm.count( "cost-model-file" ) > 0;
    return true;
}

//! The table format's header of a transformer scenario: configuration, iteration, MFU, memory.
void printTransformerSummary( std::ostream& out, const ScenarioFile& scenario,
                              const std::string& scenario_path, const ScenarioInput& input,
                              const ScenarioResult& result )
{
    const int gpus = scenario.platform.platform.numGpus();
    const TransformerStepSummary& t = result.transformer;
    const GpuSpec& gpu = scenario.platform.platform.gpu;
    const TransformerThroughput throughput = transformerThroughput(
        t, gpu, gpus, scenario.workload.transformer.dtype,
        double( input.global_batch ) * scenario.workload.transformer.seq_len );
    out << fmt::format( "scenario {}: transformer {} ({} layers x {} hidden), platform {} "
                        "({} x {} GPUs), global batch {}\n",
                        scenario_path, scenario.workload.name, scenario.workload.transformer.layers,
                        scenario.workload.transformer.hidden, scenario.platform.name,
                        scenario.platform.platform.num_nodes,
                        scenario.platform.platform.gpus_per_node, input.global_batch );
    ParallelConfig config = scenario.plan.parallel;
    config.global_batch = input.global_batch;
    out << "configuration: " << parallelConfigSummary( config ) << "\n";
    out << fmt::format(
        "iteration {:.4f} ms, exposed communication {:.4f} ms, {:.1f} model TFLOP/s per "
        "GPU (MFU {:.1f} %), {:.4g} tokens/s, peak memory {:.3f} GiB on stage {}, {}\n",
        result.iteration_ms, result.exposed_comm_ms, throughput.tflops_per_gpu,
        std::isnan( throughput.mfu_pct ) ? 0.0 : throughput.mfu_pct, throughput.tokens_per_s,
        t.peak_memory_GiB, t.peak_memory_stage,
        result.feasible
            ? std::string( "fits in memory" )
            : fmt::format( "INFEASIBLE: {:.3f} GiB more than the usable "
                           "{:.1f} GiB",
                           result.overflow_GiB,
                           gpu.memory_GiB - scenario.platform.platform.hbm_reserve_GiB ) );
    out << validationLine( transformerValidationNotes(
               scenario.platform.gpu_name, scenario.platform.platform,
               scenario.workload.transformer, config, throughput.mfu_pct ) )
        << "\n";
}

//! Evaluates and prints a transformer scenario (native cost model only).
int evaluateTransformer( const CommandContext& ctx, const EvaluateOptions& o,
                         const ScenarioFile& scenario, const ScenarioInput& input )
{
    checkScenarioFileInput( "evaluate", input );
    if ( o.has_cost_model && o.cost_model != "native" )
        throw UsageError( "--cost-model: transformer workloads have only 'native'" );
    const ScenarioResult result = evaluateScenario( input );
    std::ostream& out = ctx.print();
    if ( o.format == OutputFormat::table )
        printTransformerSummary( out, scenario, o.scenario_path, input, result );
    transformerBreakdownTable( result, scenario.workload.transformer, scenario.plan.parallel )
        .print( out, o.format );
    return 0;
}

//! Evaluates and prints a DLRM scenario with the chosen cost and GEMM models.
int evaluateDlrm( const CommandContext& ctx, const EvaluateOptions& o, const ScenarioFile& scenario,
                  ScenarioInput& input )
{
    checkScenarioFileInput( "evaluate", input );
    const CostModelChoice choice =
        chooseCostModel( ctx, o.has_cost_model ? o.cost_model : scenario.cost_model,
                         o.has_cost_model_file ? o.cost_model_file : scenario.cost_model_file,
                         o.has_cost_model_file ? std::string( "--cost-model-file" )
                                               : o.scenario_path + ": field 'cost_model_file'",
                         scenario.platform.name );
    input.model = choice.model;
    input.learned = choice.binding;
    const std::unique_ptr<LearnedGemmModel> learned_gemm =
        chooseGemmModel( ctx, o.gemm_model, scenario.platform.gpu_name );
    input.learned_gemm = learned_gemm.get();
    const ScenarioResult result = evaluateScenario( input );

    std::ostream& out = ctx.print();
    if ( o.format == OutputFormat::table )
    {
        out << fmt::format(
            "scenario {}: workload {} ({} tables), platform {} ({} x {} GPUs), "
            "global batch {}, cost model {}\n",
            o.scenario_path, scenario.workload.name, scenario.workload.tables.size(),
            scenario.platform.name, scenario.platform.platform.num_nodes,
            scenario.platform.platform.gpus_per_node, input.global_batch, nameOf( input.model ) );
        out << fmt::format( "iteration {:.4f} ms, exposed communication {:.4f} ms, {}\n\n",
                            result.iteration_ms, result.exposed_comm_ms,
                            result.feasible
                                ? std::string( "fits in memory" )
                                : fmt::format( "INFEASIBLE: GPU {} needs {:.3f} GiB more than its "
                                               "{:.1f} GiB",
                                               result.overflow_gpu, result.overflow_GiB,
                                               scenario.platform.platform.gpu.memory_GiB ) );
    }
    breakdownTable( result ).print( out, o.format );
    if ( o.format == OutputFormat::table )
        out << "\ntotal_ms adds up a GPU's busy time in every phase, so it can exceed the "
               "iteration: phases that\nrun beside others (the input distribution, the bottom "
               "MLP, the dense all-reduce) count there\nin full. The critical_path row holds "
               "each phase's share of the step's critical path and sums\nto the iteration.\n";
    return 0;
}
} // namespace

int evaluate( const CommandContext& ctx, const Arguments& args )
{
    EvaluateOptions o;
    if ( !parseEvaluateArguments( ctx, args, o ) )
        return 0;

    ScenarioFile scenario = readScenarioFile( o.scenario_path );
    calibratePlatform( scenario.platform, readCalibrationFiles( o.calibrations ), "evaluate" );
    ScenarioInput input;
    input.workload = &scenario.workload;
    input.platform = &scenario.platform.platform;
    input.plan = &scenario.plan;
    input.global_batch = o.has_batch          ? o.batch
                         : o.has_global_batch ? o.global_batch
                                              : scenario.global_batch;
    if ( scenario.workload.isTransformer() )
        return evaluateTransformer( ctx, o, scenario, input );
    return evaluateDlrm( ctx, o, scenario, input );
}

} // namespace shardsweep
