// The vocabulary's descriptor tables (domain/names.hpp): row i is code i for every enum (the HDF5
// /names tables are these lists as they stand), the names the results files' schema fixes, and the
// lookups parsers and printers use.
#include <cmath>
#include <gtest/gtest.h>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/dlrm_fields.hpp>
#include <shardsweep/domain/gpu_fields.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/domain/parallel_fields.hpp>
#include <shardsweep/domain/transformer_fields.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/model/learned_operator.hpp>
#include <shardsweep/model/torchrec/estimator.hpp>
#include <shardsweep/scenario/task_generator.hpp>
#include <shardsweep/sweep/rows.hpp>
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
                    "optimizer_ms", "ep_comm_ms" } ) );
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
    EXPECT_EQ( enumNameList<DataType>(), ( V{ "fp32", "tf32", "fp16", "bf16", "fp8", "int8" } ) );
    EXPECT_EQ( enumNameList<FfnType>(), ( V{ "arch", "gelu", "relu", "swiglu" } ) );
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
    EXPECT_EQ( compute, ( std::vector<std::string>{ "fp32", "tf32", "fp16", "bf16", "fp8" } ) );
    EXPECT_EQ( enumPairs<DataType>().size(), 6u );
}

// The tables of enums declared above the vocabulary layer, next to their enums: the names files,
// options and printouts carry, in code order.
TEST( TEST_CATEGORY, domain_names_of_upper_layers )
{
    using V = std::vector<std::string>;
    // /names/task_protocols: none (a grid scenario) at code 0.
    expectCodeOrder<TaskProtocol>();
    EXPECT_EQ( enumCount<TaskProtocol>(), std::size_t( kNumTaskProtocols ) );
    EXPECT_EQ( enumNameList<TaskProtocol>(),
               ( V{ "none", "neuroshard", "dreamshard", "autoshard", "surco", "large-856x128" } ) );
    EXPECT_EQ( taskProtocolNames(),
               ( V{ "neuroshard", "dreamshard", "autoshard", "surco", "large-856x128" } ) );
    EXPECT_EQ( parseTaskProtocol( "large-856x128" ), TaskProtocol::large_856x128 );
    EXPECT_THROW( parseTaskProtocol( "none" ), UsageError );
    expectCodeOrder<PoolSplit>();
    EXPECT_EQ( enumNameList<PoolSplit>(), ( V{ "test", "train" } ) );
    EXPECT_EQ( joinChoices( taskProtocolNames() ),
               "neuroshard, dreamshard, autoshard, surco or large-856x128" );
    EXPECT_EQ( enumChoices<PoolSplit>( ", ", " or " ), "test or train" );
    // The results file's `detail` attribute (--detail).
    expectCodeOrder<SweepDetail>();
    EXPECT_EQ( enumNameList<SweepDetail>(), ( V{ "scenarios", "gpus", "all" } ) );
    EXPECT_EQ( parseSweepDetail( "gpus" ), SweepDetail::gpus );
    EXPECT_THROW( parseSweepDetail( "shards" ), UsageError );
    // The op columns of predict gemm / predict op and NeuSight's files; shardsweep-mlp layers.
    expectCodeOrder<GemmOp>();
    EXPECT_EQ( enumNameList<GemmOp>(), ( V{ "bmm", "linear" } ) );
    expectCodeOrder<OperatorKind>();
    EXPECT_EQ( enumCount<OperatorKind>(), std::size_t( kNumOperatorKinds ) );
    EXPECT_EQ( enumNameList<OperatorKind>(),
               ( V{ "softmax", "ln", "add", "addu", "mul", "mulu", "div", "divu", "pow", "powu",
                    "gelu", "relu", "tanh" } ) );
    // The learned operator model's one-hot features follow the same order.
    for ( int k = 0; k < kNumOperatorKinds; ++k )
        EXPECT_EQ( std::string( kOperatorLearnedFeatureNames[k] ),
                   std::string( "op_" ) + nameOf( static_cast<OperatorKind>( k ) ) );
    expectCodeOrder<MlpActivation>();
    EXPECT_EQ( enumNameList<MlpActivation>(), ( V{ "identity", "relu" } ) );
    // --format.
    expectCodeOrder<OutputFormat>();
    EXPECT_EQ( enumNameList<OutputFormat>(), ( V{ "table", "csv", "json" } ) );
    EXPECT_EQ( enumChoices<OutputFormat>(), "table | csv | json" );
    EXPECT_EQ( parseOutputFormat( "json" ), OutputFormat::json );
    // TorchRec's EmbeddingComputeKernel values (predict torchrec's compute_kernel column).
    expectCodeOrder<TorchrecKernel>();
    EXPECT_EQ( enumCount<TorchrecKernel>(), std::size_t( kNumTorchrecKernels ) );
    EXPECT_EQ( enumNameList<TorchrecKernel>(),
               ( V{ "dense", "fused", "fused_uvm", "fused_uvm_caching", "quant", "quant_uvm",
                    "quant_uvm_caching", "key_value" } ) );
    EXPECT_EQ( enumChoices<TorchrecKernel>( ", ", " or " ),
               "dense, fused, fused_uvm, fused_uvm_caching, quant, quant_uvm, quant_uvm_caching "
               "or key_value" );
}

