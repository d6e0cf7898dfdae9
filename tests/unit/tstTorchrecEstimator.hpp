// TorchRec perf estimator: every golden value of TorchRec a48cef79
// planner/tests/test_shard_estimators.py at relative 1e-12, multi-node branches checked against
// hand arithmetic, and the same shards evaluated inside a Kokkos kernel (bit-for-bit equal to the
// host).
#include <backend_equal.hpp>
#include <gtest/gtest.h>
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/model/torchrec/adapter.hpp>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
constexpr double kRel = 1e-12;

void expectRel( double expected, double actual, const char* what )
{
    if ( expected == 0.0 )
    {
        EXPECT_EQ( actual, 0.0 ) << what;
    }
    else
    {
        EXPECT_NEAR( actual, expected, kRel * std::abs( expected ) ) << what;
    }
}

//! The 100x10 fp32 pooled table of test_1_table_perf, B = 512, pf = 1, as shard `shard_rows`.
TorchrecShard table100x10( ShardingType type, TorchrecKernel kernel )
{
    TorchrecShard s;
    s.sharding = type;
    s.kernel = kernel;
    s.rows = 100;
    s.dim = 10;
    s.shard_rows = type == ShardingType::row_wise || type == ShardingType::table_row_wise ||
                           type == ShardingType::grid_shard
                       ? 50
                       : 100;
    s.shard_dim = 10;
    s.lookups = 512.0;
    s.pooled_outputs = 512.0;
    s.dtype_bytes = 4.0;
    return s;
}

const ShardingType kTwFamily[] = { ShardingType::table_wise, ShardingType::column_wise,
                                   ShardingType::table_column_wise };
const ShardingType kRwFamily[] = { ShardingType::row_wise, ShardingType::table_row_wise,
                                   ShardingType::grid_shard };

void expectPerf( const TorchrecPerf& p, double fc, double fm, double bc, double bm,
                 const char* what )
{
    expectRel( fc, p.fwd_compute, what );
    expectRel( fm, p.fwd_comms, what );
    expectRel( bc, p.bwd_compute, what );
    expectRel( bm, p.bwd_comms, what );
}
} // namespace

TEST( TEST_CATEGORY, torchrec_constants_in_bytes_per_ms )
{
    const TorchrecTopology t = torchrecDefaultTopology( 2, 2 );
    EXPECT_DOUBLE_EQ( t.hbm_mem_bw, 963146416.128 );
    EXPECT_DOUBLE_EQ( t.ddr_mem_bw, 54760833.024 );
    EXPECT_DOUBLE_EQ( t.hbm_to_ddr_mem_bw, 34359738.368 );
    EXPECT_DOUBLE_EQ( t.intra_host_bw, 644245094.4 );
    EXPECT_DOUBLE_EQ( t.inter_host_bw, 13421772.8 );
    // §5 D: BasicCommsBandwidths defaults equal the Topology defaults.
    EXPECT_EQ( torchrecCommsBw( t, 2, 2, Collective::all_to_all ), t.intra_host_bw );
    EXPECT_EQ( torchrecCommsBw( t, 2, 4, Collective::all_to_all ), t.inter_host_bw );
    EXPECT_EQ( torchrecCommsBw( t, 8, 16, Collective::all_reduce ), 8 * t.inter_host_bw );
}

