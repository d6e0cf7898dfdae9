#pragma once
//! \file cost_model_option.hpp
//! \brief `--cost-model native|torchrec|learned` and `--cost-model-file` of `plan` and
//! `evaluate`: the learned model is loaded here, at the edge, once per run.
#include <memory>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/io/gpu_calibration_yaml.hpp>
#include <shardsweep/kernel/learned_cost_model.hpp>
#include <string>

namespace shardsweep
{

struct CostModelChoice
{
    CostModel model = CostModel::native;
    std::unique_ptr<LearnedCostModel> learned; //!< model == learned
    LearnedCostBinding binding;                //!< learned, bound to the platform
};

//! Parses `model_name`; for `learned` loads `file` (`field` names where it came from in
//! messages: "--cost-model-file" or "scenario.yaml: field 'cost_model_file'") and binds it to
//! `platform_name`, warning on rank 0 (stderr) when the model was not trained on that platform
//! (its shards are then priced natively). Throws UsageError / InputError (exit 2).
CostModelChoice chooseCostModel( const CommandContext& ctx, const std::string& model_name,
                                 const std::string& file, const std::string& field,
                                 const std::string& platform_name );

//! `--gemm-model analytic|learned`: for learned, <models>/gemm.mlp when it was trained on
//! `gpu_name` (a note on rank 0 and null otherwise: analytic GEMMs); null for analytic.
std::unique_ptr<LearnedGemmModel>
chooseGemmModel( const CommandContext& ctx, const std::string& name, const std::string& gpu_name );

//! Help text of `--calibration CALIB.yaml...` (plan, evaluate, run, export-et, predict
//! transformer).
extern const char* const kCalibrationOptionHelp;

//! Reads the files of --calibration (InputError naming a bad one).
std::vector<CalibrationFile> readCalibrationFiles( const std::vector<std::string>& paths );

//! Applies every file to `platform`; a file of another GPU than the platform's is a usage error
//! naming `command` (plan and evaluate price one platform: a calibration that does not apply is a
//! mistake).
void calibratePlatform( NamedPlatform& platform, const std::vector<CalibrationFile>& files,
                        const std::string& command );

} // namespace shardsweep
