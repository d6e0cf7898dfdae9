// Placeholder until this subcommand's component lands; replaced by its implementation.
#include <shardsweep/cli/commands.hpp>

#include <stdexcept>

namespace shardsweep
{
int benchSweep( const CommandContext&, const Arguments& )
{
    throw std::runtime_error( "'bench_sweep' is not available in this build yet" );
}
} // namespace shardsweep
