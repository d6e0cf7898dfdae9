// TorchRec storage estimator, shard shapes and reservation: every storage golden value of
// TorchRec a48cef79, planner/tests/test_shard_estimators.py (storage tests) (exact integers), plus
// the Kokkos-kernel evaluation.
#include <gtest/gtest.h>
#include <shardsweep/model/torchrec/adapter.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
// test_enumerators: W = 8, L = 4, B = 256, tables i = 0..3 of rows 100 + 10i, dim 20 + 20i,
// pooling factors [1], [1,3,5], [8,2], [2,1,3,7] (one feature per factor), min_partition
// 20/20/20/40, optimizer multiplier 0.
struct EnumTable
{
    std::int64_t rows;
    int dim;
    double pf_sum;
    int features;
    int min_partition;
};
const EnumTable kEnumTables[] = { { 100, 20, 1.0, 1, 20 },
                                  { 110, 40, 9.0, 3, 20 },
                                  { 120, 60, 10.0, 2, 20 },
                                  { 130, 80, 13.0, 4, 40 } };

TorchrecShard enumShard( const EnumTable& e, ShardingType type, TorchrecKernel k,
                         std::int64_t shard_rows, int shard_dim )
{
    TorchrecShard s;
    s.sharding = type;
    s.kernel = k;
    s.rows = e.rows;
    s.dim = e.dim;
    s.shard_rows = shard_rows;
    s.shard_dim = shard_dim;
    s.lookups = 256.0 * e.pf_sum;
    s.pooled_outputs = 256.0 * e.features;
    s.dtype_bytes = 4;
    return s;
}
} // namespace

// _calculate_storage_specific_sizes: storage 100, shape (10,5,3), two shards of (5,5,3).
TEST( TEST_CATEGORY, torchrec_golden_E_storage_specific_sizes )
{
    const double table = 150, shard = 75;
    // TWRW + SGD.
    EXPECT_EQ( torchrecStorageSpecific( 100, table, shard, 5, false, 0.0, false, -1.0 ), 50 );
    // CW + Adam, clf 0.5: 150 + 60.
    EXPECT_EQ( torchrecStorageSpecific( 100, table, shard, 5, false, 2.0, false, 0.5 ), 210 );
    // TWRW + no optimizer, clf 0: 50 + 20.
    EXPECT_EQ( torchrecStorageSpecific( 100, table, shard, 5, false, 0.0, false, 0.0 ), 70 );
    // DP + RowWiseAdagrad (1/shape[-1] = 1/3), clf 1: 134 + 100.
    EXPECT_EQ( torchrecStorageSpecific( 100, table, shard, 5, true, 1.0 / 3, false, 1.0 ), 234 );
    // Inference keeps the tensor only.
    EXPECT_EQ( torchrecStorageSpecific( 100, table, shard, 5, false, 2.0, true, 0.5 ), 50 );
    EXPECT_EQ( torchrecOptimizerMultiplier( Optimizer::rowwise_adagrad, 3 ), 1.0 / 3 );
    EXPECT_EQ( torchrecOptimizerMultiplier( Optimizer::adam, 3 ), 2.0 );
    EXPECT_EQ( torchrecOptimizerMultiplier( Optimizer::sgd, 3 ), 0.0 );
    EXPECT_EQ( torchrecPyRound( 2.5 ), 2 );
    EXPECT_EQ( torchrecPyRound( 3.5 ), 4 );
    EXPECT_EQ( torchrecPyRound( 1600.0 ), 1600 );
}

