// TorchRec-like planner: the partitioner, proposer and planner outcomes of
// TorchRec a48cef79, planner/tests/test_{partitioners,planners,proposers}.py, and planTorchrec on
// shardsweep types.
#include <algorithm>
#include <gtest/gtest.h>
#include <shardsweep/model/torchrec/adapter.hpp>
#include <shardsweep/plan/torchrec_planner.hpp>

namespace Test
{
using namespace shardsweep;

namespace
{
TorchrecOption fixedOption( int table, ShardingType type, int shards, TorchrecPerf perf,
                            std::int64_t hbm, std::int64_t ddr )
{
    TorchrecOption o;
    o.table = table;
    o.type = type;
    for ( int i = 0; i < shards; ++i )
    {
        TorchrecShardPlacement p;
        p.perf = perf;
        p.storage = { hbm, ddr };
        o.shards.push_back( p );
    }
    return o;
}

std::vector<TorchrecRankState> devices( int n, double cap )
{
    std::vector<TorchrecRankState> d( n );
    for ( int r = 0; r < n; ++r )
        d[r] = { r, cap, cap, 0.0 };
    return d;
}

//! TestSparseNN's tables (100 x dim, one feature, pf 1, B = 512) on Topology(W = 2,
//! hbm_cap = 2 MiB); dense: TestDenseArch Linear(10, 8) + over arch Linear(8 + sum dims, 16).
TorchrecPlanOutcome planSparseNN( int num_tables, std::int64_t rows, int dim,
                                  std::vector<ShardingType> types )
{
    TorchrecPlannerConfig c;
    c.topology = torchrecDefaultTopology( 2, 2 );
    c.topology.hbm_cap_bytes = 2.0 * 1024 * 1024;
    c.sharding_types = types;
    c.kernels = { TorchrecKernel::fused };
    c.dense_param_bytes = 4.0 * ( 88.0 + ( 8.0 + num_tables * double( dim ) ) * 16 + 16 );
    std::vector<TorchrecTableInput> tables( num_tables );
    for ( auto& t : tables )
    {
        t.rows = rows;
        t.dim = dim;
        t.lookups = t.pooled_outputs = 512;
    }
    return torchrecPlan( tables, c );
}

std::vector<std::vector<int>> sortedRanks( const TorchrecPlanOutcome& o )
{
    std::vector<std::vector<int>> ranks;
    for ( const auto& opt : o.best )
    {
        std::vector<int> r;
        for ( const auto& sh : opt.shards )
            r.push_back( sh.rank );
        ranks.push_back( r );
    }
    std::sort( ranks.begin(), ranks.end() );
    return ranks;
}
} // namespace

TEST( TEST_CATEGORY, torchrec_greedy_partitioner )
{
    // 4 TW tables with Perf (40, 30, 20, 10) and storage 1000/1000 -> ranks 0, 1, 0, 1.
    std::vector<TorchrecOption> p;
    for ( int t = 0; t < 4; ++t )
        p.push_back(
            fixedOption( t, ShardingType::table_wise, 1, { 40, 30, 20, 10, 0 }, 1000, 1000 ) );
    ASSERT_TRUE( torchrecPartition( p, devices( 2, 1e6 ), 2, nullptr ) );
    const int want[] = { 0, 1, 0, 1 };
    for ( int t = 0; t < 4; ++t )
        EXPECT_EQ( p[t].shards[0].rank, want[t] );
    EXPECT_EQ( torchrecRating( p, 2 ), 200.0 ); // (80 + 60 + 40 + 20) on each rank

    // table_0 at Perf (75, 75, 75, 75) -> 0, 1, 1, 1.
    p[0].shards[0].perf = { 75, 75, 75, 75, 0 };
    ASSERT_TRUE( torchrecPartition( p, devices( 2, 1e6 ), 2, nullptr ) );
    const int want2[] = { 0, 1, 1, 1 };
    for ( int t = 0; t < 4; ++t )
        EXPECT_EQ( p[t].shards[0].rank, want2[t] );

    // W = 16, L = 8: TWRW tables go to whole hosts, alternating by host perf.
    std::vector<TorchrecOption> h;
    for ( int t = 0; t < 4; ++t )
        h.push_back(
            fixedOption( t, ShardingType::table_row_wise, 8, { 1, 1, 1, 1, 0 }, 100, 100 ) );
    ASSERT_TRUE( torchrecPartition( h, devices( 16, 1e6 ), 8, nullptr ) );
    for ( int t = 0; t < 4; ++t )
        for ( int s = 0; s < 8; ++s )
            EXPECT_EQ( h[t].shards[s].rank, ( t % 2 ) * 8 + s );

    // Nothing fits: the partitioner reports it instead of over-committing.
    std::string why;
    EXPECT_FALSE( torchrecPartition( p, devices( 2, 1500 ), 2, &why ) );
    EXPECT_NE( why.find( "does not fit" ), std::string::npos );
}

TEST( TEST_CATEGORY, torchrec_planner_outcomes )
{
    const std::vector<ShardingType> tw_rw = { ShardingType::table_wise, ShardingType::row_wise };
    // 4 tables of 100x64 -> all TW, two per rank.
    TorchrecPlanOutcome o = planSparseNN( 4, 100, 64, tw_rw );
    ASSERT_EQ( o.error, TorchrecPlannerError::none ) << o.message;
    EXPECT_EQ( sortedRanks( o ), ( std::vector<std::vector<int>>{ { 0 }, { 0 }, { 1 }, { 1 } } ) );
    // 3 tables -> one goes RW to balance the maximum.
    o = planSparseNN( 3, 100, 64, tw_rw );
    ASSERT_EQ( o.error, TorchrecPlannerError::none ) << o.message;
    EXPECT_EQ( sortedRanks( o ), ( std::vector<std::vector<int>>{ { 0 }, { 0, 1 }, { 1 } } ) );
    // One 4096x128 table: TW only cannot fit 2 MiB -> STRICT_CONSTRAINTS; TW|RW -> RW.
    o = planSparseNN( 1, 4096, 128, { ShardingType::table_wise } );
    EXPECT_EQ( o.error, TorchrecPlannerError::strict_constraints );
    o = planSparseNN( 1, 4096, 128, tw_rw );
    ASSERT_EQ( o.error, TorchrecPlannerError::none ) << o.message;
    EXPECT_EQ( o.best[0].type, ShardingType::row_wise );
    EXPECT_EQ( sortedRanks( o ), ( std::vector<std::vector<int>>{ { 0, 1 } } ) );
    // 1e7 x 1e7 tables: the dense reservation alone overflows -> INSUFFICIENT_STORAGE, 0 proposals.
    o = planSparseNN( 2, 10000000, 10000000, tw_rw );
    EXPECT_EQ( o.error, TorchrecPlannerError::insufficient_storage );
    EXPECT_EQ( o.num_proposals, 0 );
}

TEST( TEST_CATEGORY, torchrec_greedy_proposer_sequence )
{
    TorchrecPlannerConfig c;
    c.topology = torchrecDefaultTopology( 2, 2 );
    c.sharding_types.push_back( ShardingType::grid_shard );
    std::vector<TorchrecTableInput> tables( 2 );
    for ( auto& t : tables )
    {
        t.rows = 100;
        t.dim = 10;
        t.lookups = t.pooled_outputs = 512;
    }
    const auto options = torchrecEnumerate( tables, c );
    ASSERT_EQ( options[0].size(), 19u ); // DP + 6 types x 3 kernels
    const auto seq = torchrecGreedyProposals( options, true, 0, {} );
    ASSERT_GE( seq.size(), 5u );
    EXPECT_LE( seq.size(), 1u + 2 * 18 );
    const ShardingType want[5][2] = {
        { ShardingType::row_wise, ShardingType::row_wise },
        { ShardingType::table_row_wise, ShardingType::row_wise },
        { ShardingType::grid_shard, ShardingType::row_wise },
        { ShardingType::data_parallel, ShardingType::row_wise },
        { ShardingType::data_parallel, ShardingType::table_row_wise } };
    for ( int i = 0; i < 5; ++i )
        for ( int t = 0; t < 2; ++t )
        {
            EXPECT_EQ( options[t][seq[i][t]].type, want[i][t] ) << i << " " << t;
            if ( options[t][seq[i][t]].type != ShardingType::data_parallel )
            {
                EXPECT_EQ( options[t][seq[i][t]].kernel, TorchrecKernel::fused );
            }
        }
    // Threshold 10 with ratings 100, 101, ...: best stays 100; the 13th propose() ends it.
    std::vector<double> ratings;
    for ( int i = 0; i < 40; ++i )
        ratings.push_back( 100.0 + i );
    EXPECT_EQ( torchrecGreedyProposals( options, true, 10, ratings ).size(), 12u );
}

TEST( TEST_CATEGORY, torchrec_plan_on_shardsweep_types )
{
    Platform p;
    p.gpus_per_node = 2;
    p.num_nodes = 2;
    p.gpu.memory_GiB = 16;
    Workload w;
    w.global_batch = 4096;
    for ( int t = 0; t < 6; ++t )
    {
        TableSpec s;
        s.rows = 100000 * ( t + 1 );
        s.dim = t % 2 ? 64 : 128;
        s.pooling_factor = 1 + t;
        w.tables.push_back( s );
    }
    const PlanResult r = planTorchrec( w, p, 0, PlannerOptions() );
    ASSERT_TRUE( r.feasible ) << r.reason;
    ASSERT_EQ( r.plan.tables.size(), 6u );
    // Every table's shards cover it exactly once (DP: once per GPU).
    for ( int t = 0; t < 6; ++t )
    {
        double elems = 0;
        for ( const ShardSpec& s : r.plan.shards )
            if ( s.table == t )
            {
                EXPECT_GE( s.gpu, 0 );
                EXPECT_LT( s.gpu, 4 );
                elems += double( s.num_rows ) * s.num_cols;
            }
        const double full = double( w.tables[t].rows ) * w.tables[t].dim;
        EXPECT_EQ( elems,
                   r.plan.tables[t].sharding == ShardingType::data_parallel ? 4 * full : full );
    }
    // The plan priced again with the per-shard model gives the planner's objective.
    std::vector<double> fwd( r.plan.shards.size() ), bwd( r.plan.shards.size() ), rank( 4 );
    const double cost = torchrecPlanCost( w, p, r.plan, 0, fwd.data(), bwd.data(), rank.data() );
    EXPECT_NEAR( cost, r.predicted_ms, 1e-12 * cost );
    EXPECT_EQ( cost, *std::max_element( rank.begin(), rank.end() ) );
    double sum = 0, ranks = 0;
    for ( std::size_t i = 0; i < fwd.size(); ++i )
        sum += fwd[i] + bwd[i];
    for ( double x : rank )
        ranks += x;
    EXPECT_NEAR( sum, ranks, 1e-12 * ranks );
}

} // namespace Test
