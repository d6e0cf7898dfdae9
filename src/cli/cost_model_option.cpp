// --cost-model / --cost-model-file of plan and evaluate (cost_model_option.hpp).
#include <iostream>
#include <shardsweep/cli/cost_model_option.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/operator_models.hpp>
#include <shardsweep/scenario/sweep_config.hpp>

namespace shardsweep
{

CostModelChoice chooseCostModel( const CommandContext& ctx, const std::string& model_name,
                                 const std::string& file, const std::string& field,
                                 const std::string& platform_name )
{
    CostModelChoice c;
    c.model = parseCostModelName( model_name );
    if ( c.model != CostModel::learned )
    {
        if ( !file.empty() )
            throw UsageError( field + ": a model file applies to cost model 'learned' only, not '" +
                              model_name + "'" );
        return c;
    }
    if ( file.empty() )
        throw UsageError( "cost model 'learned' needs " + field +
                          " MODEL.mlp (exported by postprocess/train_cost_model.py --model mlp "
                          "--export-mlp)" );
    try
    {
        c.learned = std::make_unique<LearnedCostModel>( loadLearnedCostModel( file ) );
    }
    catch ( const InputError& e )
    {
        throw InputError( field, e.what() );
    }
    c.binding = c.learned->bind( platform_name );
    if ( c.binding.platform_code < 0 && ctx.isRoot() )
        std::cerr << "warning: " << file << " was not trained on platform '" << platform_name
                  << "': its shards are priced with the native model\n";
    return c;
}

std::unique_ptr<LearnedGemmModel>
chooseGemmModel( const CommandContext& ctx, const std::string& name, const std::string& gpu_name )
{
    if ( name != "analytic" && name != "learned" )
        throw UsageError( "--gemm-model: expected analytic or learned, found '" + name + "'" );
    if ( name == "analytic" )
        return nullptr;
    const KernelGemmModel k = loadKernelGemmModel( defaultGemmModelPath() );
    if ( !k.source.trainedOn( gpu_name ) )
    {
        if ( ctx.isRoot() )
            std::cerr << "note: --gemm-model learned: " << gpu_name << " is not among the GPUs of "
                      << defaultGemmModelPath() << ": analytic GEMMs\n";
        return nullptr;
    }
    return std::make_unique<LearnedGemmModel>( k.model );
}

const char* const kCalibrationOptionHelp =
    "GPU calibration file(s) written by `shardsweep calibrate gpu`: the platforms of its GPU are "
    "priced with its measured matmul ceilings and memory bandwidth (docs/model/calibration.md); "
    "the same as the platform file's calibration: key";

std::vector<CalibrationFile> readCalibrationFiles( const std::vector<std::string>& paths )
{
    std::vector<CalibrationFile> files;
    for ( const std::string& p : paths )
        files.push_back( { p, readGpuCalibration( p ) } );
    return files;
}

void calibratePlatform( NamedPlatform& platform, const std::vector<CalibrationFile>& files,
                        const std::string& command )
{
    for ( const CalibrationFile& f : files )
        if ( !applyGpuCalibration( platform, f ) )
            throw UsageError( command + ": --calibration " + f.path + " calibrates GPU '" +
                              f.calibration.gpu + "', not the platform's '" + platform.gpu_name +
                              "'" );
}

} // namespace shardsweep
