// `shardsweep bench kernel`: throughput of the batched cost kernel against a plain scalar loop.
#include "bench_probes.hpp"
#include "command_line.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <fmt/format.h>
#include <iostream>
#include <memory>
#include <shardsweep/cli/commands.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/operator_models.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/kernel/batch_launch.hpp>
#include <shardsweep/model/rng.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <sstream>

namespace shardsweep
{
namespace
{
namespace po = boost::program_options;

struct BenchCase
{
    const char* name;
    int tables;
    int gpus_per_node;
    int nodes;
};

//! An A100-like platform of `nodes` NVSwitch nodes joined by a switch (the bench's machine).
Platform benchPlatform( int gpus_per_node, int nodes )
{
    Platform p;
    p.gpu.sm_count = 108;
    p.gpu.boost_clock_MHz = 1410;
    p.gpu.fp32_TFLOPs = 19.5;
    p.gpu.tf32_TFLOPs = 156;
    p.gpu.fp16_TFLOPs = 312;
    p.gpu.bf16_TFLOPs = 312;
    p.gpu.memory_GiB = 80;
    p.gpu.memory_bandwidth_GBps = 2039;
    p.gpu.l2_cache_MiB = 40;
    p.gpu.pcie_bandwidth_GBps = 32;
    p.gpus_per_node = gpus_per_node;
    p.num_nodes = nodes;
    p.hbm_reserve_GiB = 2;
    p.host_to_gpu_GBps = 25;
    p.network.num_dims = nodes > 1 ? 2 : 1;
    p.network.dims[0] = { Topology::Switch, gpus_per_node, 300.0, 700.0 };
    p.network.dims[1] = { Topology::Switch, nodes, 25.0, 5000.0 };
    return p;
}

//! A DLRM-like synthetic scenario: Zipf tables from a pool, 1 in 10 row-wise, the rest
//! table-wise on random GPUs, on benchPlatform.
void makeScenario( const BenchCase& c, std::uint64_t id, Workload& w, Platform& p, Plan& plan )
{
    CounterRng rng( 2024, id, 0 );
    p = benchPlatform( c.gpus_per_node, c.nodes );
    const int gpus = p.numGpus();
    w = Workload{};
    w.global_batch = 512LL * gpus;
    w.dense.bottom_mlp_layers = 3;
    w.dense.bottom_mlp[0] = 512;
    w.dense.bottom_mlp[1] = 256;
    w.dense.bottom_mlp[2] = 128;
    w.dense.top_mlp_layers = 3;
    w.dense.top_mlp[0] = 1024;
    w.dense.top_mlp[1] = 512;
    w.dense.top_mlp[2] = 1;
    plan = Plan{};
    for ( int t = 0; t < c.tables; ++t )
    {
        // Tables come from a pool of 856 (as the sweeps' task generators draw them), so table
        // statistics recur across scenarios the way they do in a sweep.
        CounterRng table_rng( 7, static_cast<std::uint64_t>( rng.uniformInt( 0, 855 ) ), 1 );
        TableSpec spec;
        spec.rows = table_rng.uniformInt( 1000, 10'000'000 );
        spec.dim = 128;
        spec.pooling_factor = static_cast<double>( table_rng.uniformInt( 1, 80 ) );
        spec.distribution = AccessDistribution::zipf;
        spec.zipf_alpha = table_rng.uniform( 0.6, 1.3 );
        spec.optimizer = Optimizer::rowwise_adagrad;
        w.tables.push_back( spec );
        w.table_names.push_back( fmt::format( "t{}", t ) );
        TablePlan tp;
        if ( t % 10 == 9 )
        {
            tp.sharding = ShardingType::row_wise;
            const std::int64_t block = ( spec.rows + gpus - 1 ) / gpus;
            for ( int g = 0; g < gpus; ++g )
            {
                const std::int64_t begin = std::min<std::int64_t>( g * block, spec.rows );
                const std::int64_t end = std::min<std::int64_t>( begin + block, spec.rows );
                plan.shards.push_back( { t, g, begin, end - begin, 0, spec.dim } );
            }
        }
        else
        {
            plan.shards.push_back( { t, static_cast<int>( rng.uniformInt( 0, gpus - 1 ) ), 0,
                                     spec.rows, 0, spec.dim } );
        }
        plan.tables.push_back( tp );
    }
}

//! Every valid parallel configuration of GPT-3 175B (bf16, s = 2048) on 1024 GPUs at global
//! batch 1536: each (tp, pp) layout × micro-batch 1..8 × recompute none/selective/full × sequence
//! parallel off/on, as a planner's search would price them.
std::vector<ParallelConfig> gpt3Configurations( const TransformerSpec& model, int gpus,
                                                std::int64_t global_batch )
{
    std::vector<ParallelConfig> configs;
    for ( const auto& [tp, pp] : gpuLayouts( gpus ) )
        for ( const int micro_batch : { 1, 2, 4, 8 } )
            for ( const Recompute recompute :
                  { Recompute::none, Recompute::selective, Recompute::full } )
                for ( const bool sp : { false, true } )
                {
                    ParallelConfig c;
                    c.tp = tp;
                    c.pp = pp;
                    c.dp = gpus / ( tp * pp );
                    c.micro_batch = micro_batch;
                    c.global_batch = global_batch;
                    c.recompute = recompute;
                    c.sequence_parallel = sp && tp > 1;
                    if ( ( sp && tp == 1 ) || !parallelConfigError( model, c, gpus ).empty() )
                        continue;
                    configs.push_back( c );
                }
    return configs;
}

//! Launches per second of the kernel in one shape, and its stages.
struct ShapeRate
{
    KernelShape shape;
    KernelTiming timing;
};

struct BatchRates
{
    std::vector<ShapeRate> kernel;        //!< evaluateBatch in the bench's backend, per shape
    double reference_batches_per_s = 0.0; //!< the same entry functions in a plain loop, one core
};

//! Times whole batches (plan-independent cases included) until each side ran `min_seconds`:
//! the kernel in each of `shapes` on the same packed batch, and the reference loop once.
BatchRates timeBatch( Backend backend, const HostScenarioBatch& host,
                      const std::vector<KernelShape>& shapes, double min_seconds )
{
    BatchRates rates;
    for ( const KernelShape& shape : shapes )
        rates.kernel.push_back(
            { shape, timeKernelLaunches( backend, host, shape, min_seconds ) } );
    long long loops = 0;
    const auto start = std::chrono::steady_clock::now();
    double loop_s = 0.0;
    do
    {
        for ( int k = 0; k < static_cast<int>( host.dense_case.extent( 0 ) ); ++k )
            evaluateDenseCase( host, k );
        for ( int k = 0; k < static_cast<int>( host.table_case.extent( 0 ) ); ++k )
            evaluateTableCase( host, k );
        for ( int k = 0; k < static_cast<int>( host.transformer_case.extent( 0 ) ); ++k )
            evaluateTransformerCase( host, k );
        for ( int k = 0; k < static_cast<int>( host.learned_case_ms.extent( 0 ) ); ++k )
            evaluateLearnedShardCase( host, k );
        for ( int i = 0; i < host.numScenarios(); ++i )
            evaluateBatchEntry( host, i );
        ++loops;
        loop_s = bench::secondsSince( start );
    } while ( loop_s < min_seconds );
    rates.reference_batches_per_s = loops / loop_s;
    return rates;
}

//! A kernel shape as --team-size spells it.
std::string shapeName( const KernelShape& shape )
{
    return shape.step_team_size <= 0
               ? std::string( "0" )
               : fmt::format( "{}x{}", shape.step_team_size, shape.step_scenarios_per_team );
}

//! The threads of a host backend's execution space.
int hostThreads( Backend backend )
{
    return withExecutionSpace( backend, []( const auto& exec ) { return exec.concurrency(); } );
}

//! One launch's stages that took time, as "stage ms; ...".
std::string stageBreakdown( const KernelStageSeconds& s )
{
    std::string text;
    for ( int k = 0; k < int( KernelStage::count ); ++k )
        if ( s.seconds[k] >= 5e-6 )
            text += fmt::format( "{}{} {:.3f}", text.empty() ? "" : "; ",
                                 nameOf( KernelStage( k ) ), 1e3 * s.seconds[k] );
    return text;
}

//! The options of `bench kernel`.
struct BenchOptions
{
    std::string format = "table";
    double min_seconds = 1.0;
    int batch_size = 4096;
    std::string gemm_models = "analytic", cost_models = "native";
    std::string backend = nameOf( defaultBackend() );
    std::string cost_model_file = defaultModelDir() + "/dlrm.mlp";
    std::string team_sizes = "auto";
};

//! Reads the options into `o`; false after --help (the command then returns 0).
bool parseOptions( const CommandContext& ctx, const Arguments& args, BenchOptions& o )
{
    po::options_description options( "Options of 'shardsweep bench kernel'" );
    options.add_options()( "help,h", "show this help" )(
        "cost-model", po::value( &o.cost_models )->default_value( o.cost_models ),
        "shard cost model of the DLRM cases: native | learned | both (learned: the MLP of "
        "--cost-model-file prices every shard, model/learned_shard_cost.hpp; both: one row "
        "each, same run)" )( "cost-model-file",
                             po::value( &o.cost_model_file )->default_value( o.cost_model_file ),
                             "the learned DLRM model (family dlrm) of --cost-model learned" )(
        "gemm-model", po::value( &o.gemm_models )->default_value( o.gemm_models ),
        "GEMM model of the dense part: analytic | learned | both (learned: inputs/models/gemm.mlp "
        "on every dense case, model/learned_operator.hpp; both: one row each, same run)" )(
        "format,f", po::value( &o.format )->default_value( o.format ),
        ( "output: " + enumChoices<OutputFormat>() ).c_str() )(
        "min-seconds", po::value( &o.min_seconds )->default_value( o.min_seconds ),
        "repeat each measurement until it has run at least this long" )(
        "batch", po::value( &o.batch_size )->default_value( o.batch_size ),
        "scenarios per kernel launch" )(
        "team-size", po::value( &o.team_sizes )->default_value( o.team_sizes ),
        "how the kernel maps DLRM scenarios to threads, a comma list for one row each (same "
        "run): 0 = one thread walks each scenario (the host backends' default); TxG = teams of "
        "T threads, each pricing the shards of G scenarios side by side and then adding up one "
        "scenario per thread (T alone: TxT); auto = the kernel's default (0)" )(
        "backend", po::value( &o.backend )->default_value( o.backend ),
        backendOptionHelp().c_str() );
    po::variables_map vm;
    const CommandHelp help{
        "Usage: shardsweep bench kernel [options]\n\n"
        "Shard evaluations and scenarios per second per core of the batched cost\n"
        "kernel (--backend, all its threads; on a GPU per GPU: threads = 1, the inputs\n"
        "copied to it once, each launch's time to its end) for a 50-table/4-GPU and\n"
        "a 500-table/128-GPU case, next to a plain scalar loop over the same packed\n"
        "data on one core (the reference). Tables are drawn from a pool of 856, so the\n"
        "plan-independent table statistics are shared as in a sweep (column\n"
        "distinct_cases); both measurements include computing them.\n"
        "The last row prices every valid parallel configuration of GPT-3 175B on 1024\n"
        "A100-like GPUs (tp, pp, micro-batch, recompute, sequence parallel), cycled to\n"
        "fill a launch: its shard columns count configurations, its distinct_cases the\n"
        "transformer operator cases priced once per launch.\n"
        "One row per --team-size (the same packed batch and reference loop);\n"
        "stage_ms_one_launch: one more launch with each of its kernels fenced and timed\n"
        "(distinct cases, DLRM scenarios, other scenarios), in ms.\n\n",
        "\n" };
    return parseCommandLine( ctx, "bench kernel", args, options, vm, help );
}

//! The runs the options ask for, as (learned GEMM, learned shard cost); throws a UsageError on
//! an unknown --gemm-model or --cost-model.
std::vector<std::pair<bool, bool>> modelRuns( const BenchOptions& o )
{
    if ( o.gemm_models != "analytic" && o.gemm_models != "learned" && o.gemm_models != "both" )
        throw UsageError( "bench kernel: --gemm-model must be analytic, learned or both, found '" +
                          o.gemm_models + "'" );
    if ( o.cost_models != "native" && o.cost_models != "learned" && o.cost_models != "both" )
        throw UsageError( "bench kernel: --cost-model must be native, learned or both, found '" +
                          o.cost_models + "'" );
    std::vector<std::pair<bool, bool>> runs;
    for ( const bool shard : { false, true } )
        for ( const bool gemm : { false, true } )
            if ( ( gemm ? o.gemm_models != "analytic" : o.gemm_models != "learned" ) &&
                 ( shard ? o.cost_models != "native" : o.cost_models != "learned" ) )
                runs.emplace_back( gemm, shard );
    return runs;
}

//! The kernel shapes of --team-size ("auto": the backend's default); throws a UsageError on a
//! size that is not a whole number ≥ 0.
std::vector<KernelShape> kernelShapes( const std::string& list, Backend backend )
{
    std::vector<KernelShape> shapes;
    std::stringstream items( list );
    std::string item;
    while ( std::getline( items, item, ',' ) )
    {
        if ( item == "auto" )
        {
            shapes.push_back( KernelShape{} );
            continue;
        }
        // T or TxG: teams of T threads, G scenarios each (T alone: G = T).
        const std::size_t x = item.find( 'x' );
        auto whole = []( const std::string& text )
        {
            const bool digits = !text.empty() && text.size() <= 4 &&
                                std::all_of( text.begin(), text.end(),
                                             []( char ch ) { return ch >= '0' && ch <= '9'; } );
            return digits ? std::stoi( text ) : -1;
        };
        const int size = whole( item.substr( 0, x ) );
        const int per_team =
            x == std::string::npos ? std::max( size, 1 ) : whole( item.substr( x + 1 ) );
        if ( size < 0 || per_team < 1 )
            throw UsageError( "bench kernel: --team-size takes auto, T or TxG (whole numbers, T >= "
                              "0, G >= 1), found '" +
                              item + "'" );
        // A team's threads run at once: at most the host backend's threads, or a GPU block.
        const int limit = runsOnHost( backend ) ? hostThreads( backend ) : 1024;
        if ( size > limit )
            throw UsageError( fmt::format( "bench kernel: --team-size {} exceeds the {} threads a "
                                           "team of backend {} can have",
                                           size, limit, nameOf( backend ) ) );
        shapes.push_back( { size, per_team } );
    }
    if ( shapes.empty() )
        throw UsageError( "bench kernel: --team-size is empty" );
    return shapes;
}

//! The learned models the runs need (null where none asks for one).
struct LearnedModels
{
    std::unique_ptr<LearnedCostModel> shard;
    std::unique_ptr<LearnedOperatorModel> gemm;
};

LearnedModels loadLearnedModels( const BenchOptions& o )
{
    LearnedModels models;
    if ( o.cost_models != "native" )
        models.shard =
            std::make_unique<LearnedCostModel>( loadLearnedCostModel( o.cost_model_file ) );
    if ( o.gemm_models != "analytic" )
        models.gemm = std::make_unique<LearnedOperatorModel>(
            loadLearnedGemmModel( defaultGemmModelPath() ) );
    return models;
}

//! A packed batch of DLRM scenarios and its number of shards.
struct PackedCase
{
    HostScenarioBatch host;
    long long shards = 0;
};

//! Packs `n` scenarios of `c`, their shards priced by `shard_model` if `learned_shards`.
PackedCase packDlrmCase( const BenchCase& c, int n, bool learned_shards,
                         const LearnedCostModel* shard_model )
{
    std::vector<Workload> w( n );
    std::vector<Platform> p( n );
    std::vector<Plan> plans( n );
    std::vector<ScenarioInput> inputs( n );
    long long shards = 0;
    for ( int i = 0; i < n; ++i )
    {
        makeScenario( c, i, w[i], p[i], plans[i] );
        // Platform code 0: the bench platforms stand for the model's first one.
        inputs[i] = learned_shards ? ScenarioInput( &w[i], &p[i], &plans[i], 0, CostModel::learned,
                                                    { shard_model, 0 } )
                                   : ScenarioInput( &w[i], &p[i], &plans[i] );
        shards += static_cast<long long>( plans[i].shards.size() );
    }
    return { packScenarios( inputs ), shards };
}

//! Prices every dense case of `host` with the learned GEMM model `gemm`.
void useLearnedGemm( HostScenarioBatch& host, const LearnedOperatorModel& gemm )
{
    // Host copy of the parameters: toMemorySpace mirrors them like every other input.
    Kokkos::View<double*, Kokkos::HostSpace> params( "gemm_mlp_params",
                                                     gemm.model.params.extent( 0 ) );
    Kokkos::deep_copy( params, gemm.model.params );
    host.gemm_mlp = gemm.model.layout;
    host.gemm_mlp_params = params;
    for ( std::size_t k = 0; k < host.dense_case.extent( 0 ); ++k )
        host.dense_case( k ).learned_gemm = true;
}

//! GPT-3 175B (bf16, s = 2048) at global batch 1536.
Workload gpt3Workload()
{
    TransformerSpec gpt3;
    gpt3.arch = TransformerArch::gpt;
    gpt3.hidden = 12288;
    gpt3.heads = 96;
    gpt3.layers = 96;
    gpt3.seq_len = 2048;
    gpt3.vocab = 51200;
    gpt3.dtype = DataType::bf16;
    Workload w;
    w.name = "gpt3-175b";
    w.kind = WorkloadKind::transformer;
    w.transformer = gpt3;
    w.global_batch = 1536;
    return w;
}

//! The bench's table: per case, the kernel's and the scalar reference's rates.
class KernelBench
{
  public:
    //! `cores`: what the per-core rates divide by, the backend's host threads or 1 for a GPU.
    KernelBench( Backend backend, std::vector<KernelShape> shapes, int batch_size,
                 double min_seconds )
        : _backend( backend ), _shapes( std::move( shapes ) ), _batch_size( batch_size ),
          _min_seconds( min_seconds ), _cores( runsOnHost( backend ) ? hostThreads( backend ) : 1 )
    {
    }

