#include <shardsweep/core/errors.hpp>
#include <shardsweep/scenario/sweep_config.hpp>

namespace shardsweep
{

const char* costModelName( CostModel model )
{
    return model == CostModel::torchrec ? "torchrec" : "native";
}

CostModel parseCostModelName( const std::string& name )
{
    if ( name == "native" )
        return CostModel::native;
    if ( name == "torchrec" )
        return CostModel::torchrec;
    throw UsageError( "unknown cost model '" + name + "' (expected native or torchrec)" );
}

std::uint64_t SweepConfig::gridSize() const
{
    return std::uint64_t( workloads.size() ) * platforms.size() * gpu_counts.size() *
           batches.size() * planners.size() * cost_models.size();
}

std::uint64_t sweepConfigHash( const SweepConfig& config )
{
    std::uint64_t h = 0xcbf29ce484222325ull;
    for ( unsigned char c : config.text )
    {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

} // namespace shardsweep
