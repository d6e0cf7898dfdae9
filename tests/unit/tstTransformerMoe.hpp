// Mixture-of-experts layers in the transformer model (issue 23; model/transformer/moe.hpp): token
// counts and all-to-all volumes under uniform routing, expert and router parameters per GPU, the
// flat expert all-to-all, the ep_comm phase and its overlap, the expert model states, the rules
// Megatron-Core enforces, the planners against a brute force and the batched kernel against the
// model functions. Every expectation is worked out by hand from the layer's shapes.
#include "test_gpus.hpp"
#include "transformer_test_support.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <backend_equal.hpp>
#include <cmath>
#include <gtest/gtest.h>
#include <shardsweep/kernel/scenario_batch.hpp>
#include <shardsweep/model/transformer.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <shardsweep/model/transformer/validated_range.hpp>
#include <shardsweep/plan/transformer_planner.hpp>
#include <shardsweep/scenario/step_graph.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
namespace td = transformer_detail;

//! h 1024, 16 heads, 4 layers (the first dense), s 512, SwiGLU; 8 experts of 2048, top-2, one
//! shared expert, capacity factor 1.25.
TransformerSpec smallMoe()
{
    TransformerSpec m;
    m.arch = TransformerArch::gpt;
    m.hidden = 1024;
    m.heads = 16;
    m.layers = 4;
    m.seq_len = 512;
    m.vocab = 51200;
    m.dtype = DataType::bf16;
    m.ffn_type = FfnType::swiglu;
    m.experts = 8;
    m.top_k = 2;
    m.moe_ffn_hidden = 2048;
    m.shared_experts = 1;
    m.capacity_factor = 1.25;
    m.first_dense_layers = 1;
    return m;
}

//! smallMoe() as a workload of `global_batch` sequences.
Workload moeWorkload( std::int64_t global_batch )
{
    Workload w;
    w.name = "moe";
    w.kind = WorkloadKind::transformer;
    w.transformer = smallMoe();
    w.global_batch = global_batch;
    return w;
}

//! The ranks of the group of rank `rank`'s first collective whose name starts with `name_start`
//! (every rank: empty; no such collective: {-1}).
std::vector<int> collectiveGroup( const StepGraph& g, int rank, const std::string& name_start )
{
    for ( const StepGraphNode& n : g.ranks[rank] )
        if ( n.kind == StepGraphNode::Kind::collective && n.name.rfind( name_start, 0 ) == 0 )
            return n.group > 0 ? g.groups[n.group - 1] : std::vector<int>{};
    return { -1 };
}

ParallelConfig layout( int tp, int pp, int dp, int ep, int etp = 0 )
{
    ParallelConfig c;
    c.tp = tp;
    c.pp = pp;
    c.dp = dp;
    c.ep = ep;
    c.etp = etp;
    c.micro_batch = 1;
    c.global_batch = dp;
    c.sequence_parallel = tp > 1;
    return c;
}

} // namespace

// Uniform routing: a rank routing T/t = 512 tokens sends R = 512·k·C = 1280 copies (2 621 440
// bytes of bf16 h = 1024), its experts compute R·etp = 2560; E/ep local experts.
TEST( TEST_CATEGORY, moe_token_counts_and_all_to_all_bytes_by_hand )
{
    const TransformerSpec m = smallMoe();
    const td::MoeTokens n = td::moeTokens( m, 512.0, 4, 2 );
    EXPECT_DOUBLE_EQ( n.routed_in, 512.0 );
    EXPECT_DOUBLE_EQ( n.dispatched, 1280.0 );
    EXPECT_DOUBLE_EQ( n.computed, 2560.0 );
    EXPECT_DOUBLE_EQ( n.local_experts, 2.0 );
    EXPECT_DOUBLE_EQ( td::moeAllToAllBytes( m, 512.0, 2.0 ), 2621440.0 );
    TransformerSpec dropless = m;
    dropless.capacity_factor = 0.0;
    EXPECT_DOUBLE_EQ( td::moeAllToAllBytes( dropless, 512.0, 2.0 ), 512.0 * 2 * 1024 * 2 );
    EXPECT_DOUBLE_EQ( td::moeFfnHidden( dropless ), 2048.0 );
    dropless.moe_ffn_hidden = 0; // the dense FFN's width, 4h here
    EXPECT_DOUBLE_EQ( td::moeFfnHidden( dropless ), 4096.0 );
}

