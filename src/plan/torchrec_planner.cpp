// TorchRec's planner loop (GridSearch, Greedy by depth and by sum, Uniform proposals, each
// partitioned and rated) and its adapter to shardsweep's types; the enumerator, partitioner and
// proposers are in torchrec_enumerator.cpp, torchrec_partitioner.cpp, torchrec_proposers.cpp.
// TorchRec a48cef79, torchrec/distributed/planner/planners.py.
#include "torchrec_proposers.hpp"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <map>
#include <shardsweep/model/torchrec/adapter.hpp>
#include <shardsweep/plan/torchrec_planner.hpp>

namespace shardsweep
{

namespace
{

//! Sets out's error when a rank's storage reservation (dense model and input buffers) exceeds its
//! memory (DDR on CPU, HBM otherwise); true then.
bool reservationExceedsMemory( const std::vector<TorchrecRankState>& devices, bool cpu,
                               TorchrecPlanOutcome& out )
{
    for ( const auto& d : devices )
        if ( ( cpu ? d.ddr : d.hbm ) < 0.0 )
        {
            out.error = TorchrecPlannerError::insufficient_storage;
            out.message = fmt::format( "the storage reservation (dense model and "
                                       "input buffers) exceeds the memory of "
                                       "rank {}",
                                       d.rank );
            return true;
        }
    return false;
}

//! Rates the proposals of the planner loop: partitions each proposal once (later ones replay the
//! cache), keeps the best-rated plan in out.best and the smallest storage no partition took.
class ProposalEvaluator
{
  public:
    ProposalEvaluator( const std::vector<std::vector<TorchrecOption>>& options,
                       const std::vector<TorchrecRankState>& devices,
                       const TorchrecPlannerConfig& config, TorchrecPlanOutcome& out )
        : _options( options ), _devices( devices ), _config( config ), _out( out )
    {
    }

    //! Partitions one proposal (or replays it from the cache); returns
    //! (partitionable, rating).
    std::pair<bool, double> evaluate( const TorchrecProposal& p )
    {
        TorchrecProposal key = p;
        auto it = _cache.find( key );
        if ( it != _cache.end() )
            return it->second;
        std::vector<TorchrecOption> plan;
        plan.reserve( p.size() );
        for ( std::size_t t = 0; t < p.size(); ++t )
            plan.push_back( _options[t][p[t]] );
        ++_out.num_proposals;
        std::pair<bool, double> result{ false, 0.0 };
        if ( torchrecPartition( plan, _devices, _config.topology.local_world_size, nullptr ) )
        {
            const double rating = torchrecRating( plan, _config.topology.world_size );
            result = { true, rating };
            if ( !_have_best || rating < _best_rating )
            {
                _have_best = true;
                _best_rating = rating;
                _out.best = plan;
            }
        }
        else
        {
            TorchrecStorage total;
            for ( const auto& o : plan )
            {
                const TorchrecStorage s = o.totalStorage();
                total.hbm += s.hbm;
                total.ddr += s.ddr;
            }
            if ( torchrecStorageLess( total, _lowest ) )
                _lowest = total;
        }
        _cache.emplace( key, result );
        return result;
    }

    bool haveBest() const { return _have_best; }
    double bestRating() const { return _best_rating; }
    //! The smallest total storage of a proposal that could not be partitioned.
    const TorchrecStorage& lowest() const { return _lowest; }

