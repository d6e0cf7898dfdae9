// Field tables read from files (domain/dlrm_fields.hpp through io/table_fields) and the plan
// file's source: line: exact values and exact messages.
#include "input_test_support.hpp"

#include <cstdio>
#include <fstream>
#include <gtest/gtest.h>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/plan_yaml.hpp>
#include <shardsweep/io/table_pool_csv.hpp>
#include <shardsweep/io/workload_yaml.hpp>
#include <string>
#include <vector>

namespace Test
{

using namespace shardsweep;

// A table field means the same in every file that gives tables (domain/dlrm_fields.hpp, read
// by io/table_fields): one table written as a workload's inline entry, as a row of its CSV table
// file and as a row of a table pool gives the same TableSpec, and the same bad cell the same
// expectation. The dense model's fields come from its table too.
TEST( TEST_CATEGORY, table_fields_one_meaning )
{
    const Workload w = parseWorkloadString(
        "kind: workload\nglobal_batch: 64\n"
        "dense: { num_dense_features: 0, bottom_mlp: [ ], top_mlp: [ 8, 1 ], interaction: cat, "
        "dtype: bf16 }\n"
        "tables:\n  - { name: a, rows: 1000, dim: 32, pooling_factor: 2.5, zipf_alpha: 0.8, dtype: "
        "fp16, optimizer: adam, weighted: true }\n",
        "w.yaml" );
    EXPECT_EQ( w.dense.num_dense_features, 0 );
    EXPECT_EQ( w.dense.bottom_mlp_layers, 0 );
    EXPECT_EQ( w.dense.interaction, Interaction::cat );
    EXPECT_EQ( w.dense.dtype, DataType::bf16 );
    EXPECT_EQ( w.dense.optimizer, Optimizer::sgd );

    const std::string header = "name,rows,dim,pooling_factor,zipf_alpha,dtype,optimizer,weighted\n";
    const std::string row = "a,1000,32,2.5,0.8,fp16,adam,1\n";
    const std::string path = ::testing::TempDir() + "/shardsweep_table_fields.csv";
    std::ofstream( path ) << header << row;
    std::vector<std::string> names;
    std::vector<TableSpec> from_csv;
    TableSpec no_dim;
    no_dim.dim = 0;
    readTablesCsv( path, no_dim, names, from_csv );
    const TablePool pool = tablePoolFromCsv( CsvTable::parse( header + row, "pool.csv" ) );
    for ( const TableSpec& t : { w.tables[0], from_csv[0], pool.tables[0] } )
    {
        EXPECT_EQ( t.rows, 1000 );
        EXPECT_EQ( t.dim, 32 );
        EXPECT_EQ( t.pooling_factor, 2.5 );
        EXPECT_EQ( t.distribution, AccessDistribution::zipf );
        EXPECT_EQ( t.zipf_alpha, 0.8 );
        EXPECT_EQ( t.histogram_batch, 0 );
        EXPECT_EQ( t.dtype, DataType::fp16 );
        EXPECT_EQ( t.optimizer, Optimizer::adam );
        EXPECT_TRUE( t.weighted );
    }

    // dim beyond its range: the same expectation from each reader, naming the cell.
    const std::string bad_row = "a,1000,70000,2.5,0.8,fp16,adam,1\n";
    std::ofstream( path ) << header << bad_row;
    expectInputError( [&] { readTablesCsv( path, no_dim, names, from_csv ); },
                      path +
                          ":2:3: field 'dim': expected an integer in [1, 65536], found '70000'" );
    expectInputError(
        [&] { tablePoolFromCsv( CsvTable::parse( header + bad_row, "pool.csv" ) ); },
        "pool.csv:2:3: field 'dim': expected an integer in [1, 65536], found '70000'" );
    expectInputError(
        [&]
        {
            parseWorkloadString( "kind: workload\nglobal_batch: 64\n"
                                 "dense: { bottom_mlp: [ 4 ], top_mlp: [ 1 ] }\n"
                                 "tables: [ { rows: 1000, dim: 70000 } ]\n",
                                 "w.yaml" );
        },
        "w.yaml:4:30: field 'tables[0].dim': expected an integer in [1, 65536], found '70000'" );
    std::remove( path.c_str() );
}

// The source: line of plan -o: paths relative to the plan's folder when they share a folder below
// the root, absolute otherwise.
TEST( TEST_CATEGORY, plan_source_paths )
{
    EXPECT_EQ( planSourceYaml( { "/a/b/w.yaml", "/a/p.yaml", 16, 64 }, "/a/b/out/plan.yaml" ),
               "source: { workload: \"../w.yaml\", platform: \"../../p.yaml\", gpus: 16, "
               "global_batch: 64 }\n" );
    EXPECT_EQ( planSourceYaml( { "/home/w.yaml", "/home/p.yaml", 8, 512 }, "/tmp/plan.yaml" ),
               "source: { workload: \"/home/w.yaml\", platform: \"/home/p.yaml\", gpus: 8, "
               "global_batch: 512 }\n" );
}

} // namespace Test
