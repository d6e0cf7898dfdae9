// Placeholder until this subcommand's component lands; replaced by its implementation.
#include <shardsweep/cli/commands.hpp>

#include <stdexcept>

namespace shardsweep
{
int benchGemm( const CommandContext&, const Arguments& )
{
    throw std::runtime_error( "'bench_gemm' is not available in this build yet" );
}
} // namespace shardsweep
