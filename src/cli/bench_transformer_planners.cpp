// `shardsweep bench planners --protocol transformer`: the transformer planners over GPT-3 sizes x
// GPU counts x clusters, and over Mixtral 8x7B and DeepSeek-V3 x GPU counts on the H100 cluster:
// how often each returns exhaustive's optimum, how much faster than megatron's rule its
// configuration is, and how long it plans (docs/PERFORMANCE.md).
#include <algorithm>
#include <fmt/format.h>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/parallel_fields.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/io/workload_yaml.hpp>
#include <shardsweep/plan/transformer_planner.hpp>
#include <shardsweep/scenario/scenario_space.hpp>

namespace shardsweep
{
namespace
{

struct Stats
{
    int tasks = 0;       //!< tasks with a feasible optimum (exhaustive's)
    int equal = 0;       //!< tasks where the planner returned exhaustive's configuration
    int vs_megatron = 0; //!< tasks where both the planner and megatron have a configuration
    double sum_improvement = 0.0, sum_seconds = 0.0, max_seconds = 0.0;
};

const PlannerKind kTransformerPlanners[] = { PlannerKind::shardsweep, PlannerKind::megatron,
                                             PlannerKind::exhaustive };

//! The same configuration: the layout and every knob of the vocabulary's field table (a knob
//! added there is compared here too).
bool sameConfiguration( const ParallelConfig& a, const ParallelConfig& b )
{
    if ( a.tp != b.tp || a.pp != b.pp || a.dp != b.dp )
        return false;
    for ( const ParallelField& f : parallelFields() )
        if ( f.get( a ) != f.get( b ) )
            return false;
    return true;
}

//! One task through the three planners, added to `stats` (indexed like kTransformerPlanners).
void runTask( const TransformerSpec& model, const Platform& platform, std::int64_t batch,
              Stats* stats )
{
    TransformerPlanResult r[3];
    for ( int k = 0; k < 3; ++k )
        r[k] = planTransformer( kTransformerPlanners[k], model, platform, batch );
    const TransformerPlanResult& ex = r[2];
    const TransformerPlanResult& meg = r[1];
    if ( !ex.feasible )
        return; // no configuration fits: nothing to compare
    for ( int k = 0; k < 3; ++k )
    {
        Stats& s = stats[k];
        ++s.tasks;
        s.sum_seconds += r[k].plan_seconds;
        s.max_seconds = std::max( s.max_seconds, r[k].plan_seconds );
        if ( !r[k].feasible )
            continue;
        const TransformerCandidate& c = r[k].top.front();
        const TransformerCandidate& opt = ex.top.front();
        s.equal += sameConfiguration( c.config, opt.config ) &&
                   c.summary.iteration_ms == opt.summary.iteration_ms;
        if ( meg.feasible )
        {
            const double m = meg.top.front().summary.iteration_ms;
            s.sum_improvement += 100.0 * ( m - c.summary.iteration_ms ) / m;
            ++s.vs_megatron;
        }
    }
}

void addRows( ResultTable& table, const std::string& protocol, const Stats* stats )
{
    for ( int k = 0; k < 3; ++k )
    {
        const Stats& s = stats[k];
        if ( s.tasks == 0 )
            continue;
        table.addRow( { protocol, std::string( plannerName( kTransformerPlanners[k] ) ),
                        static_cast<long long>( s.tasks ), 100.0 * s.equal / s.tasks,
                        s.vs_megatron ? s.sum_improvement / s.vs_megatron : NAN,
                        s.sum_seconds / s.tasks, s.max_seconds } );
    }
}

} // namespace

int benchTransformerPlanners( const CommandContext& ctx, const std::string& format,
                              const std::vector<int>& gpu_counts )
{
    const OutputFormat out_format = parseOutputFormat( format );
    const std::string dir = std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/";
    const char* const models[] = { "gpt3-125m", "gpt3-350m", "gpt3-760m", "gpt3-1.3b",
                                   "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b",  "gpt3-175b" };
    const char* const platforms[] = { "dgx-a100-hdr800", "h100-16node-ib" };
    ResultTable table( { "protocol", "planner", "tasks", "share_equal_to_exhaustive_pct",
                         "mean_improvement_vs_megatron_pct", "mean_plan_seconds",
                         "max_plan_seconds" } );
    Stats all[3], large[3], moe[3], deepseek[3];
    for ( const char* platform_name : platforms )
    {
        const NamedPlatform base = readPlatformFile( dir + "platforms/" + platform_name + ".yaml" );
        for ( const char* model_name : models )
        {
            const Workload w = readWorkloadFile( dir + "workloads/" + model_name + ".yaml" );
            for ( int gpus : gpu_counts )
            {
                const Platform p = resizePlatform( base.platform, gpus );
                runTask( w.transformer, p, w.global_batch, all );
                // The speed goal: GPT-3 175B on 4096 A100s, timed on its own.
                if ( gpus == 4096 && w.name == "gpt3-175b" &&
                     std::string( platform_name ) == "dgx-a100-hdr800" )
                    runTask( w.transformer, p, w.global_batch, large );
            }
        }
    }
    // Mixtures of experts (issue 23): the planners also search ep, etp, uneven stages and cp.
    const NamedPlatform h100 = readPlatformFile( dir + "platforms/h100-16node-ib.yaml" );
    for ( const char* model_name : { "mixtral-8x7b", "deepseek-v3" } )
    {
        const Workload w = readWorkloadFile( dir + "workloads/" + model_name + ".yaml" );
        for ( int gpus : gpu_counts )
            runTask( w.transformer, resizePlatform( h100.platform, gpus ), w.global_batch, moe );
    }
    // The speed goal: DeepSeek-V3 on its own 2048 H800s, timed on its own.
    const Workload ds = readWorkloadFile( dir + "workloads/deepseek-v3.yaml" );
    runTask( ds.transformer, readPlatformFile( dir + "platforms/h800-2048-deepseek.yaml" ).platform,
             ds.global_batch, deepseek );
    addRows( table, "transformer", all );
    addRows( table, "gpt3-175b-4096-a100", large );
    addRows( table, "moe", moe );
    addRows( table, "deepseek-v3-2048-h800", deepseek );
    table.print( ctx.print(), out_format );
    return 0;
}

} // namespace shardsweep
