#include <Kokkos_Core.hpp>
#include <backend_equal.hpp>
#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <random>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/mlp_file.hpp>
#include <shardsweep/io/operator_models.hpp>
#include <shardsweep/kernel/operator_batch.hpp>
#include <shardsweep/model/dense.hpp>
#include <sstream>

namespace Test
{
using namespace shardsweep;

namespace
{
//! 2 inputs → 2 ReLU units → 1 output, with round numbers (worked by hand below).
const char* kTinyMlp = "shardsweep-mlp 1\n"
                       "# a comment line\n"
                       "family test\n"
                       "target y\n"
                       "inputs 2\n"
                       "names a b\n"
                       "mean 1 2\n"
                       "scale 2 4\n"
                       "output_min -1e300\n"
                       "trained_on toy\n"
                       "layers 2\n"
                       "layer relu 2 2\n"
                       "weights 1 2 -3 0.5\n"
                       "bias 0.25 -1\n"
                       "layer identity 2 1\n"
                       "weights 2 -1\n"
                       "bias 0.5\n"
                       "check 5 10 13\n"
                       "end\n";

std::string shippedGemm()
{
    return std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/models/gemm.mlp";
}
std::string shippedOps()
{
    return std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/models/ops.mlp";
}

//! The InputError message of parsing `text`, "" if it parses.
std::string parseError( const std::string& text )
{
    try
    {
        parseMlpFile( text, "bad.mlp" );
    }
    catch ( const InputError& e )
    {
        return e.what();
    }
    return "";
}

std::string replaced( std::string s, const std::string& from, const std::string& to )
{
    const auto at = s.find( from );
    EXPECT_NE( at, std::string::npos ) << from;
    return s.replace( at, from.size(), to );
}

//! `v` copied into a View of `Mem`.
template <class Mem, class T>
Kokkos::View<const T*, Mem> onDevice( const std::vector<T>& v )
{
    Kokkos::View<T*, Kokkos::HostSpace> h( "h", v.size() );
    for ( std::size_t i = 0; i < v.size(); ++i )
        h( i ) = v[i];
    return Kokkos::create_mirror_view_and_copy( Mem(), h );
}

template <class Exec>
std::vector<GemmPrediction> gemmsOn( const MlpModel<>& m, const GpuSpec& gpu,
                                     const std::vector<GemmShape>& shapes )
{
    using Mem = typename Exec::memory_space;
    Kokkos::View<GemmPrediction*, Mem> out( "o", shapes.size() );
    predictGemms( Exec(), true, m.layout, Kokkos::create_mirror_view_and_copy( Mem(), m.params ),
                  gpu, onDevice<Mem>( shapes ), out );
    Kokkos::fence();
    const auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), out );
    return std::vector<GemmPrediction>( h.data(), h.data() + h.extent( 0 ) );
}

template <class Exec>
std::vector<double> opsOn( const MlpModel<>& m, const GpuSpec& gpu,
                           const std::vector<OperatorShape>& shapes )
{
    using Mem = typename Exec::memory_space;
    Kokkos::View<double*, Mem> out( "o", shapes.size() );
    predictOperators( Exec(), true, m.layout,
                      Kokkos::create_mirror_view_and_copy( Mem(), m.params ), gpu,
                      onDevice<Mem>( shapes ), out );
    Kokkos::fence();
    const auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), out );
    return std::vector<double>( h.data(), h.data() + h.extent( 0 ) );
}

std::vector<GemmShape> gemmGrid()
{
    std::vector<GemmShape> v;
    for ( double b : { 1.0, 7.0, 256.0 } )
        for ( double m : { 1.0, 33.0, 512.0, 8192.0 } )
            for ( double n : { 2.0, 100.0, 4096.0 } )
                for ( double k : { 1.0, 64.0, 1025.0, 65536.0 } )
                    for ( GemmOp op : { GemmOp::bmm, GemmOp::linear } )
                    {
                        GemmShape s;
                        s.B = b;
                        s.M = m;
                        s.N = n;
                        s.K = k;
                        s.op = op;
                        v.push_back( s );
                    }
    return v;
}

