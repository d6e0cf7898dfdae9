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
namespace td = transformer_detail;

//! One (layout, micro-batch, SP): the configurations sharing an operator case and a pipeline
//! shape; they differ in recompute, ZeRO, schedule and virtual pipeline size.
struct Family
{
    Layout layout;
    int micro_batch = 1;
    bool sp = false;
    std::vector<int> vs;               //!< virtual pipeline sizes searched, 1 first (GPipe: only 1)
    std::vector<char> fits;            //!< [recompute][zero][schedule][v] within memory (fitIndex)
    bool any_zero[4] = {};             //!< some recompute/schedule/v fits with this ZeRO stage
    std::vector<char> any_rv;          //!< [recompute][v]: some ZeRO stage and schedule fits
    double post_bound[4] = {};         //!< Q(z): first stage's gradient sync + optimizer
    std::vector<double> pipeline_none; //!< per v: the 1F1B pipeline without recompute
    double bound = 0.0;                //!< over the family's fitting configurations
    int ops = -1;                      //!< index of its operator cost

    std::size_t fitIndex( int ri, int z, int si, int vi ) const
    {
        return ( ( std::size_t( ri ) * 4 + z ) * 2 + si ) * vs.size() + vi;
    }
    std::size_t rvIndex( int ri, int vi ) const { return std::size_t( ri ) * vs.size() + vi; }
};

//! One configuration of a family with its bound, and its recompute, ZeRO, schedule and virtual
//! pipeline indices.
struct Variant
{
    double bound;
    ParallelConfig config;
    int ri, z, si, vi;
};

//! One branch-and-bound search: its inputs, the result whose statistics it counts and the
//! operator costs priced so far (one per (tp, micro-batch, SP)).
class BranchAndBound
{
  public:
    BranchAndBound( const TransformerSpec& model, const Platform& platform,
                    std::int64_t global_batch, const TransformerPlanOptions& options,
                    TransformerPlanResult& r )
        : _model( model ), _platform( platform ), _global_batch( global_batch ),
          _options( options ), _r( r )
    {
    }

    //! Every family with a configuration that fits in memory, its fits filled in.
    std::vector<Family> fittingFamilies()
    {
        std::vector<Family> families;
        for ( const Layout& l : layouts( _model, _platform.numGpus(), _global_batch ) )
            for ( int b : divisorsOf( _global_batch / l.dp ) )
                for ( bool sp : { false, true } )
                {
                    if ( !sequenceParallelAllowed( _model, l, sp, _options ) )
                        continue;
                    Family f;
                    f.layout = l;
                    f.micro_batch = b;
                    f.sp = sp;
                    if ( fillFits( f ) )
                        families.push_back( f );
                }
        return families;
    }

    //! f.ops, f.pipeline_none, f.post_bound and f.bound: the family's operator case (priced on
    //! first use) and its bound min_v P(none, v) + min_z Q(z). Q(z), the first stage's gradient
    //! sync and optimizer, does not depend on v; with overlap it shrinks as the backward it hides
    //! under grows, so it is taken at full recompute, the longest backward (a bound for every
    //! recompute; the pipeline only grows with recompute).
    void bound( Family& f )
    {
        f.ops = operatorCase( f );
        ParallelConfig c = familyConfig( f );
        f.pipeline_none.assign( f.vs.size(), 0.0 );
        double best_pipeline = -1.0;
        for ( std::size_t vi = 0; vi < f.vs.size(); ++vi )
        {
            bool any = false;
            for ( int ri = 0; ri < 3; ++ri )
                any |= f.any_rv[f.rvIndex( ri, int( vi ) )] != 0;
            if ( !any )
                continue;
            c.virtual_stages = f.vs[vi];
            f.pipeline_none[vi] = pipelineOneFOneB( f, c );
            if ( best_pipeline < 0.0 || f.pipeline_none[vi] < best_pipeline )
                best_pipeline = f.pipeline_none[vi];
        }
        c.virtual_stages = 1;
        c.recompute = c.overlap ? Recompute::full : Recompute::none;
        double best_post = -1.0;
        for ( int z = 0; z < 4; ++z )
        {
            if ( !f.any_zero[z] )
                continue;
            c.zero = z;
            const td::StageTimes first =
                transformerStageTimes( shippedTransformerConstants(), _platform, _model, c,
                                       _ops[f.ops], 0, transformerMicroBatches( c ) );
            ++_r.stats.stage_bounds;
            f.post_bound[z] = first.dp + first.opt;
            if ( best_post < 0.0 || f.post_bound[z] < best_post )
                best_post = f.post_bound[z];
        }
        f.bound = best_pipeline + best_post;
    }

