// Placeholder until this subcommand's component lands; replaced by its implementation.
#include <shardsweep/cli/commands.hpp>

#include <stdexcept>

namespace shardsweep
{
int predictEmbedding( const CommandContext&, const Arguments& )
{
    throw std::runtime_error( "'predict_embedding' is not available in this build yet" );
}
} // namespace shardsweep