    //! One row of DLRM case `c`, with the learned GEMM and/or shard cost model or not.
    void addDlrmCase( const BenchCase& c, bool learned, bool learned_shards,
                      const LearnedModels& models )
    {
        const int n = c.tables > 100 ? std::max( 8, _batch_size / 16 ) : _batch_size;
        PackedCase packed = packDlrmCase( c, n, learned_shards, models.shard.get() );
        if ( learned )
            useLearnedGemm( packed.host, *models.gemm );
        const BatchRates rates = timeBatch( _backend, packed.host, _shapes, _min_seconds );
        addRows( c.name, learned, learned_shards, n,
                 static_cast<long long>( packed.host.table_case.extent( 0 ) ),
                 static_cast<double>( packed.shards ), rates );
    }

    //! Transformer configurations: one scenario per configuration, no shards; the rates are
    //! configurations per second (the shard columns count configurations here).
    void addGpt3Case()
    {
        const Workload w = gpt3Workload();
        const Platform p = benchPlatform( 8, 128 );
        const std::vector<ParallelConfig> configs =
            gpt3Configurations( w.transformer, p.numGpus(), w.global_batch );
        const int n = _batch_size;
        std::vector<Plan> plans( n );
        std::vector<ScenarioInput> inputs( n );
        for ( int i = 0; i < n; ++i )
        {
            plans[i].parallel = configs[i % configs.size()];
            inputs[i] = { &w, &p, &plans[i], 0, CostModel::native };
        }
        HostScenarioBatch host = packScenarios( inputs );
        const BatchRates rates = timeBatch( _backend, host, _shapes, _min_seconds );
        addRows( fmt::format( "GPT-3 175B/1024-GPU ({} configurations)", configs.size() ), false,
                 false, n, static_cast<long long>( host.transformer_case.extent( 0 ) ), n, rates );
    }