TEST( TEST_CATEGORY, torchrec_golden_E_enumerator_shapes_and_storage )
{
    const TorchrecTopology t = torchrecDefaultTopology( 8, 4 );
    const TorchrecStorageOptions o{}; // optimizer multiplier 0, pipeline NONE

    // RW: 8 shards of ceil(rows/8), tail remainder.
    const std::int64_t rw_first[] = { 13, 14, 15, 17 };
    const std::int64_t rw_last[] = { 9, 12, 15, 11 };
    const std::int64_t rw_hbm_first[] = { 166928, 1003712, 1007120, 2653504 };
    const std::int64_t rw_hbm_last[] = { 166608, 1003392, 1007120, 2651584 };
    // TWRW: 4 shards.
    const std::int64_t twrw_rows[4][4] = {
        { 25, 25, 25, 25 }, { 28, 28, 28, 26 }, { 30, 30, 30, 30 }, { 33, 33, 33, 31 } };
    const std::int64_t twrw_hbm_first[] = { 169936, 1024384, 1031200, 2685248 };
    const std::int64_t twrw_hbm_last[] = { 169936, 1024064, 1031200, 2684608 };
    // CW / TWCW.
    const int cw_count[] = { 1, 2, 3, 2 };
    const int cw_block[] = { 20, 20, 20, 40 };
    const std::int64_t cw_hbm[] = { 188224, 647776, 501120, 1544512 };

    for ( int i = 0; i < 4; ++i )
    {
        const EnumTable& e = kEnumTables[i];
        std::int64_t sum = 0;
        for ( int r = 0; r < 8; ++r )
        {
            const std::int64_t rows = torchrecRowBlockRows( e.rows, 8, r );
            EXPECT_EQ( rows, r < 7 ? rw_first[i] : rw_last[i] ) << i << " " << r;
            EXPECT_EQ( torchrecRowBlockOffset( e.rows, 8, r ), sum );
            sum += rows;
            const TorchrecStorage st = torchrecShardStorage(
                t, enumShard( e, ShardingType::row_wise, TorchrecKernel::fused, rows, e.dim ), o );
            EXPECT_EQ( st.hbm, r < 7 ? rw_hbm_first[i] : rw_hbm_last[i] ) << i << " " << r;
            EXPECT_EQ( st.ddr, 0 );
        }
        EXPECT_EQ( sum, e.rows );
        EXPECT_EQ( torchrecNumShards( ShardingType::row_wise, e.dim, e.min_partition, 8, 4 ), 8 );
        for ( int r = 0; r < 4; ++r )
        {
            const std::int64_t rows = torchrecRowBlockRows( e.rows, 4, r );
            EXPECT_EQ( rows, twrw_rows[i][r] );
            const TorchrecStorage st = torchrecShardStorage(
                t, enumShard( e, ShardingType::table_row_wise, TorchrecKernel::fused, rows, e.dim ),
                o );
            EXPECT_EQ( st.hbm, r < 3 ? twrw_hbm_first[i] : twrw_hbm_last[i] ) << i << " " << r;
        }
        EXPECT_EQ( torchrecColumnBlock( e.dim, e.min_partition ), cw_block[i] );
        EXPECT_EQ( torchrecNumShards( ShardingType::column_wise, e.dim, e.min_partition, 8, 4 ),
                   cw_count[i] );
        EXPECT_EQ( torchrecNumShards( ShardingType::grid_shard, e.dim, e.min_partition, 8, 4 ),
                   4 * cw_count[i] );
        for ( ShardingType type : { ShardingType::column_wise, ShardingType::table_column_wise } )
        {
            const TorchrecStorage st = torchrecShardStorage(
                t, enumShard( e, type, TorchrecKernel::fused, e.rows, cw_block[i] ), o );
            EXPECT_EQ( st.hbm, cw_hbm[i] ) << i;
        }
    }

    // UVM caching RW, table 0: HBM = 166096 + ceil(13 * (4 + 0.2 * 16)) = 166190; DDR 1040/720.
    const TorchrecStorage c0 =
        torchrecShardStorage( t,
                              enumShard( kEnumTables[0], ShardingType::row_wise,
                                         TorchrecKernel::fused_uvm_caching, 13, 20 ),
                              o );
    EXPECT_EQ( c0.hbm, 166190 );
    EXPECT_EQ( c0.ddr, 1040 );
    const TorchrecStorage c7 =
        torchrecShardStorage( t,
                              enumShard( kEnumTables[0], ShardingType::row_wise,
                                         TorchrecKernel::fused_uvm_caching, 9, 20 ),
                              o );
    EXPECT_EQ( c7.ddr, 720 );

    // An empty RW tail shard holds no I/O buffers.
    TorchrecShard empty =
        enumShard( kEnumTables[0], ShardingType::row_wise, TorchrecKernel::fused, 0, 20 );
    EXPECT_EQ( torchrecShardStorage( t, empty, o ).hbm, 0 );
    // Default CW block is 128: dim <= 128 is one shard; 256 splits in two.
    EXPECT_EQ( torchrecColumnBlock( 128, 0 ), 128 );
    EXPECT_EQ( torchrecColumnBlock( 256, 0 ), 128 );
    EXPECT_EQ( torchrecRowBlockRows( 10, 4, 3 ), 1 );
    EXPECT_EQ( torchrecRowBlockRows( 3, 4, 3 ), 0 );
}

// calculate_pipeline_io_cost with input 1024, output 3333, specific size 100.
TEST( TEST_CATEGORY, torchrec_golden_E_pipelined_storage )
{
    TorchrecStorageOptions o;
    o.pipeline = TorchrecPipeline::train_sparse_dist;
    EXPECT_EQ( 100 + torchrecPipelineIoCost( 1024, 3333, 0, o, false ), 100 + 2048 );
    o.run_embedding_at_peak_memory = true;
    EXPECT_EQ( 100 + torchrecPipelineIoCost( 1024, 3333, 0, o, false ), 100 + 2048 + 3333 );
    o.run_embedding_at_peak_memory = false;
    o.pipeline = TorchrecPipeline::train_prefetch_sparse_dist;
    EXPECT_EQ( 100 + torchrecPipelineIoCost( 1024, 3333, 1024, o, false ), 100 + 10240 );
    EXPECT_EQ( 100 + torchrecPipelineIoCost( 1024, 3333, 0, o, false ), 100 + 3072 );
    o.prefetch_passes = 10;
    EXPECT_EQ( 100 + torchrecPipelineIoCost( 1024, 3333, 1024, o, false ), 100 + 3072 + 1638 );
    o.pipeline = TorchrecPipeline::none;
    EXPECT_EQ( 100 + torchrecPipelineIoCost( 1024, 3333, 1024, o, false ), 100 + 3333 + 1024 );
    EXPECT_EQ( torchrecPipelineIoCost( 1024, 3333, 1024, o, true ), 0 );
}

