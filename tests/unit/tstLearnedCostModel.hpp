// The learned DLRM shard cost inside the cost kernel (cost_model: learned; model/
// learned_shard_cost.hpp): a hand-computed one-layer model, the kernel against a plain reference
// evaluation (features rebuilt here from the inputs, mlpReferenceEvaluate on std::vector),
// bitwise Serial = this backend, the host planner path, and the native fallback.
#include "test_gpus.hpp"

#include <backend_equal.hpp>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>
#include <shardsweep/io/mlp_file.hpp>
#include <shardsweep/kernel/learned_cost_model.hpp>
#include <shardsweep/kernel/scenario_batch.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
Platform learnedTestPlatform( int gpus )
{
    Platform p;
    p.gpu = a100Gpu( 40, 1555 );
    p.gpus_per_node = gpus;
    p.hbm_reserve_GiB = 1.0;
    p.host_memory_GiB = 512;
    p.host_to_gpu_GBps = 25;
    p.network.num_dims = 1;
    p.network.dims[0] = { Topology::Switch, gpus, 150.0, 500.0 };
    return p;
}

Workload learnedTestWorkload( int tables, std::mt19937_64& rng )
{
    Workload w;
    w.global_batch = 4096;
    w.dense.bottom_mlp_layers = 2;
    w.dense.bottom_mlp[0] = 64;
    w.dense.bottom_mlp[1] = 16;
    w.dense.top_mlp_layers = 2;
    w.dense.top_mlp[0] = 64;
    w.dense.top_mlp[1] = 1;
    std::uniform_real_distribution<double> u( 0.0, 1.0 );
    for ( int t = 0; t < tables; ++t )
    {
        TableSpec s;
        s.rows = 1000 + static_cast<std::int64_t>( 200000 * u( rng ) );
        s.dim = 16 << ( t % 3 );
        s.pooling_factor = 1.0 + 30.0 * u( rng );
        s.distribution = t % 2 ? AccessDistribution::zipf : AccessDistribution::uniform;
        s.zipf_alpha = t % 2 ? 0.8 + 0.4 * u( rng ) : 0.0;
        for ( int j = 0; j < kReuseBins; ++j )
            s.reuse_histogram[j] = u( rng ) / kReuseBins;
        w.tables.push_back( s );
        w.table_names.push_back( "t" + std::to_string( t ) );
    }
    return w;
}

//! A 31-input, 16-unit ReLU, 1-output MLP with small seeded weights and per-feature z-scores of
//! the right scale (so that exp(output) stays near 1 ms).
MlpFile learnedTestMlp( std::uint64_t seed )
{
    std::mt19937_64 rng( seed );
    std::uniform_real_distribution<double> u( -0.3, 0.3 );
    MlpFile m;
    m.family = "dlrm";
    for ( const char* n : kLearnedShardFeatureNames )
        m.names.push_back( n );
    const double typical[kLearnedShardFeatures] = { 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05,
                                                    0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05,
                                                    0.05, 32,   15,   1e5,  5e4,  32,   2,    1,
                                                    0.1,  1,    1,    1,    4096, 4,    1 };
    for ( int i = 0; i < kLearnedShardFeatures; ++i )
    {
        m.mean.push_back( typical[i] );
        m.scale.push_back( typical[i] );
    }
    m.trained_on = { "P0", "P1" };
    MlpFileLayer hidden{ MlpActivation::relu, kLearnedShardFeatures, 16, {}, {} };
    for ( int k = 0; k < 16 * kLearnedShardFeatures; ++k )
        hidden.weights.push_back( u( rng ) );
    for ( int k = 0; k < 16; ++k )
        hidden.bias.push_back( u( rng ) );
    MlpFileLayer out{ MlpActivation::identity, 16, 1, {}, { -1.0 } };
    for ( int k = 0; k < 16; ++k )
        out.weights.push_back( u( rng ) );
    m.layers = { hidden, out };
    return m;
}

LearnedCostModel toModel( const MlpFile& f )
{
    LearnedCostModel m;
    const std::vector<double> p = packMlp( f, m.layout );
    Kokkos::View<double*, Kokkos::HostSpace> params( "params", p.size() );
    std::copy( p.begin(), p.end(), params.data() );
    m.params = params;
    m.platforms = f.trained_on;
    return m;
}