std::vector<OperatorShape> opGrid()
{
    std::vector<OperatorShape> v;
    for ( int k = 0; k < kNumOperatorKinds; ++k )
        for ( double b : { 1.0, 1000.0, 16384.0, 1.0e6 } )
            for ( double h : { 1.0, 768.0, 4096.0 } )
            {
                OperatorShape s;
                s.kind = static_cast<OperatorKind>( k );
                s.B = b;
                s.H = h;
                v.push_back( s );
            }
    return v;
}
} // namespace

// z = ((5-1)/2, (10-2)/4) = (2, 2); hidden = relu(1·2 + 2·2 + 0.25, -3·2 + 0.5·2 - 1)
// = (6.25, 0); y = 2·6.25 - 1·0 + 0.5 = 13.
TEST( TEST_CATEGORY, mlp_hand_computed )
{
    const MlpFile f = parseMlpFile( kTinyMlp, "tiny.mlp" );
    const std::vector<double> x = { 5.0, 10.0 };
    EXPECT_EQ( mlpReferenceEvaluate( f, x ), 13.0 );
    MlpLayout layout;
    const std::vector<double> p = packMlp( f, layout );
    EXPECT_EQ( mlpEvaluate( layout, p.data(), x.data() ), 13.0 );
    // output_min clamps: with a floor of 20 the output is 20.
    layout.output_min = 20.0;
    EXPECT_EQ( mlpEvaluate( layout, p.data(), x.data() ), 20.0 );
}

// With the training range a in [0, 3], b in [0, 10], x = (5, 10) is evaluated as (3, 10):
// z = ((3-1)/2, 2) = (1, 2); hidden = relu(1 + 4 + 0.25, -3 + 1 - 1) = (5.25, 0); y = 11.
// Inside the range nothing changes: (2, 6) gives z = (0.5, 1), hidden = (2.75, 0), y = 6;
// (-4, 12) is evaluated as (0, 10): z = (-0.5, 2), hidden = (3.75, 1.5), y = 7.5 - 1.5 + 0.5 = 6.5.
TEST( TEST_CATEGORY, mlp_inputs_clamped_into_training_range )
{
    const std::string text =
        replaced( replaced( kTinyMlp, "output_min", "input_min 0 0\ninput_max 3 10\noutput_min" ),
                  "check 5 10 13", "check 5 10 11" );
    const MlpFile f = parseMlpFile( text, "ranged.mlp" );
    EXPECT_EQ( f.input_min, ( std::vector<double>{ 0.0, 0.0 } ) );
    EXPECT_EQ( f.input_max, ( std::vector<double>{ 3.0, 10.0 } ) );
    MlpLayout layout;
    const std::vector<double> p = packMlp( f, layout );
    const std::pair<std::vector<double>, double> cases[] = {
        { { 5.0, 10.0 }, 11.0 }, { { 2.0, 6.0 }, 6.0 }, { { -4.0, 12.0 }, 6.5 } };
    for ( const auto& [x, y] : cases )
    {
        EXPECT_EQ( mlpReferenceEvaluate( f, x ), y );
        EXPECT_EQ( mlpEvaluate( layout, p.data(), x.data() ), y );
    }
    // The trainer's check record is verified with the clamp: the unclamped 13 is refused.
    EXPECT_NE( parseError( replaced( text, "check 5 10 11", "check 5 10 13" ) ).find( "check" ),
               std::string::npos );
    EXPECT_NE( parseError( replaced( text, "input_max 3 10", "input_max 3 -1" ) )
                   .find( "field 'input_max value 2'" ),
               std::string::npos );
    EXPECT_NE( parseError( replaced( text, "input_max 3 10\n", "" ) ).find( "input_max" ),
               std::string::npos );
}

TEST( TEST_CATEGORY, mlp_default_for_names_trained_gpus )
{
    const std::string with =
        replaced( kTinyMlp, "trained_on toy\n", "trained_on toy T4\ndefault_for T4\n" );
    const MlpFile f = parseMlpFile( with, "default.mlp" );
    EXPECT_EQ( f.default_for, ( std::vector<std::string>{ "T4" } ) );
    EXPECT_NE( parseError( replaced( with, "default_for T4", "default_for P4" ) )
                   .find( "field 'default_for'" ),
               std::string::npos );
}

