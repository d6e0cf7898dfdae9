// The per-rank cache of the kernel's cases (table statistics, dense parts, transformer operator
// cases: bit-identical results, cases computed once) and the sweep's lower-bound column source,
// on the bench sweep's 50-table / 4-GPU tasks.
#include "transformer_test_support.hpp"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/io/operator_models.hpp>
#include <shardsweep/io/sweep_yaml.hpp>
#include <shardsweep/kernel/case_cache.hpp>
#include <shardsweep/kernel/scenario_batch.hpp>
#include <shardsweep/plan/planner.hpp>
#include <shardsweep/sweep/sweep_engine.hpp>
#include <shardsweep/sweep/sweep_problem.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

//! Scenarios [first, first + n) of the bench sweep with round-robin plans (kept alive here).
struct BenchScenarios
{
    std::vector<ScenarioSpec> specs;
    std::vector<Plan> plans;
    std::vector<ScenarioInput> inputs;

    BenchScenarios( const ScenarioSpace& space, std::uint64_t first, std::uint64_t n )
    {
        for ( std::uint64_t id = first; id < first + n; ++id )
            specs.push_back( space.materialize( id ) );
        for ( const auto& s : specs )
            plans.push_back( roundRobinTableWisePlan( s.workloadRef(), s.platform.numGpus() ) );
        for ( std::size_t i = 0; i < specs.size(); ++i )
            inputs.push_back( { specs[i].workload.get(), &specs[i].platform, &plans[i],
                                specs[i].global_batch, specs[i].cost_model } );
    }
};

bool sameBits( double a, double b )
{
    return std::memcmp( &a, &b, sizeof( double ) ) == 0;
}

void expectBitIdentical( const std::vector<ScenarioResult>& a,
                         const std::vector<ScenarioResult>& b )
{
    ASSERT_EQ( a.size(), b.size() );
    for ( std::size_t i = 0; i < a.size(); ++i )
    {
        EXPECT_TRUE( sameBits( a[i].iteration_ms, b[i].iteration_ms ) ) << i;
        EXPECT_TRUE( sameBits( a[i].exposed_comm_ms, b[i].exposed_comm_ms ) ) << i;
        ASSERT_EQ( a[i].shard_fwd_ms.size(), b[i].shard_fwd_ms.size() );
        for ( std::size_t s = 0; s < a[i].shard_fwd_ms.size(); ++s )
        {
            EXPECT_TRUE( sameBits( a[i].shard_fwd_ms[s], b[i].shard_fwd_ms[s] ) ) << i << " " << s;
            EXPECT_TRUE( sameBits( a[i].shard_bwd_ms[s], b[i].shard_bwd_ms[s] ) ) << i << " " << s;
        }
    }
}

const ScenarioSpace& benchSpace()
{
    static const ScenarioSpace space = loadScenarioSpace( std::string( SHARDSWEEP_SOURCE_DIR ) +
                                                          "/inputs/sweeps/bench_50x4.yaml" );
    return space;
}

