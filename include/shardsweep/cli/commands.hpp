#pragma once
//! \file commands.hpp
//! \brief The subcommands of `shardsweep <subcommand> [options]`, one function each.
//!
//! `args` holds the arguments after the subcommand words (e.g. after "predict gemm"). A command
//! parses them with Boost.Program_options, prints only on rank 0 (through ctx.out), and returns
//! the exit status; bad input throws InputError/UsageError (exit 2, see core/errors.hpp).

#include <iosfwd>
#include <mpi.h>
#include <string>
#include <vector>

namespace shardsweep
{

struct CommandContext
{
    int rank = 0;
    int size = 1;
    MPI_Comm comm = MPI_COMM_WORLD;
    std::ostream* out = nullptr; //!< standard output on rank 0, a null stream elsewhere
    std::string program = "shardsweep";

    std::ostream& print() const { return *out; }
    bool isRoot() const { return rank == 0; }
};

using Arguments = std::vector<std::string>;

int runSweep( const CommandContext& ctx, const Arguments& args );       //!< shardsweep run
int plan( const CommandContext& ctx, const Arguments& args );           //!< shardsweep plan
int evaluate( const CommandContext& ctx, const Arguments& args );       //!< shardsweep evaluate
int validate( const CommandContext& ctx, const Arguments& args );       //!< shardsweep validate
int exportEt( const CommandContext& ctx, const Arguments& args );       //!< shardsweep export-et
int inspectEt( const CommandContext& ctx, const Arguments& args );      //!< shardsweep inspect-et
int listGemmShapes( const CommandContext& ctx, const Arguments& args ); //!< shardsweep shapes

int predictGemm( const CommandContext& ctx, const Arguments& args );        //!< predict gemm
int predictCollective( const CommandContext& ctx, const Arguments& args );  //!< predict collective
int predictEmbedding( const CommandContext& ctx, const Arguments& args );   //!< predict embedding
int predictTorchrec( const CommandContext& ctx, const Arguments& args );    //!< predict torchrec
int predictOp( const CommandContext& ctx, const Arguments& args );          //!< predict op
int predictTransformer( const CommandContext& ctx, const Arguments& args ); //!< predict transformer

int calibrateGpu( const CommandContext& ctx, const Arguments& args );     //!< calibrate gpu
int calibrateNetwork( const CommandContext& ctx, const Arguments& args ); //!< calibrate network

//! What `plan` asks of a transformer workload (the options it shares with the DLRM path).
struct TransformerPlanRequest
{
    std::string planner = "shardsweep";
    std::string output;           //!< plan file to write ("" = none)
    std::string format = "table"; //!< table | csv | json
    long long global_batch = 0;   //!< 0: the workload's
    int gpus = 0;                 //!< 0: the platform's own
    int top = 1;                  //!< candidates of the chosen planner to list
    bool overlap = false;         //!< plan with DP/TP communication overlap (a run property)
    bool no_interleave = false;   //!< search one model chunk per stage only
    //! The files planned from, recorded in the plan file's `source:` (io/plan_yaml PlanSource).
    std::string workload_path, platform_path;
};
struct Workload;
struct NamedPlatform;
//! `plan` for a transformer workload (src/cli/plan_transformer.cpp); exit 2 when nothing fits.
int planTransformerWorkload( const CommandContext& ctx, const Workload& workload,
                             const NamedPlatform& platform, const TransformerPlanRequest& request );

int benchKernel( const CommandContext& ctx, const Arguments& args );   //!< bench kernel
int benchSweep( const CommandContext& ctx, const Arguments& args );    //!< bench sweep
int benchPlanners( const CommandContext& ctx, const Arguments& args ); //!< bench planners
//! `bench planners --protocol transformer` (src/cli/bench_transformer_planners.cpp).
int benchTransformerPlanners( const CommandContext& ctx, const std::string& format,
                              const std::vector<int>& gpu_counts );
int benchGemm( const CommandContext& ctx, const Arguments& args );        //!< bench gemm
int benchOps( const CommandContext& ctx, const Arguments& args );         //!< bench ops
int benchTransformer( const CommandContext& ctx, const Arguments& args ); //!< bench transformer
int benchCalibrate( const CommandContext& ctx, const Arguments& args );   //!< bench calibrate

//! Program entry: MPI + Kokkos set-up, dispatch, error reporting and exit status.
int runMain( int argc, char* argv[] );

} // namespace shardsweep