TEST( TEST_CATEGORY, mlp_file_round_trip_and_checks )
{
    for ( const std::string& path : { shippedGemm(), shippedOps() } )
    {
        const MlpFile a = readMlpFile( path );
        EXPECT_FALSE( a.check_inputs.empty() ) << path;
        std::ostringstream s;
        writeMlpFile( s, a );
        const MlpFile b = parseMlpFile( s.str(), "round-trip" );
        EXPECT_EQ( a.family, b.family );
        EXPECT_EQ( a.target, b.target );
        EXPECT_EQ( a.names, b.names );
        EXPECT_EQ( a.mean, b.mean );
        EXPECT_EQ( a.scale, b.scale );
        EXPECT_EQ( a.output_min, b.output_min );
        EXPECT_EQ( a.trained_on, b.trained_on );
        EXPECT_EQ( a.input_min, b.input_min );
        EXPECT_EQ( a.input_max, b.input_max );
        EXPECT_EQ( a.default_for, b.default_for );
        EXPECT_EQ( a.input_min.size(), a.names.size() ) << path << ": shipped without a range";
        ASSERT_EQ( a.layers.size(), b.layers.size() );
        for ( std::size_t l = 0; l < a.layers.size(); ++l )
        {
            EXPECT_EQ( a.layers[l].activation, b.layers[l].activation );
            EXPECT_EQ( a.layers[l].weights, b.layers[l].weights );
            EXPECT_EQ( a.layers[l].bias, b.layers[l].bias );
        }
        EXPECT_EQ( a.check_inputs, b.check_inputs );
        EXPECT_EQ( a.check_outputs, b.check_outputs );
    }
}

// The kernel's evaluator against the plain std::vector reference on random inputs around the
// training distribution, and backends equal (sameAsHost).
// The body is a free function: nvcc refuses a device lambda inside gtest's TestBody, a
// private member function.
void mlp_kernel_matches_reference_body()
{
    const MlpFile f = readMlpFile( shippedGemm() );
    const MlpModel<> m = loadMlpModel( f );
    std::mt19937_64 rng( 7 );
    std::normal_distribution<double> z( 0.0, 1.5 );
    const int n = 200;
    const int d = static_cast<int>( f.names.size() );
    Kokkos::View<double**, Kokkos::LayoutRight, Kokkos::HostSpace> hx( "x", n, d );
    for ( int i = 0; i < n; ++i )
        for ( int j = 0; j < d; ++j )
            hx( i, j ) = f.mean[j] + f.scale[j] * z( rng );
    const auto x = Kokkos::create_mirror_view_and_copy( TEST_MEMSPACE(), hx );
    Kokkos::View<double*, TEST_MEMSPACE> y( "y", n );
    const MlpLayout layout = m.layout;
    const auto params = Kokkos::create_mirror_view_and_copy( TEST_MEMSPACE(), m.params );
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, n ),
        KOKKOS_LAMBDA( int i ) { y( i ) = mlpEvaluate( layout, params.data(), &x( i, 0 ) ); } );
    const auto hy = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), y );
    for ( int i = 0; i < n; ++i )
    {
        const std::vector<double> xi( &hx( i, 0 ), &hx( i, 0 ) + d );
        const double ref = mlpReferenceEvaluate( f, xi );
        EXPECT_NEAR( hy( i ), ref, 1e-12 * std::fmax( 1.0, std::fabs( ref ) ) ) << i;
    }
}

TEST( TEST_CATEGORY, mlp_kernel_matches_reference )
{
    mlp_kernel_matches_reference_body();
}

TEST( TEST_CATEGORY, learned_batches_serial_equals_backend )
{
    const LearnedOperatorModel g = loadLearnedGemmModel( shippedGemm() );
    const LearnedOperatorModel o = loadLearnedOperatorModel( shippedOps() );
    const GpuSpec gpu = findGpu( "T4" ).spec;
    const auto gs = gemmGrid();
    const auto os = opGrid();
    const auto g1 = gemmsOn<Kokkos::Serial>( g.model, gpu, gs );
    const auto g2 = gemmsOn<TEST_EXECSPACE>( g.model, gpu, gs );
    const auto o1 = opsOn<Kokkos::Serial>( o.model, gpu, os );
    const auto o2 = opsOn<TEST_EXECSPACE>( o.model, gpu, os );
    for ( std::size_t i = 0; i < gs.size(); ++i )
        EXPECT_TRUE( sameAsHost( g2[i].latency_ms, g1[i].latency_ms ) ) << i;
    EXPECT_TRUE( sameAsHost( o2, o1 ) );
}