TEST( TEST_CATEGORY, case_cache_reuses_table_cases_bit_identically )
{
    const BenchScenarios first( benchSpace(), 0, 64 ), second( benchSpace(), 64, 64 );
    CaseCache cache;

    // Cold: every distinct case of the batch is computed, then remembered.
    const HostScenarioBatch cold = packScenarios( first.inputs, &cache );
    const std::size_t cases = cold.table_case.extent( 0 );
    ASSERT_GT( cases, 0u );
    EXPECT_EQ( cold.table_case_to_compute.extent( 0 ), cases );
    const auto uncached_first = evaluateScenarios( TEST_BACKEND, first.inputs );
    const auto cached_first = evaluateScenarios( TEST_BACKEND, first.inputs, &cache );
    EXPECT_EQ( cache.tables.size(), cases );
    expectBitIdentical( uncached_first, cached_first );

    // Warm, same scenarios: nothing left to compute, the same bits.
    EXPECT_EQ( packScenarios( first.inputs, &cache ).table_case_to_compute.extent( 0 ), 0u );
    expectBitIdentical( uncached_first, evaluateScenarios( TEST_BACKEND, first.inputs, &cache ) );

    // The next batch draws from the same pool: fewer cases to compute than it has, and its
    // results do not depend on what the cache held before.
    const HostScenarioBatch next = packScenarios( second.inputs, &cache );
    EXPECT_LT( next.table_case_to_compute.extent( 0 ), next.table_case.extent( 0 ) );
    expectBitIdentical( evaluateScenarios( TEST_BACKEND, second.inputs ),
                        evaluateScenarios( TEST_BACKEND, second.inputs, &cache ) );

    // A full cache starts over instead of growing.
    CaseCache small( 3 );
    evaluateScenarios( TEST_BACKEND, first.inputs, &small );
    EXPECT_LE( small.tables.size(), 3u );
}

// Dense parts and transformer operator cases: computed by the first call that meets them, then
// taken from the cache, bit for bit; dense parts priced with a learned GEMM model are not kept.
TEST( TEST_CATEGORY, case_cache_reuses_dense_and_transformer_cases_bit_identically )
{
    const BenchScenarios dlrm( benchSpace(), 300, 16 );
    const Workload gpt = smallGptWorkload();
    const Platform& platform = dlrm.specs[0].platform;
    std::vector<Plan> gpt_plans( 2 );
    gpt_plans[0].parallel.tp = 2;
    gpt_plans[0].parallel.dp = platform.numGpus() / 2;
    gpt_plans[1].parallel.tp = 1;
    gpt_plans[1].parallel.dp = platform.numGpus();
    std::vector<ScenarioInput> inputs = dlrm.inputs;
    for ( const Plan& plan : gpt_plans )
        inputs.push_back( { &gpt, &platform, &plan, 0, CostModel::native } );

    CaseCache cache;
    const HostScenarioBatch cold = packScenarios( inputs, &cache );
    ASSERT_GT( cold.dense_case.extent( 0 ), 0u );
    EXPECT_EQ( cold.dense_case_to_compute.extent( 0 ), cold.dense_case.extent( 0 ) );
    EXPECT_EQ( cold.transformer_case.extent( 0 ), 2u ); // tp 2 and tp 1
    EXPECT_EQ( cold.transformer_case_to_compute.extent( 0 ), 2u );
    const auto uncached = evaluateScenarios( TEST_BACKEND, inputs );
    expectBitIdentical( uncached, evaluateScenarios( TEST_BACKEND, inputs, &cache ) );
    EXPECT_EQ( cache.dense.size(), cold.dense_case.extent( 0 ) );
    EXPECT_EQ( cache.transformer.size(), 2u );

    const HostScenarioBatch warm = packScenarios( inputs, &cache );
    EXPECT_EQ( warm.dense_case_to_compute.extent( 0 ), 0u );
    EXPECT_EQ( warm.transformer_case_to_compute.extent( 0 ), 0u );
    const auto cached = evaluateScenarios( TEST_BACKEND, inputs, &cache );
    expectBitIdentical( uncached, cached );
    for ( std::size_t i = dlrm.inputs.size(); i < inputs.size(); ++i )
    {
        EXPECT_GT( uncached[i].iteration_ms, 0.0 );
        EXPECT_TRUE( sameBits( cached[i].transformer.peak_memory_GiB,
                               uncached[i].transformer.peak_memory_GiB ) );
        EXPECT_TRUE(
            sameBits( cached[i].transformer.model_flops, uncached[i].transformer.model_flops ) );
    }

    // A learned GEMM model's dense parts are computed every time.
    std::vector<ScenarioInput> learned = dlrm.inputs;
    const KernelGemmModel gemm = loadKernelGemmModel( defaultGemmModelPath() );
    for ( ScenarioInput& in : learned )
        in.learned_gemm = &gemm.model;
    CaseCache learned_cache;
    evaluateScenarios( TEST_BACKEND, learned, &learned_cache );
    EXPECT_EQ( learned_cache.dense.size(), 0u );
    const HostScenarioBatch again = packScenarios( learned, &learned_cache );
    EXPECT_EQ( again.dense_case_to_compute.extent( 0 ), again.dense_case.extent( 0 ) );
}