// §5 A: test_shard_estimators.test_1_table_perf.
TEST( TEST_CATEGORY, torchrec_golden_A_one_table_perf )
{
    const TorchrecTopology t = torchrecDefaultTopology( 2, 2 );
    expectPerf(
        torchrecPerf( t, table100x10( ShardingType::data_parallel, TorchrecKernel::dense ) ),
        9.356002212235228e-05, 0.0, 1.8712004424470456e-04, 2.25593945387348e-04, "DP" );
    for ( ShardingType type : kTwFamily )
    {
        expectPerf( torchrecPerf( t, table100x10( type, TorchrecKernel::fused ) ),
                    3.27460077428233e-04, 6.357828776041667e-05, 6.54920154856466e-04,
                    6.357828776041667e-05, "TW fused" );
        expectPerf( torchrecPerf( t, table100x10( type, TorchrecKernel::fused_uvm ) ),
                    0.09179115295410156, 6.357828776041667e-05, 0.18358230590820312,
                    6.357828776041667e-05, "TW fused_uvm" );
        expectPerf( torchrecPerf( t, table100x10( type, TorchrecKernel::fused_uvm_caching ) ),
                    0.01432837509527439, 6.357828776041667e-05, 0.02865675019054878,
                    6.357828776041667e-05, "TW fused_uvm_caching" );
    }
    for ( ShardingType type : kRwFamily )
    {
        expectPerf( torchrecPerf( t, table100x10( type, TorchrecKernel::fused ) ),
                    6.804365245261984e-05, 6.357828776041667e-05, 1.360873049052397e-04,
                    1.6798276699240525e-04, "RW fused" );
        expectPerf( torchrecPerf( t, table100x10( type, TorchrecKernel::fused_uvm ) ),
                    0.019073486328125, 6.357828776041667e-05, 0.03814697265625,
                    0.029329458872477215, "RW fused_uvm" );
        expectPerf( torchrecPerf( t, table100x10( type, TorchrecKernel::fused_uvm_caching ) ),
                    0.0029773246951219513, 6.357828776041667e-05, 0.0059546493902439025,
                    0.004631910866838161, "RW fused_uvm_caching" );
        // Every RW shard gets the same Perf whatever its row count (zero-row tails included).
        TorchrecShard empty = table100x10( type, TorchrecKernel::fused );
        empty.shard_rows = 0;
        EXPECT_EQ( torchrecPerf( t, empty ).total(),
                   torchrecPerf( t, table100x10( type, TorchrecKernel::fused ) ).total() );
    }
}

// §5 B: fp8 qcomms (a2a 1 byte, reduce-scatter falls back to 2) and generalized bandwidths.
TEST( TEST_CATEGORY, torchrec_golden_B_qcomms_and_bandwidths )
{
    const TorchrecTopology t = torchrecDefaultTopology( 2, 2 );
    auto fp8 = []( TorchrecShard s )
    {
        s.a2a_fwd_bytes = s.a2a_bwd_bytes = 1.0;
        s.rs_fwd_bytes = s.rs_bwd_bytes = 2.0;
        return s;
    };
    expectRel(
        5.062740117544049e-04,
        torchrecPerf( t, fp8( table100x10( ShardingType::data_parallel, TorchrecKernel::dense ) ) )
            .total(),
        "fp8 DP" );
    const double tw[] = { 8.46718200207288e-04, 0.22846659024556476, 0.03568990443780169 };
    const double rw[] = { 2.561205605599394e-04, 0.05403558413187663, 0.008488476760988312 };
    const TorchrecKernel kernels[] = { TorchrecKernel::fused, TorchrecKernel::fused_uvm,
                                       TorchrecKernel::fused_uvm_caching };
    for ( int k = 0; k < 3; ++k )
    {
        for ( ShardingType type : kTwFamily )
            expectRel( tw[k], torchrecPerf( t, fp8( table100x10( type, kernels[k] ) ) ).total(),
                       "fp8 TW" );
        for ( ShardingType type : kRwFamily )
            expectRel( rw[k], torchrecPerf( t, fp8( table100x10( type, kernels[k] ) ) ).total(),
                       "fp8 RW" );
    }

    // Generalized bandwidths (intra 300, inter 40 GiB/s): every comms term doubles.
    TorchrecTopology g = t;
    g.intra_host_bw = torchrecGiBpsToBytesPerMs( 300.0 );
    g.inter_host_bw = torchrecGiBpsToBytesPerMs( 40.0 );
    expectRel( 1.2314846217964537e-04,
               torchrecPerf( g, table100x10( ShardingType::data_parallel, TorchrecKernel::dense ) )
                   .bwd_comms,
               "generalized DP bwd_comms" );
    for ( ShardingType type : { ShardingType::table_wise, ShardingType::row_wise } )
    {
        const TorchrecPerf a = torchrecPerf( t, table100x10( type, TorchrecKernel::fused ) );
        const TorchrecPerf b = torchrecPerf( g, table100x10( type, TorchrecKernel::fused ) );
        expectRel( 2.0 * a.fwd_comms, b.fwd_comms, "generalized fwd_comms" );
        EXPECT_EQ( a.fwd_compute, b.fwd_compute );
    }
}

