// shardsweep's planner: cost-guided greedy placement, then local search on the full cost model
// (docs/PLANNERS.md), and the lower bound on any plan's iteration time.
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <limits>
#include <numeric>
#include <shardsweep/kernel/scenario_batch.hpp>
#include <shardsweep/model/embedding.hpp>
#include <shardsweep/model/memory.hpp>
#include <shardsweep/plan/planner_detail.hpp>
#include <shardsweep/plan/torchrec_planner.hpp>

namespace shardsweep
{
using namespace planner_detail;

namespace
{

//! Lookup cost (fwd + bwd) of table t whole on one GPU with an HBM kernel at the global batch.
double tableWiseCostMs( const Platform& platform, const TableSpec& t, double global_batch )
{
    const EmbeddingCost c = embeddingShardCost( platform.gpu, platform.host_to_gpu_GBps, t, 1.0,
                                                t.dim, global_batch, ComputeKernel::hbm, 0.0 );
    return c.fwd_ms + c.bwd_ms;
}

//! The plan with table t split row-wise over every GPU.
void makeRowWise( Plan& plan, const Workload& workload, int t, int gpus )
{
    plan.shards.erase( std::remove_if( plan.shards.begin(), plan.shards.end(),
                                       [t]( const ShardSpec& s ) { return s.table == t; } ),
                       plan.shards.end() );
    const TableSpec& spec = workload.tables[t];
    const std::int64_t block = ( spec.rows + gpus - 1 ) / gpus;
    for ( int g = 0; g < gpus; ++g )
    {
        const std::int64_t begin = std::min<std::int64_t>( g * block, spec.rows );
        const std::int64_t end = std::min<std::int64_t>( begin + block, spec.rows );
        plan.shards.push_back( { t, g, begin, end - begin, 0, spec.dim } );
    }
    plan.tables[t].sharding = ShardingType::row_wise;
    plan.tables[t].kernel = ComputeKernel::hbm;
}

//! Re-evaluates a packed one-scenario batch after its shard placement changed in place.
struct Evaluator
{
    HostScenarioBatch batch;
    double capacity_bytes = 0.0;
    mutable std::vector<double> table_bytes;

    void repack( const ScenarioInput& input )
    {
        capacity_bytes = gpuCapacityBytes( *input.platform );
        batch = packScenarios( { input } );
        evaluateDenseCase( batch, 0 );
        for ( int k = 0; k < static_cast<int>( batch.table_case.extent( 0 ) ); ++k )
            evaluateTableCase( batch, k );
    }
    //! The search's score: the iteration time of a plan whose tables fit (the rule every
    //! planner shares: weights + optimizer state within each GPU's memory less the reserve); a
    //! plan that over-commits a GPU scores above every fitting one, less the smaller its
    //! overflow, so the search also walks out of memory pressure.
    double evaluate() const
    {
        evaluateBatchEntry( batch, 0 );
        const int gpus = static_cast<int>( batch.gpu_memory_GiB.extent( 0 ) );
        table_bytes.assign( gpus, 0.0 );
        for ( int s = 0; s < static_cast<int>( batch.shard_gpu.extent( 0 ) ); ++s )
        {
            const int t = batch.shard_table( s );
            table_bytes[batch.shard_gpu( s )] +=
                shardHbmBytes( batch.table_spec( t ), batch.shard_rows( s ), batch.shard_cols( s ),
                               batch.table_kernel( t ), batch.table_cache_fraction( t ) );
        }
        double overflow = 0.0;
        for ( double b : table_bytes )
            overflow = std::max( overflow, b - capacity_bytes );
        return overflow > 0.0 ? kOverflowScore * ( 1.0 + overflow / kBytesPerGiB )
                              : batch.summary( 0 ).iteration_ms;
    }
    static constexpr double kOverflowScore = 1e12;
    //! Embedding busy time (fwd + bwd) of GPU g in the last evaluation.
    double embeddingLoad( int g ) const
    {
        return batch.gpu_phase_ms( g * kNumPhases + static_cast<int>( Phase::embedding_fwd ) ) +
               batch.gpu_phase_ms( g * kNumPhases + static_cast<int>( Phase::embedding_bwd ) );
    }
};

//! Largest tables × GPUs for which TorchRec's plan seeds the search.
constexpr long kTorchrecSeedLimit = 4096;

} // namespace

PlanResult planShardsweep( const Workload& workload, const Platform& platform,
                           std::int64_t global_batch, const PlannerOptions& options )
{
    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&]
    { return std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count(); };
    const int gpus = platform.numGpus();
    const int num_tables = static_cast<int>( workload.tables.size() );
    const double cap = gpuCapacityBytes( platform );
    PlanResult result;
    Plan& plan = result.plan;
    plan.tables.resize( num_tables );