TEST( TEST_CATEGORY, sweep_lower_bound_is_the_planners_bound )
{
    const SweepProblem problem = sweepProblemFromSpace( benchSpace() );
    ASSERT_TRUE( bool( problem.lower_bound ) );
    const BenchScenarios scenarios( benchSpace(), 100, 8 );
    const auto results = evaluateScenarios( TEST_BACKEND, scenarios.inputs );
    for ( std::size_t i = 0; i < scenarios.specs.size(); ++i )
    {
        const ScenarioSpec& s = scenarios.specs[i];
        ASSERT_EQ( s.cost_model, CostModel::native );
        const double bound = problem.lower_bound( s );
        // The direct call, bit for bit.
        EXPECT_TRUE( sameBits(
            bound, iterationLowerBoundMs( s.workloadRef(), s.platform, s.global_batch ) ) );
        // A bound on any plan: positive and at most the round-robin plan's iteration time.
        EXPECT_GT( bound, 0.0 );
        EXPECT_LE( bound, results[i].iteration_ms ) << "scenario " << s.id;
        // The native model's bound says nothing about the TorchRec model.
        ScenarioSpec torchrec = s;
        torchrec.cost_model = CostModel::torchrec;
        EXPECT_TRUE( std::isnan( problem.lower_bound( torchrec ) ) );
    }
}

} // namespace Test

namespace Test
{

// The lower-bound cache numbers the (GPU, host link, batch, GPU count) contexts it sees and keys
// each table by that number: every bound it returns must be the uncached bound, bit for bit,
// whatever the order of the contexts, also after it has seen more contexts than it keeps.
TEST( TEST_CATEGORY, lower_bound_cache_is_bit_identical_across_contexts )
{
    const BenchScenarios scenarios( benchSpace(), 200, 1 );
    const ScenarioSpec& s = scenarios.specs[0];
    LowerBoundCache cache;
    Platform other_gpu = s.platform;
    other_gpu.gpu.memory_bandwidth_GBps *= 0.5;
    other_gpu.gpu.l2_cache_MiB = 6.0;
    // Alternate the GPU and walk the batch: 280 contexts (more than the cache keeps), then the
    // first 40 again.
    constexpr int kContexts = 280;
    std::vector<double> uncached( kContexts );
    const auto context = [&]( int c ) -> std::pair<const Platform*, std::int64_t> {
        return { c % 2 ? &other_gpu : &s.platform, s.global_batch + 1024 * ( c / 2 ) };
    };
    for ( int c = 0; c < kContexts; ++c )
    {
        const auto [platform, batch] = context( c );
        uncached[c] = iterationLowerBoundMs( s.workloadRef(), *platform, batch );
        ASSERT_TRUE( sameBits( uncached[c],
                               iterationLowerBoundMs( s.workloadRef(), *platform, batch, cache ) ) )
            << "context " << c;
    }
    for ( int c = 0; c < 40; ++c )
    {
        const auto [platform, batch] = context( c );
        ASSERT_TRUE( sameBits( uncached[c],
                               iterationLowerBoundMs( s.workloadRef(), *platform, batch, cache ) ) )
            << "context " << c << " again";
    }
    // The GPU and the batch matter to the bound (the test would not see a wrong context
    // otherwise).
    EXPECT_NE( uncached[0], uncached[1] );
    EXPECT_NE( uncached[0], uncached[2] );
}

} // namespace Test