// Experts per GPU: E/ep = 2 experts of (1 + 2)·h·f_e/etp = 3·1024·1024 (SwiGLU, etp 2). The rest of
// an MoE layer on a TP rank of tp 2: (4h² + 3h + 3·h·f_e)/2 (QKV, projection, their biases, the
// shared expert) + h (projection bias) + 4h (LayerNorms) + E·h (router).
TEST( TEST_CATEGORY, moe_parameters_by_hand )
{
    const TransformerSpec m = smallMoe();
    EXPECT_DOUBLE_EQ( td::moeLayerExpertParams( m, 4, 2 ), 6291456.0 );
    EXPECT_DOUBLE_EQ( td::moeLayerDenseParams( m, 2 ), 5257728.0 );
    // The whole model: one dense layer (4h² + 3hf + 9h + 2f, f = 4h, at tp 1), three MoE layers
    // (all 8 experts, tp 1), the word and position embeddings and the final LayerNorm.
    const double h = 1024, f = 4096;
    const double dense = 4 * h * h + 3 * h * f + 9 * h + 2 * f;
    const double moe = 4 * h * h + 3 * h + 3 * h * 2048 + 5 * h + 8 * h + 8 * 3 * h * 2048;
    EXPECT_DOUBLE_EQ( transformerParameters( m ), dense + 3 * moe + ( 51200 + 512 ) * h + 2 * h );

    // Stage split at pp 2 (2 layers each): stage 0 holds the dense layer and one MoE layer.
    ParallelConfig c = layout( 2, 2, 4, 4, 2 );
    const StageParams s0 = transformerStageParamSplit( m, c, 0 );
    const StageParams s1 = transformerStageParamSplit( m, c, 1 );
    EXPECT_DOUBLE_EQ( s0.expert, 6291456.0 );
    EXPECT_DOUBLE_EQ( s1.expert, 2 * 6291456.0 );
    EXPECT_DOUBLE_EQ( s1.dense - 2 * 5257728.0, transformerEdgeParams( m, 2, { false, true } ) );
    EXPECT_EQ( expertDataParallel( c ), 1 ); // tp·cp·dp = 8 = ep·etp
    c.dp = 8;
    EXPECT_EQ( expertDataParallel( c ), 2 );
}

// Two Switch dimensions (8 GPUs at 100 GB/s, 1 µs; 4 nodes at 25 GB/s, 2 µs): of 32 ranks a rank
// sends 7/32 of its buffer inside its node and 24/32 across; the slower share sets the time.
TEST( TEST_CATEGORY, expert_all_to_all_by_hand )
{
    GroupNetwork g;
    g.members = 32;
    g.network.num_dims = 2;
    g.network.dims[0] = { Topology::Switch, 8, 100.0, 1000.0 };
    g.network.dims[1] = { Topology::Switch, 4, 25.0, 2000.0 };
    const double bytes = 64.0e6;
    const double intra = std::floor( 2 * 1000.0 + 7.0 / 32 * bytes / ( 100 * 1.073741824 ) );
    const double inter = std::floor( 2 * 2000.0 + 24.0 / 32 * bytes / ( 25 * 1.073741824 ) );
    ASSERT_GT( inter, intra );
    EXPECT_NEAR( td::expertAllToAllMs( g, bytes ), ( inter + 20.0 ) * 1e-6, 1e-12 );
    g.members = 1;
    EXPECT_EQ( td::expertAllToAllMs( g, bytes ), 0.0 );
}

