#pragma once
//! \file lower_bound_test_support.hpp
//! \brief The platform and tables the lower bound's tests share (tstLowerBound,
//! tstLowerBoundTilings).
#include <shardsweep/build_paths.hpp>
#include <shardsweep/domain/dlrm_spec.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/scenario/scenario_space.hpp>
#include <string>

namespace Test
{
using namespace shardsweep;

//! Four A100s of one DGX node.
inline Platform fourA100s()
{
    const std::string source = SHARDSWEEP_SOURCE_DIR;
    return resizePlatform( readPlatformFile( source + "/inputs/platforms/dgx-a100.yaml" ).platform,
                           4 );
}

//! A table whose row blocks gain from the L2 (their distinct rows fit it): 20M rows of 128
//! columns, 30 Zipf(1.05) lookups per sample.
inline TableSpec bigZipfTable()
{
    TableSpec big;
    big.rows = 20'000'000;
    big.dim = 128;
    big.pooling_factor = 30.0;
    big.distribution = AccessDistribution::zipf;
    big.zipf_alpha = 1.05;
    return big;
}

//! A 4M x 32 Zipf(1.13) table with 110 lookups per sample: it costs least per area in row blocks
//! whose distinct rows just overflow the L2, at a share that does not divide the rows.
inline TableSpec manyLookupsZipfTable()
{
    TableSpec t = bigZipfTable();
    t.rows = 4'000'000;
    t.dim = 32;
    t.pooling_factor = 110.0;
    t.zipf_alpha = 1.13;
    return t;
}

//! 2000 uniformly accessed rows `dim` wide, 20 lookups per sample: they fit the L2.
inline TableSpec smallUniformTable( int dim )
{
    TableSpec t;
    t.rows = 2000;
    t.dim = dim;
    t.pooling_factor = 20.0;
    t.distribution = AccessDistribution::uniform;
    return t;
}
} // namespace Test