    void print( std::ostream& out, OutputFormat format ) const { _table.print( out, format ); }

  private:
    //! One row; `evals_per_batch` is what the shard columns count (shards or configurations).
    //! One row per kernel shape; `evals_per_batch` is what the shard columns count (shards or
    //! configurations).
    void addRows( const std::string& name, bool learned, bool learned_shards, int n,
                  long long distinct_cases, double evals_per_batch, const BatchRates& rates )
    {
        const double loop_rate = evals_per_batch * rates.reference_batches_per_s;
        for ( const ShapeRate& kernel : rates.kernel )
        {
            const double launches = kernel.timing.launches_per_s;
            const double kernel_rate = evals_per_batch * launches / _cores;
            _table.addRow( { name, std::string( learned ? "learned" : "analytic" ),
                             std::string( learned_shards ? "learned" : "native" ),
                             executionSpaceName( _backend ), static_cast<long long>( _cores ),
                             shapeName( kernel.shape ), static_cast<long long>( n ), distinct_cases,
                             kernel_rate, n * launches / _cores, loop_rate, kernel_rate / loop_rate,
                             stageBreakdown( kernel.timing.stage_seconds ) } );
        }
    }

    Backend _backend;
    std::vector<KernelShape> _shapes;
    int _batch_size;
    double _min_seconds;
    int _cores;
    ResultTable _table{ { "case", "gemm_model", "cost_model", "execution_space", "threads",
                          "team_size", "scenarios_per_launch", "distinct_cases",
                          "shard_evals_per_s_per_core", "scenarios_per_s_per_core",
                          "reference_shard_evals_per_s_per_core", "speedup_vs_reference",
                          "stage_ms_one_launch" } };
};
} // namespace

int benchKernel( const CommandContext& ctx, const Arguments& args )
{
    BenchOptions o;
    if ( !parseOptions( ctx, args, o ) )
        return 0;
    const OutputFormat out_format = parseOutputFormat( o.format );
    const std::vector<std::pair<bool, bool>> runs = modelRuns( o );
    const LearnedModels models = loadLearnedModels( o );
    if ( o.batch_size < 1 || o.min_seconds <= 0 )
        throw UsageError( "--batch and --min-seconds must be positive" );

    const Backend backend = parseBackend( "bench kernel", o.backend );
    KernelBench bench( backend, kernelShapes( o.team_sizes, backend ), o.batch_size,
                       o.min_seconds );
    const BenchCase cases[] = { { "50-table/4-GPU", 50, 4, 1 },
                                { "500-table/128-GPU", 500, 8, 16 } };
    for ( const BenchCase& c : cases )
        for ( const auto& [learned, learned_shards] : runs )
            bench.addDlrmCase( c, learned, learned_shards, models );
    bench.addGpt3Case();
    bench.print( ctx.print(), out_format );
    return 0;
}

} // namespace shardsweep