// §5 C: sequence (unpooled) 256x32 table and quantised inference of the 100x10 table.
TEST( TEST_CATEGORY, torchrec_golden_C_sequence_and_inference )
{
    const TorchrecTopology t = torchrecDefaultTopology( 2, 2 );
    auto seq = []( ShardingType type, TorchrecKernel k )
    {
        TorchrecShard s = table100x10( type, k );
        s.rows = 256;
        s.dim = s.shard_dim = 32;
        s.shard_rows = s.shard_rows == 100 ? 256 : 128;
        s.pooled = false;
        return s;
    };
    expectRel( 0.0026901057997143255,
               torchrecPerf( t, seq( ShardingType::data_parallel, TorchrecKernel::dense ) ).total(),
               "seq DP" );
    const double tw[] = { 0.001880471390093715, 0.41346708933512366, 0.06488458897040142 };
    const double rw[] = { 7.915177871551004e-04, 0.16504605611165366, 0.025934979198424798 };
    const TorchrecKernel kernels[] = { TorchrecKernel::fused, TorchrecKernel::fused_uvm,
                                       TorchrecKernel::fused_uvm_caching };
    for ( int k = 0; k < 3; ++k )
    {
        expectRel( tw[k], torchrecPerf( t, seq( ShardingType::table_wise, kernels[k] ) ).total(),
                   "seq TW" );
        expectRel( rw[k], torchrecPerf( t, seq( ShardingType::row_wise, kernels[k] ) ).total(),
                   "seq RW" );
    }

    // Inference: uint8 rows of 10 values plus scale/bias, padded to D = 16, element size 1.
    auto quant = []( ShardingType type, TorchrecKernel k )
    {
        TorchrecShard s = table100x10( type, k );
        s.dim = s.shard_dim = 16;
        s.dtype_bytes = 1.0;
        s.inference = true;
        return s;
    };
    const double qtw[] = { 1.296231579222408e-04, 0.029231707255045574, 0.004584459754509654 };
    const double qrw[] = { 5.5200413052187844e-05, 0.008370081583658854, 0.0013280108692200203 };
    const TorchrecKernel qkernels[] = { TorchrecKernel::quant, TorchrecKernel::quant_uvm,
                                        TorchrecKernel::quant_uvm_caching };
    for ( int k = 0; k < 3; ++k )
    {
        const TorchrecPerf ptw = torchrecPerf( t, quant( ShardingType::table_wise, qkernels[k] ) );
        expectRel( qtw[k], ptw.total(), "quant TW" );
        EXPECT_EQ( ptw.bwd_compute + ptw.bwd_comms + ptw.prefetch, 0.0 );
        expectRel( qrw[k], torchrecPerf( t, quant( ShardingType::row_wise, qkernels[k] ) ).total(),
                   "quant RW" );
    }
}