    //! Prices the family's configurations in bound order while they can enter `top`.
    void priceFamily( const Family& f, TopK& top )
    {
        const std::vector<Variant> variants = variantsInBoundOrder( f );
        double priced_1f1b[3][4]; // the v = 1 twins of GPipe
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
                predictTransformerStep( _platform, _model, v.config, _ops[f.ops] );
            ++_r.stats.priced;
            if ( v.si == 0 && v.vi == 0 )
                priced_1f1b[v.ri][v.z] = s.iteration_ms;
            if ( s.feasible )
                top.offer( { v.config, s } );
        }
    }

  private:
    //! The family's base configuration (recompute none, ZeRO 0, 1F1B).
    ParallelConfig familyConfig( const Family& f ) const
    {
        return baseConfig( f.layout, f.micro_batch, _global_batch, f.sp, _options );
    }

    //! f.vs, f.fits, f.any_zero and f.any_rv from the closed-form peak memory of every
    //! configuration of the family; true when one fits.
    bool fillFits( Family& f )
    {
        const Layout& l = f.layout;
        bool any = false;
        ParallelConfig c = familyConfig( f );
        f.vs = virtualStageChoices( _model, c, _options.interleave );
        f.fits.assign( 3 * 4 * 2 * f.vs.size(), 0 );
        f.any_rv.assign( 3 * f.vs.size(), 0 );
        for ( int ri = 0; ri < 3; ++ri )
            for ( int z = 0; z <= ( l.dp * l.cp > 1 ? 3 : 0 ); ++z )
                for ( int si = 0; si < ( l.pp > 1 ? 2 : 1 ); ++si )
                    for ( std::size_t vi = 0; vi < ( si == 0 ? f.vs.size() : 1 ); ++vi )
                    {
                        c.recompute = kRecomputes[ri];
                        c.zero = z;
                        c.schedule = kSchedules[si];
                        c.virtual_stages = f.vs[vi];
                        ++_r.stats.space;
                        const bool fits = fitsInMemory( _r, _model, _platform, c );
                        f.fits[f.fitIndex( ri, z, si, int( vi ) )] = fits;
                        f.any_zero[z] |= fits;
                        f.any_rv[f.rvIndex( ri, int( vi ) )] |= fits;
                        any |= fits;
                    }
        return any;
    }

    //! The index of the family's operator cost, priced when its (tp, micro-batch, SP) is new.
    int operatorCase( const Family& f )
    {
        const auto key = std::make_tuple( f.layout.tp, f.micro_batch, f.sp, f.layout.cp,
                                          f.layout.ep, f.layout.etp );
        auto [it, fresh] = _ops_index.emplace( key, static_cast<int>( _ops.size() ) );
        if ( fresh )
        {
            const ParallelConfig c = familyConfig( f );
            _ops.push_back(
                transformerOperatorCost( transformerOperatorCase( _platform.gpu, _model, c ) ) );
            ++_r.stats.operator_cases;
        }
        return it->second;
    }

    //! The pipeline time of `c` (a configuration of `f`) under 1F1B (interleaved with its v).
    double pipelineOneFOneB( const Family& f, const ParallelConfig& c )
    {
        const double m = transformerMicroBatches( c );
        const TransformerOperatorCost& o = _ops[f.ops];
        const int pp = c.pp;
        const td::StageTimes first =
            transformerStageTimes( shippedTransformerConstants(), _platform, _model, c, o, 0, m );
        const td::StageTimes last =
            pp > 1 ? transformerStageTimes( shippedTransformerConstants(), _platform, _model, c, o,
                                            pp - 1, m )
                   : first;
        const td::StageTimes mid = pp > 2 ? transformerStageTimes( shippedTransformerConstants(),
                                                                   _platform, _model, c, o, 1, m )
                                          : first;
        _r.stats.stage_bounds += 1 + ( pp > 1 ) + ( pp > 2 );
        return transformerPipelineMs( PipelineSchedule::one_f_one_b, true, pp, first, mid, last, m,
                                      c.virtual_stages );
    }

    //! The family's fitting configurations with their bounds P(r, v) + Q(z), in bound order (ties
    //! by key); P(r, v) priced for each recompute and v some configuration fits with (GPipe's
    //! bound is its 1F1B twin's: never faster).
    std::vector<Variant> variantsInBoundOrder( const Family& f )
    {
        std::vector<double> pipeline( 3 * f.vs.size(), 0.0 );
        ParallelConfig c = familyConfig( f );
        for ( int ri = 0; ri < 3; ++ri )
            for ( std::size_t vi = 0; vi < f.vs.size(); ++vi )
            {
                if ( ri == 0 )
                    pipeline[f.rvIndex( ri, int( vi ) )] = f.pipeline_none[vi];
                else if ( f.any_rv[f.rvIndex( ri, int( vi ) )] )
                {
                    c.recompute = kRecomputes[ri];
                    c.virtual_stages = f.vs[vi];
                    pipeline[f.rvIndex( ri, int( vi ) )] = pipelineOneFOneB( f, c );
                }
            }
        std::vector<Variant> variants;
        for ( int ri = 0; ri < 3; ++ri )
            for ( int z = 0; z < 4; ++z )
                for ( int si = 0; si < 2; ++si )
                    for ( std::size_t vi = 0; vi < ( si == 0 ? f.vs.size() : 1 ); ++vi )
                        if ( f.fits[f.fitIndex( ri, z, si, int( vi ) )] )
                        {
                            c.recompute = kRecomputes[ri];
                            c.zero = z;
                            c.schedule = kSchedules[si];
                            c.virtual_stages = f.vs[vi];
                            variants.push_back(
                                { pipeline[f.rvIndex( ri, int( vi ) )] + f.post_bound[z], c, ri, z,
                                  si, int( vi ) } );
                        }
        std::sort( variants.begin(), variants.end(),
                   []( const Variant& a, const Variant& b )
                   {
                       return a.bound != b.bound ? a.bound < b.bound
                                                 : configKey( a.config ) < configKey( b.config );
                   } );
        return variants;
    }

    const TransformerSpec& _model;
    const Platform& _platform;
    std::int64_t _global_batch;
    const TransformerPlanOptions& _options;
    TransformerPlanResult& _r;
    std::map<std::tuple<int, int, bool, int, int, int>, int> _ops_index;
    std::vector<TransformerOperatorCost> _ops;
};

} // namespace

