// Transformer parallelisation planners (plan/transformer_planner.hpp): the search space counted
// by hand, shardsweep's branch and bound and the kernel-priced exhaustive search against a
// brute force without pruning (plain loop over the model functions), megatron's rule, infeasible
// tasks.
#include "test_gpus.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <set>
#include <shardsweep/model/transformer.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <shardsweep/plan/transformer_planner.hpp>
#include <string>
#include <tuple>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
//! Nodes of 8 A100-80GB (NVSwitch) on a 25 GB/s network; `memory_GiB` replaces the 80 GiB.
Platform cluster( int gpus, double memory_GiB = 80.0 )
{
    Platform p;
    p.gpu = a100Gpu( memory_GiB, 2039 );
    p.hbm_reserve_GiB = 1;
    p.gpus_per_node = std::min( gpus, 8 );
    p.num_nodes = std::max( 1, gpus / 8 );
    p.network.num_dims = gpus > 8 ? 2 : 1;
    p.network.dims[0] = { Topology::Switch, p.gpus_per_node, 230.0, 3000.0 };
    if ( gpus > 8 )
        p.network.dims[1] = { Topology::Switch, gpus / 8, 12.0, 2500.0 };
    p.system.preferred_dataset_splits = 1;
    p.system.active_chunks_per_dimension = 1;
    return p;
}

TransformerSpec gptModel( int layers, int hidden, int heads, int seq_len = 2048 )
{
    TransformerSpec m;
    m.arch = TransformerArch::gpt;
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.seq_len = seq_len;
    m.vocab = 50257;
    m.dtype = DataType::bf16;
    return m;
}

auto key( const ParallelConfig& c )
{
    return std::make_tuple( c.tp, c.pp, c.dp, c.micro_batch, int( c.recompute ), c.zero,
                            c.sequence_parallel, int( c.schedule ), c.virtual_stages, c.cp,
                            c.first_stage_layers, c.last_stage_layers );
}

//! Every configuration priced with the model functions in a plain loop, no pruning of any kind;
//! the `k` best that fit, by (time, key).
std::vector<TransformerCandidate> bruteForce( const TransformerSpec& m, const Platform& p,
                                              std::int64_t batch, int k,
                                              const TransformerPlanOptions& o = {} )
{
    std::vector<TransformerCandidate> all;
    for ( const ParallelConfig& c : transformerSearchSpace( m, p.numGpus(), batch, o ) )
    {
        const TransformerOperatorCost ops =
            transformerOperatorCost( transformerOperatorCase( p.gpu, m, c ) );
        const TransformerStepSummary s = predictTransformerStep( p, m, c, ops );
        if ( s.feasible )
            all.push_back( { c, s } );
    }
    std::sort( all.begin(), all.end(), transformerCandidateBefore );
    all.resize( std::min<std::size_t>( all.size(), std::size_t( k ) ) );
    return all;
}

void expectSameTop( const std::vector<TransformerCandidate>& want,
                    const std::vector<TransformerCandidate>& got, const std::string& what )
{
    ASSERT_EQ( want.size(), got.size() ) << what;
    for ( std::size_t i = 0; i < want.size(); ++i )
    {
        EXPECT_EQ( key( want[i].config ), key( got[i].config ) )
            << what << " rank " << i << ": want " << parallelConfigSummary( want[i].config )
            << ", got " << parallelConfigSummary( got[i].config );
        EXPECT_EQ( want[i].summary.iteration_ms, got[i].summary.iteration_ms ) << what << i;
    }
}
} // namespace