    // 1. Longest processing time first on the predicted per-table cost; a table goes to the
    //    least-loaded GPU it fits on. A table that fits on no GPU whole is split row-wise over
    //    all GPUs if its blocks fit, else kept in host memory with the largest HBM cache that
    //    fits (uvm_caching).
    std::vector<double> cost( num_tables );
    for ( int t = 0; t < num_tables; ++t )
        cost[t] =
            tableWiseCostMs( platform, workload.tables[t], static_cast<double>( global_batch ) );
    std::vector<int> order( num_tables );
    std::iota( order.begin(), order.end(), 0 );
    std::stable_sort( order.begin(), order.end(),
                      [&]( int a, int b ) { return cost[a] > cost[b]; } );
    std::vector<double> load( gpus, 0.0 ), used( gpus, 0.0 );
    for ( int t : order )
    {
        const TableSpec& spec = workload.tables[t];
        const double bytes = tableStateBytes( spec );
        int best = -1;
        for ( int g = 0; g < gpus; ++g )
            if ( used[g] + bytes <= cap && ( best < 0 || load[g] < load[best] ) )
                best = g;
        if ( best >= 0 )
        {
            plan.shards.push_back( { t, best, 0, spec.rows, 0, spec.dim } );
            load[best] += cost[t];
            used[best] += bytes;
            continue;
        }
        const double block = bytes / gpus * 1.0001; // rounding of the row blocks
        if ( std::all_of( used.begin(), used.end(), [&]( double u ) { return u + block <= cap; } ) )
        {
            makeRowWise( plan, workload, t, gpus );
            for ( int g = 0; g < gpus; ++g )
            {
                used[g] += block;
                load[g] += cost[t] / gpus;
            }
            continue;
        }
        const int roomiest =
            static_cast<int>( std::min_element( used.begin(), used.end() ) - used.begin() );
        const double weights =
            static_cast<double>( spec.rows ) * spec.dim * dataTypeBytes( spec.dtype );
        const double fraction = std::min( 1.0, ( cap - used[roomiest] ) / weights );
        if ( fraction <= 0.0 )
        {
            result.reason = fmt::format(
                "table {} '{}' ({:.3f} GiB) fits on no GPU, not even split row-wise or as a UVM "
                "cache",
                t,
                t < static_cast<int>( workload.table_names.size() ) ? workload.table_names[t] : "",
                bytes / kBytesPerGiB );
            return result;
        }
        plan.tables[t].kernel = ComputeKernel::uvm_caching;
        plan.tables[t].cache_fraction = fraction;
        plan.shards.push_back( { t, roomiest, 0, spec.rows, 0, spec.dim } );
        used[roomiest] += fraction * weights;
        load[roomiest] += cost[t];
    }

    // 2. Start the search from the best of that placement, the greedy baselines and
    //    TorchRec's plan: the result is never worse than any of them.
    {
        Evaluator scorer;
        scorer.repack( { &workload, &platform, &plan, global_batch, CostModel::native } );
        double start_ms = scorer.evaluate();
        std::vector<PlanResult> seeds;
        for ( PlannerKind kind : { PlannerKind::dim_greedy, PlannerKind::size_greedy,
                                   PlannerKind::lookup_greedy, PlannerKind::size_lookup_greedy } )
            seeds.push_back( planGreedyBaseline( kind, workload, platform ) );
        // TorchRec's planner enumerates every sharding option of every table; beyond a few
        // thousand (table, GPU) pairs it takes seconds to minutes, more than the whole budget.
        if ( static_cast<long>( num_tables ) * gpus <= kTorchrecSeedLimit )
        {
            PlannerOptions torchrec_options = options;
            torchrec_options.model = CostModel::torchrec;
            seeds.push_back( planTorchrec( workload, platform, global_batch, torchrec_options ) );
        }
        for ( PlanResult& seed : seeds )
        {
            if ( !seed.feasible )
                continue;
            scorer.repack( { &workload, &platform, &seed.plan, global_batch, CostModel::native } );
            const double score = scorer.evaluate();
            if ( score < start_ms )
            {
                start_ms = score;
                plan = std::move( seed.plan );
            }
        }
    }

