#pragma once
//! \file platform_writer.hpp
//! \brief Writing a platform file whose network and system were changed (`calibrate network`):
//! the base file's other fields are kept as they are, `network:` and `system:` are written inline
//! in ASTRA-sim's spelling (platform_yaml.hpp reads them back).

#include <shardsweep/domain/hardware.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! The text of a platform file: `base_path`'s fields with `name`, and `platform`'s network and
//! system inline; `comments` become leading '# ' lines. Numbers in the shortest form that reads
//! back to the same double.
std::string platformYamlWithNetwork( const std::string& base_path, const std::string& name,
                                     const Platform& platform,
                                     const std::vector<std::string>& comments );

} // namespace shardsweep