// The field table of ParallelConfig: its defaults are the struct's (one default everywhere: files,
// sweep grids and predict transformer read the table), and every field reads back what it sets.
TEST( TEST_CATEGORY, domain_parallel_fields )
{
    const ParallelConfig plain{};
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
    EXPECT_EQ( keys, ( std::vector<std::string>{
                         "micro_batch", "schedule", "recompute", "zero", "sequence_parallel",
                         "fused", "mode", "virtual_stages", "distributed_optimizer", "overlap",
                         "first_stage_layers", "last_stage_layers", "cp", "ep", "etp" } ) );
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
    const TransformerSpec plain{};
    for ( const ModelField& f : modelFields() )
    {
        keys.emplace_back( f.key );
        if ( f.required )
            required.emplace_back( f.key );
        EXPECT_EQ( findModelField( f.key ), &f );
        const double last = f.kind == ModelField::choice ? double( f.names().size() ) - 1.0 : f.max;
        TransformerSpec m;
        f.set( m, last );
        EXPECT_EQ( f.get( m ), last ) << f.key;
        if ( f.kind == ModelField::choice )
        {
            EXPECT_EQ( f.fallback, f.get( plain ) ) << f.key; // arch gpt, dtype bf16
        }
    }
    EXPECT_EQ( keys, ( std::vector<std::string>{
                         "arch", "hidden", "heads", "kv_heads", "layers", "seq_len", "vocab",
                         "ffn_hidden", "dtype", "ffn_type", "experts", "top_k", "moe_ffn_hidden",
                         "shared_experts", "capacity_factor", "first_dense_layers" } ) );
    EXPECT_EQ( required, ( std::vector<std::string>{ "hidden", "heads", "layers", "seq_len" } ) );
    EXPECT_EQ( findModelField( "vocab" )->fallback, 50257 );
    EXPECT_EQ( findModelField( "ffn_hidden" )->fallback, 0 ); // 0: 4·hidden
    // dtype: every DataType but int8, index = code.
    const NamePairs<int> dtypes = fieldChoices( *findModelField( "dtype" ) );
    ASSERT_EQ( dtypes.size(), 5u );
    EXPECT_EQ( dtypes[4].first, "fp8" );
    EXPECT_EQ( dtypes[4].second, int( DataType::fp8 ) );
    EXPECT_EQ( dtypes[3].first, "bf16" );
    EXPECT_EQ( dtypes[3].second, int( DataType::bf16 ) );
    EXPECT_EQ( fieldValueText( *findModelField( "arch" ), double( TransformerArch::opt ) ), "opt" );
    // The one real field: shortest round-trip text, dropless (0) below its open range.
    EXPECT_EQ( fieldValueText( *findModelField( "capacity_factor" ), 1.25 ), "1.25" );
    EXPECT_EQ( fieldValueText( *findModelField( "capacity_factor" ), 0.1 ), "0.1" );
    EXPECT_TRUE( findModelField( "capacity_factor" )->above_min );
    EXPECT_EQ( findModelField( "top_k" )->fallback, plain.top_k );
    EXPECT_EQ( fieldValuesText( *findModelField( "arch" ) ), "gpt | bert | opt" );
    EXPECT_EQ( fieldValuesText( *findModelField( "heads" ) ), "1..100000" );
}