TEST( TEST_CATEGORY, torchrec_golden_E_reservation )
{
    // nn.Linear(10, 10): 110 fp32 parameters = 440 B, reserved 6x = 2640 B.
    const double cap = 1e9;
    EXPECT_EQ( cap * 0.85 - torchrecReservedHbm( cap, 0.15, 440.0, 0.0, false ), 2640.0 );
    // KJT: ceil(sum pf*bs * 8) * 20 (two pipelined batches x 10 copies).
    EXPECT_EQ( torchrecReservedHbm( cap, 0.0, 0.0, 512.0, false ), cap - 512.0 * 8 * 20 );
    EXPECT_EQ( torchrecReservedHbm( cap, 0.0, 440.0, 512.0, true ), cap - 440.0 - 512.0 * 8 );
}

TEST( TEST_CATEGORY, torchrec_storage_placement_by_kernel )
{
    const TorchrecTopology t = torchrecDefaultTopology( 2, 2 );
    TorchrecStorageOptions o;
    o.optimizer_multiplier = 2.0; // Adam
    TorchrecShard s =
        enumShard( kEnumTables[0], ShardingType::table_wise, TorchrecKernel::fused, 100, 20 );
    s.lookups = s.pooled_outputs = 512;
    // fused: 8000 B table + 16000 B Adam state + in 8192 + out 512*2*20*4 in HBM.
    TorchrecStorage st = torchrecShardStorage( t, s, o );
    EXPECT_EQ( st.hbm, 8000 + 16000 + 8192 + 81920 );
    EXPECT_EQ( st.ddr, 0 );
    // fused_uvm: the table and its state live in DDR, only I/O in HBM.
    s.kernel = TorchrecKernel::fused_uvm;
    st = torchrecShardStorage( t, s, o );
    EXPECT_EQ( st.hbm, 8192 + 81920 );
    EXPECT_EQ( st.ddr, 24000 );
    // DP: every replica holds the whole table.
    s.kernel = TorchrecKernel::dense;
    s.sharding = ShardingType::data_parallel;
    st = torchrecShardStorage( t, s, o );
    EXPECT_EQ( st.hbm, 24000 + 4096 + 512 * 20 * 4 );
    // Inference: tensor only, no I/O.
    s.inference = true;
    EXPECT_EQ( torchrecShardStorage( t, s, o ).hbm, 8000 );
    // Quant kernels add 4 B per row of scale/bias.
    s.kernel = TorchrecKernel::quant;
    s.sharding = ShardingType::table_wise;
    s.dtype_bytes = 1;
    EXPECT_EQ( torchrecShardStorage( t, s, o ).hbm, 100 * 20 + 100 * 4 );
}

// The body is a free function: nvcc refuses a device lambda inside gtest's TestBody, a
// private member function.
void torchrec_storage_in_kernel_matches_host_body()
{
    const TorchrecTopology t = torchrecDefaultTopology( 8, 4 );
    TorchrecStorageOptions o;
    o.optimizer_multiplier = 1.0 / 20;
    o.pipeline = TorchrecPipeline::train_prefetch_sparse_dist;
    std::vector<TorchrecShard> shards;
    for ( int i = 0; i < 4; ++i )
        for ( int ty = 0; ty < kNumShardingTypes; ++ty )
            for ( TorchrecKernel k : { TorchrecKernel::fused, TorchrecKernel::fused_uvm_caching } )
                shards.push_back( enumShard( kEnumTables[i], static_cast<ShardingType>( ty ), k,
                                             kEnumTables[i].rows / 3, kEnumTables[i].dim ) );
    const int n = static_cast<int>( shards.size() );
    Kokkos::View<TorchrecShard*, TEST_MEMSPACE> d( "shards", n );
    Kokkos::View<std::int64_t* [2], TEST_MEMSPACE> out( "out", n );
    auto h = Kokkos::create_mirror_view( d );
    for ( int i = 0; i < n; ++i )
        h( i ) = shards[i];
    Kokkos::deep_copy( d, h );
    Kokkos::parallel_for(
        "torchrec_storage", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( int i ) {
            const TorchrecStorage st = torchrecShardStorage( t, d( i ), o );
            out( i, 0 ) = st.hbm;
            out( i, 1 ) = st.ddr;
        } );
    auto ho = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), out );
    for ( int i = 0; i < n; ++i )
    {
        const TorchrecStorage st = torchrecShardStorage( t, shards[i], o );
        EXPECT_EQ( ho( i, 0 ), st.hbm ) << i;
        EXPECT_EQ( ho( i, 1 ), st.ddr ) << i;
    }
}

TEST( TEST_CATEGORY, torchrec_storage_in_kernel_matches_host )
{
    torchrec_storage_in_kernel_matches_host_body();
}

} // namespace Test
