#pragma once
//! \file command_line.hpp
//! \brief The one way a subcommand reads its options (src/cli only): Boost.Program_options errors
//! become a UsageError that names the subcommand (exit 2), `--help` prints the help and stops.
#include <boost/program_options.hpp>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/kernel/backend.hpp>
#include <string>

namespace shardsweep
{

//! What `--help` prints: `usage`, then the options' table, then `epilog`.
struct CommandHelp
{
    std::string usage;
    std::string epilog;
};

//! Parses `args` into `values` against `options` (shown in --help) and `hidden` ones, positional
//! arguments going to the hidden options named in `positional`. Returns false after printing
//! the help for --help (the command then returns 0). Throws UsageError("COMMAND: ...") on an
//! unknown option, a bad value or a missing positional.
bool parseCommandLine(
    const CommandContext& ctx, const std::string& command, const Arguments& args,
    const boost::program_options::options_description& options,
    boost::program_options::variables_map& values, const CommandHelp& help = {},
    const boost::program_options::options_description& hidden = {},
    const boost::program_options::positional_options_description& positional = {} );

//! The check of a scenario read from a file (evaluate, export-et) before the model prices it:
//! a transformer's by scenarioInputError ("COMMAND: reason"), a DLRM's global batch dividing
//! over its GPUs (the per-GPU batch of the embedding model). Throws UsageError.
void checkScenarioFileInput( const std::string& command, const ScenarioInput& input );

//! "serial, openmp and cuda": the backends this build compiled.
std::string compiledBackendList();

//! The help text of a `--backend` option: every backend, the ones this build compiled, the
//! default.
std::string backendOptionHelp();

//! Reads a `--backend` value: the name of a backend this build compiled. Throws
//! UsageError("COMMAND: --backend: ...") naming the compiled ones otherwise.
Backend parseBackend( const std::string& command, const std::string& text );

} // namespace shardsweep
