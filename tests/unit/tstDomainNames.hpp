// The vocabulary's descriptor tables (domain/names.hpp): row i is code i for every enum (the HDF5
// /names tables are these lists as they stand), the names the results files' schema fixes, and the
// lookups parsers and printers use.
#include <gtest/gtest.h>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/domain/parallel_fields.hpp>
#include <shardsweep/domain/transformer_fields.hpp>
#include <string>
#include <vector>

namespace Test
{
using namespace shardsweep;

template <class E>
void expectCodeOrder()
{
    int code = 0;
    for ( const EnumEntry<E>& e : EnumNames<E>::entries )
    {
        EXPECT_EQ( static_cast<int>( e.value ), code ) << EnumNames<E>::what << " " << e.name;
        EXPECT_EQ( enumFromName<E>( e.name ), e.value ) << e.name;
        EXPECT_STREQ( nameOf( e.value ), e.name );
        EXPECT_GT( std::string( e.help ).size(), 3u ) << e.name;
        ++code;
    }
}

TEST( TEST_CATEGORY, domain_names_in_code_order )
{
    expectCodeOrder<WorkloadKind>();
    expectCodeOrder<DataType>();
    expectCodeOrder<Optimizer>();
    expectCodeOrder<ShardingType>();
    expectCodeOrder<AccessDistribution>();
    expectCodeOrder<Interaction>();
    expectCodeOrder<ComputeKernel>();
    expectCodeOrder<CostModel>();
    expectCodeOrder<PlannerKind>();
    expectCodeOrder<Phase>();
    expectCodeOrder<TransformerArch>();
    expectCodeOrder<PipelineSchedule>();
    expectCodeOrder<Recompute>();
    expectCodeOrder<RunMode>();
    expectCodeOrder<TransformerPhase>();
    expectCodeOrder<Collective>();
    expectCodeOrder<Topology>();
    expectCodeOrder<CollectiveAlgorithm>();
    expectCodeOrder<CollectiveOptimization>();
    EXPECT_EQ( enumCount<Phase>(), std::size_t( kNumPhases ) );
    EXPECT_EQ( enumCount<TransformerPhase>(), std::size_t( kNumTransformerPhases ) );
    EXPECT_EQ( enumCount<ShardingType>(), std::size_t( kNumShardingTypes ) );
    EXPECT_EQ( enumCount<ComputeKernel>(), std::size_t( kNumComputeKernels ) );
}

// The names results files and CSV headers carry (docs/HDF5_LAYOUT.md): renaming one changes the
// file format and must be a deliberate schema change.
TEST( TEST_CATEGORY, domain_names_of_the_file_formats )
{
    using V = std::vector<std::string>;
    EXPECT_EQ( enumNameList<Phase>(),
               ( V{ "input_dist", "embedding_fwd", "bottom_mlp_fwd", "embedding_comm_fwd",
                    "top_fwd", "top_bwd", "embedding_comm_bwd", "bottom_mlp_bwd", "embedding_bwd",
                    "dense_allreduce" } ) );
    EXPECT_EQ( enumNameList<TransformerPhase>( "_ms" ),
               ( V{ "compute_ms", "tp_comm_ms", "pp_comm_ms", "dp_comm_ms", "bubble_ms",
                    "optimizer_ms" } ) );
    EXPECT_EQ( enumNameList<ShardingType>(),
               ( V{ "table_wise", "column_wise", "row_wise", "table_row_wise", "data_parallel",
                    "table_column_wise", "grid_shard" } ) );
    EXPECT_EQ( enumNameList<ComputeKernel>(),
               ( V{ "fused", "fused_uvm", "fused_uvm_caching", "dense" } ) );
    EXPECT_EQ( enumNameList<CostModel>(), ( V{ "native", "torchrec", "learned" } ) );
    // /names/planners: the planners, then none (an explicit configuration) at code 10.
    EXPECT_EQ(
        enumNameList<PlannerKind>(),
        ( V{ "round_robin", "random", "dim_greedy", "size_greedy", "lookup_greedy",
             "size_lookup_greedy", "torchrec", "shardsweep", "megatron", "exhaustive", "none" } ) );
    EXPECT_EQ( enumNameList<WorkloadKind>(), ( V{ "dlrm", "transformer" } ) );
    EXPECT_EQ( enumNameList<DataType>(), ( V{ "fp32", "tf32", "fp16", "bf16", "int8" } ) );
    EXPECT_EQ( enumNameList<AccessDistribution>(), ( V{ "uniform", "zipf", "histogram" } ) );
    EXPECT_EQ( enumNameList<Interaction>(), ( V{ "dot", "cat" } ) );
    EXPECT_EQ( enumNameList<PipelineSchedule>(), ( V{ "1f1b", "gpipe" } ) );
    EXPECT_EQ( enumNameList<Recompute>(), ( V{ "none", "selective", "full" } ) );
    EXPECT_EQ( enumNameList<RunMode>(), ( V{ "train", "infer" } ) );
    // ASTRA-sim's spellings (network YAML, system JSON).
    EXPECT_EQ( enumNameList<Topology>(), ( V{ "Ring", "FullyConnected", "Switch" } ) );
    EXPECT_EQ( enumNameList<CollectiveAlgorithm>(),
               ( V{ "ring", "direct", "halvingDoubling", "doubleBinaryTree" } ) );
    EXPECT_EQ( enumNameList<CollectiveOptimization>(), ( V{ "baseline", "localBWAware" } ) );
    EXPECT_EQ( astraImplementationKey( Collective::reduce_scatter ),
               "reduce-scatter-implementation" );
    EXPECT_EQ( astraImplementationKey( Collective::all_to_all ), "all-to-all-implementation" );
}

TEST( TEST_CATEGORY, domain_names_lookups )
{
    EXPECT_EQ( enumFromName<Recompute>( "selective" ), Recompute::selective );
    EXPECT_FALSE( enumFromName<Recompute>( "Selective" ).has_value() );
    EXPECT_FALSE( enumFromName<ComputeKernel>( "hbm" ).has_value() ); // only predict's legacy
    EXPECT_EQ( enumChoices<Recompute>(), "none | selective | full" );
    EXPECT_EQ( enumChoices<TransformerArch>( ", " ), "gpt, bert, opt" );
    EXPECT_STREQ( nameOf( static_cast<RunMode>( 7 ) ), "?" );
    // A model computes in every type but int8, in code order.
    std::vector<std::string> compute;
    for ( const auto& [name, value] : computeDataTypeNames() )
        compute.push_back( name );
    EXPECT_EQ( compute, ( std::vector<std::string>{ "fp32", "tf32", "fp16", "bf16" } ) );
    EXPECT_EQ( enumPairs<DataType>().size(), 5u );
}

// The field table of ParallelConfig: its defaults are the struct's (one default everywhere: files,
// sweep grids and predict transformer read the table), and every field reads back what it sets.
TEST( TEST_CATEGORY, domain_parallel_fields )
{
    const ParallelConfig plain;
    const ParallelConfig table = defaultParallelConfig();
    EXPECT_EQ( table.micro_batch, plain.micro_batch );
    EXPECT_EQ( table.schedule, plain.schedule );
    EXPECT_EQ( table.recompute, plain.recompute );
    EXPECT_EQ( table.zero, plain.zero );
    EXPECT_EQ( table.sequence_parallel, plain.sequence_parallel );
    EXPECT_EQ( table.fused, plain.fused );
    EXPECT_TRUE( table.fused );
    EXPECT_EQ( table.mode, plain.mode );

    std::vector<std::string> keys;
    for ( const ParallelField& f : parallelFields() )
    {
        keys.emplace_back( f.key );
        EXPECT_EQ( findParallelField( f.key ), &f );
        const int last = f.kind == ParallelField::choice ? int( f.names().size() ) - 1 : f.max;
        ParallelConfig c;
        f.set( c, last );
        EXPECT_EQ( f.get( c ), last ) << f.key;
        f.set( c, f.kind == ParallelField::choice ? 0 : f.min );
        EXPECT_EQ( f.get( c ), f.kind == ParallelField::choice ? 0 : f.min ) << f.key;
    }
    // File order = the sweep grid's enumeration order (mode fastest): changing it renumbers the
    // scenarios of every transformer sweep.
    EXPECT_EQ( keys, ( std::vector<std::string>{ "micro_batch", "schedule", "recompute", "zero",
                                                 "sequence_parallel", "fused", "mode" } ) );
    EXPECT_EQ( findParallelField( "tp" ), nullptr );

    ParallelConfig c;
    c.recompute = Recompute::selective;
    c.sequence_parallel = true;
    c.zero = 2;
    EXPECT_EQ( parallelFieldText( *findParallelField( "recompute" ), c ), "selective" );
    EXPECT_EQ( parallelFieldText( *findParallelField( "sequence_parallel" ), c ), "true" );
    EXPECT_EQ( parallelFieldText( *findParallelField( "zero" ), c ), "2" );
    const NamePairs<int> modes = fieldChoices( *findParallelField( "mode" ) );
    ASSERT_EQ( modes.size(), 2u );
    EXPECT_EQ( modes[1].first, "infer" );
    EXPECT_EQ( modes[1].second, int( RunMode::infer ) );
}

// The field table of TransformerSpec: the defaults are the struct's where it has one, the four
// sizes without a sensible default are required, every field reads back what it sets, and the
// values files write are the names and numbers of the table.
TEST( TEST_CATEGORY, domain_model_fields )
{
    std::vector<std::string> keys, required;
    const TransformerSpec plain;
    for ( const ModelField& f : modelFields() )
    {
        keys.emplace_back( f.key );
        if ( f.required )
            required.emplace_back( f.key );
        EXPECT_EQ( findModelField( f.key ), &f );
        const int last = f.kind == ModelField::choice ? int( f.names().size() ) - 1 : f.max;
        TransformerSpec m;
        f.set( m, last );
        EXPECT_EQ( f.get( m ), last ) << f.key;
        if ( f.kind == ModelField::choice )
        {
            EXPECT_EQ( f.fallback, f.get( plain ) ) << f.key; // arch gpt, dtype bf16
        }
    }
    EXPECT_EQ( keys, ( std::vector<std::string>{ "arch", "hidden", "heads", "kv_heads", "layers",
                                                 "seq_len", "vocab", "ffn_hidden", "dtype" } ) );
    EXPECT_EQ( required, ( std::vector<std::string>{ "hidden", "heads", "layers", "seq_len" } ) );
    EXPECT_EQ( findModelField( "vocab" )->fallback, 50257 );
    EXPECT_EQ( findModelField( "ffn_hidden" )->fallback, 0 ); // 0: 4·hidden
    // dtype: every DataType but int8, index = code.
    const NamePairs<int> dtypes = fieldChoices( *findModelField( "dtype" ) );
    ASSERT_EQ( dtypes.size(), 4u );
    EXPECT_EQ( dtypes[3].first, "bf16" );
    EXPECT_EQ( dtypes[3].second, int( DataType::bf16 ) );
    EXPECT_EQ( fieldValueText( *findModelField( "arch" ), int( TransformerArch::opt ) ), "opt" );
    EXPECT_EQ( fieldValuesText( *findModelField( "arch" ) ), "gpt | bert | opt" );
    EXPECT_EQ( fieldValuesText( *findModelField( "heads" ) ), "1..100000" );
}

} // namespace Test