// Every prediction of both shipped models, on every catalog GPU (seen or not) and a grid of
// shapes from tiny to huge, stays at or above the roofline with the wave count, and the wave
// bound itself is at or above the plain roofline.
TEST( TEST_CATEGORY, learned_predictions_respect_the_roofline )
{
    const LearnedOperatorModel g = loadLearnedGemmModel( shippedGemm() );
    const LearnedOperatorModel o = loadLearnedOperatorModel( shippedOps() );
    const auto gs = gemmGrid();
    const auto os = opGrid();
    for ( const GpuEntry& e : defaultGpuCatalog().entries() )
    {
        const auto gp = gemmsOn<TEST_EXECSPACE>( g.model, e.spec, gs );
        for ( std::size_t i = 0; i < gs.size(); ++i )
        {
            const GemmShape& s = gs[i];
            const double wave = gemmWaveBoundMs( e.spec, s.B, s.M, s.N, s.K, s.dtype );
            const double roof = gemmRooflineMs( e.spec, s.B, s.M, s.N, s.K, s.dtype );
            EXPECT_GE( wave, roof * ( 1.0 - 1e-12 ) ) << e.name << " " << i;
            EXPECT_GE( gp[i].latency_ms, wave ) << e.name << " " << i;
            EXPECT_TRUE( std::isfinite( gp[i].latency_ms ) ) << e.name << " " << i;
        }
        const auto op = opsOn<TEST_EXECSPACE>( o.model, e.spec, os );
        for ( std::size_t i = 0; i < os.size(); ++i )
        {
            EXPECT_GE( op[i], operatorBoundMs( e.spec, os[i].kind, os[i].B, os[i].H ) )
                << e.name << " " << i;
            EXPECT_TRUE( std::isfinite( op[i] ) ) << e.name << " " << i;
        }
    }
}

// No GEMM, analytic or learned (forced onto every GPU), any dtype, runs faster than the highest
// matmul rate measured on its GPU: the catalog's max_matmul_* (A100 SXM BF16: 271.2 TFLOP/s, of
// which TF32 gets 156/312) or, unmeasured, the highest fraction of the peak measured anywhere.
TEST( TEST_CATEGORY, no_gemm_beats_the_measured_matmul_maximum )
{
    const GpuSpec a100 = findGpu( "A100-SXM4-80GB" ).spec;
    EXPECT_EQ( gemmMaxMatmulTFLOPs( a100, DataType::bf16 ), 271.2 );
    EXPECT_DOUBLE_EQ( gemmMaxMatmulTFLOPs( a100, DataType::tf32 ), 135.6 );
    const GpuSpec l4 = findGpu( "L4" ).spec;
    EXPECT_DOUBLE_EQ( gemmMaxMatmulTFLOPs( l4, DataType::bf16 ), l4.bf16_TFLOPs * 271.2 / 312.0 );
    const LearnedOperatorModel g = loadLearnedGemmModel( shippedGemm() );
    const auto gs = gemmGrid();
    for ( const GpuEntry& e : defaultGpuCatalog().entries() )
    {
        const auto rate = [&]( const GemmShape& s, double ms )
        { return 2.0 * s.B * s.M * s.N * s.K / ( ms * 1.0e-3 ) / 1.0e12; };
        const auto learned = gemmsOn<TEST_EXECSPACE>( g.model, e.spec, gs );
        for ( std::size_t i = 0; i < gs.size(); ++i )
        {
            const double cap = gemmMaxMatmulTFLOPs( e.spec, DataType::fp32 ) * ( 1.0 + 1e-12 );
            EXPECT_LE( rate( gs[i], learned[i].latency_ms ), cap ) << e.name << " " << i;
            for ( DataType d : { DataType::fp32, DataType::tf32, DataType::fp16, DataType::bf16 } )
            {
                const GemmShape& s = gs[i];
                const double ms = predictGemm( e.spec, s.B, s.M, s.N, s.K, d, s.op ).latency_ms;
                EXPECT_LE( rate( s, ms ), gemmMaxMatmulTFLOPs( e.spec, d ) * ( 1.0 + 1e-12 ) )
                    << e.name << " " << nameOf( d ) << " " << i;
            }
        }
    }
}