// One node of 8 (one Switch dimension, 100 GB/s, 1 µs), tp 1, pp 1, dp 8, ep 8, one micro-batch:
// each of the 3 MoE layers runs 2 all-to-alls forward and 2 backward of 512·2·1.25 copies of h
// = 1024 in bf16, each 7/8 of them leaving the GPU: (2·1000 + 7/8·bytes/B) ns + 2 endpoint
// delays. Overlap hides them under the stage's compute.
TEST( TEST_CATEGORY, moe_ep_phase_by_hand )
{
    const TransformerSpec m = smallMoe();
    const Platform p = switchPlatform( 8 );
    const TransformerConstants c = pureConstants();
    ParallelConfig cfg = layout( 1, 1, 8, 8 );
    const TransformerOperatorCost ops =
        transformerOperatorCostWith( c, transformerOperatorCase( p.gpu, m, cfg ) );
    const double bytes = 512.0 * 2 * 1.25 * 1024 * 2;
    const double a2a_ms =
        ( std::floor( 2000.0 + 7.0 / 8 * bytes / ( 100 * 1.073741824 ) ) + 20.0 ) * 1e-6;
    const TransformerStepSummary r = predictTransformerStepWith( c, p, m, cfg, ops );
    const double ep = r.phase_ms[int( TransformerPhase::ep_comm )];
    EXPECT_NEAR( ep, 3 * 4 * a2a_ms, 1e-12 );
    EXPECT_EQ( r.phase_ms[int( TransformerPhase::tp_comm )], 0.0 );

    cfg.overlap = true;
    const TransformerStepSummary o = predictTransformerStepWith( c, p, m, cfg, ops );
    const double compute = o.phase_ms[int( TransformerPhase::compute )];
    EXPECT_NEAR( o.phase_ms[int( TransformerPhase::ep_comm )], std::max( 0.0, ep - compute ),
                 1e-12 );

    // Full recompute repeats the forward's two all-to-alls in the backward.
    cfg.overlap = false;
    cfg.recompute = Recompute::full;
    const TransformerStepSummary full = predictTransformerStepWith( c, p, m, cfg, ops );
    EXPECT_NEAR( full.phase_ms[int( TransformerPhase::ep_comm )], 3 * 6 * a2a_ms, 1e-12 );

    // ep 1: no all-to-all; etp 1 with tp 1: no expert-TP collective either.
    cfg.recompute = Recompute::none;
    cfg.ep = 1;
    const TransformerStepSummary local = predictTransformerStepWith(
        c, p, m, cfg, transformerOperatorCostWith( c, transformerOperatorCase( p.gpu, m, cfg ) ) );
    EXPECT_EQ( local.phase_ms[int( TransformerPhase::ep_comm )], 0.0 );
}

// Doubling ep halves every GPU's experts: without ZeRO their weights (2 B), fp32 gradients (4 B)
// and Adam states (12 B) shrink by 3 MoE layers · (8/2 − 8/4) experts · 3·h·f_e; activations do
// not depend on ep (each GPU computes the same number of token copies).
TEST( TEST_CATEGORY, moe_expert_memory_by_hand )
{
    const TransformerSpec m = smallMoe();
    ParallelConfig c2 = layout( 1, 1, 8, 2 );
    ParallelConfig c4 = layout( 1, 1, 8, 4 );
    const TransformerConstants c = shippedTransformerConstants();
    const double m2 = transformerStageMemoryBytes( c, m, c2, 0, 1.0 );
    const double m4 = transformerStageMemoryBytes( c, m, c4, 0, 1.0 );
    EXPECT_DOUBLE_EQ( m2 - m4, 3 * ( 4 - 2 ) * 3.0 * 1024 * 2048 * ( 2 + 4 + 12 ) );
    // ZeRO-1 shards the experts' Adam states over edp = 8/ep, the rest over dp = 8.
    c4.zero = 1;
    const double expert = 3 * 2 * 3.0 * 1024 * 2048;
    EXPECT_NEAR( m4 - transformerStageMemoryBytes( c, m, c4, 0, 1.0 ),
                 expert * 12 * ( 1 - 1.0 / 2 ) +
                     transformerStageParamSplit( m, c4, 0 ).dense * 12 * ( 1 - 1.0 / 8 ),
                 1e-3 );
}