// N = 4 GPUs, 4 heads, 4 layers, global batch 4. Layouts (tp, pp, dp): (1,1,4) (1,2,2) (1,4,1)
// (2,1,2) (2,2,1) (4,1,1); micro-batches: divisors of 4/dp. Per layout and micro-batch 3
// recomputes x ZeRO (4 when dp > 1) x schedule (2 when pp > 1) x SP (2 when tp > 1):
// 12·1 + 24·2 + 6·3 + 24·2 + 12·3 + 6·3 = 180. Interleaved 1F1B adds v = 2 (layers/pp = 2) where
// pp divides the micro-batches: (1,2,2) with b = 1 (m = 2), 3 x 4 ZeRO = 12, and (2,2,1) with
// b = 1, 2 (m = 4, 2), 3 x 2 SP each = 12; (1,4,1) has one layer per stage: 204.
TEST( TEST_CATEGORY, transformer_search_space_counted_by_hand )
{
    const TransformerSpec m = gptModel( 4, 256, 4, 128 );
    const std::vector<ParallelConfig> space = transformerSearchSpace( m, 4, 4 );
    EXPECT_EQ( space.size(), 204u );
    std::set<decltype( key( space[0] ) )> distinct;
    for ( const ParallelConfig& c : space )
    {
        EXPECT_EQ( parallelConfigError( m, c, 4 ), "" ) << parallelConfigSummary( c );
        distinct.insert( key( c ) );
    }
    EXPECT_EQ( distinct.size(), space.size() );
    // The branch and bound walks the same space.
    const TransformerPlanResult r = planTransformer( PlannerKind::shardsweep, m, cluster( 4 ), 4 );
    EXPECT_EQ( r.stats.space, 204 );
    EXPECT_EQ( r.stats.memory_checked, 204 );
}

// Context parallelism and uneven stages in the space: 10 layers of 8K sequences on 16 GPUs. cp is
// 1, 2 or 4 (at least 2048 tokens per CP rank; 8 would leave 1024). Of the pp that do not divide
// 10, pp 4 takes ⌈10/4⌉ = 3 on its 2 middle stages and 2 + 2 at the ends; pp 8 would leave
// 10 − 6·2 = −2 for the ends and pp 16 more stages than layers: not searched.
TEST( TEST_CATEGORY, transformer_search_space_context_parallel_and_uneven )
{
    const TransformerSpec m = gptModel( 10, 2048, 16, 8192 );
    std::set<int> cps;
    std::set<std::pair<int, int>> uneven; // (pp, first)
    for ( const ParallelConfig& c : transformerSearchSpace( m, 16, 16 ) )
    {
        EXPECT_EQ( parallelConfigError( m, c, 16 ), "" ) << parallelConfigSummary( c );
        cps.insert( c.cp );
        if ( c.first_stage_layers > 0 )
        {
            uneven.insert( { c.pp, c.first_stage_layers } );
            EXPECT_EQ( c.last_stage_layers, 2 );
        }
    }
    EXPECT_EQ( cps, ( std::set<int>{ 1, 2, 4 } ) );
    EXPECT_EQ( uneven, ( std::set<std::pair<int, int>>{ { 4, 2 } } ) );
}

// One GPU with ample memory: nothing to communicate, so recompute only adds time and ZeRO, SP
// and schedules do not apply; the best configuration recomputes nothing, while megatron's rule
// (full recompute) is slower by at least one layer forward per micro-batch and layer.
TEST( TEST_CATEGORY, transformer_planner_single_gpu_by_hand )
{
    const TransformerSpec m = gptModel( 4, 512, 8, 256 );
    const Platform p = cluster( 1 );
    const TransformerPlanResult best = planTransformer( PlannerKind::shardsweep, m, p, 8 );
    const TransformerPlanResult ex = planTransformer( PlannerKind::exhaustive, m, p, 8 );
    const TransformerPlanResult meg = planTransformer( PlannerKind::megatron, m, p, 8 );
    ASSERT_TRUE( best.feasible && ex.feasible && meg.feasible );
    EXPECT_EQ( best.stats.space, 4 * 3 ); // micro-batches 1, 2, 4, 8 x 3 recomputes
    const ParallelConfig& c = best.top.front().config;
    EXPECT_EQ( c.recompute, Recompute::none );
    EXPECT_EQ( key( c ), key( ex.top.front().config ) );
    EXPECT_EQ( meg.top.front().config.recompute, Recompute::full );
    EXPECT_EQ( meg.top.front().config.micro_batch, 8 ); // everything fits: the largest
    ParallelConfig same = c;
    same.micro_batch = 8;
    same.recompute = Recompute::full;
    const TransformerOperatorCost ops =
        transformerOperatorCost( transformerOperatorCase( p.gpu, m, same ) );
    const double recompute_ms = m.layers * ops.layer_fwd_ms; // one micro-batch of 8
    EXPECT_GE( meg.top.front().summary.iteration_ms,
               best.top.front().summary.iteration_ms + recompute_ms * ( 1 - 1e-12 ) );
}