// §5 D: prefetch, kernel_bw_lookup at several load factors, prefetch pipeline.
TEST( TEST_CATEGORY, torchrec_golden_D_prefetch_and_kernel_bw )
{
    const TorchrecTopology t = torchrecDefaultTopology( 2, 2 );
    for ( ShardingType type : kTwFamily )
    {
        TorchrecShard s = table100x10( type, TorchrecKernel::fused_uvm_caching );
        s.cache_load_factor = 0.1;
        s.expected_fetches = 0.1 * 200000; // miss_rate(clf) = clf, expected_lookups = 2e5
        expectRel( 0.023283064365386963, torchrecPerf( t, s ).prefetch, "TW prefetch" );
    }
    for ( ShardingType type : kRwFamily )
    {
        TorchrecShard s = table100x10( type, TorchrecKernel::fused_uvm_caching );
        s.cache_load_factor = 0.1;
        s.expected_fetches = 0.1 * 200000;
        expectRel( 0.011641532182693481, torchrecPerf( t, s ).prefetch, "RW prefetch" );
    }
    // A fused table has no cache, so no fetches and no prefetch.
    EXPECT_EQ(
        torchrecPerf( t, table100x10( ShardingType::table_wise, TorchrecKernel::fused ) ).prefetch,
        0.0 );

    const double clfs[] = { 0.0, 0.25, 0.5, 0.75, 1.0 };
    const double bws[] = { 3435973.8368, 26655640.7808, 49875307.724800006, 73094974.6688,
                           96314641.6128 };
    TorchrecTopology pp = t;
    pp.prefetch_pipeline = true;
    for ( int i = 0; i < 5; ++i )
    {
        expectRel( bws[i], torchrecKernelBw( t, TorchrecKernel::fused_uvm_caching, clfs[i] ),
                   "kernel_bw" );
        EXPECT_EQ( torchrecKernelBw( pp, TorchrecKernel::fused_uvm_caching, clfs[i] ),
                   963146416.128 );
    }
    // Unset clf (< 0) means 0.2; clf 0 stays 0.
    EXPECT_EQ( torchrecKernelBw( t, TorchrecKernel::fused_uvm_caching, -1.0 ),
               torchrecKernelBw( t, TorchrecKernel::fused_uvm_caching, 0.2 ) );
    // CPU and MTIA reject UVM kernels (PlannerError in TorchRec).
    TorchrecTopology cpu = t;
    cpu.device = TorchrecDevice::cpu;
    EXPECT_FALSE( torchrecKernelSupported( cpu, TorchrecKernel::fused_uvm ) );
    EXPECT_EQ( torchrecKernelBw( cpu, TorchrecKernel::fused, -1 ), t.ddr_mem_bw );
    EXPECT_EQ( torchrecKernelBw( cpu, TorchrecKernel::dense, -1 ), 0.5 * t.ddr_mem_bw );
}

// Multi-node branches (no upstream test covers them): W = 16, L = 8, 100x128 fp32, B = 512,
// fused; DP 1e6x128 dense. Hand arithmetic written out term by term from §1.5-1.8; the totals
// are also the §5 G values (0.65133, 0.64958, 0.11656, 16.958, 24.111 at W = 32).
TEST( TEST_CATEGORY, torchrec_multi_node_branches )
{
    const double G = 1024.0 * 1024.0 * 1024.0 / 1000.0;
    const double hbm = 897 * G, intra = 600 * G, inter = 12.5 * G;
    const TorchrecTopology t = torchrecDefaultTopology( 16, 8 );
    TorchrecShard s = table100x10( ShardingType::table_wise, TorchrecKernel::fused );
    s.dim = s.shard_dim = 128;

    // TW: the whole all-to-all volume 512*16*128*4 crosses the 12.5 GiB/s NIC.
    const double tw_out = 512.0 * 16 * 128 * 4;
    const double tw_fc = ( 512.0 * 16 * 8 + 512.0 * 16 * 128 * 4 + tw_out ) / hbm;
    const TorchrecPerf tw = torchrecPerf( t, s );
    expectPerf( tw, tw_fc, tw_out / inter, 2 * tw_fc, tw_out / inter, "TW multi-node" );
    EXPECT_NEAR( tw.fwd_comms, 0.3125, 1e-12 );
    EXPECT_NEAR( tw.total(), 0.65133, 1e-5 );

    // RW: reduce-scatter and all-gather over 16 > 8 ranks run at the inter-host bandwidth.
    s.sharding = ShardingType::row_wise;
    s.shard_rows = 7;
    const double rw_fc = ( 32.0 * 16 * 8 + 32.0 * 16 * 128 * 4 + tw_out ) / hbm;
    const TorchrecPerf rw = torchrecPerf( t, s );
    expectPerf( rw, rw_fc, tw_out / inter, 2 * rw_fc, tw_out / inter + tw_out * 2.455 / hbm,
                "RW multi-node" );
    EXPECT_NEAR( rw.total(), 0.64958, 1e-5 );

    // TWRW: intra-host reduce-scatter of the whole output + inter-host all-to-all of B*(W/L)*D.
    s.sharding = ShardingType::table_row_wise;
    s.shard_rows = 13;
    const double twrw_fc = ( 64.0 * 16 * 8 + 64.0 * 16 * 128 * 4 + tw_out ) / hbm;
    const double host_a2a = 512.0 * 2 * 128 * 4 / inter;
    const TorchrecPerf twrw = torchrecPerf( t, s );
    expectPerf( twrw, twrw_fc, tw_out / intra + host_a2a, 2 * twrw_fc,
                tw_out / intra + host_a2a + tw_out * 2.455 / hbm, "TWRW multi-node" );
    EXPECT_NEAR( twrw.total(), 0.11656, 1e-5 );
    // Single host: no inter-host term at all.
    const TorchrecPerf twrw1 = torchrecPerf( torchrecDefaultTopology( 8, 8 ), s );
    EXPECT_LT( twrw1.fwd_comms, twrw.fwd_comms - 0.9 * host_a2a );

    // DP over 2 and 4 nodes: all-reduce at inter_bw * L, nn = min(W/L, 2), doubled past 2 nodes.
    TorchrecShard dp = s;
    dp.sharding = ShardingType::data_parallel;
    dp.kernel = TorchrecKernel::dense;
    dp.rows = dp.shard_rows = 1000000;
    const double table = 1e6 * 128 * 4;
    const double dp_fc = ( 512.0 * 8 + 512.0 * 128 * 4 + 512.0 * 128 * 4 ) / ( 0.5 * hbm );
    const double ar16 = table * 1.5 / ( inter * 8 );
    const double optim = table * 9.22 / ( 0.5 * hbm );
    const TorchrecPerf dp16 = torchrecPerf( t, dp );
    expectPerf( dp16, dp_fc, 0.0, 2 * dp_fc, ar16 + optim, "DP 2 nodes" );
    EXPECT_NEAR( dp16.total(), 16.958, 1e-3 );
    const TorchrecPerf dp32 = torchrecPerf( torchrecDefaultTopology( 32, 8 ), dp );
    expectPerf( dp32, dp_fc, 0.0, 2 * dp_fc, 2 * ar16 + optim, "DP 4 nodes" );
    EXPECT_NEAR( dp32.total(), 24.111, 1e-3 );
}

