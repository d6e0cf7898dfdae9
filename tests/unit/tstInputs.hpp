// Input files: parsed values field by field for one file of each kind, and every class of input
// error with its exact "file:line:col: field ..." message.
#include "input_test_support.hpp"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/plan_yaml.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/scenario_yaml.hpp>
#include <shardsweep/io/workload_yaml.hpp>
#include <shardsweep/io/yaml_util.hpp>
#include <string>

namespace Test
{

using namespace shardsweep;

TEST( TEST_CATEGORY, yaml_values_and_ranges )
{
    YamlView v = loadYamlString( "a: 40_000_000\nb: 4e7\nc: 2.5\nd: [1, 2]\ne: TRUE\n", "t.yaml" );
    EXPECT_EQ( v.getInt( "a" ), 40000000 );
    EXPECT_EQ( v.getInt( "b" ), 40000000 );
    EXPECT_EQ( v.getDouble( "c" ), 2.5 );
    EXPECT_EQ( v.at( "d" ).asIntList(), ( std::vector<std::int64_t>{ 1, 2 } ) );
    EXPECT_TRUE( v.getBool( "e" ) );
    EXPECT_EQ( v.getIntOr( "missing", 7 ), 7 );
    expectInputError( [&] { v.getInt( "c" ); },
                      "t.yaml:3:4: field 'c': expected an integer, found '2.5'" );
    expectInputError( [&] { v.getDouble( "c", Range::between( 0, 1 ) ); },
                      "t.yaml:3:4: field 'c': expected a number in [0, 1], found '2.5'" );
    expectInputError( [&] { v.getDouble( "d" ); },
                      "t.yaml:4:4: field 'd': expected a number, found a list" );
    expectInputError( [&] { v.at( "d" ).element( 0 ).asInt( Range::atLeast( 2 ) ); },
                      "t.yaml:4:5: field 'd[0]': expected an integer >= 2, found '1'" );
    expectInputError(
        [&] {
            v.checkKeys( { "a", "b" }, { "c", "d", "ee" } );
        },
        "t.yaml:5:1: field 'e': expected one of the keys a, b, c, d or ee (did you "
        "mean 'ee'?), found unknown key 'e'" );
    expectInputError(
        [&] {
            v.checkKeys( { "a", "b", "c", "d", "e", "f" } );
        },
        "t.yaml:1:1: field 'f': expected a value (the field is required), found no "
        "'f' key in this mapping" );
    expectInputError( [] { loadYamlString( "a: 1\na: 2\n", "dup.yaml" ).checkKeys( { "a" } ); },
                      "dup.yaml:2:1: field 'a': expected each key once, found 'a' again (first on "
                      "line 1)" );
    expectInputError( [] { loadYamlString( "a: [1, 2\n", "syntax.yaml" ); },
                      "syntax.yaml:2:1: field '(syntax)': expected valid YAML, found end of "
                      "sequence flow not found" );
    EXPECT_EQ( loadYamlString( "x: 1", "dir/f.yaml" ).resolvePath( "../t.csv" ), "t.csv" );
    EXPECT_EQ( loadYamlString( "x: 1", "/a/b/f.yaml" ).resolvePath( "c/t.csv" ), "/a/b/c/t.csv" );
}

TEST( TEST_CATEGORY, gpu_catalog )
{
    const GpuCatalog& c = catalog();
    EXPECT_EQ( c.entries().size(), 16u );
    const GpuEntry& h100 = c.get( "H100-SXM-80GB" );
    EXPECT_EQ( h100.spec.sm_count, 132 );
    EXPECT_EQ( h100.spec.boost_clock_MHz, 1980.0 );
    EXPECT_EQ( h100.spec.fp32_TFLOPs, 67.0 );
    EXPECT_EQ( h100.spec.tf32_TFLOPs, 494.7 );
    EXPECT_EQ( h100.spec.fp16_TFLOPs, 989.4 );
    EXPECT_EQ( h100.spec.bf16_TFLOPs, 989.4 );
    EXPECT_EQ( h100.spec.fp8_TFLOPs, 1978.9 ); // the datasheet's 3958 with sparsity, halved
    EXPECT_EQ( c.get( "A100-SXM4-80GB" ).spec.fp8_TFLOPs, 0.0 );
    EXPECT_EQ( h100.spec.memory_GiB, 80.0 );
    EXPECT_EQ( h100.spec.memory_bandwidth_GBps, 3350.0 );
    EXPECT_EQ( h100.spec.l2_cache_MiB, 50.0 );
    EXPECT_EQ( h100.spec.pcie_generation, 5 );
    EXPECT_DOUBLE_EQ( h100.spec.pcie_bandwidth_GBps, 16 * 32.0 * 128.0 / 130.0 / 8 );
    // NeuSight's device names (the "Device" field and the file stems) are aliases.
    EXPECT_EQ( c.get( "NVIDIA H100 80GB HBM3" ).name, "H100-SXM-80GB" );
    EXPECT_EQ( c.get( "Tesla_T4" ).name, "T4" );
    EXPECT_EQ( c.get( "NVIDIA_A100-PCIE-40GB" ).name, "A100-PCIe-40GB" );
    EXPECT_EQ( c.get( "NVIDIA A100 80GB PCIe" ).name, "A100-PCIe-80GB" );
    EXPECT_EQ( c.get( "Tesla P100-PCIE-16GB" ).name, "P100" );
    EXPECT_EQ( c.get( "Tesla_V100-PCIE-32GB" ).name, "V100-PCIe-32GB" );
    EXPECT_EQ( c.get( "NVIDIA_L4" ).name, "L4" );
    EXPECT_EQ( c.get( "Tesla P4" ).name, "P4" );
    EXPECT_EQ( c.get( "NVIDIA A100-SXM4-40GB" ).name, "A100-SXM4-40GB" );
    EXPECT_EQ( c.find( "H300" ), nullptr );
    EXPECT_THROW( c.get( "H300" ), UsageError );
    EXPECT_EQ( c.get( "T4" ).spec.tf32_TFLOPs, 0.0 );
    EXPECT_EQ( findGpu( "h100" ).name, "H100-SXM-80GB" );

    // An inline GPU: the field table's ranges (domain/gpu_fields.hpp), an exclusive lower bound
    // included, and the derived PCIe default.
    const std::string gpu = "kind: platform\ngpus_per_node: 1\nnum_nodes: 1\n"
                            "gpu: { name: X, sm_count: 10, boost_clock_MHz: 1500, fp32_TFLOPs: 10, "
                            "fp16_TFLOPs: 20, memory_GiB: 16, memory_bandwidth_GBps: 500, "
                            "l2_cache_MiB: 4, pcie_generation: 4 }\n";
    const GpuSpec x = parsePlatformString( gpu, "p.yaml", catalog() ).platform.gpu;
    EXPECT_EQ( x.sm_count, 10 );
    EXPECT_EQ( x.pcie_bandwidth_GBps, 16 * 16.0 * 128.0 / 130.0 / 8 );
    EXPECT_EQ( x.tdp_W, 0.0 );
    auto with = [&]( const std::string& from, const std::string& to )
    {
        std::string text = gpu;
        text.replace( text.find( from ), from.size(), to );
        return [text] { parsePlatformString( text, "p.yaml", catalog() ); };
    };
    expectInputError( with( "memory_GiB: 16", "memory_GiB: 0" ),
                      "p.yaml:4:100: field 'gpu.memory_GiB': expected a number in (0, 65536], "
                      "found '0'" );
    expectInputError( with( "boost_clock_MHz: 1500", "boost_clock_MHz: 1.5" ),
                      "p.yaml:4:48: field 'gpu.boost_clock_MHz': expected a number in [100, "
                      "10000], found '1.5'" );
}

TEST( TEST_CATEGORY, platform_file_values )
{
    NamedPlatform p = readPlatformFile( kInputs + "/platforms/dgx1-v100.yaml", catalog() );
    EXPECT_EQ( p.name, "DGX-1-V100" );
    EXPECT_EQ( p.gpu_name, "V100-SXM2-32GB" );
    EXPECT_EQ( p.platform.gpu.sm_count, 80 );
    EXPECT_EQ( p.platform.gpus_per_node, 8 );
    EXPECT_EQ( p.platform.num_nodes, 1 );
    EXPECT_EQ( p.platform.hbm_reserve_GiB, 2.0 );
    EXPECT_EQ( p.platform.host_memory_GiB, 512.0 );
    EXPECT_EQ( p.platform.host_to_gpu_GBps, 15.75 );
    ASSERT_EQ( p.platform.network.num_dims, 3 );
    for ( int d = 0; d < 3; ++d )
    {
        EXPECT_EQ( p.platform.network.dims[d].topology, Topology::Ring );
        EXPECT_EQ( p.platform.network.dims[d].npus_count, 2 );
        EXPECT_EQ( p.platform.network.dims[d].bandwidth_GBps, 50.0 );
        EXPECT_EQ( p.platform.network.dims[d].latency_ns, 500.0 );
        EXPECT_EQ( p.platform.system.algorithm[0][d], CollectiveAlgorithm::ring );
        EXPECT_EQ( p.platform.system.algorithm[3][d], CollectiveAlgorithm::direct );
    }
    EXPECT_EQ( p.platform.system.endpoint_delay_ns, 10 );
    EXPECT_EQ( p.platform.system.active_chunks_per_dimension, 1 );
    EXPECT_EQ( p.platform.system.preferred_dataset_splits, 4 );
    EXPECT_EQ( p.platform.system.optimization, CollectiveOptimization::local_bw_aware );
    EXPECT_EQ( p.platform.system.local_mem_bw_GBps, 900.0 );

    // Unchanged ASTRA-sim files: [Switch, Ring] [8, 2] [400, 50] [936.25, 1000] and the
    // validated system JSON (its one-entry lists repeat over both dimensions).
    NamedPlatform q = readPlatformFile( kInputs + "/platforms/h100-2node-ib.yaml", catalog() );
    ASSERT_EQ( q.platform.network.num_dims, 2 );
    EXPECT_EQ( q.platform.network.dims[0].topology, Topology::Switch );
    EXPECT_EQ( q.platform.network.dims[1].topology, Topology::Ring );
    EXPECT_EQ( q.platform.network.dims[0].npus_count, 8 );
    EXPECT_EQ( q.platform.network.dims[1].npus_count, 2 );
    EXPECT_EQ( q.platform.network.dims[0].bandwidth_GBps, 400.0 );
    EXPECT_EQ( q.platform.network.dims[1].bandwidth_GBps, 50.0 );
    EXPECT_EQ( q.platform.network.dims[0].latency_ns, 936.25 );
    EXPECT_EQ( q.platform.network.dims[1].latency_ns, 1000.0 );
    EXPECT_EQ( q.platform.system.active_chunks_per_dimension, 2 );
    EXPECT_EQ( q.platform.system.preferred_dataset_splits, 4 );
    EXPECT_EQ( q.platform.system.local_mem_bw_GBps, 3350.0 );
    EXPECT_EQ( q.platform.system.algorithm[3][1], CollectiveAlgorithm::ring );
    EXPECT_EQ( q.platform.numGpus(), 16 );
}

TEST( TEST_CATEGORY, platform_errors )
{
    const std::string base = "kind: platform\n"
                             "gpu: H100\n"
                             "gpus_per_node: 8\n"
                             "num_nodes: 2\n"
                             "network:\n"
                             "  topology: [ Switch, Ring ]\n"
                             "  npus_count: [ 8, 2 ]\n"
                             "  bandwidth: [ 400, 50 ]\n"
                             "  latency: [ 900, 1000 ]\n";
    auto parse = [&]( const std::string& text )
    { return [text] { parsePlatformString( text, "p.yaml", catalog() ); }; };
    EXPECT_NO_THROW( parse( base )() );
    auto replace = [&]( const std::string& from, const std::string& to )
    {
        std::string s = base;
        s.replace( s.find( from ), from.size(), to );
        return s;
    };
    // Unknown key (typo).
    expectInputError(
        parse( replace( "num_nodes", "num_node" ) ),
        "p.yaml:4:1: field 'num_node': expected one of the keys kind, gpu, "
        "gpus_per_node, num_nodes, name, description, hbm_reserve_GiB, "
        "host_memory_GiB, host_to_gpu_GBps, network, system or calibration (did you mean "
        "'num_nodes'?), found unknown key 'num_node'" );
    // Wrong type.
    expectInputError( parse( replace( "gpus_per_node: 8", "gpus_per_node: eight" ) ),
                      "p.yaml:3:16: field 'gpus_per_node': expected an integer in [1, 1024], "
                      "found 'eight'" );
    // Zero bandwidth.
    expectInputError(
        parse( replace( "[ 400, 50 ]", "[ 400, 0 ]" ) ),
        "p.yaml:8:21: field 'network.bandwidth[1]': expected a number in (0, 1000000], "
        "found '0'" );
    // Negative latency.
    expectInputError(
        parse( replace( "[ 900, 1000 ]", "[ -9, 1000 ]" ) ),
        "p.yaml:9:14: field 'network.latency[0]': expected a number in [0, 1000000000], "
        "found '-9'" );
    // npus_count product mismatch.
    expectInputError( parse( replace( "num_nodes: 2", "num_nodes: 4" ) ),
                      "p.yaml:7:15: field 'network.npus_count': expected npus_count multiplying to "
                      "gpus_per_node x num_nodes = 8 x 4 = 32, found [8, 2] (product 16)" );
    // Unknown GPU.
    expectInputError( parse( replace( "gpu: H100", "gpu: H101" ) ),
                      "p.yaml:2:6: field 'gpu': expected a GPU of the catalog (A100-PCIe-40GB, "
                      "A100-PCIe-80GB, A100-SXM4-40GB, A100-SXM4-80GB, B200, GB200, H100-PCIe, "
                      "H100-SXM-80GB, H200, H800-SXM-80GB, L4, P100, P4, T4, V100-PCIe-32GB or "
                      "V100-SXM2-32GB) "
                      "(did you "
                      "mean 'H200'?), found 'H101'" );
    // ASTRA-sim's own rules: unknown topology, a one-NPU dimension, list length mismatch.
    expectInputError( parse( replace( "Switch, Ring", "Switch, Torus" ) ),
                      "p.yaml:6:23: field 'network.topology[1]': expected one of Ring, "
                      "FullyConnected or Switch, found 'Torus'" );
    expectInputError( parse( replace( "[ 400, 50 ]", "[ 400 ]" ) ),
                      "p.yaml:8:14: field 'network.bandwidth': expected 2 entries, one per "
                      "dimension as in 'topology', found 1 entries" );
    // Negative size.
    expectInputError( parse( base + "host_memory_GiB: -1\n" ),
                      "p.yaml:10:18: field 'host_memory_GiB': expected a number in [0, 10000000], "
                      "found '-1'" );
    expectInputError( parse( base + "hbm_reserve_GiB: 80\n" ),
                      "p.yaml:10:18: field 'hbm_reserve_GiB': expected a number in [0, 80), "
                      "found '80'" );
    expectInputError(
        parse( base + "system:\n  all-to-all-implementation: [ doubleBinaryTree ]\n" ),
        "p.yaml:11:32: field 'system.all-to-all-implementation[0]': expected ring, "
        "direct or halvingDoubling (doubleBinaryTree is all-reduce only), found "
        "'doubleBinaryTree'" );
    expectInputError( parse( replace( "kind: platform", "kind: workload" ) ),
                      "p.yaml:1:7: field 'kind': expected 'platform', found 'workload'" );
    // The call terms (calibrate network): read in ns and GB/s; a call bandwidth of 0 is refused
    // (leave the key out for none).
    const NamedPlatform calls = parsePlatformString(
        base + "system:\n  call-latency-ns: 39000.5\n  call-bw: 544.25\n", "p.yaml", catalog() );
    EXPECT_EQ( calls.platform.system.call_latency_ns, 39000.5 );
    EXPECT_EQ( calls.platform.system.call_bw_GBps, 544.25 );
    expectInputError( parse( base + "system:\n  call-bw: 0\n" ),
                      "p.yaml:11:12: field 'system.call-bw': expected a number in (0, "
                      "1000000000], found '0'" );
}

TEST( TEST_CATEGORY, workload_file_values )
{
    Workload w = readWorkloadFile( kInputs + "/workloads/mlperf-dlrm-criteo-1tb.yaml" );
    EXPECT_EQ( w.name, "mlperf-dlrm-criteo-1tb" );
    EXPECT_EQ( w.global_batch, 65536 );
    const std::int64_t rows[26] = { 39884406, 39043,  17289,    7420,    20263,  3,        7120,
                                    1543,     63,     38532951, 2953546, 403346, 10,       2208,
                                    11938,    155,    4,        976,     14,     39979771, 25641295,
                                    39664984, 585935, 12972,    108,     36 };
    ASSERT_EQ( w.tables.size(), 26u );
    std::int64_t total = 0;
    for ( int i = 0; i < 26; ++i )
    {
        EXPECT_EQ( w.table_names[i], "cat_" + std::to_string( i ) );
        EXPECT_EQ( w.tables[i].rows, rows[i] );
        EXPECT_EQ( w.tables[i].dim, 128 );
        EXPECT_EQ( w.tables[i].pooling_factor, 1.0 );
        EXPECT_EQ( w.tables[i].dtype, DataType::fp32 );
        EXPECT_EQ( w.tables[i].optimizer, Optimizer::sgd );
        EXPECT_EQ( w.tables[i].distribution, AccessDistribution::uniform );
        EXPECT_FALSE( w.tables[i].weighted );
        total += w.tables[i].rows;
    }
    EXPECT_EQ( total, 187767399 ); // the sum of the 26 MLPerf hash sizes
    EXPECT_EQ( w.dense.num_dense_features, 13 );
    ASSERT_EQ( w.dense.bottom_mlp_layers, 3 );
    EXPECT_EQ( w.dense.bottom_mlp[0], 512 );
    EXPECT_EQ( w.dense.bottom_mlp[1], 256 );
    EXPECT_EQ( w.dense.bottom_mlp[2], 128 );
    ASSERT_EQ( w.dense.top_mlp_layers, 5 );
    const int top[5] = { 1024, 1024, 512, 256, 1 };
    for ( int i = 0; i < 5; ++i )
        EXPECT_EQ( w.dense.top_mlp[i], top[i] );
    EXPECT_EQ( w.dense.interaction, Interaction::dot );

    // The synthetic model's tables come from a CSV next to it.
    Workload s = readWorkloadFile( kInputs + "/workloads/synthetic-400.yaml" );
    ASSERT_EQ( s.tables.size(), 400u );
    EXPECT_EQ( s.dense.interaction, Interaction::cat );
    EXPECT_EQ( s.table_names[0], "syn_000" );
    EXPECT_EQ( s.tables[0].rows, 627037 );
    EXPECT_EQ( s.tables[0].dim, 64 );
    EXPECT_EQ( s.tables[0].pooling_factor, 7.75 );
    EXPECT_EQ( s.tables[0].optimizer, Optimizer::rowwise_adagrad );
    EXPECT_EQ( s.tables[1].distribution, AccessDistribution::zipf );
    EXPECT_EQ( s.tables[1].zipf_alpha, 0.801 );
    EXPECT_EQ( s.tables[2].distribution, AccessDistribution::histogram );
    EXPECT_EQ( s.tables[2].histogram_batch, 65536 );
    double sum = 0.0;
    for ( double b : s.tables[2].reuse_histogram )
        sum += b;
    EXPECT_NEAR( sum, 1.0, 1e-9 );
}

const std::string kWorkload = "kind: workload\n"
                              "global_batch: 1024\n"
                              "dense: { bottom_mlp: [ 64, 16 ], top_mlp: [ 32, 1 ] }\n"
                              "tables:\n"
                              "  - { name: a, rows: 1000, dim: 16, zipf_alpha: 1.2 }\n"
                              "  - { name: b, rows: 10, dim: 8, reuse_histogram: [ 0.5, 0.25, "
                              "0.25, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 ], histogram_batch: "
                              "512 }\n";

TEST( TEST_CATEGORY, workload_inline_and_errors )
{
    Workload w = parseWorkloadString( kWorkload, "w.yaml" );
    EXPECT_EQ( w.name, "w" );
    EXPECT_EQ( w.tables[0].distribution, AccessDistribution::zipf );
    EXPECT_EQ( w.tables[0].zipf_alpha, 1.2 );
    EXPECT_EQ( w.tables[1].distribution, AccessDistribution::histogram );
    EXPECT_EQ( w.tables[1].reuse_histogram[1], 0.25 );
    EXPECT_EQ( w.tables[1].histogram_batch, 512 );
    EXPECT_EQ( w.dense.num_dense_features, 13 );

    auto with = [&]( const std::string& from, const std::string& to )
    {
        std::string s = kWorkload;
        s.replace( s.find( from ), from.size(), to );
        return [s] { parseWorkloadString( s, "w.yaml" ); };
    };
    // dim 0.
    expectInputError( with( "dim: 16", "dim: 0" ),
                      "w.yaml:5:33: field 'tables[0].dim': expected an integer in [1, 65536], "
                      "found '0'" );
    // Negative size.
    expectInputError( with( "rows: 1000", "rows: -5" ),
                      "w.yaml:5:22: field 'tables[0].rows': expected an integer in [1, "
                      "10000000000000], found '-5'" );
    // Unknown key.
    expectInputError( with( "zipf_alpha", "zipf_alfa" ),
                      "w.yaml:5:37: field 'tables[0].zipf_alfa': expected one of the keys rows, "
                      "dim, name, pooling_factor, zipf_alpha, histogram_batch, dtype, "
                      "optimizer, weighted or reuse_histogram (did you mean 'zipf_alpha'?), "
                      "found unknown key 'zipf_alfa'" );
    // Wrong type.
    expectInputError( with( "global_batch: 1024", "global_batch: [ 1024 ]" ),
                      "w.yaml:2:15: field 'global_batch': expected an integer in [1, "
                      "1000000000], found a list" );
    expectInputError( with( "0.5, 0.25, 0.25", "0.5, 0.25, 0.35" ),
                      "w.yaml:6:51: field 'tables[1].reuse_histogram': expected fractions summing "
                      "to 1 (within 0.02), found a sum of 1.1" );
    expectInputError( with( "name: b", "name: a" ),
                      "w.yaml:6:13: field 'tables[1].name': expected a table name used once, found "
                      "'a' again (first: tables[0])" );
    expectInputError( with( "top_mlp: [ 32, 1 ]", "top_mlp: [ ]" ),
                      "w.yaml:3:43: field 'dense.top_mlp': expected a list of 1 to 16 layer "
                      "widths, found 0 entries" );
}

TEST( TEST_CATEGORY, plan_file_values_and_round_trip )
{
    Workload w = readWorkloadFile( kInputs + "/workloads/mlperf-dlrm-criteo-1tb.yaml" );
    NamedPlatform p = readPlatformFile( kInputs + "/platforms/dgx-h100.yaml", catalog() );
    Plan plan = readPlanFile( kInputs + "/plans/mlperf-dlrm-8gpu.yaml", &w, &p.platform );
    ASSERT_EQ( plan.tables.size(), 26u );
    EXPECT_EQ( plan.tables[0].sharding, ShardingType::row_wise );
    EXPECT_EQ( plan.tables[0].kernel, ComputeKernel::hbm );
    EXPECT_EQ( plan.tables[5].sharding, ShardingType::data_parallel );
    EXPECT_EQ( plan.tables[5].kernel, ComputeKernel::dense );
    EXPECT_EQ( plan.tables[11].sharding, ShardingType::column_wise );
    EXPECT_EQ( plan.tables[22].kernel, ComputeKernel::uvm_caching );
    EXPECT_EQ( plan.tables[22].cache_fraction, 0.2 );
    // 6 row-wise tables x 8 + 6 data-parallel x 8 + 2 column blocks + 13 table-wise (one with
    // fused_uvm_caching).
    ASSERT_EQ( plan.shards.size(), 6u * 8 + 6u * 8 + 2 + 13 );
    const ShardSpec& last = plan.shards[7]; // cat_0's last row block
    EXPECT_EQ( last.table, 0 );
    EXPECT_EQ( last.gpu, 7 );
    EXPECT_EQ( last.row_offset, 34898857 );
    EXPECT_EQ( last.num_rows, 4985549 );
    EXPECT_EQ( last.col_offset, 0 );
    EXPECT_EQ( last.num_cols, 128 );

    // What `plan --output` writes reads back to the same plan.
    std::string text = planToYaml( plan, w.table_names, w.name );
    Plan back = parsePlanString( text, "written.yaml", &w, &p.platform );
    ASSERT_EQ( back.tables.size(), plan.tables.size() );
    for ( std::size_t t = 0; t < plan.tables.size(); ++t )
    {
        EXPECT_EQ( back.tables[t].sharding, plan.tables[t].sharding );
        EXPECT_EQ( back.tables[t].kernel, plan.tables[t].kernel );
        EXPECT_EQ( back.tables[t].cache_fraction, plan.tables[t].cache_fraction );
    }
    ASSERT_EQ( back.shards.size(), plan.shards.size() );
    for ( std::size_t i = 0; i < plan.shards.size(); ++i )
    {
        EXPECT_EQ( back.shards[i].table, plan.shards[i].table );
        EXPECT_EQ( back.shards[i].gpu, plan.shards[i].gpu );
        EXPECT_EQ( back.shards[i].row_offset, plan.shards[i].row_offset );
        EXPECT_EQ( back.shards[i].num_rows, plan.shards[i].num_rows );
        EXPECT_EQ( back.shards[i].col_offset, plan.shards[i].col_offset );
        EXPECT_EQ( back.shards[i].num_cols, plan.shards[i].num_cols );
    }
    EXPECT_EQ( planToYaml( back, w.table_names, w.name ), text );
}

TEST( TEST_CATEGORY, plan_errors )
{
    Workload w = parseWorkloadString( kWorkload, "w.yaml" );
    Platform two;
    two.gpus_per_node = 2;
    const std::string base = "kind: plan\n"
                             "tables:\n"
                             "  - table: a\n"
                             "    sharding: row_wise\n"
                             "    compute_kernel: fused\n"
                             "    shards:\n"
                             "      - { gpu: 0, row_offset: 0, num_rows: 500, col_offset: 0, "
                             "num_cols: 16 }\n"
                             "      - { gpu: 1, row_offset: 500, num_rows: 500, col_offset: 0, "
                             "num_cols: 16 }\n"
                             "  - table: b\n"
                             "    sharding: table_wise\n"
                             "    compute_kernel: fused_uvm_caching\n"
                             "    cache_fraction: 0.5\n"
                             "    shards:\n"
                             "      - { gpu: 1, row_offset: 0, num_rows: 10, col_offset: 0, "
                             "num_cols: 8 }\n";
    Plan ok = parsePlanString( base, "plan.yaml", &w, &two );
    EXPECT_EQ( ok.shards.size(), 3u );
    EXPECT_EQ( ok.tables[1].cache_fraction, 0.5 );
    auto with = [&]( const std::string& from, const std::string& to )
    {
        std::string s = base;
        s.replace( s.find( from ), from.size(), to );
        return [s, &w, &two] { parsePlanString( s, "plan.yaml", &w, &two ); };
    };
    expectInputError( with( "table: b", "table: c" ),
                      "plan.yaml:9:12: field 'tables[1].table': expected a table of workload 'w' "
                      "(did you mean 'a'?), found 'c'" );
    expectInputError( with( "gpu: 1, row_offset: 500", "gpu: 2, row_offset: 500" ),
                      "plan.yaml:8:16: field 'tables[0].shards[1].gpu': expected an integer in "
                      "[0, 1], found '2'" );
    expectInputError( with( "row_offset: 500, num_rows: 500", "row_offset: 400, num_rows: 600" ),
                      "plan.yaml:8:9: field 'tables[0].shards[1]': expected shards that do not "
                      "overlap, found an overlap with shards[0]" );
    expectInputError( with( "num_rows: 500, col_offset: 0, num_cols: 16 }\n  ",
                            "num_rows: 400, col_offset: 0, num_cols: 16 }\n  " ),
                      "plan.yaml:7:7: field 'tables[0].shards': expected shards covering all 1000 "
                      "x 16 elements of 'a', found shards covering 14400" );
    expectInputError( with( "num_rows: 10,", "num_rows: 11," ),
                      "plan.yaml:14:9: field 'tables[1].shards[0]': expected rows inside table "
                      "'b' (10 rows), found rows 0 to 11" );
    expectInputError( with( "sharding: table_wise", "sharding: tablewise" ),
                      "plan.yaml:10:15: field 'tables[1].sharding': expected one of table_wise, "
                      "column_wise, row_wise, table_row_wise, data_parallel, table_column_wise or "
                      "grid_shard (did you mean 'table_wise'?), found 'tablewise'" );
    expectInputError( with( "compute_kernel: fused_uvm_caching", "compute_kernel: fused" ),
                      "plan.yaml:12:21: field 'tables[1].cache_fraction': expected 0 unless "
                      "compute_kernel is fused_uvm_caching, found '0.5'" );
    expectInputError( with( "num_cols: 8 }", "num_cols: 0 }" ),
                      "plan.yaml:14:73: field 'tables[1].shards[0].num_cols': expected an integer "
                      "in [1, 65536], found '0'" );
    std::string missing = base.substr( 0, base.find( "  - table: b" ) );
    expectInputError( [&] { parsePlanString( missing, "plan.yaml", &w, &two ); },
                      "plan.yaml:3:3: field 'tables': expected an entry for every table of "
                      "workload 'w', found none for 'b'" );
}

TEST( TEST_CATEGORY, scenario_files )
{
    ScenarioFile s = readScenarioFile( kInputs + "/scenarios/mlperf-dgx-h100.yaml", catalog() );
    EXPECT_EQ( s.name, "mlperf-dlrm-dgx-h100" );
    EXPECT_EQ( s.workload.name, "mlperf-dlrm-criteo-1tb" );
    EXPECT_EQ( s.platform.name, "DGX-H100" );
    EXPECT_EQ( s.platform.platform.network.dims[0].bandwidth_GBps, 400.0 );
    EXPECT_EQ( s.plan.tables.size(), 26u );
    EXPECT_EQ( s.global_batch, 65536 );
    EXPECT_EQ( s.cost_model, "native" );

    ScenarioFile t = readScenarioFile( kInputs + "/scenarios/tiny-inline.yaml", catalog() );
    EXPECT_EQ( t.name, "tiny-inline" );
    EXPECT_EQ( t.workload.name, "tiny" );
    EXPECT_EQ( t.workload.tables[0].rows, 1000000 );
    EXPECT_EQ( t.platform.gpu_name, "T4" );
    EXPECT_EQ( t.platform.platform.numGpus(), 2 );
    EXPECT_EQ( t.plan.tables[1].kernel, ComputeKernel::uvm_caching );
    EXPECT_EQ( t.plan.tables[1].cache_fraction, 0.25 );
    EXPECT_EQ( t.global_batch, 4096 );
    EXPECT_EQ( t.cost_model, "torchrec" );

    // Batch not divisible by the GPU count, both where the scenario sets it and where the
    // workload does.
    std::ifstream in( kInputs + "/scenarios/tiny-inline.yaml" );
    std::string text( ( std::istreambuf_iterator<char>( in ) ), std::istreambuf_iterator<char>() );
    auto with = [&]( const std::string& from, const std::string& to )
    {
        std::string x = text;
        x.replace( x.find( from ), from.size(), to );
        return [x] { parseScenarioString( x, "s.yaml", catalog() ); };
    };
    expectInputError( with( "global_batch: 4096\ncost", "global_batch: 4095\ncost" ),
                      "s.yaml:4:15: field 'global_batch': expected a batch divisible by the "
                      "platform's 2 GPUs, found '4095'" );
    std::string no_batch = text;
    no_batch.replace( no_batch.find( "global_batch: 4096\ncost" ), 19, "" );
    no_batch.replace( no_batch.find( "  global_batch: 4096" ), 20, "  global_batch: 4095" );
    expectInputError( [&] { parseScenarioString( no_batch, "s.yaml", catalog() ); },
                      "s.yaml:6:3: field 'workload': expected a workload whose global_batch is "
                      "divisible by the platform's 2 GPUs, found global_batch 4095" );
    expectInputError( with( "cost_model: torchrec", "cost_model: astra" ),
                      "s.yaml:5:13: field 'cost_model': expected one of native, torchrec or "
                      "learned, found 'astra'" );
    expectInputError(
        with( "gpu: T4", "gpu: T5" ),
        "s.yaml:18:8: field 'platform.gpu': expected a GPU of the catalog "
        "(A100-PCIe-40GB, A100-PCIe-80GB, A100-SXM4-40GB, A100-SXM4-80GB, B200, "
        "GB200, H100-PCIe, H100-SXM-80GB, H200, H800-SXM-80GB, L4, P100, P4, T4, V100-PCIe-32GB or "
        "V100-SXM2-32GB) (did you mean 'T4'?), found 'T5'" );
}

} // namespace Test
