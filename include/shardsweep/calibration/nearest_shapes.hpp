#pragma once
//! \file nearest_shapes.hpp
//! \brief The measured GEMMs nearest to a workload's own: which rows of a large measurement set
//! stand in for the shapes `shardsweep shapes` lists, when those were not measured themselves.

#include <cstddef>
#include <shardsweep/model/gpu_calibration.hpp>
#include <vector>

namespace shardsweep
{

//! `count` rows of `pool` (fewer if it has fewer), nearest to `targets` in the calibration's
//! neighbour coordinates (gemmCalibrationFeatures, Euclidean): each target's nearest row, then
//! each one's second nearest, and so on in the order of `targets`, a row two targets share taken
//! once. Round by round, so that every target gets neighbours, not only the ones in a dense part of
//! the pool. Ties go to the earlier row of `pool`.
std::vector<GemmSample> nearestGemmSamples( const std::vector<GemmSample>& pool,
                                            const std::vector<GemmSample>& targets,
                                            std::size_t count );

} // namespace shardsweep
