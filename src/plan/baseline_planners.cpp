// The sharding papers' baselines (the greedy/random baselines of daochenzha/neuroshard, dreamshard
// and autoshard, identical in all three), planner names and makePlan.
#include "planner_detail.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fmt/format.h>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/kernel/learned_cost_model.hpp>
#include <shardsweep/kernel/scenario_batch.hpp> // predictStep, predictStepTorchrec
#include <shardsweep/model/memory.hpp>
#include <shardsweep/model/rng.hpp>
#include <shardsweep/plan/planner.hpp>
#include <shardsweep/plan/torchrec_planner.hpp>
#include <shardsweep/plan/transformer_planner.hpp>
#include <stdexcept>

namespace shardsweep
{

namespace
{
//! The greedy baselines' per-table cost (docs/PLANNERS.md).
double baselineCost( PlannerKind kind, const TableSpec& t )
{
    switch ( kind )
    {
    case PlannerKind::dim_greedy:
        return t.dim;
    case PlannerKind::size_greedy:
        return static_cast<double>( t.rows ) * t.dim * dataTypeBytes( t.dtype ) / kBytesPerGiB;
    case PlannerKind::lookup_greedy:
        return t.dim * t.pooling_factor;
    case PlannerKind::size_lookup_greedy:
        return t.dim * t.pooling_factor * std::log10( static_cast<double>( t.rows ) );
    default:
        return 0.0;
    }
}
} // namespace

const char* plannerName( PlannerKind kind )
{
    return nameOf( kind );
}

PlannerKind parsePlannerName( const std::string& name )
{
    const std::optional<PlannerKind> kind = enumFromName<PlannerKind>( name );
    if ( kind && *kind != PlannerKind::none )
        return *kind;
    std::string known;
    for ( int k = 0; k < kNumPlanners; ++k )
        known += std::string( known.empty() ? "" : ", " ) + nameOf( PlannerKind( k ) );
    throw UsageError( fmt::format( "unknown planner '{}' (known: {})", name, known ) );
}

bool plannerPlans( PlannerKind kind, WorkloadKind workload )
{
    if ( kind == PlannerKind::none )
        return false;
    if ( kind == PlannerKind::shardsweep )
        return true;
    const bool transformer = kind == PlannerKind::megatron || kind == PlannerKind::exhaustive;
    return transformer == ( workload == WorkloadKind::transformer );
}

namespace planner_detail
{

double gpuCapacityBytes( const Platform& platform )
{
    return ( platform.gpu.memory_GiB - platform.hbm_reserve_GiB ) * kBytesPerGiB;
}

double tableStateBytes( const TableSpec& t )
{
    return shardStateBytes( t, static_cast<double>( t.rows ), t.dim );
}

Plan tableWisePlan( const Workload& workload, const std::vector<int>& gpu_of_table )
{
    Plan plan;
    plan.tables.resize( workload.tables.size() );
    for ( std::size_t t = 0; t < workload.tables.size(); ++t )
        plan.shards.push_back( { static_cast<int>( t ), gpu_of_table[t], 0, workload.tables[t].rows,
                                 0, workload.tables[t].dim } );
    return plan;
}

std::string overCommitReason( const Workload& workload, const Platform& platform,
                              const std::vector<int>& gpu_of_table )
{
    std::vector<double> used( platform.numGpus(), 0.0 );
    for ( std::size_t t = 0; t < gpu_of_table.size(); ++t )
        used[gpu_of_table[t]] += tableStateBytes( workload.tables[t] );
    const double cap = gpuCapacityBytes( platform );
    for ( int g = 0; g < platform.numGpus(); ++g )
        if ( used[g] > cap )
            return fmt::format( "GPU {} would hold {:.3f} GiB of tables, more than its {:.3f} GiB",
                                g, used[g] / kBytesPerGiB, cap / kBytesPerGiB );
    return {};
}

double gpuMemoryBytes( const Platform& platform )
{
    return platform.gpu.memory_GiB * kBytesPerGiB;
}

StepSummary stepOnHost( const ScenarioInput& input )
{
    // The kernel's entry (predictStep / predictStepTorchrec) on plain vectors, with the inputs
    // packScenarios would build: no Views, so no parallel initialisation per plan.
    const Workload& w = *input.workload;
    const Platform& p = *input.platform;
    const Plan& plan = *input.plan;
    const std::int64_t batch = input.global_batch > 0 ? input.global_batch : w.global_batch;
    const int gpus = p.numGpus();
    const int n = static_cast<int>( w.tables.size() );
    std::vector<ShardingType> sharding( n );
    std::vector<ComputeKernel> kernel( n );
    std::vector<double> cache( n );
    std::vector<int> stats_index( n );
    std::vector<EmbeddingTableStats> stats( n );
    double sum_dims = 0.0;
    for ( int t = 0; t < n; ++t )
    {
        sharding[t] = plan.tables[t].sharding;
        kernel[t] = plan.tables[t].kernel;
        cache[t] = plan.tables[t].cache_fraction;
        stats_index[t] = t;
        stats[t] = embeddingTableStats(
            w.tables[t], stepTableBatch( sharding[t], static_cast<double>( batch ), gpus ),
            stepTableCache( kernel[t], cache[t] ) );
        sum_dims += w.tables[t].dim;
    }
    const int num_shards = static_cast<int>( plan.shards.size() );
    std::vector<int> shard_table( num_shards ), shard_gpu( num_shards ), shard_cols( num_shards );
    std::vector<double> shard_rows( num_shards ), fwd( num_shards ), bwd( num_shards );
    for ( int s = 0; s < num_shards; ++s )
    {
        const ShardSpec& spec = plan.shards[s];
        if ( spec.table < 0 || spec.table >= n || spec.gpu < 0 || spec.gpu >= gpus )
            throw std::invalid_argument( "plan shard refers to a missing table or GPU" );
        shard_table[s] = spec.table;
        shard_gpu[s] = spec.gpu;
        shard_rows[s] = static_cast<double>( spec.num_rows );
        shard_cols[s] = spec.num_cols;
    }
    std::vector<double> phase( static_cast<std::size_t>( gpus ) * kNumPhases ), memory( gpus ),
        scratch( 4 * static_cast<std::size_t>( gpus ) );
    const StepTables tables{ w.tables.data(),
                             sharding.data(),
                             kernel.data(),
                             cache.data(),
                             stats_index.data(),
                             stats.data(),
                             n };
    const StepShards shards{ shard_table.data(), shard_gpu.data(), shard_rows.data(),
                             shard_cols.data(), num_shards };
    const StepGpuArrays arrays{ phase.data(),
                                memory.data(),
                                scratch.data(),
                                scratch.data() + gpus,
                                scratch.data() + 2 * gpus,
                                scratch.data() + 3 * gpus };
    if ( input.model == CostModel::torchrec )
        return predictStepTorchrec( p, batch, tables, shards, arrays, fwd.data(), bwd.data() );
    const DenseCost dense =
        denseCost( p.gpu, w.dense, n, sum_dims, static_cast<double>( batch ) / gpus,
                   hostGemmPricer( input.learned_gemm ) );
    const LearnedShardCost learned = input.model == CostModel::learned
                                         ? hostLearnedShardCost( input.learned )
                                         : LearnedShardCost{};
    return predictStep( p, w.dense, dense, batch, tables, shards, arrays, fwd.data(), bwd.data(),
                        learned );
}

double iterationMsOnHost( const ScenarioInput& input )
{
    return stepOnHost( input ).iteration_ms;
}

} // namespace planner_detail

using namespace planner_detail;

//! round_robin (DreamShard's `naive`: table i on GPU i mod D) and random (uniform GPU per table,
//! Philox-seeded): placements without a memory check; an over-committed GPU makes them
//! infeasible instead of silently overflowing.
PlanResult planUnchecked( PlannerKind kind, const Workload& workload, const Platform& platform,
                          std::uint64_t seed )
{
    const int gpus = platform.numGpus();
    std::vector<int> gpu_of_table( workload.tables.size() );
    CounterRng rng( seed, 0, 0 );
    for ( std::size_t t = 0; t < gpu_of_table.size(); ++t )
        gpu_of_table[t] = kind == PlannerKind::round_robin
                              ? static_cast<int>( t % gpus )
                              : static_cast<int>( rng.uniformInt( 0, gpus - 1 ) );
    PlanResult result;
    result.plan = tableWisePlan( workload, gpu_of_table );
    result.reason = overCommitReason( workload, platform, gpu_of_table );
    result.feasible = result.reason.empty();
    return result;
}

//! dim/size/lookup/size_lookup greedy: tables in descending (cost, size, index) order, each on
//! the GPU with the least cost so far among those it fits on (ties: less size, lower index).
PlanResult planGreedyBaseline( PlannerKind kind, const Workload& workload,
                               const Platform& platform )
{
    struct Info
    {
        int index;
        double cost, size;
    };
    std::vector<Info> order;
    for ( std::size_t t = 0; t < workload.tables.size(); ++t )
        order.push_back( { static_cast<int>( t ), baselineCost( kind, workload.tables[t] ),
                           tableStateBytes( workload.tables[t] ) } );
    std::sort( order.begin(), order.end(),
               []( const Info& a, const Info& b )
               {
                   if ( a.cost != b.cost )
                       return a.cost > b.cost;
                   if ( a.size != b.size )
                       return a.size > b.size;
                   return a.index > b.index;
               } );
    const int gpus = platform.numGpus();
    const double cap = gpuCapacityBytes( platform );
    std::vector<double> cost_sum( gpus, 0.0 ), size_sum( gpus, 0.0 );
    std::vector<int> gpu_of_table( workload.tables.size(), -1 );
    PlanResult result;
    for ( const Info& info : order )
    {
        int best = -1;
        for ( int g = 0; g < gpus; ++g )
        {
            if ( size_sum[g] + info.size > cap )
                continue;
            if ( best < 0 || cost_sum[g] < cost_sum[best] ||
                 ( cost_sum[g] == cost_sum[best] && size_sum[g] < size_sum[best] ) )
                best = g;
        }
        if ( best < 0 )
        {
            const std::string name = info.index < static_cast<int>( workload.table_names.size() )
                                         ? workload.table_names[info.index]
                                         : std::to_string( info.index );
            result.reason = fmt::format( "table {} '{}' ({:.3f} GiB) fits on no GPU", info.index,
                                         name, info.size / kBytesPerGiB );
            result.feasible = false;
            return result;
        }
        gpu_of_table[info.index] = best;
        cost_sum[best] += info.cost;
        size_sum[best] += info.size;
    }
    result.plan = tableWisePlan( workload, gpu_of_table );
    result.feasible = true;
    return result;
}

PlanResult makePlan( PlannerKind kind, const Workload& workload, const Platform& platform,
                     std::int64_t global_batch, const PlannerOptions& options )
{
    const auto start = std::chrono::steady_clock::now();
    const std::int64_t batch = global_batch > 0 ? global_batch : workload.global_batch;
    PlanResult result;
    if ( !plannerPlans( kind, workload.kind ) )
    {
        result.reason = fmt::format( "planner {} does not plan {} workloads", plannerName( kind ),
                                     nameOf( workload.kind ) );
        return result;
    }
    if ( workload.isTransformer() )
    {
        TransformerPlanOptions topts;
        topts.price = options.price_plan;
        const TransformerPlanResult t =
            planTransformer( kind, workload.transformer, platform, batch, topts );
        result.feasible = t.feasible;
        result.reason = t.reason;
        if ( t.feasible )
        {
            result.plan.parallel = t.top.front().config;
            result.predicted_ms = t.top.front().summary.iteration_ms;
        }
        result.plan_seconds = t.plan_seconds;
        return result;
    }
    switch ( kind )
    {
    case PlannerKind::round_robin:
    case PlannerKind::random:
        result = planUnchecked( kind, workload, platform, options.seed );
        break;
    case PlannerKind::dim_greedy:
    case PlannerKind::size_greedy:
    case PlannerKind::lookup_greedy:
    case PlannerKind::size_lookup_greedy:
        result = planGreedyBaseline( kind, workload, platform );
        break;
    case PlannerKind::torchrec:
        result = planTorchrec( workload, platform, batch, options );
        break;
    case PlannerKind::shardsweep:
        result = planShardsweep( workload, platform, batch, options );
        break;
    case PlannerKind::megatron:
    case PlannerKind::exhaustive:
    case PlannerKind::none:
        break; // transformer planners: handled above; none plans nothing (plannerPlans)
    }
    if ( result.feasible && options.price_plan && kind != PlannerKind::shardsweep )
        result.predicted_ms = iterationMsOnHost(
            { &workload, &platform, &result.plan, batch, options.model, options.learned } );
    result.plan_seconds =
        std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count();
    return result;
}

} // namespace shardsweep