//! Random plans: each table table-wise, row-wise, column-wise or data-parallel, random kernel.
Plan randomPlan( const Workload& w, int gpus, std::mt19937_64& rng )
{
    Plan plan;
    std::uniform_int_distribution<int> pick( 0, 1 << 20 );
    for ( int t = 0; t < static_cast<int>( w.tables.size() ); ++t )
    {
        const TableSpec& s = w.tables[t];
        TablePlan tp;
        const int kind = pick( rng ) % 4;
        tp.kernel = pick( rng ) % 3 == 2 ? ComputeKernel::uvm_caching : ComputeKernel::hbm;
        tp.cache_fraction = tp.kernel == ComputeKernel::uvm_caching ? 0.25 : 0.0;
        const int g0 = pick( rng ) % gpus;
        if ( kind == 0 )
        {
            tp.sharding = ShardingType::table_wise;
            plan.shards.push_back( { t, g0, 0, s.rows, 0, s.dim } );
        }
        else if ( kind == 1 )
        {
            tp.sharding = ShardingType::row_wise;
            const std::int64_t block = ( s.rows + gpus - 1 ) / gpus;
            for ( int g = 0; g < gpus; ++g )
            {
                const std::int64_t b = std::min<std::int64_t>( g * block, s.rows );
                const std::int64_t e = std::min<std::int64_t>( b + block, s.rows );
                plan.shards.push_back( { t, g, b, e - b, 0, s.dim } );
            }
        }
        else if ( kind == 2 )
        {
            tp.sharding = ShardingType::column_wise;
            plan.shards.push_back( { t, g0, 0, s.rows, 0, s.dim / 2 } );
            plan.shards.push_back( { t, ( g0 + 1 ) % gpus, 0, s.rows, s.dim / 2, s.dim / 2 } );
        }
        else
        {
            tp.sharding = ShardingType::data_parallel;
            for ( int g = 0; g < gpus; ++g )
                plan.shards.push_back( { t, g, 0, s.rows, 0, s.dim } );
        }
        plan.tables.push_back( tp );
    }
    return plan;
}
} // namespace

// One identity layer: output = log 2 + 0.01 · num_cols, so a shard of 16 columns costs
// 2·e^0.16 ms in total, split like the native forward/backward.
TEST( TEST_CATEGORY, learned_shard_cost_hand_computed )
{
    MlpFile f;
    f.family = "dlrm";
    for ( const char* n : kLearnedShardFeatureNames )
        f.names.push_back( n );
    f.mean.assign( kLearnedShardFeatures, 0.0 );
    f.scale.assign( kLearnedShardFeatures, 1.0 );
    f.trained_on = { "P0" };
    MlpFileLayer l{ MlpActivation::identity, kLearnedShardFeatures, 1, {}, { std::log( 2.0 ) } };
    l.weights.assign( kLearnedShardFeatures, 0.0 );
    l.weights[21] = 0.01; // num_cols
    f.layers = { l };
    const LearnedCostModel model = toModel( f );
    std::mt19937_64 rng( 1 );
    const Workload w = learnedTestWorkload( 1, rng );
    const Platform p = learnedTestPlatform( 2 );
    Plan plan;
    plan.tables.push_back( TablePlan{} );
    plan.shards.push_back( { 0, 1, 0, w.tables[0].rows, 0, 16 } );
    const ScenarioResult native = evaluateScenario( { &w, &p, &plan, 0, CostModel::native } );
    const ScenarioResult learned =
        evaluateScenario( { &w, &p, &plan, 0, CostModel::learned, model.bind( "P0" ) } );
    const double want = 2.0 * std::exp( 0.16 );
    EXPECT_NEAR( learned.shard_fwd_ms[0] + learned.shard_bwd_ms[0], want, 1e-14 * want );
    EXPECT_NEAR( learned.shard_fwd_ms[0] / want,
                 native.shard_fwd_ms[0] / ( native.shard_fwd_ms[0] + native.shard_bwd_ms[0] ),
                 1e-14 );
    EXPECT_EQ( learned.gpu_phase_ms[kNumPhases + int( Phase::embedding_fwd )],
               learned.shard_fwd_ms[0] );
    EXPECT_EQ( learned.phase_ms[int( Phase::input_dist )],
               native.phase_ms[int( Phase::input_dist )] );
    // A platform the model never saw: the native model, bit for bit.
    const ScenarioResult unseen =
        evaluateScenario( { &w, &p, &plan, 0, CostModel::learned, model.bind( "other" ) } );
    EXPECT_EQ( unseen.iteration_ms, native.iteration_ms );
    EXPECT_EQ( unseen.shard_fwd_ms, native.shard_fwd_ms );
    // learned without a model is an error, not a silent native run.
    EXPECT_THROW( evaluateScenario( { &w, &p, &plan, 0, CostModel::learned } ),
                  std::invalid_argument );
}