// Hand-computed bounds on a toy GPU: 10 SMs, 10 TFLOP/s (1e12 per SM), 100 GB/s.
TEST( TEST_CATEGORY, wave_and_operator_bounds_hand_computed )
{
    GpuSpec g;
    g.sm_count = 10;
    g.fp32_TFLOPs = 10.0;
    g.memory_bandwidth_GBps = 100.0;
    // B=1, 64x64x64: 2·2·2 = 8 blocks → 1 wave of 2·32³ = 65536 FLOP at 1e12/s = 6.5536e-8 s;
    // memory 4·3·4096 B / 1e11 = 4.9152e-7 s wins: 4.9152e-4 ms.
    EXPECT_NEAR( gemmWaveBoundMs( g, 1, 64, 64, 64, DataType::fp32 ), 4.9152e-4, 1e-18 );
    // B=1, 1024³: 32768 blocks → 3277 waves · 65536 / 1e12 = 2.14761472e-4 s; memory
    // 4·3·2^20 / 1e11 = 1.2582912e-4 s: compute, 0.214761472 ms.
    EXPECT_NEAR( gemmWaveBoundMs( g, 1, 1024, 1024, 1024, DataType::fp32 ), 0.214761472, 1e-15 );
    // add on [1000, 1000]: 3 tensors · 4 B · 1e6 / 1e11 = 1.2e-4 s = 0.12 ms; compute 1e6/1e13.
    EXPECT_NEAR( operatorBoundMs( g, OperatorKind::add, 1000, 1000 ), 0.12, 1e-15 );
    EXPECT_NEAR( operatorBoundMs( g, OperatorKind::relu, 1000, 1000 ), 0.08, 1e-15 );
    // The analytic model: launch + bound / efficiency · factor; with { 0.01 ms, 0.5, 2, 3 }: relu
    // 0.01 + 0.08/0.5 = 0.17, softmax (bound max(0.08, 5e6/1e13 s)) 0.01 + 0.16·2 = 0.33, ln 0.49.
    const OperatorConstants c = { 0.01, 0.5, 2.0, 3.0 };
    EXPECT_NEAR( predictOperatorAnalyticWith( c, g, OperatorKind::relu, 1000, 1000 ), 0.17, 1e-15 );
    EXPECT_NEAR( predictOperatorAnalyticWith( c, g, OperatorKind::softmax, 1000, 1000 ), 0.33,
                 1e-15 );
    EXPECT_NEAR( predictOperatorAnalyticWith( c, g, OperatorKind::ln, 1000, 1000 ), 0.49, 1e-15 );
    EXPECT_NEAR( predictOperatorAnalytic( g, OperatorKind::relu, 1000, 1000 ),
                 0.0086411 + 0.08 / 0.75080, 1e-15 );
}

TEST( TEST_CATEGORY, bad_model_files_name_line_and_field )
{
    EXPECT_EQ( parseError( kTinyMlp ), "" );
    const struct
    {
        std::string text;
        std::string expect;
    } cases[] = {
        { replaced( kTinyMlp, "shardsweep-mlp 1", "shardsweep-mlp 2" ),
          "bad.mlp:1:1: field 'shardsweep-mlp (format version)'" },
        { replaced( kTinyMlp, "mean 1 2", "mean 1" ), "bad.mlp:7:1: field 'mean'" },
        { replaced( kTinyMlp, "scale 2 4", "scale 2 x" ), "bad.mlp:8:1: field 'scale value 2'" },
        { replaced( kTinyMlp, "scale 2 4", "scale 2 0" ), "bad.mlp:8:1: field 'scale'" },
        { replaced( kTinyMlp, "weights 1 2 -3 0.5", "weights 1 2 -3" ),
          "bad.mlp:13:1: field 'layer 1 weights'" },
        { replaced( kTinyMlp, "layer identity 2 1", "layer identity 3 1" ),
          "bad.mlp:15:1: field 'layer 2 inputs'" },
        { replaced( kTinyMlp, "layer relu 2 2", "layer tanh 2 2" ),
          "bad.mlp:12:1: field 'layer 1 activation'" },
        { replaced( kTinyMlp, "check 5 10 13", "check 5 10 13.5" ), "bad.mlp:18:1: field 'check'" },
        { replaced( kTinyMlp, "end\n", "" ), "bad.mlp:19:1: field 'end'" },
        { replaced( kTinyMlp, "names a b\n", "" ), "bad.mlp:6:1: field 'names'" },
    };
    for ( const auto& c : cases )
    {
        const std::string e = parseError( c.text );
        EXPECT_EQ( e.rfind( c.expect, 0 ), 0u ) << "got: " << e << "\nwant prefix: " << c.expect;
    }
    // Right format, wrong features for this build.
    const MlpFile tiny = parseMlpFile( kTinyMlp, "tiny.mlp" );
    try
    {
        requireMlpFeatures( tiny, "gemm", kGemmLearnedFeatureNames, kGemmLearnedFeatures );
        ADD_FAILURE() << "no error for a wrong family";
    }
    catch ( const InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "tiny.mlp: field 'family'" ), std::string::npos )
            << e.what();
    }
    try
    {
        readMlpFile( "/nonexistent/model.mlp" );
        ADD_FAILURE() << "no error for a missing file";
    }
    catch ( const InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "/nonexistent/model.mlp" ), std::string::npos );
    }
}

