#pragma once
//! \file operator_models.hpp
//! \brief The shipped learned operator models (inputs/models/{gemm,ops}.mlp): loading, feature
//! checks, host-side helpers for the CLI and the benchmarks.

#include <shardsweep/io/mlp_file.hpp>
#include <shardsweep/kernel/learned_cost_model.hpp>
#include <shardsweep/kernel/operator_batch.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! A learned model file loaded into Views.
struct LearnedOperatorModel
{
    MlpFile file;
    MlpModel<> model;

    //! Whether `gpu_name` (a catalog name) is among the GPUs the model was trained on.
    bool trainedOn( const std::string& gpu_name ) const;
    //! Whether the file names `gpu_name` in default_for: the learned model beat the analytic one
    //! there on shapes larger than those it was trained on.
    bool defaultFor( const std::string& gpu_name ) const;
};

//! Reads a GEMM model file (family gemm, kGemmLearnedFeatureNames); throws InputError.
LearnedOperatorModel loadLearnedGemmModel( const std::string& path );
//! Reads an operator model file (family ops, kOperatorLearnedFeatureNames); throws InputError.
LearnedOperatorModel loadLearnedOperatorModel( const std::string& path );

//! Reads a learned DLRM shard cost model (family dlrm, exported by `train_cost_model.py --model
//! mlp --export-mlp`; the names of kLearnedShardFeatureNames or their NeuroShard prefix) into a
//! host View; its trained_on line lists the platforms in the training file's code order. Throws
//! InputError naming the file, line and field.
LearnedCostModel loadLearnedCostModel( const std::string& path );

//! The shipped learned GEMM model (<models>/gemm.mlp) as the cost kernel's dense part uses it
//! (`gemm_model: learned`), and the GPUs (catalog names) it was trained on.
struct KernelGemmModel
{
    LearnedGemmModel model;
    LearnedOperatorModel source;
};
KernelGemmModel loadKernelGemmModel( const std::string& path );

//! <defaultModelDir()>/gemm.mlp and ops.mlp.
std::string defaultGemmModelPath();
std::string defaultOperatorModelPath();

//! Host convenience: predictGemms on the default execution space (model == nullptr: analytic).
std::vector<GemmPrediction> predictGemmsHost( const LearnedOperatorModel* model, const GpuSpec& gpu,
                                              const std::vector<GemmShape>& shapes );
//! Host convenience: predictOperators on the default execution space.
std::vector<double> predictOperatorsHost( const LearnedOperatorModel* model, const GpuSpec& gpu,
                                          const std::vector<OperatorShape>& shapes );

} // namespace shardsweep