// A dense model's answers do not depend on the MoE fields and knobs it does not use.
TEST( TEST_CATEGORY, moe_fields_leave_dense_models_alone )
{
    TransformerSpec dense = smallMoe();
    dense.experts = 0;
    TransformerSpec plain = dense;
    plain.top_k = 2;
    plain.moe_ffn_hidden = 0;
    plain.shared_experts = 0;
    plain.capacity_factor = 0.0;
    plain.first_dense_layers = 0;
    const Platform p = switchPlatform( 8 );
    const ParallelConfig cfg = layout( 2, 2, 2, 1 );
    const TransformerOperatorCost a =
        transformerOperatorCost( transformerOperatorCase( p.gpu, dense, cfg ) );
    const TransformerOperatorCost b =
        transformerOperatorCost( transformerOperatorCase( p.gpu, plain, cfg ) );
    EXPECT_EQ( a.layer_fwd_ms, b.layer_fwd_ms );
    EXPECT_EQ( a.moe_layer_fwd_ms, 0.0 );
    EXPECT_EQ( a.moe_layer_flops, 0.0 );
    const TransformerStepSummary ra = predictTransformerStep( p, dense, cfg, a );
    const TransformerStepSummary rb = predictTransformerStep( p, plain, cfg, b );
    EXPECT_EQ( ra.iteration_ms, rb.iteration_ms );
    EXPECT_EQ( ra.peak_memory_GiB, rb.peak_memory_GiB );
    EXPECT_EQ( ra.phase_ms[int( TransformerPhase::ep_comm )], 0.0 );
    EXPECT_EQ( transformerOperatorCase( p.gpu, dense, layout( 2, 2, 2, 1, 1 ) ).etp, 1 );
}

// Model FLOPs of an MoE layer: attention (4 + 4)·T·h² + 4·b·s²·h, router 2·T·h·E, and k routed
// plus n_s shared SwiGLU experts at 2·3·T·h·f_e each (capacity padding is not model work).
TEST( TEST_CATEGORY, moe_layer_flops_by_hand )
{
    const TransformerSpec m = smallMoe();
    ParallelConfig cfg = layout( 1, 1, 8, 8 );
    cfg.micro_batch = 2;
    cfg.global_batch = 16;
    const TransformerOperatorCost ops =
        transformerOperatorCost( transformerOperatorCase( slowMemoryGpu(), m, cfg ) );
    const double T = 2 * 512.0, h = 1024;
    EXPECT_DOUBLE_EQ( ops.moe_layer_flops, 8 * T * h * h + 4 * 2 * 512.0 * 512 * h + 2 * T * h * 8 +
                                               2 * 3 * T * h * 2048 * 3 );
    const Platform p = switchPlatform( 8 );
    const TransformerStepSummary r = predictTransformerStep( p, m, cfg, ops );
    EXPECT_DOUBLE_EQ( r.model_flops,
                      3.0 * ( 1 * ops.layer_flops + 3 * ops.moe_layer_flops + ops.head_flops ) *
                          8 );
}

