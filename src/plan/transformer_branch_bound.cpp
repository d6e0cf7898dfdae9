// shardsweep's transformer planner: branch and bound over the configurations, exhaustive's top K
// with few configurations priced (docs/model/transformer_planner.md, "shardsweep: branch and
// bound").
#include "transformer_planner_detail.hpp"

#include <algorithm>
#include <map>
#include <shardsweep/model/transformer.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <tuple>

namespace shardsweep
{
namespace transformer_plan_detail
{
namespace
{
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

} // namespace

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

} // namespace transformer_plan_detail
} // namespace shardsweep
