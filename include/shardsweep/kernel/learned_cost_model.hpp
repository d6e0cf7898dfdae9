#pragma once
//! \file learned_cost_model.hpp
//! \brief A learned DLRM shard cost model (model/learned_shard_cost.hpp) loaded for the kernel:
//! its MLP's parameters in a host View (filled once per run by io/learned_cost_model_file.hpp)
//! and the platforms it was trained on, whose positions are the `platform` feature's codes.
#include <Kokkos_Core.hpp>
#include <shardsweep/kernel/cost_kernel.hpp>
#include <shardsweep/model/learned_operator.hpp>
#include <shardsweep/model/learned_shard_cost.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

struct LearnedCostModel
{
    std::string source; //!< the model file (messages)
    MlpLayout layout;
    Kokkos::View<const double*, Kokkos::HostSpace> params;
    std::vector<std::string> platforms; //!< code = index (the training file's /names/platforms)
    bool platform_feature = true;       //!< false: a NeuroShard-features model, any platform

    //! The code of platform `name`, -1 if the model was not trained on it.
    int platformCode( const std::string& name ) const
    {
        if ( !platform_feature )
            return 0;
        for ( std::size_t i = 0; i < platforms.size(); ++i )
            if ( platforms[i] == name )
                return static_cast<int>( i );
        return -1;
    }
    LearnedCostBinding bind( const std::string& platform_name ) const
    {
        return { this, platformCode( platform_name ) };
    }
};

//! The learned GEMM model (model/learned_operator.hpp) as the kernel's dense part uses it
//! (`gemm_model: learned`): layout and host parameters. Callers give it only to scenarios whose
//! GPU it was trained on (io/operator_models.hpp trainedOn), the analytic model prices the rest.
struct LearnedGemmModel
{
    MlpLayout layout;
    Kokkos::View<const double*, Kokkos::HostSpace> params;

    GemmPricer pricer() const { return { layout, params.data() }; }
};

//! The GEMM pricer of an optional learned GEMM model (null: analytic).
inline GemmPricer hostGemmPricer( const LearnedGemmModel* model )
{
    return model ? model->pricer() : GemmPricer{};
}

//! The kernel's view of a binding on the host (inactive unless model and platform code are set).
inline LearnedShardCost hostLearnedShardCost( const LearnedCostBinding& binding )
{
    LearnedShardCost c;
    if ( binding.model )
    {
        c.layout = binding.model->layout;
        c.params = binding.model->params.data();
        c.platform_code = binding.platform_code;
    }
    return c;
}

} // namespace shardsweep