// What Megatron-Core rejects, and what the model does not cover, is named with the field to fix.
TEST( TEST_CATEGORY, moe_rules )
{
    TransformerSpec m = smallMoe();
    EXPECT_EQ( parallelKnobProblem( m, layout( 1, 1, 8, 8 ) ).key, "" );
    EXPECT_EQ( parallelKnobProblem( m, layout( 1, 1, 6, 3 ) ).key, "ep" ); // 3 ∤ 8 experts
    EXPECT_EQ( parallelKnobProblem( m, layout( 1, 1, 4, 8 ) ).key, "ep" ); // 8 ∤ tp·dp = 4
    EXPECT_EQ( parallelKnobProblem( m, layout( 2, 1, 4, 4 ) ).key, "" );   // etp = tp: 8 | 8
    EXPECT_EQ( parallelKnobProblem( m, layout( 2, 1, 2, 4 ) ).key, "ep" ); // 4·2 ∤ 4
    EXPECT_EQ( parallelKnobProblem( m, layout( 2, 1, 2, 4, 1 ) ).key, "" );
    EXPECT_EQ( parallelKnobProblem( m, layout( 2, 1, 4, 1, 3 ) ).key, "etp" ); // 3 ∤ 2048
    ParallelConfig no_sp = layout( 2, 1, 4, 4 );
    no_sp.sequence_parallel = false;
    EXPECT_EQ( parallelKnobProblem( m, no_sp ).key, "sequence_parallel" );
    m.first_dense_layers = 2;
    EXPECT_EQ( parallelKnobProblem( m, layout( 1, 4, 2, 2 ) ).key, "first_stage_layers" );
    ParallelConfig uneven = layout( 1, 2, 4, 2 );
    uneven.first_stage_layers = 2;
    uneven.last_stage_layers = 2;
    EXPECT_EQ( parallelKnobProblem( m, uneven ).key, "" );
    EXPECT_EQ( transformerSpecProblem( m ).key, "" );
    m.top_k = 9;
    EXPECT_EQ( transformerSpecProblem( m ).key, "top_k" );
    m.top_k = 2;
    m.first_dense_layers = 4;
    EXPECT_EQ( transformerSpecProblem( m ).key, "first_dense_layers" );
    TransformerSpec dense = smallMoe();
    dense.experts = 0;
    EXPECT_EQ( parallelKnobProblem( dense, layout( 1, 1, 8, 2 ) ).key, "ep" );
    EXPECT_EQ( parallelKnobProblem( dense, layout( 1, 1, 8, 1 ) ).key, "" );
}

// Context parallelism in the step graph, with MoE: tp 2 × cp 2 × dp 2 × pp 2 on 16 GPUs, ranks
// t + 2·(c + 2·d + 4·s). Rank 0's ring is {0, 2} (stride tp), its gradient group the cp·dp = 4
// ranks {0, 2, 4, 6}, its EP group (ep 2, etp 1 over the stage's 8 ranks q = t + 2·(c + 2d))
// {0, 1}. The exposed ring exchange is a collective of its own, and the replay is the model's.
TEST( TEST_CATEGORY, context_parallel_step_graph )
{
    Workload w = moeWorkload( 8 );
    w.transformer.first_dense_layers = 0;
    const Platform p = switchPlatform( 16 );
    Plan plan;
    plan.parallel = layout( 2, 2, 2, 2, 1 );
    plan.parallel.cp = 2;
    const ScenarioInput input{ &w, &p, &plan, 8, CostModel::native };
    const StepGraph g = buildTransformerStepGraph( input );
    auto group_of = [&]( int rank, const std::string& name_start )
    { return collectiveGroup( g, rank, name_start ); };
    EXPECT_EQ( group_of( 0, "layer0.cp_kv" ), ( std::vector<int>{ 0, 2 } ) );
    EXPECT_EQ( group_of( 0, "layer0.cp_kv_grad" ), ( std::vector<int>{ 0, 2 } ) );
    EXPECT_EQ( group_of( 0, "dp.allreduce" ), ( std::vector<int>{ 0, 2, 4, 6 } ) );
    EXPECT_EQ( group_of( 0, "layer0.ep_dispatch" ), ( std::vector<int>{ 0, 1 } ) );
    EXPECT_EQ( group_of( 9, "layer3.cp_kv" ), ( std::vector<int>{ 9, 11 } ) );
    const StepGraphReplay replay = replayStepGraph( g, p.network, p.system );
    EXPECT_NEAR( replay.finish_ns * 1e-6, g.iteration_ms, 1e-6 * g.iteration_ms );
}

// Every MoE report says how little the MoE model was checked; a dense one never does.
TEST( TEST_CATEGORY, moe_outside_the_validated_range )
{
    const Platform p = switchPlatform( 8 );
    auto has_note = []( const std::vector<std::string>& notes )
    {
        return std::any_of( notes.begin(), notes.end(),
                            []( const std::string& n ) {
                                return n.rfind( "mixture of experts: checked against two", 0 ) == 0;
                            } );
    };
    EXPECT_TRUE( has_note( transformerValidationNotes( "H100-SXM-80GB", p, smallMoe(),
                                                       layout( 1, 1, 8, 8 ), 30.0 ) ) );
    EXPECT_TRUE( has_note(
        transformerValidationNotes( "NoSuchGpu", p, smallMoe(), layout( 1, 1, 8, 8 ), 30.0 ) ) );
    TransformerSpec dense = smallMoe();
    dense.experts = 0;
    EXPECT_FALSE( has_note(
        transformerValidationNotes( "H100-SXM-80GB", p, dense, layout( 1, 1, 8, 1 ), 30.0 ) ) );
}

