#pragma once
//! \file transformer_planner_detail.hpp
//! \brief Pieces shared by the transformer planners' implementations (src/plan/transformer_*.cpp;
//! not part of the public API): layouts, the K-best list, the memory check and the result's
//! reason.
#include <algorithm>
#include <shardsweep/plan/transformer_planner.hpp>
#include <tuple>
#include <vector>

namespace shardsweep
{
namespace transformer_plan_detail
{

inline constexpr double kGiB = 1073741824.0;
//! A bound and the price it bounds are computed with the same functions but summed in a different
//! order (P(r) + Q(z) against pipeline + post; GPipe's sums against 1F1B's): a bound may exceed
//! the price by a few ulps. Pruning asks for a margin far above that and far below any real gap.
inline constexpr double kBoundSlack = 1e-9;

inline constexpr Recompute kRecomputes[] = { Recompute::none, Recompute::selective,
                                             Recompute::full };
inline constexpr PipelineSchedule kSchedules[] = { PipelineSchedule::one_f_one_b,
                                                   PipelineSchedule::gpipe };

inline auto configKey( const ParallelConfig& c )
{
    return std::make_tuple( c.tp, c.pp, c.micro_batch, int( c.recompute ), c.zero,
                            c.sequence_parallel, int( c.schedule ), c.virtual_stages, c.cp, c.ep,
                            c.etp );
}

//! A (tp, pp, dp) layout the model and the global batch allow; for an MoE model with its expert
//! layout (ep, etp; etp 0 = tp).
struct Layout
{
    int tp, pp, dp;
    int cp = 1;
    int ep = 1;
    int etp = 0;
    int first_stage_layers = 0; //!< 0: even stages (pp divides the layers)
    int last_stage_layers = 0;
};

//! Context parallelism pays for its ring exchange only on long sequences: the planners search cp
//! > 1 where every CP rank keeps at least this many tokens of a sequence (Megatron-Core's
//! guidance is cp for sequences of 8K tokens and more; 2048 lets 4K sequences try cp 2).
inline constexpr int kMinTokensPerContextRank = 2048;

//! The context-parallel sizes searched with `gpus_left` = GPUs / (tp·pp): 1, and every divisor cp
//! of it with 2·cp dividing seq_len and seq_len/cp ≥ kMinTokensPerContextRank, ascending.
std::vector<int> contextParallelChoices( const TransformerSpec& model, int gpus_left );

//! When pp does not divide `layers`: the uneven stages searched, set in `l` (true), or none
//! (false). Every middle stage takes ⌈L/pp⌉ layers and the first and last stage share the rest,
//! the first one more when it is odd (it also holds the embedding; an MoE model's dense layers
//! must fit in it), each at least 1 and at most ⌈L/pp⌉: DeepSeek-V3's 61 layers on 16 stages are
//! 3 + 14·4 + 2.
bool unevenStages( int layers, Layout& l );

//! The (tp, pp, dp) layouts of `num_gpus` the model and the global batch allow, tp ascending then
//! pp ascending (pp not dividing the layers: with unevenStages), each with every cp of
//! contextParallelChoices (dp = GPUs/(tp·pp·cp) dividing the global batch); an MoE model's each
//! with every expert layout: etp = tp, then etp = 1 (when tp > 1), each with every ep dividing the
//! experts with ep·etp dividing tp·cp·dp, ascending.
std::vector<Layout> layouts( const TransformerSpec& model, int num_gpus,
                             std::int64_t global_batch );

//! A training configuration of layout `l` (recompute none, ZeRO 0, 1F1B, one chunk per stage) with
//! the run's properties of `o` (fused attention, overlap).
ParallelConfig baseConfig( const Layout& l, int micro_batch, std::int64_t global_batch, bool sp,
                           const TransformerPlanOptions& o );

//! Whether layout `l` is searched with sequence parallelism `sp`: not on a TP group of one (the
//! model cannot tell it apart), and for an MoE model only as Megatron-Core allows (SP with tp >
//! 1, the dense layers in the first stage: parallelKnobProblem).
bool sequenceParallelAllowed( const TransformerSpec& model, const Layout& l, bool sp,
                              const TransformerPlanOptions& o );

//! The virtual pipeline sizes searched for `c` (its layout, micro-batch and schedule): 1, and
//! under 1F1B with pp > 1 and the micro-batches a multiple of pp every v > 1 dividing layers/pp
//! (Megatron's interleaved schedule; parallelKnobProblem's rules), ascending; only 1 when
//! `interleave` is false.
std::vector<int> virtualStageChoices( const TransformerSpec& model, const ParallelConfig& c,
                                      bool interleave );

//! The GPU's memory less the platform's reserve, GiB.
double usableGiB( const Platform& platform );

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
                      int stage );

//! Fills feasible, reason and top from the search's candidates.
void finish( TransformerPlanResult& r, TopK& top, const TransformerSpec& model,
             const Platform& platform, std::int64_t global_batch );

//! Whether `c` fits in memory (the step's rule), counted in r.stats, the leanest kept.
bool fitsInMemory( TransformerPlanResult& r, const TransformerSpec& model, const Platform& platform,
                   const ParallelConfig& c );

//! shardsweep's branch and bound (src/plan/transformer_branch_bound.cpp).
TransformerPlanResult planBranchAndBound( const TransformerSpec& model, const Platform& platform,
                                          std::int64_t global_batch,
                                          const TransformerPlanOptions& options );

} // namespace transformer_plan_detail
} // namespace shardsweep
