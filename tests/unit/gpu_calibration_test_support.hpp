#pragma once
// What the GPU calibration tests share (tstGpuCalibration, tstGemmReductionDim): a GPU of the
// catalog, a fixed set of GEMM shapes and a scratch file name.
#include <cmath>
#include <gtest/gtest.h>
#include <input_test_support.hpp>
#include <shardsweep/model/gpu_calibration.hpp>
#include <shardsweep/model/rng.hpp>
#include <string>
#include <unistd.h>
#include <vector>

namespace Test
{
using namespace shardsweep;

inline GpuSpec a100Spec()
{
    return catalog().get( "A100-PCIe-40GB" ).spec;
}

//! Shapes spread log-uniformly over B 1..64, M/N/K 16..4096 (a fixed generator: the same set every
//! run), half of them linear.
inline std::vector<GemmSample> shapes( int n, std::uint64_t seed )
{
    std::vector<GemmSample> out;
    CounterRng rng( seed, 0, kStreamUser );
    const auto logUniform = [&]( double lo, double hi )
    { return std::round( std::exp( std::log( lo ) + rng.uniform() * std::log( hi / lo ) ) ); };
    for ( int i = 0; i < n; ++i )
    {
        GemmSample s;
        s.B = logUniform( 1, 64 );
        s.M = logUniform( 16, 4096 );
        s.N = logUniform( 16, 4096 );
        s.K = logUniform( 16, 4096 );
        s.op = i % 2 ? GemmOp::linear : GemmOp::bmm;
        out.push_back( s );
    }
    return out;
}

inline std::string tempPath( const std::string& name )
{
    return ::testing::TempDir() + "/shardsweep_" + std::to_string( getpid() ) + "_" + name;
}

} // namespace Test