// The planners search ep and etp (etp = tp, and 1) and stay equal to a brute force over the same
// space; every configuration they return obeys the MoE rules.
TEST( TEST_CATEGORY, moe_planners_equal_brute_force )
{
    TransformerSpec m = smallMoe();
    m.layers = 8;
    m.seq_len = 1024;
    Platform p = switchPlatform( 16, a100Gpu( 4.0, 2039 ) );
    p.gpus_per_node = 8;
    p.num_nodes = 2;
    p.network.num_dims = 2;
    p.network.dims[0].npus_count = 8;
    p.network.dims[1] = { Topology::Switch, 2, 25.0, 2000.0 };
    TransformerPlanOptions o;
    o.top_k = 5;
    const std::vector<ParallelConfig> space = transformerSearchSpace( m, 16, 64, o );
    std::vector<TransformerCandidate> all;
    bool some_ep = false, some_etp1 = false;
    for ( const ParallelConfig& c : space )
    {
        EXPECT_EQ( parallelKnobProblem( m, c ).key, "" ) << parallelConfigSummary( c );
        some_ep |= c.ep > 1;
        some_etp1 |= c.etp == 1 && c.tp > 1;
        const TransformerStepSummary s = predictTransformerStep(
            p, m, c, transformerOperatorCost( transformerOperatorCase( p.gpu, m, c ) ) );
        if ( s.feasible )
            all.push_back( { c, s } );
    }
    EXPECT_TRUE( some_ep );
    EXPECT_TRUE( some_etp1 );
    std::sort( all.begin(), all.end(), transformerCandidateBefore );
    ASSERT_GE( all.size(), 5u );
    for ( PlannerKind kind : { PlannerKind::shardsweep, PlannerKind::exhaustive } )
    {
        const TransformerPlanResult r = planTransformer( kind, m, p, 64, o );
        ASSERT_EQ( r.top.size(), 5u ) << plannerName( kind );
        for ( std::size_t i = 0; i < 5; ++i )
        {
            EXPECT_EQ( r.top[i].summary.iteration_ms, all[i].summary.iteration_ms )
                << plannerName( kind ) << " rank " << i;
            EXPECT_EQ( parallelConfigSummary( r.top[i].config ),
                       parallelConfigSummary( all[i].config ) )
                << plannerName( kind ) << " rank " << i;
        }
    }
}