// The field tables of a DLRM table and of the dense model: every default is the struct's own (a
// reader that starts from TableSpec{} and one that starts from the table's fallbacks agree),
// every field reads back what it sets, and the keys are the file formats' columns in order.
TEST( TEST_CATEGORY, domain_dlrm_fields )
{
    std::vector<std::string> keys;
    const TableSpec plain{};
    for ( const TableField& f : kTableFields )
    {
        keys.emplace_back( f.key );
        EXPECT_EQ( findTableField( f.key ), &f );
        EXPECT_EQ( f.fallback, f.get( plain ) ) << f.key;
        const double last = f.kind == TableField::choice ? double( f.names().size() - 1 ) : f.max;
        TableSpec t;
        f.set( t, last );
        EXPECT_EQ( f.get( t ), last ) << f.key;
    }
    EXPECT_EQ(
        keys, ( std::vector<std::string>{ "rows", "dim", "pooling_factor", "zipf_alpha",
                                          "histogram_batch", "dtype", "optimizer", "weighted" } ) );
    // The largest row count is exact in the double that carries it.
    TableSpec t;
    findTableField( "rows" )->set( t, 1.0e13 );
    EXPECT_EQ( t.rows, 10000000000000LL );
    // Giving an exponent makes the accesses Zipf-distributed.
    findTableField( "zipf_alpha" )->set( t, 0.5 );
    EXPECT_EQ( t.distribution, AccessDistribution::zipf );
    EXPECT_EQ( fieldValuesText( *findTableField( "dtype" ) ),
               "fp32 | tf32 | fp16 | bf16 | fp8 | int8" );
    EXPECT_EQ( fieldValuesText( *findTableField( "pooling_factor" ) ), "0..100000" );

    keys.clear();
    const DenseModel dense{};
    for ( const DenseField& f : kDenseFields )
    {
        keys.emplace_back( f.key );
        EXPECT_EQ( f.fallback, f.get( dense ) ) << f.key;
    }
    EXPECT_EQ( keys, ( std::vector<std::string>{ "num_dense_features", "interaction", "dtype",
                                                 "optimizer" } ) );
    // The dense dtype is a compute type: no int8.
    EXPECT_EQ( fieldValuesText( kDenseFields[2] ), "fp32 | tf32 | fp16 | bf16 | fp8" );
}

// The field table of a GPU's spec sheet: declaration order (the cost caches' keys are the fields
// in table order), the struct's defaults, and a key built from it holds each field's value.
TEST( TEST_CATEGORY, domain_gpu_fields )
{
    std::vector<std::string> keys;
    const GpuSpec plain{};
    GpuSpec g;
    double value = 1.0;
    for ( const GpuField& f : kGpuFields )
    {
        keys.emplace_back( f.key );
        EXPECT_EQ( f.fallback, f.get( plain ) ) << f.key;
        f.set( g, value++ );
    }
    EXPECT_EQ( keys, ( std::vector<std::string>{
                         "sm_count", "boost_clock_MHz", "fp32_TFLOPs", "tf32_TFLOPs", "fp16_TFLOPs",
                         "bf16_TFLOPs", "fp8_TFLOPs", "memory_GiB", "memory_bandwidth_GBps",
                         "l2_cache_MiB", "pcie_generation", "pcie_bandwidth_GBps", "tdp_W",
                         "process_nm", "max_matmul_fp32_TFLOPs", "max_matmul_bf16_TFLOPs" } ) );
    EXPECT_EQ( g.sm_count, 1 );
    EXPECT_EQ( g.fp8_TFLOPs, 7.0 );
    EXPECT_EQ( g.memory_GiB, 8.0 );
    EXPECT_EQ( g.pcie_generation, 11 );
    EXPECT_EQ( g.process_nm, 14.0 );
    EXPECT_EQ( g.max_matmul_fp32_TFLOPs, 15.0 );
    EXPECT_EQ( g.max_matmul_bf16_TFLOPs, 16.0 );
    const double rest[] = { 99.0 };
    const std::array<double, 19> key = gpuKey<19>( g, rest );
    // The 17th word is the GEMM calibration's: 0 without one.
    const std::array<double, 19> expected = { 1,  2,  3,  4,  5,  6,  7, 8,  9, 10,
                                              11, 12, 13, 14, 15, 16, 0, 99, 0 };
    EXPECT_EQ( key, expected );
    // With one: a whole number below 2^53 (compares with ==), the same for the same calibration,
    // another for another.
    GpuSpec a = g;
    a.gemm_calibration[int( DataType::bf16 )].valid = true;
    a.gemm_calibration[int( DataType::bf16 )].offset = 0.5;
    GpuSpec b = a;
    b.gemm_calibration[int( DataType::bf16 )].tile_weight[7] = 1.0;
    const double wa = gemmCalibrationKeyWord( a ), wb = gemmCalibrationKeyWord( b );
    EXPECT_GT( wa, 0.0 );
    EXPECT_LT( wa, 9007199254740992.0 );
    EXPECT_EQ( wa, std::floor( wa ) );
    EXPECT_EQ( wa, gemmCalibrationKeyWord( GpuSpec( a ) ) );
    EXPECT_NE( wa, wb );
    EXPECT_EQ( ( gpuKey<19>( a, rest )[16] ), wa );
}

} // namespace Test
