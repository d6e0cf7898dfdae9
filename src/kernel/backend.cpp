// The backends of this build (kernel/backend.hpp).
#include <shardsweep/kernel/backend.hpp>

namespace shardsweep
{

std::vector<Backend> compiledBackends()
{
    std::vector<Backend> compiled;
    for ( const auto& entry : EnumNames<Backend>::entries )
        if ( isCompiled( entry.value ) )
            compiled.push_back( entry.value );
    return compiled;
}

Backend defaultBackend()
{
#if defined( KOKKOS_ENABLE_CUDA )
    static_assert( std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::Cuda>::value );
    return Backend::cuda;
#elif defined( KOKKOS_ENABLE_OPENMP )
    static_assert( std::is_same<Kokkos::DefaultExecutionSpace, Kokkos::OpenMP>::value );
    return Backend::openmp;
#else
    return Backend::serial;
#endif
}

std::string executionSpaceName( Backend b )
{
    return withExecutionSpace( b, []( const auto& exec )
                               { return std::string( std::decay_t<decltype( exec )>::name() ); } );
}

} // namespace shardsweep