// A batch of random scenarios (both platform codes, several GPU counts and batches): every
// shard's fwd + bwd equals exp of the plain reference evaluation of features rebuilt here;
// Serial and this backend agree (sameAsHost: bit for bit on host backends); the host path
// (planners) agrees too.
TEST( TEST_CATEGORY, learned_shard_cost_kernel_matches_reference )
{
    const MlpFile f = learnedTestMlp( 7 );
    const LearnedCostModel model = toModel( f );
    std::mt19937_64 rng( 3 );
    const int n = 24;
    std::vector<Workload> workloads;
    std::vector<Platform> platforms;
    std::vector<Plan> plans;
    for ( int i = 0; i < n; ++i )
    {
        workloads.push_back( learnedTestWorkload( 6 + i % 5, rng ) );
        workloads.back().global_batch = 2048 << ( i % 3 );
        platforms.push_back( learnedTestPlatform( 2 << ( i % 3 ) ) );
    }
    for ( int i = 0; i < n; ++i )
        plans.push_back( randomPlan( workloads[i], platforms[i].numGpus(), rng ) );
    std::vector<ScenarioInput> inputs;
    for ( int i = 0; i < n; ++i )
        inputs.push_back( { &workloads[i], &platforms[i], &plans[i], 0,
                            i % 4 == 3 ? CostModel::native : CostModel::learned,
                            model.bind( i % 2 ? "P1" : "P0" ) } );
    const auto serial = evaluateScenarios( shardsweep::Backend::serial, inputs );
    const auto backend = evaluateScenarios( TEST_BACKEND, inputs );
    int checked = 0;
    for ( int i = 0; i < n; ++i )
    {
        const ScenarioResult& r = backend[i];
        EXPECT_TRUE( sameAsHost( r.iteration_ms, serial[i].iteration_ms ) );
        EXPECT_TRUE( sameAsHost( r.shard_fwd_ms, serial[i].shard_fwd_ms ) );
        EXPECT_TRUE( sameAsHost( r.shard_bwd_ms, serial[i].shard_bwd_ms ) );
        EXPECT_TRUE( sameAsHost( r.gpu_phase_ms, serial[i].gpu_phase_ms ) );
        const ScenarioResult host = evaluateScenario( inputs[i] );
        EXPECT_TRUE( sameAsHost( r.iteration_ms, host.iteration_ms ) );
        if ( inputs[i].model != CostModel::learned )
            continue;
        const Workload& w = workloads[i];
        for ( std::size_t s = 0; s < plans[i].shards.size(); ++s )
        {
            const ShardSpec& sh = plans[i].shards[s];
            const TableSpec& t = w.tables[sh.table];
            const TablePlan& tp = plans[i].tables[sh.table];
            std::vector<double> x( t.reuse_histogram, t.reuse_histogram + kReuseBins );
            const double rest[] = { double( t.dim ),
                                    t.pooling_factor,
                                    double( t.rows ),
                                    double( sh.num_rows ),
                                    double( sh.num_cols ),
                                    double( int( tp.sharding ) ),
                                    double( int( tp.kernel ) ),
                                    tp.cache_fraction,
                                    double( int( t.dtype ) ),
                                    double( int( t.distribution ) ),
                                    t.zipf_alpha,
                                    double( w.global_batch ),
                                    double( platforms[i].numGpus() ),
                                    double( i % 2 ) };
            x.insert( x.end(), std::begin( rest ), std::end( rest ) );
            ASSERT_EQ( x.size(), std::size_t( kLearnedShardFeatures ) );
            const double want = std::exp( mlpReferenceEvaluate( f, x ) );
            const double got = r.shard_fwd_ms[s] + r.shard_bwd_ms[s];
            EXPECT_NEAR( got, want, ( kTestOnDevice ? kDeviceRelTolerance : 4e-16 ) * want )
                << "scenario " << i << " shard " << s;
            ++checked;
        }
    }
    EXPECT_GT( checked, 200 );
}

} // namespace Test