TEST( TEST_CATEGORY, torchrec_weighted_feature )
{
    // Weighted: index bytes doubled, bwd = fwd * 2 * 1 + fwd * 1.1.
    const TorchrecTopology t = torchrecDefaultTopology( 2, 2 );
    TorchrecShard s = table100x10( ShardingType::table_wise, TorchrecKernel::fused );
    s.weighted = true;
    const double fc = ( 2.0 * 8192 + 131072 + 40960 ) * 1.75 / t.hbm_mem_bw;
    const TorchrecPerf p = torchrecPerf( t, s );
    expectRel( fc, p.fwd_compute, "weighted fwd" );
    expectRel( fc * 2 + fc * 1.1, p.bwd_compute, "weighted bwd" );
}

// The same shards priced inside a Kokkos kernel equal the host values (sameAsHost).
// The body is a free function: nvcc refuses a device lambda inside gtest's TestBody, a
// private member function.
void torchrec_perf_in_kernel_matches_host_body()
{
    std::vector<TorchrecShard> shards;
    std::vector<TorchrecTopology> topos;
    const TorchrecKernel kernels[] = { TorchrecKernel::dense, TorchrecKernel::fused,
                                       TorchrecKernel::fused_uvm,
                                       TorchrecKernel::fused_uvm_caching };
    for ( int ty = 0; ty < kNumShardingTypes; ++ty )
        for ( TorchrecKernel k : kernels )
            for ( int w : { 2, 16 } )
                for ( bool pooled : { true, false } )
                {
                    TorchrecShard s = table100x10( static_cast<ShardingType>( ty ), k );
                    s.pooled = pooled;
                    s.weighted = ty % 2 == 0;
                    s.expected_fetches = k == TorchrecKernel::fused_uvm_caching ? 1234.5 : 0.0;
                    shards.push_back( s );
                    topos.push_back( torchrecDefaultTopology( w, w == 2 ? 2 : 8 ) );
                }
    const int n = static_cast<int>( shards.size() );
    Kokkos::View<TorchrecShard*, TEST_MEMSPACE> d_shards( "shards", n );
    Kokkos::View<TorchrecTopology*, TEST_MEMSPACE> d_topos( "topos", n );
    Kokkos::View<double* [5], TEST_MEMSPACE> d_out( "out", n );
    auto h_shards = Kokkos::create_mirror_view( d_shards );
    auto h_topos = Kokkos::create_mirror_view( d_topos );
    for ( int i = 0; i < n; ++i )
    {
        h_shards( i ) = shards[i];
        h_topos( i ) = topos[i];
    }
    Kokkos::deep_copy( d_shards, h_shards );
    Kokkos::deep_copy( d_topos, h_topos );
    Kokkos::parallel_for(
        "torchrec_perf", Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ), KOKKOS_LAMBDA( int i ) {
            const TorchrecPerf p = torchrecPerf( d_topos( i ), d_shards( i ) );
            d_out( i, 0 ) = p.fwd_compute;
            d_out( i, 1 ) = p.fwd_comms;
            d_out( i, 2 ) = p.bwd_compute;
            d_out( i, 3 ) = p.bwd_comms;
            d_out( i, 4 ) = p.prefetch;
        } );
    auto out = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), d_out );
    for ( int i = 0; i < n; ++i )
    {
        const TorchrecPerf p = torchrecPerf( topos[i], shards[i] );
        EXPECT_TRUE( sameAsHost( out( i, 0 ), p.fwd_compute ) ) << i;
        EXPECT_TRUE( sameAsHost( out( i, 1 ), p.fwd_comms ) ) << i;
        EXPECT_TRUE( sameAsHost( out( i, 2 ), p.bwd_compute ) ) << i;
        EXPECT_TRUE( sameAsHost( out( i, 3 ), p.bwd_comms ) ) << i;
        EXPECT_TRUE( sameAsHost( out( i, 4 ), p.prefetch ) ) << i;
    }
}

