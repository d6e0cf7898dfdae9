#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/operator_models.hpp>

namespace shardsweep
{

namespace
{
LearnedOperatorModel load( const std::string& path, const char* family, const char* const* names,
                           int count )
{
    LearnedOperatorModel m;
    m.file = readMlpFile( path );
    requireMlpFeatures( m.file, family, names, count );
    m.model = loadMlpModel( m.file );
    return m;
}

using Mem = Kokkos::DefaultExecutionSpace::memory_space;

template <class T>
Kokkos::View<const T*, Mem> toView( const std::vector<T>& v, const char* label )
{
    Kokkos::View<T*, Mem> d(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, std::string( label ) ), v.size() );
    auto h = Kokkos::create_mirror_view( d );
    for ( std::size_t i = 0; i < v.size(); ++i )
        h( i ) = v[i];
    Kokkos::deep_copy( d, h );
    return d;
}
//! The model's parameters in the kernels' memory space (empty without a model).
Kokkos::View<const double*, Mem> deviceParams( const LearnedOperatorModel* model )
{
    if ( !model )
        return {};
    return Kokkos::create_mirror_view_and_copy( Mem(), model->model.params );
}
} // namespace

namespace
{
bool namesGpu( const std::vector<std::string>& gpus, const std::string& gpu_name )
{
    const std::string n = normalizeGpuName( gpu_name );
    for ( const std::string& g : gpus )
        if ( normalizeGpuName( g ) == n )
            return true;
    return false;
}
} // namespace

bool LearnedOperatorModel::trainedOn( const std::string& gpu_name ) const
{
    return namesGpu( file.trained_on, gpu_name );
}

bool LearnedOperatorModel::defaultFor( const std::string& gpu_name ) const
{
    return namesGpu( file.default_for, gpu_name );
}

LearnedOperatorModel loadLearnedGemmModel( const std::string& path )
{
    return load( path, "gemm", kGemmLearnedFeatureNames, kGemmLearnedFeatures );
}

LearnedOperatorModel loadLearnedOperatorModel( const std::string& path )
{
    return load( path, "ops", kOperatorLearnedFeatureNames, kOperatorLearnedFeatures );
}

LearnedCostModel loadLearnedCostModel( const std::string& path )
{
    const MlpFile file = readMlpFile( path );
    // The NeuroShard-only variant (--features neuroshard) reads the first 20 features.
    const int count = static_cast<int>( file.names.size() ) == kLearnedShardNeuroshardFeatures
                          ? kLearnedShardNeuroshardFeatures
                          : kLearnedShardFeatures;
    requireMlpFeatures( file, "dlrm", kLearnedShardFeatureNames, count );
    if ( count == kLearnedShardFeatures && file.trained_on.empty() )
        throw InputError( path, "field 'trained_on': expected the platforms the model was trained "
                                "on (the platform feature's codes), found none (re-export with "
                                "postprocess/train_cost_model.py --export-mlp)" );
    LearnedCostModel m;
    m.source = path;
    const std::vector<double> p = packMlp( file, m.layout );
    Kokkos::View<double*, Kokkos::HostSpace> params(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, "cost_mlp_params" ), p.size() );
    std::copy( p.begin(), p.end(), params.data() );
    m.params = params;
    m.platforms = file.trained_on;
    m.platform_feature = count == kLearnedShardFeatures;
    return m;
}

KernelGemmModel loadKernelGemmModel( const std::string& path )
{
    KernelGemmModel k;
    k.source = loadLearnedGemmModel( path );
    k.model.layout = k.source.model.layout;
    k.model.params =
        Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), k.source.model.params );
    return k;
}

std::string defaultGemmModelPath()
{
    return defaultModelDir() + "/gemm.mlp";
}

std::string defaultOperatorModelPath()
{
    return defaultModelDir() + "/ops.mlp";
}

std::vector<GemmPrediction> predictGemmsHost( const LearnedOperatorModel* model, const GpuSpec& gpu,
                                              const std::vector<GemmShape>& shapes )
{
    Kokkos::View<GemmPrediction*, Mem> out( "gemm_predictions", shapes.size() );
    const Kokkos::DefaultExecutionSpace exec;
    const Kokkos::View<const double*, Mem> params = deviceParams( model );
    predictGemms( exec, model != nullptr, model ? model->model.layout : MlpLayout(), params, gpu,
                  toView( shapes, "gemm_shapes" ), out );
    exec.fence();
    auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), out );
    return std::vector<GemmPrediction>( h.data(), h.data() + h.extent( 0 ) );
}

std::vector<double> predictOperatorsHost( const LearnedOperatorModel* model, const GpuSpec& gpu,
                                          const std::vector<OperatorShape>& shapes )
{
    Kokkos::View<double*, Mem> out( "operator_predictions", shapes.size() );
    const Kokkos::DefaultExecutionSpace exec;
    const Kokkos::View<const double*, Mem> params = deviceParams( model );
    predictOperators( exec, model != nullptr, model ? model->model.layout : MlpLayout(), params,
                      gpu, toView( shapes, "operator_shapes" ), out );
    exec.fence();
    auto h = Kokkos::create_mirror_view_and_copy( Kokkos::HostSpace(), out );
    return std::vector<double>( h.data(), h.data() + h.extent( 0 ) );
}

} // namespace shardsweep