// Branch and bound and the kernel-priced exhaustive search against the brute force, top 5, over
// models, GPU counts and memory sizes where memory decides (a pruned feasible optimum, or a
// bound above a true price, would show here as a different list), with and without overlap (the
// post-pipeline bound then depends on the recompute) and with interleaving in the space.
TEST( TEST_CATEGORY, transformer_planners_equal_brute_force )
{
    struct Case
    {
        TransformerSpec model;
        int gpus;
        std::int64_t batch;
        double memory_GiB;
    };
    const Case cases[] = {
        { gptModel( 24, 2048, 16 ), 16, 64, 80.0 }, // GPT-3 1.3B
        { gptModel( 24, 2048, 16 ), 16, 64, 12.0 },
        { gptModel( 24, 2048, 16 ), 8, 32, 6.0 },
        { gptModel( 32, 2560, 32 ), 32, 128, 16.0 }, // 2.7B
        { gptModel( 32, 4096, 32 ), 64, 256, 24.0 }, // 6.7B
        { gptModel( 32, 4096, 32 ), 64, 256, 80.0 },
        { gptModel( 40, 5120, 40 ), 40, 80, 40.0 }, // 13B, a GPU count that is not a power of 2
        // 8K sequences: context parallelism (cp 2, 4) and 10 layers (uneven on pp 4 and 8)
        { gptModel( 10, 2048, 16, 8192 ), 16, 16, 20.0 },
    };
    for ( const bool overlap : { false, true } )
        for ( const Case& k : cases )
        {
            const Platform p = cluster( k.gpus, k.memory_GiB );
            const std::string what = std::to_string( k.model.hidden ) + "h on " +
                                     std::to_string( k.gpus ) + " GPUs of " +
                                     std::to_string( k.memory_GiB ) + " GiB" +
                                     ( overlap ? ", overlap" : "" );
            TransformerPlanOptions o;
            o.top_k = 5;
            o.overlap = overlap;
            const std::vector<TransformerCandidate> want = bruteForce( k.model, p, k.batch, 5, o );
            ASSERT_FALSE( want.empty() ) << what;
            const TransformerPlanResult bb =
                planTransformer( PlannerKind::shardsweep, k.model, p, k.batch, o );
            const TransformerPlanResult ex =
                planTransformer( PlannerKind::exhaustive, k.model, p, k.batch, o );
            expectSameTop( want, bb.top, "shardsweep, " + what );
            expectSameTop( want, ex.top, "exhaustive, " + what );
            // top 1 alone (the tightest pruning) is the same optimum
            TransformerPlanOptions one_option = o;
            one_option.top_k = 1;
            const TransformerPlanResult one =
                planTransformer( PlannerKind::shardsweep, k.model, p, k.batch, one_option );
            expectSameTop( { want.front() }, one.top, "shardsweep top 1, " + what );
            EXPECT_EQ( ex.stats.priced, ex.stats.space ) << what;
            EXPECT_LT( one.stats.priced * 4, one.stats.space ) << what;
        }
}