  private:
    const std::vector<std::vector<TorchrecOption>>& _options;
    const std::vector<TorchrecRankState>& _devices;
    const TorchrecPlannerConfig& _config;
    TorchrecPlanOutcome& _out;
    std::map<TorchrecProposal, std::pair<bool, double>> _cache;
    double _best_rating = 0.0;
    bool _have_best = false;
    TorchrecStorage _lowest{ INT64_MAX, INT64_MAX };
};

//! Sets out's error and message when no proposal was partitionable: insufficient storage when the
//! smallest proposal exceeds the ranks' total memory, else too strict sharding constraints.
void explainNoPlan( const std::vector<TorchrecRankState>& devices, const TorchrecStorage& lowest,
                    TorchrecPlanOutcome& out )
{
    double hbm = 0.0, ddr = 0.0;
    for ( const auto& d : devices )
    {
        hbm += d.hbm;
        ddr += d.ddr;
    }
    const bool fits_globally =
        static_cast<double>( lowest.hbm ) <= hbm && static_cast<double>( lowest.ddr ) <= ddr;
    out.error = fits_globally ? TorchrecPlannerError::strict_constraints
                              : TorchrecPlannerError::insufficient_storage;
    out.message = fits_globally
                      ? fmt::format( "no proposal of {} could be partitioned onto the ranks "
                                     "(sharding constraints too strict)",
                                     out.num_proposals )
                      : fmt::format( "the smallest proposal needs {} B HBM / {} B DDR, the ranks "
                                     "offer {:.0f} / {:.0f} after reservation",
                                     lowest.hbm, lowest.ddr, hbm, ddr );
}

} // namespace

TorchrecPlanOutcome torchrecPlan( const std::vector<TorchrecTableInput>& tables,
                                  const TorchrecPlannerConfig& config )
{
    TorchrecPlanOutcome out;
    const auto start = std::chrono::steady_clock::now();
    const std::vector<TorchrecRankState> devices = torchrecReservedDevices( tables, config );
    const bool cpu = config.topology.device == TorchrecDevice::cpu;
    if ( reservationExceedsMemory( devices, cpu, out ) )
        return out;
    if ( tables.empty() )
        return out;
    const auto options = torchrecEnumerate( tables, config );

    ProposalEvaluator evaluator( options, devices, config, out );
    auto timedOut = [&]()
    {
        return config.timeout_seconds > 0.0 &&
               std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count() >
                   config.timeout_seconds;
    };

    if ( config.use_grid_search )
        for ( const auto& p : torchrecGridProposals( options ) )
        {
            if ( timedOut() )
                break;
            evaluator.evaluate( p );
        }
    for ( bool use_depth : { true, false } )
    {
        TorchrecGreedyProposer g( options, use_depth, 0 );
        TorchrecProposal p;
        while ( !timedOut() && g.propose( p ) )
        {
            const auto r = evaluator.evaluate( p );
            g.feedback( r.first, r.second );
        }
    }
    for ( const auto& p : torchrecUniformProposals( options ) )
    {
        if ( timedOut() )
            break;
        evaluator.evaluate( p );
    }

    if ( evaluator.haveBest() )
    {
        out.rating = evaluator.bestRating();
        return out;
    }
    explainNoPlan( devices, evaluator.lowest(), out );
    return out;
}

namespace
{

ComputeKernel computeKernelOf( TorchrecKernel k )
{
    switch ( k )
    {
    case TorchrecKernel::dense:
        return ComputeKernel::dense;
    case TorchrecKernel::fused_uvm:
    case TorchrecKernel::quant_uvm:
        return ComputeKernel::uvm;
    case TorchrecKernel::fused_uvm_caching:
    case TorchrecKernel::quant_uvm_caching:
        return ComputeKernel::uvm_caching;
    default:
        return ComputeKernel::hbm;
    }
}

double denseParameters( const DenseModel& d, int num_tables, double sum_dims )
{
    double params = 0.0;
    double in = d.num_dense_features;
    for ( int l = 0; l < d.bottom_mlp_layers; ++l )
    {
        params += in * d.bottom_mlp[l] + d.bottom_mlp[l];
        in = d.bottom_mlp[l];
    }
    if ( d.interaction == Interaction::dot )
    {
        const double f = num_tables + 1.0;
        in = f * ( f - 1.0 ) / 2.0 + in;
    }
    else
        in = sum_dims + in;
    for ( int l = 0; l < d.top_mlp_layers; ++l )
    {
        params += in * d.top_mlp[l] + d.top_mlp[l];
        in = d.top_mlp[l];
    }
    return params;
}
} // namespace

PlanResult planTorchrec( const Workload& workload, const Platform& platform,
                         std::int64_t global_batch, const PlannerOptions& )
{
    const auto start = std::chrono::steady_clock::now();
    const std::int64_t batch = global_batch > 0 ? global_batch : workload.global_batch;
    TorchrecPlannerConfig config;
    config.topology = torchrecTopologyFor( platform );
    config.timeout_seconds = 60.0;
    const double local_batch = static_cast<double>( batch ) / platform.numGpus();
    std::vector<TorchrecTableInput> tables;
    double sum_dims = 0.0;
    for ( const TableSpec& t : workload.tables )
    {
        TorchrecTableInput in;
        in.rows = t.rows;
        in.dim = t.dim;
        in.lookups = t.pooling_factor * local_batch;
        in.pooled_outputs = local_batch;
        in.dtype_bytes = dataTypeBytes( t.dtype );
        in.weighted = t.weighted;
        in.optimizer_multiplier = torchrecOptimizerMultiplier( t.optimizer, t.dim );
        tables.push_back( in );
        sum_dims += t.dim;
    }
    config.dense_param_bytes =
        denseParameters( workload.dense, static_cast<int>( workload.tables.size() ), sum_dims ) *
        dataTypeBytes( workload.dense.dtype );

    const TorchrecPlanOutcome outcome = torchrecPlan( tables, config );
    PlanResult result;
    result.feasible = outcome.error == TorchrecPlannerError::none;
    result.reason = outcome.message;
    if ( result.feasible )
    {
        result.predicted_ms = outcome.rating;
        result.plan.tables.resize( workload.tables.size() );
        for ( const TorchrecOption& o : outcome.best )
        {
            TablePlan& tp = result.plan.tables[o.table];
            tp.sharding = o.type;
            tp.kernel = computeKernelOf( o.kernel );
            tp.cache_fraction = torchrecKernelIsCached( o.kernel )
                                    ? ( tables[o.table].cache_load_factor > 0.0
                                            ? tables[o.table].cache_load_factor
                                            : torchrec_constants::kUvmCachingRatio )
                                    : 0.0;
            for ( const auto& sh : o.shards )
            {
                ShardSpec s;
                s.table = o.table;
                s.gpu = sh.rank;
                s.row_offset = sh.row_offset;
                s.num_rows = sh.rows;
                s.col_offset = sh.col_offset;
                s.num_cols = sh.cols;
                result.plan.shards.push_back( s );
            }
        }
    }
    result.plan_seconds =
        std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count();
    return result;
}

double torchrecPlanCost( const Workload& workload, const Platform& platform, const Plan& plan,
                         std::int64_t global_batch, double* shard_fwd_ms, double* shard_bwd_ms,
                         double* rank_total_ms )
{
    const std::int64_t batch = global_batch > 0 ? global_batch : workload.global_batch;
    const int W = platform.numGpus();
    std::vector<double> ranks( W, 0.0 );
    for ( std::size_t i = 0; i < plan.shards.size(); ++i )
    {
        const ShardSpec& s = plan.shards[i];
        const TorchrecPerf p =
            torchrecShardPerf( workload.tables[s.table], s, plan.tables[s.table], platform, batch );
        if ( shard_fwd_ms )
            shard_fwd_ms[i] = p.fwd_compute + p.fwd_comms;
        if ( shard_bwd_ms )
            shard_bwd_ms[i] = p.bwd_compute + p.bwd_comms + p.prefetch;
        if ( s.gpu >= 0 && s.gpu < W )
            ranks[s.gpu] += p.total();
    }
    if ( rank_total_ms )
        std::copy( ranks.begin(), ranks.end(), rank_total_ms );
    return ranks.empty() ? 0.0 : *std::max_element( ranks.begin(), ranks.end() );
}

} // namespace shardsweep
