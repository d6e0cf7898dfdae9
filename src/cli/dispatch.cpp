// Program entry: MPI and Kokkos set-up, subcommand dispatch, --help/--version, error reporting.
#include "command_line.hpp"

#include <Kokkos_Core.hpp>
#include <cstdio>
#include <cstdlib> // defines __GLIBC__ where glibc is the C library
#if defined( __GLIBC__ )
#include <malloc.h>
#endif
#include <fmt/format.h>
#include <functional>
#include <iostream>
#include <map>
#include <ostream>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/parallel/mpi_environment.hpp>
#include <shardsweep/parallel/stop_signal.hpp>
#include <shardsweep/version.hpp>
#include <streambuf>

namespace shardsweep
{

namespace
{

//! Swallows output on ranks other than 0.
class NullBuffer : public std::streambuf
{
  protected:
    int overflow( int c ) override { return c; }
};

using CommandFn = std::function<int( const CommandContext&, const Arguments& )>;

struct Command
{
    std::string name;
    std::string usage;
    std::string summary;
    CommandFn run;
};

const std::vector<Command>& topCommands()
{
    static const std::vector<Command> commands = {
        { "run", "run SWEEP.yaml -o OUT.h5 [options]",
          "Evaluate every scenario of a sweep over all MPI ranks into one HDF5 file (resumable).",
          runSweep },
        { "plan", "plan WORKLOAD.yaml PLATFORM.yaml [options]",
          "Best table sharding (DLRM) or parallel configuration (transformer) for one workload\n"
          "      on one platform, next to every other planner.",
          plan },
        { "evaluate", "evaluate SCENARIO.yaml|PLAN.yaml [options]",
          "Per-GPU (DLRM) or per-stage (transformer) phase breakdown of one given plan.",
          evaluate },
        { "export-et", "export-et SCENARIO.yaml|PLAN.yaml -o DIR [options]",
          "The scenario's training step as Chakra execution traces that ASTRA-sim replays.",
          exportEt },
        { "inspect-et", "inspect-et PREFIX [options]",
          "Nodes, compute time, bytes per collective and critical path of Chakra traces.",
          inspectEt },
        { "predict", "predict gemm|op|collective|embedding|torchrec|transformer [options]",
          "Single predictions of one cost term (see 'shardsweep predict --help').", nullptr },
        { "calibrate", "calibrate gpu|network [options]",
          "Fit a GPU or a platform's network to your own measurements (see 'shardsweep calibrate\n"
          "      --help').",
          nullptr },
        { "shapes", "shapes SCENARIO.yaml|PLAN.yaml [-o shapes.csv]",
          "The GEMMs the transformer model prices for a configuration (the GPU microbenchmark's\n"
          "      --shapes input).",
          listGemmShapes },
        { "validate", "validate FILE...",
          "Check input files (GPUs, platforms, workloads, sweeps, "
          "plans) without running anything.",
          validate },
        { "bench", "bench kernel|sweep|planners|gemm|ops|transformer|calibrate [options]",
          "Benchmarks that print tables (see 'shardsweep bench --help').", nullptr },
    };
    return commands;
}

const std::vector<Command>& predictCommands()
{
    static const std::vector<Command> commands = {
        { "gemm", "predict gemm --gpu NAME --input shapes.csv",
          "GEMM latency: learned MLP correction of the tile/wave model (or the analytic model).",
          predictGemm },
        { "op", "predict op --gpu NAME --input ops.csv",
          "Softmax, layer norm and element-wise latency on a [B,H] tensor (learned or roofline).",
          predictOp },
        { "transformer", "predict transformer --input cases.csv",
          "Transformer training/inference step under Megatron-LM 3D parallelism.",
          predictTransformer },
        { "collective", "predict collective --network NET.yml --collective KIND --bytes S",
          "Collective time with ASTRA-sim 2.0's analytical semantics.", predictCollective },
        { "embedding", "predict embedding --gpu NAME --input tables.csv",
          "Embedding-lookup forward/backward time, distinct rows and cache hit rate.",
          predictEmbedding },
        { "torchrec", "predict torchrec --input shards.csv",
          "TorchRec planner's per-shard perf estimate, reproduced exactly.", predictTorchrec },
    };
    return commands;
}

const std::vector<Command>& calibrateCommands()
{
    static const std::vector<Command> commands = {
        { "gpu", "calibrate gpu --gpu NAME --gemm GEMM.csv [--ops OPS.csv] -o CALIB.yaml",
          "GEMM and operator models fitted to one GPU's measured latencies (scripts/microbench).",
          calibrateGpu },
        { "network", "calibrate network --platform BASE.yaml --nccl-tests LOG... -o PLATFORM.yaml",
          "A platform's network bandwidth, latency and all-reduce algorithm fitted to nccl-tests.",
          calibrateNetwork },
    };
    return commands;
}

const std::vector<Command>& benchCommands()
{
    static const std::vector<Command> commands = {
#ifdef SHARDSWEEP_ENABLE_BENCHMARKS
        { "kernel", "bench kernel [options]",
          "Cost-kernel throughput (shard evaluations/s/core) against a scalar loop.", benchKernel },
        { "sweep", "bench sweep [options]",
          "Sweep throughput, I/O share, parallel efficiency and peak memory.", benchSweep },
        { "planners", "bench planners [options]",
          "Planner quality on the NeuroShard/DreamShard/AutoShard protocols and planning time.",
          benchPlanners },
        { "gemm", "bench gemm [options]",
          "GEMM model error per GPU, leave-one-GPU-out, next to the roofline.", benchGemm },
        { "ops", "bench ops [options]",
          "Learned vs analytic operator-model error per GPU and op family, leave-one-GPU-out.",
          benchOps },
        { "transformer", "bench transformer [options]",
          "Transformer step model against measured iterations (vTrain, NeuSight): MAPE per set.",
          benchTransformer },
        { "calibrate", "bench calibrate [--table gemm|ops|nccl]",
          "calibrate gpu|network on data they were not given: MAPE vs calibration shapes.",
          benchCalibrate },
#endif
    };
    return commands;
}

std::string commandTable( const std::vector<Command>& commands )
{
    std::string text;
    for ( const auto& c : commands )
        text += fmt::format( "  {}\n      {}\n", c.usage, c.summary );
    return text;
}

std::string programHelp()
{
    return "shardsweep: predict, plan and sweep distributed training steps over GPU platforms:\n"
           "recommendation models (DLRM: how to shard the embedding tables) and transformers\n"
           "(GPT/BERT/OPT: tensor, pipeline and data parallelism, micro-batch, recompute, ZeRO),\n"
           "with one batched Kokkos cost model (embedding lookups, GEMMs, operators and\n"
           "collectives on the step's critical path).\n\n"
           "Usage: shardsweep <subcommand> [options]\n"
           "       mpirun -np N shardsweep run SWEEP.yaml -o OUT.h5\n\n"
           "Subcommands:\n" +
           commandTable( topCommands() ) +
           "\nEvery subcommand takes --help. Global options:\n"
           "  --help, -h        this text\n"
           "  --version         version, git hash, Kokkos backend and MPI library\n"
           "  --kokkos-threads=N, --kokkos-help, ...  Kokkos runtime options (consumed before the\n"
           "                    subcommand; OMP_NUM_THREADS works too)\n\n"
           "Exit status: 0 success, 1 failure, 2 bad input or usage (nothing written),\n"
           "3 sweep stopped by SIGTERM/SIGINT/SIGUSR1 and resumable (rerun the same command).\n";
}

std::string groupHelp( const std::string& group, const std::vector<Command>& commands )
{
    if ( commands.empty() )
        return "shardsweep " + group + ": this build has no " + group +
               " subcommands (configure with -DSHARDSWEEP_ENABLE_BENCHMARKS=ON)\n";
    return "Usage: shardsweep " + group + " <kind> [options]\n\nKinds:\n" +
           commandTable( commands ) + "\n'shardsweep " + group +
           " <kind> --help' lists the options of each.\n";
}

std::string versionText()
{
    return fmt::format( "shardsweep {} (git {})\nKokkos {}.{}.{}, backends {}, default {} "
                        "(execution space {})\n{}\n",
                        versionString(), gitHash(), KOKKOS_VERSION / 10000,
                        KOKKOS_VERSION / 100 % 100, KOKKOS_VERSION % 100, compiledBackendList(),
                        nameOf( defaultBackend() ), Kokkos::DefaultExecutionSpace::name(),
                        MpiEnvironment::libraryVersion() );
}

int dispatch( const CommandContext& ctx, const Arguments& words )
{
    if ( words.empty() || words[0] == "--help" || words[0] == "-h" || words[0] == "help" )
    {
        ctx.print() << programHelp();
        return words.empty() ? kExitBadInput : 0;
    }
    if ( words[0] == "--version" )
    {
        ctx.print() << versionText();
        return 0;
    }
    for ( const auto& c : topCommands() )
    {
        if ( c.name != words[0] )
            continue;
        Arguments rest( words.begin() + 1, words.end() );
        if ( c.run )
            return c.run( ctx, rest );
        const auto& group = c.name == "predict"     ? predictCommands()
                            : c.name == "calibrate" ? calibrateCommands()
                                                    : benchCommands();
        if ( rest.empty() || rest[0] == "--help" || rest[0] == "-h" )
        {
            ctx.print() << groupHelp( c.name, group );
            return rest.empty() ? kExitBadInput : 0;
        }
        for ( const auto& k : group )
            if ( k.name == rest[0] )
                return k.run( ctx, Arguments( rest.begin() + 1, rest.end() ) );
        std::string known;
        for ( const auto& k : group )
            known += ( known.empty() ? "" : ", " ) + k.name;
        throw UsageError( fmt::format( "unknown '{}' kind '{}' (known: {})", c.name, rest[0],
                                       known.empty() ? "none in this build" : known ) );
    }
    throw UsageError( fmt::format( "unknown subcommand '{}'; see 'shardsweep --help'", words[0] ) );
}

} // namespace

int runMain( int argc, char* argv[] )
{
    // A sweep's stop signals are recorded from the first instruction on: Slurm may send SIGTERM
    // while MPI starts or the sweep loads, and the engine must see it (exit 3, resumable) instead
    // of the process dying. Other subcommands keep the default action (SIGTERM ends them).
    for ( int i = 1; i < argc; ++i )
    {
        const std::string arg = argv[i];
        if ( arg.rfind( "--kokkos-", 0 ) == 0 )
            continue;
        if ( arg == "run" )
            installStopSignalHandlers();
        break;
    }
#if defined( __GLIBC__ )
    // A sweep allocates and frees its batches' row vectors and packed Views (MiB to tens of MiB)
    // once per batch. glibc hands freed blocks above its dynamic mmap threshold back to the OS
    // and trims the heap top, so every batch page-faulted and zero-filled them again: a fifth of
    // a `--detail all` run in perf. Keep blocks up to 32 MiB (glibc's maximum) in the heap and
    // trim only above 1 GiB (docs/PERFORMANCE.md, "Results file with --detail all").
    mallopt( M_MMAP_THRESHOLD, 32 << 20 );
    mallopt( M_TRIM_THRESHOLD, 1 << 30 );
#endif
    MpiEnvironment mpi( argc, argv );
    // Under Slurm stdout is a file: line-buffer it so progress lines appear as they are printed.
    std::setvbuf( stdout, nullptr, _IOLBF, 0 );
    NullBuffer null_buffer;
    std::ostream null_stream( &null_buffer );

    CommandContext ctx;
    ctx.rank = mpi.rank();
    ctx.size = mpi.size();
    ctx.out = ctx.rank == 0 ? &std::cout : &null_stream;

    // Kokkos sees only its --kokkos-* arguments: Kokkos 3.4 also acts on unprefixed ones such as
    // --help and --threads, which belong to shardsweep's subcommands.
    std::vector<char*> kokkos_argv = { argv[0] };
    Arguments words;
    for ( int i = 1; i < argc; ++i )
    {
        std::string arg = argv[i];
        if ( arg.rfind( "--kokkos-", 0 ) == 0 )
            kokkos_argv.push_back( argv[i] );
        else
            words.push_back( arg );
    }
    int kokkos_argc = static_cast<int>( kokkos_argv.size() );
    kokkos_argv.push_back( nullptr );
    char** kokkos_args = kokkos_argv.data();
    // Without OMP_PROC_BIND, Kokkos' OpenMP backend prints a warning on every rank; a user who
    // wants binding sets it (and OMP_PLACES) in the job script.
    setenv( "OMP_PROC_BIND", "false", 0 );
    Kokkos::ScopeGuard kokkos( kokkos_argc, kokkos_args );
    int status = 0;
    try
    {
        status = dispatch( ctx, words );
    }
    catch ( const UsageError& e )
    {
        // Usage and input errors are deterministic: every rank sees the same one; rank 0 reports.
        if ( ctx.rank == 0 )
            std::cerr << "shardsweep: usage error: " << e.what() << '\n';
        status = kExitBadInput;
    }
    catch ( const InputError& e )
    {
        if ( ctx.rank == 0 )
            std::cerr << "shardsweep: input error: " << e.what() << '\n';
        status = kExitBadInput;
    }
    catch ( const CollectiveError& e )
    {
        // Every rank threw it at the same agreement point, so none is left inside a collective
        // call: the ranks end normally. The failing ranks say why, rank 0 also when it did not.
        if ( e.origin() || ctx.rank == 0 )
            std::cerr << errorPrefix( ctx.rank, ctx.size ) << e.what() << std::endl;
        status = kExitFailure;
    }
    catch ( const std::exception& e )
    {
        // A failure that may be local to one rank: report it with the rank and stop every rank.
        std::cerr << errorPrefix( ctx.rank, ctx.size ) << e.what() << std::endl;
        if ( ctx.size > 1 )
            MpiEnvironment::abort( kExitFailure );
        status = kExitFailure;
    }
    std::cout.flush();
    return status;
}

} // namespace shardsweep
