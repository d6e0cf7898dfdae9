// Transformer parallelisation planners: megatron's rule, exhaustive enumeration through the
// batched kernel, and shardsweep's branch and bound (docs/model/transformer_planner.md).
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <map>
#include <shardsweep/kernel/scenario_batch.hpp>
#include <shardsweep/model/transformer.hpp>
#include <shardsweep/plan/transformer_planner.hpp>
#include <shardsweep/scenario/transformer_config.hpp>
#include <stdexcept>
#include <tuple>

namespace shardsweep
{

namespace
{

constexpr double kGiB = 1073741824.0;
//! A bound and the price it bounds are computed with the same functions but summed in a different
//! order (P(r) + Q(z) against pipeline + post; GPipe's sums against 1F1B's): a bound may exceed
//! the price by a few ulps. Pruning asks for a margin far above that and far below any real gap.
constexpr double kBoundSlack = 1e-9;

const Recompute kRecomputes[] = { Recompute::none, Recompute::selective, Recompute::full };
const PipelineSchedule kSchedules[] = { PipelineSchedule::one_f_one_b, PipelineSchedule::gpipe };

auto configKey( const ParallelConfig& c )
{
    return std::make_tuple( c.tp, c.pp, c.micro_batch, int( c.recompute ), c.zero,
                            c.sequence_parallel, int( c.schedule ) );
}

//! A (tp, pp, dp) layout the model and the global batch allow.
struct Layout
{
    int tp, pp, dp;
};

std::vector<Layout> layouts( const TransformerSpec& model, int num_gpus, std::int64_t global_batch )
{
    std::vector<Layout> out;
    for ( const auto& [tp, pp] : gpuLayouts( num_gpus ) )
    {
        const int dp = num_gpus / ( tp * pp );
        if ( model.heads % tp == 0 && ffnHidden( model ) % tp == 0 && model.layers % pp == 0 &&
             global_batch % dp == 0 )
            out.push_back( { tp, pp, dp } );
    }
    return out;
}

ParallelConfig baseConfig( const Layout& l, int micro_batch, std::int64_t global_batch, bool sp,
                           bool fused )
{
    ParallelConfig c;
    c.tp = l.tp;
    c.pp = l.pp;
    c.dp = l.dp;
    c.micro_batch = micro_batch;
    c.global_batch = global_batch;
    c.sequence_parallel = sp;
    c.fused = fused;
    c.mode = RunMode::train;
    return c;
}

double usableGiB( const Platform& platform )
{
    return platform.gpu.memory_GiB - platform.hbm_reserve_GiB;
}

//! The K best candidates seen, best first.
class TopK
{
  public:
    explicit TopK( int k ) : _k( std::max( 1, k ) ) {}
    void offer( const TransformerCandidate& c )
    {
        if ( full() && !transformerCandidateBefore( c, _items.back() ) )
            return;
        _items.insert(
            std::upper_bound( _items.begin(), _items.end(), c, transformerCandidateBefore ), c );
        if ( static_cast<int>( _items.size() ) > _k )
            _items.pop_back();
    }
    //! True when no configuration priced at `bound` or more can enter: slower than the K-th
    //! best beyond rounding (a tie is priced: memory and key rank it).
    bool excludes( double bound ) const
    {
        return full() && bound * ( 1.0 - kBoundSlack ) > _items.back().summary.iteration_ms;
    }
    bool full() const { return static_cast<int>( _items.size() ) >= _k; }
    std::vector<TransformerCandidate>& items() { return _items; }