// The dense part priced with the learned GEMM pricer is the sum of the learned GEMMs it is made
// of (one bottom layer 13 -> 512 on 2048 samples, cat interaction with no tables: the top input is
// the bottom output, one top layer 512 -> 1): forward linear(M=2048, N=512, K=13), backward
// bmm(2048, 13, 512) + bmm(13, 512, 2048), top likewise; the analytic pricer gives predictGemm's
// sums; inside a kernel = on the host.
// The body is a free function: nvcc refuses a device lambda inside gtest's TestBody, a
// private member function.
void dense_cost_with_learned_gemm_pricer_body()
{
    const LearnedOperatorModel g = loadLearnedGemmModel( shippedGemm() );
    const GpuSpec gpu = findGpu( "V100-PCIe-32GB" ).spec;
    DenseModel d;
    d.num_dense_features = 13;
    d.bottom_mlp_layers = 1;
    d.bottom_mlp[0] = 512;
    d.top_mlp_layers = 1;
    d.top_mlp[0] = 1;
    d.interaction = Interaction::cat;
    auto host_params = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), g.model.params );
    GemmPricer learned;
    learned.layout = g.model.layout;
    learned.params = host_params.data();
    const DenseCost c = denseCost( gpu, d, 0, 0.0, 2048.0, learned );
    const auto L = [&]( double m, double n, double k, GemmOp op )
    {
        return predictGemmLearned( g.model.layout, host_params.data(), gpu, 1.0, m, n, k,
                                   DataType::fp32, op )
            .latency_ms;
    };
    EXPECT_EQ( c.bottom_fwd_ms, L( 2048, 512, 13, GemmOp::linear ) );
    EXPECT_EQ( c.bottom_bwd_ms, L( 2048, 13, 512, GemmOp::bmm ) + L( 13, 512, 2048, GemmOp::bmm ) );
    EXPECT_EQ( c.top_fwd_ms, L( 2048, 1, 512, GemmOp::linear ) );
    EXPECT_EQ( c.top_bwd_ms, L( 2048, 512, 1, GemmOp::bmm ) + L( 512, 1, 2048, GemmOp::bmm ) );
    const DenseCost a = denseCost( gpu, d, 0, 0.0, 2048.0 );
    EXPECT_EQ( a.bottom_fwd_ms,
               predictGemm( gpu, 1, 2048, 512, 13, DataType::fp32, GemmOp::linear ).latency_ms );
    EXPECT_NE( a.bottom_fwd_ms, c.bottom_fwd_ms );
    // The same inside a kernel on the backend.
    Kokkos::View<DenseCost*, TEST_MEMSPACE> out( "out", 1 );
    const auto dev_params = Kokkos::create_mirror_view_and_copy( TEST_MEMSPACE(), g.model.params );
    GemmPricer dev = learned;
    dev.params = dev_params.data();
    Kokkos::parallel_for(
        Kokkos::RangePolicy<TEST_EXECSPACE>( 0, 1 ),
        KOKKOS_LAMBDA( int ) { out( 0 ) = denseCost( gpu, d, 0, 0.0, 2048.0, dev ); } );
    const auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), out );
    EXPECT_TRUE( sameAsHost( h( 0 ).top_bwd_ms, c.top_bwd_ms ) );
    EXPECT_TRUE( sameAsHost( h( 0 ).bottom_fwd_ms, c.bottom_fwd_ms ) );
}

TEST( TEST_CATEGORY, dense_cost_with_learned_gemm_pricer )
{
    dense_cost_with_learned_gemm_pricer_body();
}

} // namespace Test
