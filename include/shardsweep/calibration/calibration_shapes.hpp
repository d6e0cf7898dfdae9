#pragma once
//! \file calibration_shapes.hpp
//! \brief Which GEMMs to calibrate a GPU with: the ones a workload's model prices (`shardsweep
//! shapes`, the microbenchmark's --shapes), or, where those were not measured themselves, the
//! measured rows nearest to them.

#include <cstddef>
#include <shardsweep/model/gpu_calibration.hpp>
#include <shardsweep/model/transformer.hpp>
#include <vector>

namespace shardsweep
{

//! The distinct GEMMs the transformer model prices for `cases` (one layer, the embedding and the
//! LM head, forward and backward, as transformerOperatorCostWith logs them), in the order first
//! priced, each with its case's dtype; latency_ms is 0. std::logic_error if a case prices more
//! GEMMs than GemmShapeLog keeps.
std::vector<GemmSample>
transformerGemmShapes( const std::vector<TransformerOperatorCase>& cases,
                       const GemmConstants& constants = shippedGemmConstants() );

//! `count` rows of `pool` (fewer if it has fewer), nearest to `targets` in the calibration's
//! neighbour coordinates (gemmCalibrationFeatures, Euclidean): each target's nearest row, then
//! each one's second nearest, and so on in the order of `targets`, a row two targets share taken
//! once. Round by round, so that every target gets neighbours, not only the ones in a dense part of
//! the pool. Ties go to the earlier row of `pool`.
std::vector<GemmSample> nearestGemmSamples( const std::vector<GemmSample>& pool,
                                            const std::vector<GemmSample>& targets,
                                            std::size_t count );

} // namespace shardsweep
