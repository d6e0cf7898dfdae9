// Loading what a sweep names (workloads, platforms, table pools) and validating the whole space.
#include <map>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/gpu_calibration_yaml.hpp>
#include <shardsweep/io/locality_stats.hpp>
#include <shardsweep/io/operator_models.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/sweep_yaml.hpp>
#include <shardsweep/io/table_pool_csv.hpp>
#include <shardsweep/io/text_file.hpp>
#include <shardsweep/io/workload_yaml.hpp>
#include <stdexcept>

namespace shardsweep
{

SweepInputs loadSweepInputs( const SweepConfig& config )
{
    const InputFileRecorder recorder;
    SweepInputs in;
    for ( const std::string& path : config.workloads )
        in.workloads.push_back( readWorkloadFile( path ) );
    std::map<std::string, int> platform_index;
    for ( const std::string& path : config.platforms )
    {
        platform_index.emplace( path, int( in.platforms.size() ) );
        in.platforms.push_back( readPlatformFile( path ) );
    }
    // Pools are cached by their source: generators sharing a pool build it once.
    std::map<std::string, TablePool> pools;
    for ( const TaskGeneratorConfig& g : config.generators )
    {
        auto it = platform_index.find( g.platform );
        if ( it == platform_index.end() )
        {
            it = platform_index.emplace( g.platform, int( in.platforms.size() ) ).first;
            in.platforms.push_back( readPlatformFile( g.platform ) );
        }
        in.generator_platform.push_back( it->second );

        const TablePoolSource& s = g.pool;
        const SyntheticPoolOptions& o = s.synthetic;
        const std::string key =
            !s.csv.empty()
                ? "csv:" + s.csv
                : "syn:" + s.locality_file + "#" + std::to_string( s.locality_block ) + "/" +
                      std::to_string( o.num_tables ) + "/" + std::to_string( o.seed ) + "/" +
                      std::to_string( o.default_dim ) + "/" + std::to_string( o.pooling_sigma ) +
                      "/" + std::to_string( o.tilt_sigma ) + "/" +
                      std::to_string( o.min_touched_fraction ) + "/" + std::to_string( o.max_rows );
        auto pool = pools.find( key );
        if ( pool == pools.end() )
        {
            TablePool p;
            if ( !s.csv.empty() )
                p = readTablePoolCsv( s.csv );
            else
            {
                const std::vector<LocalityTarget> blocks = readLocalityStats( s.locality_file );
                if ( s.locality_block >= int( blocks.size() ) )
                    throw InputError( config.file, "generator '" + g.name + "': locality block " +
                                                       std::to_string( s.locality_block ) +
                                                       " does not exist in " + s.locality_file +
                                                       " (" + std::to_string( blocks.size() ) +
                                                       " blocks)" );
                p = syntheticTablePool( blocks[s.locality_block], o );
            }
            pool = pools.emplace( key, std::move( p ) ).first;
        }
        in.generator_pool.push_back( pool->second );
    }
    if ( config.gemm_model == "learned" )
    {
        const KernelGemmModel k = loadKernelGemmModel( defaultGemmModelPath() );
        in.learned_gemm_model = std::make_shared<const LearnedGemmModel>( k.model );
        for ( const NamedPlatform& p : in.platforms )
            in.platform_learned_gemm.push_back( k.source.trainedOn( p.gpu_name ) ? 1 : 0 );
    }
    if ( !config.cost_model_file.empty() )
    {
        try
        {
            in.learned_cost_model = std::make_shared<const LearnedCostModel>(
                loadLearnedCostModel( config.cost_model_file ) );
        }
        catch ( const InputError& e )
        {
            throw InputError( config.file, std::string( "field 'cost_model_file': " ) + e.what() );
        }
    }
    // `run --calibration`: every platform of the calibrated GPU.
    for ( const std::string& path : config.calibrations )
    {
        const CalibrationFile file{ path, readGpuCalibration( path ) };
        bool used = false;
        for ( NamedPlatform& p : in.platforms )
            used = applyGpuCalibration( p, file ) || used;
        if ( !used )
            throw InputError( path, "calibrates GPU '" + file.calibration.gpu +
                                        "', which no platform of the sweep uses" );
    }
    in.files_fingerprint = recorder.fingerprint();
    return in;
}

ScenarioSpace loadScenarioSpace( const SweepConfig& config )
{
    SweepInputs inputs = loadSweepInputs( config );
    try
    {
        return ScenarioSpace( config, std::move( inputs ) );
    }
    catch ( const std::invalid_argument& e )
    {
        throw InputError( config.file, e.what() );
    }
}

ScenarioSpace loadScenarioSpace( const std::string& path )
{
    return loadScenarioSpace( readSweep( path ) );
}

void validateSweepFile( const std::string& path )
{
    loadScenarioSpace( path );
}

} // namespace shardsweep