TransformerPlanResult planBranchAndBound( const TransformerSpec& model, const Platform& platform,
                                          std::int64_t global_batch,
                                          const TransformerPlanOptions& options )
{
    TransformerPlanResult r;
    BranchAndBound search( model, platform, global_batch, options, r );

    // 1. Memory: the closed-form peak of every configuration; families with none that fits
    // are dropped before any time is priced.
    std::vector<Family> families = search.fittingFamilies();

    // 2. Family bounds: the operator case once per (tp, micro-batch, SP); the pipeline with no
    // recompute under 1F1B (every other recompute and GPipe only add: transformerPipelineMs)
    // plus the first stage's post-pipeline time Q(z) (the iteration's post part is at least it).
    for ( Family& f : families )
        search.bound( f );
    std::sort( families.begin(), families.end(),
               []( const Family& a, const Family& b )
               {
                   return std::make_tuple( a.bound, a.layout.tp, a.layout.pp, a.micro_batch, a.sp,
                                           a.layout.cp, a.layout.ep, a.layout.etp ) <
                          std::make_tuple( b.bound, b.layout.tp, b.layout.pp, b.micro_batch, b.sp,
                                           b.layout.cp, b.layout.ep, b.layout.etp );
               } );

    // 3. Best-first: families in bound order until the K-th best beats the next bound; inside a
    // family its configurations in bound order, priced in full only while they can enter.
    TopK top( options.top_k );
    for ( const Family& f : families )
    {
        if ( top.excludes( f.bound ) )
            break;
        search.priceFamily( f, top );
    }
    finish( r, top, model, platform, global_batch );
    return r;
}

} // namespace transformer_plan_detail
} // namespace shardsweep
