// Transformer parallelisation planners: megatron's rule, exhaustive enumeration through the
// batched kernel, the shared pieces and the dispatch; shardsweep's branch and bound is in
// transformer_branch_bound.cpp (docs/model/transformer_planner.md).
#include "transformer_planner_detail.hpp"

#include <chrono>
#include <fmt/format.h>
#include <shardsweep/kernel/batch_launch.hpp>
#include <shardsweep/model/transformer.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <stdexcept>

namespace shardsweep
{
namespace transformer_plan_detail
{

bool unevenStages( int layers, Layout& l )
{
    if ( l.pp < 2 )
        return false;
    const int middle = ( layers + l.pp - 1 ) / l.pp; // ⌈L/pp⌉ on every middle stage
    const int ends = layers - ( l.pp - 2 ) * middle; // left for the first and last stage
    const int first = ( ends + 1 ) / 2, last = ends - first;
    if ( last < 1 || first > middle )
        return false;
    l.first_stage_layers = first;
    l.last_stage_layers = last;
    return true;
}

std::vector<int> contextParallelChoices( const TransformerSpec& model, int gpus_left )
{
    std::vector<int> out;
    for ( int cp : divisorsOf( gpus_left ) )
        if ( cp == 1 ||
             ( model.seq_len % ( 2 * cp ) == 0 && model.seq_len / cp >= kMinTokensPerContextRank ) )
            out.push_back( cp );
    return out;
}

std::vector<Layout> layouts( const TransformerSpec& model, int num_gpus, std::int64_t global_batch )
{
    std::vector<Layout> out;
    for ( const auto& [tp, pp] : gpuLayouts( num_gpus ) )
    {
        if ( !tensorParallelError( model, tp ).empty() )
            continue;
        Layout stages{ tp, pp, 1 };
        if ( model.layers % pp != 0 && !unevenStages( model.layers, stages ) )
            continue;
        for ( int cp : contextParallelChoices( model, num_gpus / ( tp * pp ) ) )
        {
            const int dp = num_gpus / ( tp * pp * cp );
            if ( global_batch % dp != 0 )
                continue;
            Layout l = stages;
            l.dp = dp;
            l.cp = cp;
            if ( !model.moe() )
            {
                out.push_back( l );
                continue;
            }
            const std::int64_t stage_gpus = std::int64_t( tp ) * cp * dp;
            for ( int etp : { 0, 1 } )
            {
                if ( etp == 1 && tp == 1 )
                    continue;
                const int expert_tp = etp > 0 ? etp : tp;
                for ( int ep : divisorsOf( model.experts ) )
                    if ( stage_gpus % ( std::int64_t( ep ) * expert_tp ) == 0 )
                    {
                        Layout e = l;
                        e.ep = ep;
                        e.etp = etp;
                        out.push_back( e );
                    }
            }
        }
    }
    return out;
}

ParallelConfig baseConfig( const Layout& l, int micro_batch, std::int64_t global_batch, bool sp,
                           const TransformerPlanOptions& o )
{
    ParallelConfig c;
    c.tp = l.tp;
    c.pp = l.pp;
    c.dp = l.dp;
    c.cp = l.cp;
    c.ep = l.ep;
    c.etp = l.etp;
    c.first_stage_layers = l.first_stage_layers;
    c.last_stage_layers = l.last_stage_layers;
    c.micro_batch = micro_batch;
    c.global_batch = global_batch;
    c.sequence_parallel = sp;
    c.fused = o.fused;
    c.overlap = o.overlap;
    c.mode = RunMode::train;
    return c;
}

bool sequenceParallelAllowed( const TransformerSpec& model, const Layout& l, bool sp,
                              const TransformerPlanOptions& o )
{
    if ( sp && l.tp == 1 )
        return false;
    // An MoE model's rules depend on the layout and SP only (the micro-batch and the global batch
    // do not enter them; interleaving's are virtualStageChoices').
    return !model.moe() || parallelKnobProblem( model, baseConfig( l, 1, 1, sp, o ) ).key.empty();
}

std::vector<int> virtualStageChoices( const TransformerSpec& model, const ParallelConfig& c,
                                      bool interleave )
{
    std::vector<int> out = { 1 };
    if ( !interleave || c.pp < 2 || c.schedule != PipelineSchedule::one_f_one_b )
        return out;
    for ( int v : divisorsOf( model.layers / c.pp ) )
    {
        ParallelConfig interleaved = c;
        interleaved.virtual_stages = v;
        if ( v > 1 && parallelKnobProblem( model, interleaved ).key.empty() )
            out.push_back( v );
    }
    return out;
}

double usableGiB( const Platform& platform )
{
    return platform.gpu.memory_GiB - platform.hbm_reserve_GiB;
}

//! Keeps the configuration with the least peak memory (ties by key) for the infeasible message.
void considerLeanest( TransformerPlanResult& r, const ParallelConfig& c, double peak_GiB,
                      int stage )
{
    const bool unset = r.leanest.summary.peak_memory_GiB <= 0.0; // every GPU holds a workspace
    if ( unset || peak_GiB < r.leanest.summary.peak_memory_GiB ||
         ( peak_GiB == r.leanest.summary.peak_memory_GiB &&
           configKey( c ) < configKey( r.leanest.config ) ) )
    {
        r.leanest.config = c;
        r.leanest.summary = TransformerStepSummary{};
        r.leanest.summary.feasible = false;
        r.leanest.summary.peak_memory_GiB = peak_GiB;
        r.leanest.summary.peak_memory_stage = stage;
    }
}

//! Fills feasible/reason/top from the search's candidates.
void finish( TransformerPlanResult& r, TopK& top, const TransformerSpec& model,
             const Platform& platform, std::int64_t global_batch )
{
    r.top = std::move( top.items() );
    r.feasible = !r.top.empty();
    if ( r.feasible )
        return;
    const int gpus = platform.numGpus();
    if ( r.stats.memory_checked == 0 )
        r.reason = fmt::format(
            "no valid configuration on {} GPUs: no tp x pp x dp = {} with tp dividing the {} heads "
            "and ffn_hidden {}, pp splitting the {} layers and dp dividing the global batch {}",
            gpus, gpus, model.heads, ffnHidden( model ), model.layers, global_batch );
    else
        r.reason = fmt::format(
            "the model fits nowhere on {} GPUs: the leanest of {} configurations ({}) needs "
            "{:.3f} GiB per GPU (stage {}), more than the usable {:.3f} GiB",
            gpus, r.stats.memory_checked, parallelConfigSummary( r.leanest.config ),
            r.leanest.summary.peak_memory_GiB, r.leanest.summary.peak_memory_stage,
            usableGiB( platform ) );
}

//! Peak memory of one configuration, counted, with the leanest kept.
bool fitsInMemory( TransformerPlanResult& r, const TransformerSpec& model, const Platform& platform,
                   const ParallelConfig& c )
{
    const TransformerPeakMemory peak = transformerPeakMemory( shippedTransformerConstants(), model,
                                                              c, transformerMicroBatches( c ) );
    ++r.stats.memory_checked;
    const double GiB = peak.bytes / kGiB; // as predictTransformerStep reports and tests it
    considerLeanest( r, c, GiB, peak.stage );
    return GiB <= usableGiB( platform );
}

} // namespace transformer_plan_detail

using namespace transformer_plan_detail;

namespace
{
// ---- megatron ---------------------------------------------------------------------------------

TransformerPlanResult planMegatron( const TransformerSpec& model, const Platform& platform,
                                    std::int64_t global_batch,
                                    const TransformerPlanOptions& options )
{
    TransformerPlanResult r;
    const int gpus = platform.numGpus();
    // TP = GPUs per node (the largest degree the model and the GPU count allow within a node).
    int tp = 0;
    for ( int t : divisorsOf( gpus ) )
        if ( t <= platform.gpus_per_node && tensorParallelError( model, t ).empty() )
            tp = t;
    TopK top( 1 );
    for ( const Layout& l : layouts( model, gpus, global_batch ) )
    {
        if ( l.tp != tp || l.cp != 1 || !top.items().empty() )
            continue; // layouts come in pp-ascending order: the first that fits wins
        // No SP in the rule, but Megatron-Core runs MoE with tp > 1 only under it.
        const bool moe_sp = model.moe() && l.tp > 1;
        if ( model.moe() &&
             !parallelKnobProblem( model, baseConfig( l, 1, global_batch, moe_sp, options ) )
                  .key.empty() )
            continue;
        // The largest micro-batch that fits and still gives every stage a micro-batch in flight
        // (m ≥ pp: with fewer the pipeline never reaches its steady state, SC'21 §2.2.1); the
        // largest that fits when none does.
        const std::vector<int> micro = divisorsOf( global_batch / l.dp );
        int chosen = 0, chosen_any = 0;
        for ( auto b = micro.rbegin(); b != micro.rend() && chosen == 0; ++b )
        {
            ParallelConfig c = baseConfig( l, *b, global_batch, moe_sp, options );
            c.recompute = Recompute::full;
            if ( !fitsInMemory( r, model, platform, c ) )
                continue;
            if ( chosen_any == 0 )
                chosen_any = *b;
            if ( transformerMicroBatches( c ) >= l.pp )
                chosen = *b;
        }
        if ( chosen == 0 )
            chosen = chosen_any;
        if ( chosen > 0 )
        {
            ParallelConfig c = baseConfig( l, chosen, global_batch, moe_sp, options );
            c.recompute = Recompute::full;
            TransformerCandidate cand;
            cand.config = c;
            if ( options.price )
            {
                const TransformerOperatorCost ops =
                    transformerOperatorCost( transformerOperatorCase( platform.gpu, model, c ) );
                ++r.stats.operator_cases;
                cand.summary = predictTransformerStep( platform, model, c, ops );
                ++r.stats.priced;
            }
            top.offer( cand );
        }
    }
    const bool checked = r.stats.memory_checked > 0;
    r.stats.space = r.stats.memory_checked; // the configurations the rule looked at
    finish( r, top, model, platform, global_batch );
    if ( !r.feasible && checked )
        r.reason = fmt::format( "megatron rule (tp {} = GPUs per node, full recompute): no "
                                "pipeline depth and micro-batch fit; {}",
                                tp, r.reason );
    return r;
}

// ---- exhaustive -------------------------------------------------------------------------------

TransformerPlanResult planExhaustive( const TransformerSpec& model, const Platform& platform,
                                      std::int64_t global_batch,
                                      const TransformerPlanOptions& options )
{
    TransformerPlanResult r;
    const std::vector<ParallelConfig> space =
        transformerSearchSpace( model, platform.numGpus(), global_batch, options );
    r.stats.space = static_cast<std::int64_t>( space.size() );
    Workload workload;
    workload.name = "transformer";
    workload.kind = WorkloadKind::transformer;
    workload.transformer = model;
    workload.global_batch = global_batch;
    TopK top( options.top_k );
    // Batches of the kernel's size; the results are reduced in key order on the host.
    constexpr std::size_t kBatch = 16384;
    using Exec = Kokkos::DefaultHostExecutionSpace;
    std::vector<Plan> plans;
    std::vector<ScenarioInput> inputs;
    for ( std::size_t begin = 0; begin < space.size(); begin += kBatch )
    {
        const std::size_t n = std::min( kBatch, space.size() - begin );
        plans.assign( n, Plan{} );
        inputs.resize( n );
        for ( std::size_t i = 0; i < n; ++i )
        {
            plans[i].parallel = space[begin + i];
            inputs[i] = { &workload, &platform, &plans[i], global_batch, CostModel::native };
        }
        HostScenarioBatch host = packScenarios( inputs );
        auto device = toMemorySpace<Exec::memory_space>( host );
        evaluateBatch( Exec(), device );
        Kokkos::deep_copy( host.transformer_summary, device.transformer_summary );
        r.stats.operator_cases += static_cast<std::int64_t>( host.transformer_case.extent( 0 ) );
        for ( std::size_t i = 0; i < n; ++i )
        {
            const TransformerStepSummary& s = host.transformer_summary( int( i ) );
            ++r.stats.memory_checked;
            ++r.stats.priced;
            if ( s.feasible )
                top.offer( { space[begin + i], s } );
            else
                considerLeanest( r, space[begin + i], s.peak_memory_GiB, s.peak_memory_stage );
        }
    }
    finish( r, top, model, platform, global_batch );
    return r;
}

} // namespace

bool transformerCandidateBefore( const TransformerCandidate& a, const TransformerCandidate& b )
{
    if ( a.summary.iteration_ms != b.summary.iteration_ms )
        return a.summary.iteration_ms < b.summary.iteration_ms;
    if ( a.summary.peak_memory_GiB != b.summary.peak_memory_GiB )
        return a.summary.peak_memory_GiB < b.summary.peak_memory_GiB;
    return configKey( a.config ) < configKey( b.config );
}

std::vector<ParallelConfig> transformerSearchSpace( const TransformerSpec& model, int num_gpus,
                                                    std::int64_t global_batch,
                                                    const TransformerPlanOptions& options )
{
    std::vector<ParallelConfig> out;
    for ( const Layout& l : layouts( model, num_gpus, global_batch ) )
    {
        const bool allowed[2] = { sequenceParallelAllowed( model, l, false, options ),
                                  sequenceParallelAllowed( model, l, true, options ) };
        for ( int b : divisorsOf( global_batch / l.dp ) )
            for ( Recompute recompute : kRecomputes )
                for ( int z = 0; z <= ( l.dp * l.cp > 1 ? 3 : 0 ); ++z )
                    for ( bool sp : { false, true } )
                        for ( int si = 0; si < ( l.pp > 1 ? 2 : 1 ); ++si )
                        {
                            if ( !allowed[sp] )
                                continue;
                            ParallelConfig c = baseConfig( l, b, global_batch, sp, options );
                            c.recompute = recompute;
                            c.zero = z;
                            c.schedule = kSchedules[si];
                            for ( int v : virtualStageChoices( model, c, options.interleave ) )
                            {
                                c.virtual_stages = v;
                                out.push_back( c );
                            }
                        }
    }
    return out;
}

TransformerPlanResult planTransformer( PlannerKind kind, const TransformerSpec& model,
                                       const Platform& platform, std::int64_t global_batch,
                                       const TransformerPlanOptions& options )
{
    const auto start = std::chrono::steady_clock::now();
    TransformerPlanResult r;
    switch ( kind )
    {
    case PlannerKind::megatron:
        r = planMegatron( model, platform, global_batch, options );
        break;
    case PlannerKind::exhaustive:
        r = planExhaustive( model, platform, global_batch, options );
        break;
    case PlannerKind::shardsweep:
        r = transformer_plan_detail::planBranchAndBound( model, platform, global_batch, options );
        break;
    default:
        throw std::invalid_argument( std::string( "planner " ) + plannerName( kind ) +
                                     " does not plan transformer workloads" );
    }
    r.plan_seconds =
        std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count();
    return r;
}

} // namespace shardsweep