    // 3. Local search on the full model: move or swap table-wise shards off the GPU with the
    //    most embedding work while the iteration time improves; then try splitting its most
    //    expensive table row-wise. Deterministic: candidates in a fixed order, ties to the first.
    ScenarioInput input{ &workload, &platform, &plan, global_batch, CostModel::native };
    Evaluator eval;
    eval.repack( input );
    double best_ms = eval.evaluate();
    int iterations = 0;
    bool tried_split = false;
    while ( iterations < options.max_iterations && elapsed() < options.time_budget_s )
    {
        ++iterations;
        eval.evaluate(); // per-GPU loads of the current placement
        int hot = 0;
        for ( int g = 1; g < gpus; ++g )
            if ( eval.embeddingLoad( g ) > eval.embeddingLoad( hot ) )
                hot = g;
        auto& shard_gpu = eval.batch.shard_gpu;
        const int num_shards = static_cast<int>( shard_gpu.extent( 0 ) );
        double best_candidate = best_ms;
        int move_shard = -1, move_to = -1, swap_shard = -1;
        for ( int s = 0; s < num_shards; ++s )
        {
            if ( elapsed() >= options.time_budget_s ) // keep the best candidate found so far
                break;
            if ( shard_gpu( s ) != hot ||
                 plan.tables[plan.shards[s].table].sharding != ShardingType::table_wise )
                continue;
            for ( int g = 0; g < gpus; ++g )
            {
                if ( g == hot || elapsed() >= options.time_budget_s )
                    continue;
                shard_gpu( s ) = g; // move
                const double moved = eval.evaluate();
                if ( moved < best_candidate )
                {
                    best_candidate = moved;
                    move_shard = s, move_to = g, swap_shard = -1;
                }
                for ( int o = 0; o < num_shards; ++o ) // swap with a shard of GPU g
                {
                    if ( shard_gpu( o ) != g || o == s ||
                         plan.tables[plan.shards[o].table].sharding != ShardingType::table_wise )
                        continue;
                    shard_gpu( o ) = hot;
                    const double swapped = eval.evaluate();
                    if ( swapped < best_candidate )
                    {
                        best_candidate = swapped;
                        move_shard = s, move_to = g, swap_shard = o;
                    }
                    shard_gpu( o ) = g;
                }
                shard_gpu( s ) = hot;
            }
        }
        if ( move_shard >= 0 )
        {
            shard_gpu( move_shard ) = move_to;
            plan.shards[move_shard].gpu = move_to;
            if ( swap_shard >= 0 )
            {
                shard_gpu( swap_shard ) = hot;
                plan.shards[swap_shard].gpu = hot;
            }
            best_ms = eval.evaluate();
            continue;
        }
        if ( tried_split || gpus == 1 )
            break;
        // No move helps: try splitting the hot GPU's most expensive table row-wise.
        tried_split = true;
        int hottest = -1;
        for ( int s = 0; s < num_shards; ++s )
            if ( shard_gpu( s ) == hot &&
                 plan.tables[plan.shards[s].table].sharding == ShardingType::table_wise &&
                 ( hottest < 0 ||
                   eval.batch.shard_fwd_ms( s ) + eval.batch.shard_bwd_ms( s ) >
                       eval.batch.shard_fwd_ms( hottest ) + eval.batch.shard_bwd_ms( hottest ) ) )
                hottest = s;
        if ( hottest < 0 )
            break;
        Plan candidate = plan;
        makeRowWise( candidate, workload, plan.shards[hottest].table, gpus );
        Evaluator trial;
        trial.repack( { &workload, &platform, &candidate, global_batch, CostModel::native } );
        const double split_ms = trial.evaluate();
        if ( split_ms < best_ms )
        {
            plan = std::move( candidate );
            eval = std::move( trial );
            best_ms = split_ms;
            tried_split = false; // the landscape changed: moves may help again
        }
    }
    // Feasible by the rule every planner shares: the tables' weights and optimizer state fit in
    // each GPU's memory less the reserve (the full model's buffers and activations are
    // reported by the evaluation, as for the baselines).
    std::vector<double> table_bytes( gpus, 0.0 );
    for ( const ShardSpec& s : plan.shards )
        table_bytes[s.gpu] +=
            shardHbmBytes( workload.tables[s.table], static_cast<double>( s.num_rows ), s.num_cols,
                           plan.tables[s.table].kernel, plan.tables[s.table].cache_fraction );
    for ( int g = 0; g < gpus; ++g )
        if ( table_bytes[g] > cap * 1.0001 )
        {
            result.reason =
                fmt::format( "GPU {} would hold {:.3f} GiB of tables, more than its {:.3f} GiB", g,
                             table_bytes[g] / kBytesPerGiB, cap / kBytesPerGiB );
            return result;
        }
    result.feasible = true;
    result.predicted_ms =
        evaluateScenario( { &workload, &platform, &plan, global_batch, options.model } )
            .iteration_ms;
    return result;
}

double iterationLowerBoundMs( const Workload& workload, const Platform& platform,
                              std::int64_t global_batch )
{
    // Any plan runs the dense part on every GPU and spreads at least the cheapest possible
    // embedding work over the GPUs. Per table the cheapest is one table-wise HBM shard with every
    // repeat served by L2: splitting rows or columns only adds outputs, sector rounding and
    // narrow-row penalties, replicas look up more distinct rows in total (U is concave), and UVM
    // only adds host traffic.
    const int gpus = platform.numGpus();
    const std::int64_t batch = global_batch > 0 ? global_batch : workload.global_batch;
    GpuSpec unlimited_l2 = platform.gpu;
    unlimited_l2.l2_cache_MiB = 1e12;
    double embedding = 0.0, sum_dims = 0.0;
    for ( const TableSpec& t : workload.tables )
    {
        const EmbeddingCost c =
            embeddingShardCost( unlimited_l2, platform.host_to_gpu_GBps, t, 1.0, t.dim,
                                static_cast<double>( batch ), ComputeKernel::hbm, 0.0 );
        embedding += c.fwd_ms + c.bwd_ms;
        sum_dims += t.dim;
    }
    const DenseCost dense =
        denseCost( platform.gpu, workload.dense, static_cast<int>( workload.tables.size() ),
                   sum_dims, static_cast<double>( batch ) / gpus );
    return dense.bottom_fwd_ms + dense.top_fwd_ms + dense.top_bwd_ms + dense.bottom_bwd_ms +
           embedding / gpus;
}

} // namespace shardsweep