  private:
    int _k;
    std::vector<TransformerCandidate> _items;
};

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
            "and ffn_hidden {}, pp dividing the {} layers and dp dividing the global batch {}",
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
    const TransformerPeakMemory peak =
        transformerPeakMemory( kTransformerConstants, model, c, transformerMicroBatches( c ) );
    ++r.stats.memory_checked;
    const double GiB = peak.bytes / kGiB; // as predictTransformerStep reports and tests it
    considerLeanest( r, c, GiB, peak.stage );
    return GiB <= usableGiB( platform );
}

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
        if ( t <= platform.gpus_per_node && model.heads % t == 0 && ffnHidden( model ) % t == 0 )
            tp = t;
    TopK top( 1 );
    for ( const Layout& l : layouts( model, gpus, global_batch ) )
    {
        if ( l.tp != tp || !top.items().empty() )
            continue; // layouts come in pp-ascending order: the first that fits wins
        // The largest micro-batch that fits and still gives every stage a micro-batch in flight
        // (m ≥ pp: with fewer the pipeline never reaches its steady state, SC'21 §2.2.1); the
        // largest that fits when none does.
        const std::vector<int> micro = divisorsOf( global_batch / l.dp );
        int chosen = 0, chosen_any = 0;
        for ( auto b = micro.rbegin(); b != micro.rend() && chosen == 0; ++b )
        {
            ParallelConfig c = baseConfig( l, *b, global_batch, false, options.fused );
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
            ParallelConfig c = baseConfig( l, chosen, global_batch, false, options.fused );
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
        transformerSearchSpace( model, platform.numGpus(), global_batch, options.fused );
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

// ---- shardsweep: branch and bound ---------------------------------------------------------------

//! One (layout, micro-batch, SP): the configurations sharing an operator case and a pipeline
//! shape; they differ in recompute, ZeRO and schedule.
struct Family
{
    Layout layout;
    int micro_batch = 1;
    bool sp = false;
    bool fits[3][4][2] = {}; //!< [recompute][zero][schedule] within memory
    bool any_zero[4] = {};   //!< some recompute/schedule fits with this ZeRO stage
    bool any_recompute[3] = {};
    double post_bound[4] = {}; //!< Q(z): first stage's gradient sync + optimizer
    double pipeline_none = 0.0;
    double bound = 0.0; //!< over the family's fitting configurations
    int ops = -1;       //!< index of its operator cost
};

TransformerPlanResult planBranchAndBound( const TransformerSpec& model, const Platform& platform,
                                          std::int64_t global_batch,
                                          const TransformerPlanOptions& options )
{
    namespace td = transformer_detail;
    TransformerPlanResult r;
    const int gpus = platform.numGpus();
    const TransformerConstants& k = kTransformerConstants;

    // 1. Memory: the closed-form peak of every configuration; families with none that fits
    // are dropped before any time is priced.
    std::vector<Family> families;
    for ( const Layout& l : layouts( model, gpus, global_batch ) )
        for ( int b : divisorsOf( global_batch / l.dp ) )
            for ( bool sp : { false, true } )
            {
                if ( sp && l.tp == 1 )
                    continue;
                Family f;
                f.layout = l;
                f.micro_batch = b;
                f.sp = sp;
                bool any = false;
                ParallelConfig c = baseConfig( l, b, global_batch, sp, options.fused );
                for ( int ri = 0; ri < 3; ++ri )
                    for ( int z = 0; z <= ( l.dp > 1 ? 3 : 0 ); ++z )
                        for ( int si = 0; si < ( l.pp > 1 ? 2 : 1 ); ++si )
                        {
                            c.recompute = kRecomputes[ri];
                            c.zero = z;
                            c.schedule = kSchedules[si];
                            ++r.stats.space;
                            const bool fits = fitsInMemory( r, model, platform, c );
                            f.fits[ri][z][si] = fits;
                            f.any_zero[z] |= fits;
                            f.any_recompute[ri] |= fits;
                            any |= fits;
                        }
                if ( any )
                    families.push_back( f );
            }

    // 2. Family bounds: the operator case once per (tp, micro-batch, SP); the pipeline with no
    // recompute under 1F1B (every other recompute and GPipe only add: transformerPipelineMs)
    // plus the first stage's post-pipeline time Q(z) (the iteration's post part is at least it).
    std::map<std::tuple<int, int, bool>, int> ops_index;
    std::vector<TransformerOperatorCost> ops;
    auto stages = [&]( const Family& f, const ParallelConfig& c, td::StageTimes& first,
                       td::StageTimes& mid, td::StageTimes& last )
    {
        const double m = transformerMicroBatches( c );
        const TransformerOperatorCost& o = ops[f.ops];
        const int pp = c.pp;
        first = transformerStageTimes( k, platform, model, c, o, 0, m );
        last = pp > 1 ? transformerStageTimes( k, platform, model, c, o, pp - 1, m ) : first;
        mid = pp > 2 ? transformerStageTimes( k, platform, model, c, o, 1, m ) : first;
        r.stats.stage_bounds += 1 + ( pp > 1 ) + ( pp > 2 );
        return transformerPipelineMs( PipelineSchedule::one_f_one_b, true, pp, first, mid, last,
                                      m );
    };
    for ( Family& f : families )
    {
        const auto key = std::make_tuple( f.layout.tp, f.micro_batch, f.sp );
        auto [it, fresh] = ops_index.emplace( key, static_cast<int>( ops.size() ) );
        if ( fresh )
        {
            const ParallelConfig c =
                baseConfig( f.layout, f.micro_batch, global_batch, f.sp, options.fused );
            ops.push_back(
                transformerOperatorCost( transformerOperatorCase( platform.gpu, model, c ) ) );
            ++r.stats.operator_cases;
        }
        f.ops = it->second;
        ParallelConfig c = baseConfig( f.layout, f.micro_batch, global_batch, f.sp, options.fused );
        td::StageTimes first, mid, last;
        f.pipeline_none = stages( f, c, first, mid, last );
        double best_post = -1.0;
        for ( int z = 0; z < 4; ++z )
        {
            if ( !f.any_zero[z] )
                continue;
            if ( z > 0 )
            {
                c.zero = z;
                first = transformerStageTimes( k, platform, model, c, ops[f.ops], 0,
                                               transformerMicroBatches( c ) );
                ++r.stats.stage_bounds;
            }
            f.post_bound[z] = first.dp + first.opt;
            if ( best_post < 0.0 || f.post_bound[z] < best_post )
                best_post = f.post_bound[z];
        }
        f.bound = f.pipeline_none + best_post;
    }
    std::sort( families.begin(), families.end(),
               []( const Family& a, const Family& b )
               {
                   return std::make_tuple( a.bound, a.layout.tp, a.layout.pp, a.micro_batch,
                                           a.sp ) <
                          std::make_tuple( b.bound, b.layout.tp, b.layout.pp, b.micro_batch, b.sp );
               } );

    // 3. Best-first: families in bound order until the K-th best beats the next bound; inside a
    // family its configurations in bound order, priced in full only while they can enter.
    TopK top( options.top_k );
    struct Variant
    {
        double bound;
        ParallelConfig config;
        int ri, z, si;
    };
    std::vector<Variant> variants;
    for ( const Family& f : families )
    {
        if ( top.excludes( f.bound ) )
            break;
        double pipeline[3] = { f.pipeline_none, 0.0, 0.0 };
        ParallelConfig c = baseConfig( f.layout, f.micro_batch, global_batch, f.sp, options.fused );
        for ( int ri = 1; ri < 3; ++ri )
            if ( f.any_recompute[ri] )
            {
                c.recompute = kRecomputes[ri];
                td::StageTimes first, mid, last;
                pipeline[ri] = stages( f, c, first, mid, last );
            }
        variants.clear();
        for ( int ri = 0; ri < 3; ++ri )
            for ( int z = 0; z < 4; ++z )
                for ( int si = 0; si < 2; ++si )
                    if ( f.fits[ri][z][si] )
                    {
                        c.recompute = kRecomputes[ri];
                        c.zero = z;
                        c.schedule = kSchedules[si];
                        variants.push_back( { pipeline[ri] + f.post_bound[z], c, ri, z, si } );
                    }
        std::sort( variants.begin(), variants.end(),
                   []( const Variant& a, const Variant& b )
                   {
                       return a.bound != b.bound ? a.bound < b.bound
                                                 : configKey( a.config ) < configKey( b.config );
                   } );
        double priced_1f1b[3][4];
        std::fill( &priced_1f1b[0][0], &priced_1f1b[0][0] + 12, -1.0 );
        for ( const Variant& v : variants )
        {
            if ( top.excludes( v.bound ) )
                break;
            // GPipe is never faster than its 1F1B twin (same stages, same post part).
            const double bound = v.si == 1 ? std::max( v.bound, priced_1f1b[v.ri][v.z] ) : v.bound;
            if ( top.excludes( bound ) )
                continue;
            const TransformerStepSummary s =
                predictTransformerStep( platform, model, v.config, ops[f.ops] );
            ++r.stats.priced;
            if ( v.si == 0 )
                priced_1f1b[v.ri][v.z] = s.iteration_ms;
            if ( s.feasible )
                top.offer( { v.config, s } );
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
                                                    std::int64_t global_batch, bool fused )
{
    std::vector<ParallelConfig> out;
    for ( const Layout& l : layouts( model, num_gpus, global_batch ) )
        for ( int b : divisorsOf( global_batch / l.dp ) )
            for ( Recompute recompute : kRecomputes )
                for ( int z = 0; z <= ( l.dp > 1 ? 3 : 0 ); ++z )
                    for ( bool sp : { false, true } )
                        for ( int si = 0; si < ( l.pp > 1 ? 2 : 1 ); ++si )
                        {
                            if ( sp && l.tp == 1 )
                                continue;
                            ParallelConfig c = baseConfig( l, b, global_batch, sp, fused );
                            c.recompute = recompute;
                            c.zero = z;
                            c.schedule = kSchedules[si];
                            out.push_back( c );
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
        r = planBranchAndBound( model, platform, global_batch, options );
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