TEST( TEST_CATEGORY, torchrec_perf_in_kernel_matches_host )
{
    torchrec_perf_in_kernel_matches_host_body();
}

// shardsweep shards priced through the adapter: a TW shard of a 2x4 platform with the default
// bandwidths left at 0 equals TorchRec's own Topology(W=8, L=4).
TEST( TEST_CATEGORY, torchrec_adapter_maps_shardsweep_shards )
{
    Platform p;
    p.gpus_per_node = 4;
    p.num_nodes = 2;
    TableSpec t;
    t.rows = 1000;
    t.dim = 64;
    t.pooling_factor = 3.0;
    ShardSpec s;
    s.num_rows = 1000;
    s.num_cols = 64;
    TablePlan tp;
    const TorchrecPerf a = torchrecShardPerf( t, s, tp, p, 8 * 256 );
    TorchrecShard ref;
    ref.sharding = ShardingType::table_wise;
    ref.kernel = TorchrecKernel::fused;
    ref.rows = ref.shard_rows = 1000;
    ref.dim = ref.shard_dim = 64;
    ref.lookups = 3.0 * 256;
    ref.pooled_outputs = 256;
    const TorchrecPerf b = torchrecPerf( torchrecDefaultTopology( 8, 4 ), ref );
    EXPECT_EQ( a.total(), b.total() );
    // Platform bandwidths replace the defaults: 2 TB/s HBM -> 2e9 B/ms.
    p.gpu.memory_bandwidth_GBps = 2000;
    p.network.num_dims = 2;
    p.network.dims[0].bandwidth_GBps = 300;
    p.network.dims[1].bandwidth_GBps = 25;
    const TorchrecTopology tt = torchrecTopologyFor( p );
    EXPECT_EQ( tt.hbm_mem_bw, 2e9 );
    EXPECT_EQ( tt.intra_host_bw, torchrecGiBpsToBytesPerMs( 300 ) );
    EXPECT_EQ( tt.inter_host_bw, torchrecGiBpsToBytesPerMs( 25 ) );
    expectRel( b.fwd_compute * 963146416.128 / 2e9,
               torchrecShardPerf( t, s, tp, p, 8 * 256 ).fwd_compute, "HBM bandwidth scaling" );
}

} // namespace Test
