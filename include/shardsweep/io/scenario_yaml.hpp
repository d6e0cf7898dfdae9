#pragma once
//! \file scenario_yaml.hpp
//! \brief Scenario files (`kind: scenario`) for `shardsweep evaluate`: one workload, one platform
//! and one plan (each a path relative to the scenario file or written inline), the global batch
//! and the cost model. Everything is cross-checked: plan against workload and platform, batch
//! divisible by the GPU count. A plan file that `shardsweep plan -o` wrote (`kind: plan` with a
//! `source:` naming its workload, platform, GPU count and batch) reads as a scenario too.

#include <cstdint>
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/yaml_util.hpp>
#include <string>

namespace shardsweep
{

struct ScenarioFile
{
    std::string name;
    Workload workload;
    NamedPlatform platform;
    Plan plan;
    std::int64_t global_batch = 0;     //!< the scenario's, else the workload's
    std::string cost_model = "native"; //!< "native", "torchrec" or "learned"
    std::string cost_model_file;       //!< the learned model (resolved path; cost_model learned)
};

ScenarioFile parseScenario( const YamlView& root, const GpuCatalog& catalog );
ScenarioFile readScenarioFile( const std::string& path );
ScenarioFile readScenarioFile( const std::string& path, const GpuCatalog& catalog );
ScenarioFile parseScenarioString( const std::string& text, const std::string& name,
                                  const GpuCatalog& catalog );

} // namespace shardsweep
