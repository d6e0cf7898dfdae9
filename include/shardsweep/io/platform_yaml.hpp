#pragma once
//! \file platform_yaml.hpp
//! \brief Platform files (`kind: platform`, inputs/platforms/): GPU from the catalog, node shape,
//! host memory, and the network and system blocks spelled as ASTRA-sim 2.0 spells them.
//!
//! `network:` is either ASTRA-sim's analytical network YAML inline (topology, npus_count,
//! bandwidth, latency: one list entry per dimension) or the path of an unchanged ASTRA-sim .yml
//! file; `system:` likewise takes ASTRA-sim's system JSON keys inline or a .json path.
//! docs/INPUTS.md documents every field.

#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/io/gpu_catalog.hpp>
#include <shardsweep/io/yaml_util.hpp>
#include <string>

namespace shardsweep
{

//! Parses a platform document. `embedded`: a `platform:` mapping inside another file (scenario),
//! where `kind:` may be left out.
NamedPlatform parsePlatform( const YamlView& root, const GpuCatalog& catalog,
                             bool embedded = false );
//! Reads a platform file, looking GPUs up in the default catalog.
NamedPlatform readPlatformFile( const std::string& path );
NamedPlatform readPlatformFile( const std::string& path, const GpuCatalog& catalog );
//! Parses platform text (tests); `name` stands for the file in messages.
NamedPlatform parsePlatformString( const std::string& text, const std::string& name,
                                   const GpuCatalog& catalog );

//! An ASTRA-sim analytical network mapping (exactly its four keys), checked as ASTRA-sim checks
//! it (equal list lengths, npus_count > 1, bandwidth > 0, latency >= 0) plus at most
//! kMaxNetworkDims dimensions. `bandwidth` is GB/s as ASTRA-sim reads it, `latency` ns.
Network parseAstraNetwork( const YamlView& node );
Network readAstraNetworkFile( const std::string& path );

//! ASTRA-sim system keys (`endpoint-delay`, `*-implementation`, ...). Implementation lists may be
//! shorter than the network (the last entry repeats, as ASTRA-sim's own 16-GPU validation pairs
//! a one-entry system file with a two-dimension network) but not longer.
SystemConfig parseAstraSystem( const YamlView& node, int num_dims );
SystemConfig readAstraSystemFile( const std::string& path, int num_dims );

} // namespace shardsweep
