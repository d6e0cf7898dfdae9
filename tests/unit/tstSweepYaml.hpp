// Sweep files: values, ranges, defaults, and errors with file:line:col.
#include <gtest/gtest.h>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/sweep_yaml.hpp>
#include <shardsweep/model/rng.hpp>
#include <string>

namespace Test
{
using namespace shardsweep;

const char* kSweep = R"(kind: sweep
name: unit-sweep
seed: 11
grid:
  workloads: [w1.yaml, w2.yaml]
  platforms: [p.yaml]
  planners: [round_robin, size_greedy]
  batches: [1024, {from: 4096, to: 32768, factor: 2}]
  gpu_counts: {from: 8, to: 32, step: 8}
  cost_models: [native, torchrec]
generators:
  - protocol: neuroshard
    count: 10
    platform: p.yaml
    pool: {synthetic: 100, seed: 3}
  - protocol: dreamshard
    name: ds80
    count: 4
    seed: 5
    tables: 80
    split: train
    platform: /abs/p.yaml
    pool: {csv: pool.csv}
    planners: [torchrec]
    batches: [65536, 131072]
)";

TEST( TEST_CATEGORY, sweep_yaml_values )
{
    const SweepConfig c = parseSweep( kSweep, "dir/s.yaml" );
    EXPECT_EQ( c.name, "unit-sweep" );
    EXPECT_EQ( c.seed, 11u );
    EXPECT_EQ( c.text, kSweep );
    ASSERT_EQ( c.workloads.size(), 2u );
    EXPECT_EQ( c.workloads[1], "dir/w2.yaml" );
    EXPECT_EQ( c.platforms[0], "dir/p.yaml" );
    ASSERT_EQ( c.planners.size(), 2u );
    EXPECT_EQ( c.planners[1], PlannerKind::size_greedy );
    EXPECT_EQ( c.batches, ( std::vector<std::int64_t>{ 1024, 4096, 8192, 16384, 32768 } ) );
    EXPECT_EQ( c.gpu_counts, ( std::vector<int>{ 8, 16, 24, 32 } ) );
    ASSERT_EQ( c.cost_models.size(), 2u );
    EXPECT_EQ( c.cost_models[1], CostModel::torchrec );
    EXPECT_EQ( c.gridSize(), 2u * 1u * 4u * 5u * 2u * 2u );

    ASSERT_EQ( c.generators.size(), 2u );
    const TaskGeneratorConfig& g0 = c.generators[0];
    EXPECT_EQ( g0.name, "neuroshard" );
    EXPECT_EQ( g0.protocol, TaskProtocol::neuroshard );
    EXPECT_EQ( g0.count, 10u );
    EXPECT_EQ( g0.seed, mixSeed( 11, 0 ) );
    EXPECT_EQ( g0.platform, "dir/p.yaml" );
    EXPECT_TRUE( g0.pool.csv.empty() );
    EXPECT_EQ( g0.pool.synthetic.num_tables, 100 );
    EXPECT_EQ( g0.pool.synthetic.seed, 3u );
    EXPECT_EQ( g0.pool.locality_file, defaultLocalityFile() );
    EXPECT_EQ( g0.planners, c.planners ); // inherited from the grid
    EXPECT_EQ( g0.batches, ( std::vector<std::int64_t>{ 65536 } ) );
    EXPECT_EQ( g0.cost_models.size(), 2u );

    const TaskGeneratorConfig& g1 = c.generators[1];
    EXPECT_EQ( g1.name, "ds80" );
    EXPECT_EQ( g1.seed, 5u );
    EXPECT_EQ( g1.options.num_tables, 80 );
    EXPECT_EQ( g1.options.split, PoolSplit::train );
    EXPECT_EQ( g1.platform, "/abs/p.yaml" );
    EXPECT_EQ( g1.pool.csv, "dir/pool.csv" );
    ASSERT_EQ( g1.planners.size(), 1u );
    EXPECT_EQ( g1.planners[0], PlannerKind::torchrec );
    EXPECT_EQ( g1.batches, ( std::vector<std::int64_t>{ 65536, 131072 } ) );

    // Defaults: one planner (round_robin), the workload's batch (0), the platform's GPUs (0).
    const SweepConfig d = parseSweep( "kind: sweep\nname: d\ngrid:\n  workloads: [a.yaml]\n"
                                      "  platforms: [b.yaml]\n",
                                      "d.yaml" );
    EXPECT_EQ( d.gridSize(), 1u );
    EXPECT_EQ( d.planners[0], PlannerKind::round_robin );
    EXPECT_EQ( d.batches[0], 0 );
    EXPECT_EQ( d.gpu_counts[0], 0 );
    EXPECT_EQ( d.cost_models[0], CostModel::native );
    EXPECT_NE( sweepConfigHash( c, 0 ), sweepConfigHash( d, 0 ) );
    // The files the inputs were read from take part: the same sweep text over other files.
    EXPECT_NE( sweepConfigHash( c, 1 ), sweepConfigHash( c, 2 ) );
}