// Megatron's rule on 16 GPUs of 2 nodes: TP = 8 (GPUs per node), then the smallest PP where some
// micro-batch fits, the largest fitting one with at least pp micro-batches, full recompute, no
// ZeRO/SP, 1F1B. With 16 GiB GPUs GPT-3
// 2.7B does not fit at pp = 1 (its weights, gradients and Adam states alone are 2.7e9·16 B / 8
// ≈ 5.4 GB per GPU plus activations of 32 layers), checked against the rule applied by hand.
TEST( TEST_CATEGORY, transformer_megatron_rule )
{
    const TransformerSpec m = gptModel( 32, 2560, 32 );
    for ( double memory : { 80.0, 12.0, 8.0 } )
    {
        const Platform p = cluster( 16, memory );
        const TransformerPlanResult r = planTransformer( PlannerKind::megatron, m, p, 64 );
        // The rule by hand: pp = 1, 2 (dp = 2, 1); the largest fitting micro-batch that leaves
        // m = 64 / (b·dp) >= pp micro-batches, else the largest fitting one.
        ParallelConfig want;
        bool found = false;
        for ( int pp : { 1, 2 } )
        {
            std::vector<ParallelConfig> fitting; // micro-batch descending
            for ( int b = 64 / ( 2 / pp ); b >= 1; --b )
            {
                ParallelConfig c;
                c.tp = 8;
                c.pp = pp;
                c.dp = 2 / pp;
                c.micro_batch = b;
                c.global_batch = 64;
                c.recompute = Recompute::full;
                if ( 64 % ( b * c.dp ) != 0 )
                    continue;
                const TransformerOperatorCost ops =
                    transformerOperatorCost( transformerOperatorCase( p.gpu, m, c ) );
                if ( predictTransformerStep( p, m, c, ops ).feasible )
                    fitting.push_back( c );
            }
            if ( fitting.empty() )
                continue;
            want = fitting.front();
            for ( const ParallelConfig& c : fitting )
                if ( 64 / ( c.micro_batch * c.dp ) >= pp )
                {
                    want = c;
                    break;
                }
            found = true;
            break;
        }
        ASSERT_EQ( r.feasible, found ) << memory << " GiB: " << r.reason;
        if ( found )
            EXPECT_EQ( key( r.top.front().config ), key( want ) )
                << memory << " GiB: " << parallelConfigSummary( r.top.front().config );
        else
            EXPECT_NE( r.reason.find( "megatron rule" ), std::string::npos ) << r.reason;
    }
}

// A model that fits nowhere, and a task with no valid configuration at all: no candidate, and a
// reason that says which.
TEST( TEST_CATEGORY, transformer_planner_infeasible )
{
    const TransformerSpec gpt175 = gptModel( 96, 12288, 96 );
    const Platform p = cluster( 8 );
    for ( PlannerKind k : { PlannerKind::shardsweep, PlannerKind::exhaustive } )
    {
        const TransformerPlanResult r = planTransformer( k, gpt175, p, 64 );
        EXPECT_FALSE( r.feasible );
        EXPECT_TRUE( r.top.empty() );
        EXPECT_NE( r.reason.find( "fits nowhere on 8 GPUs" ), std::string::npos ) << r.reason;
        // the leanest configuration: everything sharded, full recompute, one sequence at a time
        EXPECT_EQ( r.leanest.config.recompute, Recompute::full );
        EXPECT_GT( r.leanest.summary.peak_memory_GiB, 79.0 );
    }
    const TransformerPlanResult meg = planTransformer( PlannerKind::megatron, gpt175, p, 64 );
    EXPECT_FALSE( meg.feasible );
    EXPECT_NE( meg.reason.find( "megatron rule" ), std::string::npos ) << meg.reason;

    // 3 heads and one layer on 2 GPUs at global batch 3: neither tp = 2, pp = 2 (not even as
    // uneven stages) nor dp = 2.
    const TransformerSpec odd = gptModel( 1, 192, 3, 64 );
    const TransformerPlanResult none =
        planTransformer( PlannerKind::shardsweep, odd, cluster( 2 ), 3 );
    EXPECT_FALSE( none.feasible );
    EXPECT_EQ( none.stats.space, 0 );
    EXPECT_NE( none.reason.find( "no valid configuration on 2 GPUs" ), std::string::npos )
        << none.reason;
    EXPECT_THROW( planTransformer( PlannerKind::torchrec, odd, cluster( 2 ), 3 ),
                  std::invalid_argument );
}

} // namespace Test
