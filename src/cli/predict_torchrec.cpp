// Placeholder until this subcommand's component lands; replaced by its implementation.
#include <shardsweep/cli/commands.hpp>

#include <stdexcept>

namespace shardsweep
{
int predictTorchrec( const CommandContext&, const Arguments& )
{
    throw std::runtime_error( "'predict_torchrec' is not available in this build yet" );
}
} // namespace shardsweep