// Replaces the first occurrence of `from` in the example and expects an InputError whose
// message starts with "s.yaml:LINE:COL:" and contains `needle`.
void expectError( const std::string& from, const std::string& to, const std::string& where,
                  const std::string& needle )
{
    std::string text = kSweep;
    const auto pos = text.find( from );
    ASSERT_NE( pos, std::string::npos ) << from;
    text.replace( pos, from.size(), to );
    try
    {
        parseSweep( text, "s.yaml" );
        FAIL() << "expected an InputError for " << to;
    }
    catch ( const InputError& e )
    {
        const std::string msg = e.what();
        EXPECT_EQ( msg.rfind( "s.yaml:" + where + ":", 0 ), 0u ) << msg;
        EXPECT_NE( msg.find( needle ), std::string::npos ) << msg;
    }
}

TEST( TEST_CATEGORY, sweep_yaml_errors )
{
    // Unknown planner: line 7, the element's column.
    expectError( "size_greedy]", "size_gredy]", "7:27", "size_greedy" );
    // A typo in a key.
    expectError( "  cost_models: [native, torchrec]", "  cost_model: [native, torchrec]", "10:3",
                 "cost_model" );
    // A descending range.
    expectError( "to: 32, step: 8", "to: 4, step: 8", "9:29", "to" );
    // Factor 1 would never end.
    expectError( "factor: 2", "factor: 1", "8:51", "factor" );
    // Wrong kind.
    expectError( "kind: sweep", "kind: workload", "1:7", "sweep" );
    // Unknown protocol.
    expectError( "protocol: neuroshard", "protocol: neuroshardd", "12:15", "neuroshard" );
    // A table count for a protocol that has none.
    expectError( "protocol: dreamshard", "protocol: autoshard", "20:13", "tables" );
    // Two generators with the same name.
    expectError( "name: ds80", "name: neuroshard", "17:11", "generator name" );
    // A pool with both a CSV and a synthetic size.
    expectError( "{csv: pool.csv}", "{csv: pool.csv, synthetic: 5}", "23:11", "exactly one" );
    // Negative count.
    expectError( "count: 10", "count: -1", "13:12", "count" );
}

TEST( TEST_CATEGORY, shipped_sweeps_parse )
{
    const std::string dir = std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/";
    const SweepConfig q = readSweep( dir + "quickstart.yaml" );
    // 1 workload x 2 platforms x 5 batches x 3 GPU counts x 5 planners; the generators take
    // the grid's 5 planners.
    EXPECT_EQ( q.gridSize(), 150u );
    ASSERT_EQ( q.generators.size(), 2u );
    EXPECT_EQ( q.generators[0].count * q.generators[0].planners.size(), 500u );
    EXPECT_EQ( q.generators[1].count * q.generators[1].planners.size(), 250u );
    EXPECT_EQ( readSweep( dir + "sweeps/grid_example.yaml" ).gridSize(), 480u );
    const SweepConfig p = readSweep( dir + "sweeps/protocols.yaml" );
    std::uint64_t n = 0;
    for ( const TaskGeneratorConfig& g : p.generators )
        n += g.count * g.planners.size() * g.batches.size() * g.cost_models.size();
    EXPECT_EQ( n, 2880u );
    EXPECT_EQ( p.generators[2].protocol, TaskProtocol::autoshard );
    EXPECT_EQ( readSweep( dir + "sweeps/resume_check.yaml" ).generators.size(), 2u );
}

TEST( TEST_CATEGORY, load_scenario_space )
{
    const std::string dir = std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/sweeps/";
    const ScenarioSpace space = loadScenarioSpace( dir + "protocols.yaml" );
    ASSERT_EQ( space.size(), 2880u );
    EXPECT_EQ( space.gridSize(), 0u );
    EXPECT_EQ( space.generatorOffset( 2 ), 1600u );
    ScenarioSpec s = space.materialize( 0 );
    EXPECT_EQ( s.protocol, TaskProtocol::neuroshard );
    EXPECT_EQ( s.planner, PlannerKind::round_robin );
    EXPECT_EQ( s.gpu_count, 4 );
    EXPECT_EQ( s.platform.num_nodes, 1 );
    EXPECT_DOUBLE_EQ( s.platform.gpu.memory_GiB, 4.0 );
    // 1600 + 8·3 + 7: autoshard task 3 with the last planner (shardsweep).
    s = space.materialize( 1631 );
    EXPECT_EQ( s.protocol, TaskProtocol::autoshard );
    EXPECT_EQ( s.task_index, 3 );
    EXPECT_EQ( s.planner, PlannerKind::shardsweep );
    EXPECT_EQ( s.gpu_count, 8 );
    EXPECT_EQ( s.workload->tables.size(), 80u );
    EXPECT_EQ( space.workloadNames().at( 2 ), "autoshard" );
    EXPECT_EQ( space.platformNames().size(), 1u ); // one platform file shared by all generators
    EXPECT_EQ( loadScenarioSpace( dir + "resume_check.yaml" ).size(), 30000u );

    // A missing platform file and a pool too small for the protocol are input errors.
    const std::string base = "kind: sweep\nname: x\ngenerators:\n  - protocol: autoshard\n"
                             "    count: 1\n";
    EXPECT_THROW(
        loadScenarioSpace( parseSweep( base + "    platform: nowhere.yaml\n", "x.yaml" ) ),
        InputError );
    try
    {
        loadScenarioSpace(
            parseSweep( base + "    platform: " + dir +
                            "../platforms/dgx-a100.yaml\n    pool: {synthetic: 40}\n",
                        "x.yaml" ) );
        FAIL() << "expected an InputError";
    }
    catch ( const InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "80 pool tables" ), std::string::npos )
            << e.what();
    }
}

} // namespace Test