// The batched kernel prices MoE configurations as the model functions do (exactly on the host
// backends; the kernel's tolerance elsewhere), each (tp, micro-batch, SP, ep, etp) one case.
TEST( TEST_CATEGORY, moe_kernel_matches_model_functions )
{
    Workload w = moeWorkload( 32 );
    const Platform p = switchPlatform( 16 );
    std::vector<Plan> plans;
    for ( int tp : { 1, 2 } )
        for ( int ep : { 1, 2, 4, 8 } )
            for ( int etp : { 0, 1 } )
                for ( bool overlap : { false, true } )
                {
                    Plan plan;
                    plan.parallel = layout( tp, 2, 16 / ( 2 * tp ), ep, etp );
                    plan.parallel.overlap = overlap;
                    plan.parallel.recompute = overlap ? Recompute::full : Recompute::selective;
                    plan.parallel.global_batch = w.global_batch;
                    if ( parallelConfigError( w.transformer, plan.parallel, 16 ).empty() )
                        plans.push_back( plan );
                }
    ASSERT_GT( plans.size(), 12u );
    std::vector<ScenarioInput> inputs;
    for ( const Plan& plan : plans )
        inputs.push_back( { &w, &p, &plan, 0, CostModel::native } );
    const auto batched = evaluateScenarios( TEST_BACKEND, inputs );
    ASSERT_EQ( batched.size(), inputs.size() );
    for ( std::size_t i = 0; i < inputs.size(); ++i )
    {
        const ParallelConfig& c = plans[i].parallel;
        const TransformerStepSummary ref = predictTransformerStep(
            p, w.transformer, c,
            transformerOperatorCost( transformerOperatorCase( p.gpu, w.transformer, c ) ) );
        EXPECT_TRUE( sameAsHost( batched[i].iteration_ms, ref.iteration_ms ) )
            << parallelConfigSummary( c );
        EXPECT_TRUE( sameAsHost( batched[i].transformer.phase_ms[int( TransformerPhase::ep_comm )],
                                 ref.phase_ms[int( TransformerPhase::ep_comm )] ) );
        EXPECT_TRUE( sameAsHost( batched[i].transformer.peak_memory_GiB, ref.peak_memory_GiB ) );
        // The all-to-alls are exposed communication too.
        EXPECT_TRUE( sameAsHost( batched[i].exposed_comm_ms,
                                 ref.phase_ms[1] + ref.phase_ms[2] + ref.phase_ms[3] +
                                     ref.phase_ms[int( TransformerPhase::ep_comm )] ) );
    }
}

// The Chakra step graph of an MoE configuration (export-et): tp 2 × dp 4 × pp 2 on 16 GPUs with
// ep 2 and etp 2. A stage's q-th rank (q = t + 2d) is expert rank (q mod 2, (q / 2) mod 2, q / 4):
// rank 0's EP group is {0, 2}, its ETP group {0, 1}, its expert-DP group {0, 4}; stage 1 the same
// plus 8. Every collective of the forward and backward is in the graph, so the replay of alike
// stages is the model's iteration.
TEST( TEST_CATEGORY, moe_step_graph_groups_and_replay )
{
    Workload w = moeWorkload( 8 );
    const Platform p = switchPlatform( 16 );
    Plan plan;
    plan.parallel = layout( 2, 2, 4, 2, 2 );
    plan.parallel.recompute = Recompute::full;
    ASSERT_EQ( parallelConfigError(
                   w.transformer,
                   [&]
                   {
                       ParallelConfig c = plan.parallel;
                       c.global_batch = 8;
                       return c;
                   }(),
                   16 ),
               "" );
    const ScenarioInput input{ &w, &p, &plan, 8, CostModel::native };
    const StepGraph g = buildTransformerStepGraph( input );
    ASSERT_EQ( g.numRanks(), 16 );
    auto group_of = [&]( int rank, const std::string& name_start )
    { return collectiveGroup( g, rank, name_start ); };
    // Layer 1 is stage 0's MoE layer (layer 0 is dense); layer 3 stage 1's second.
    EXPECT_EQ( group_of( 0, "layer1.ep_dispatch" ), ( std::vector<int>{ 0, 2 } ) );
    EXPECT_EQ( group_of( 0, "layer1.etp_ag" ), ( std::vector<int>{ 0, 1 } ) );
    EXPECT_EQ( group_of( 0, "edp.allreduce" ), ( std::vector<int>{ 0, 4 } ) );
    EXPECT_EQ( group_of( 13, "layer3.ep_combine" ), ( std::vector<int>{ 13, 15 } ) );
    EXPECT_EQ( group_of( 0, "layer0.ep_dispatch" ), ( std::vector<int>{ -1 } ) ); // dense layer
    // With every layer MoE the two stages are alike, and the 1F1B closed form is the schedule's
    // exact time (with a dense first layer stage 0 is faster, and over 2 micro-batches the
    // closed form's (m − 1)·max + Σ is a few per cent off the event replay).
    w.transformer.first_dense_layers = 0;
    const StepGraph all_moe = buildTransformerStepGraph( input );
    const StepGraphReplay replay = replayStepGraph( all_moe, p.network, p.system );
    EXPECT_NEAR( replay.finish_ns * 1e-6, all_moe.iteration_ms, 1e-6 * all_moe.iteration_ms );
}

} // namespace Test
