// Incremental per-GPU bookkeeping of a plan under the native step model (plan_state.hpp).
#include "plan_state.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/model/dense.hpp>
#include <shardsweep/model/memory.hpp>
#include <shardsweep/model/step.hpp>

namespace shardsweep
{

namespace
{
constexpr double kInf = std::numeric_limits<double>::infinity();

//! Indices of the three largest (sign +1) or smallest (sign -1) entries, -1 where P < 3.
void topThree( const std::vector<double>& v, double sign, int out[3] )
{
    out[0] = out[1] = out[2] = -1;
    for ( int g = 0; g < static_cast<int>( v.size() ); ++g )
    {
        const double x = sign * v[g];
        if ( out[0] < 0 || x > sign * v[out[0]] )
        {
            out[2] = out[1], out[1] = out[0], out[0] = g;
        }
        else if ( out[1] < 0 || x > sign * v[out[1]] )
        {
            out[2] = out[1], out[1] = g;
        }
        else if ( out[2] < 0 || x > sign * v[out[2]] )
            out[2] = g;
    }
}

//! The extreme (sign +1: max, -1: min) of v with GPUs a and b replaced by their new values.
double extremeWith( const std::vector<double>& v, const int top[3], double sign, const GpuDelta& a,
                    double a_value, const GpuDelta& b, double b_value )
{
    double best = -kInf;
    for ( int k = 0; k < 3; ++k )
        if ( top[k] >= 0 && top[k] != a.gpu && top[k] != b.gpu )
        {
            best = sign * v[top[k]];
            break;
        }
    if ( a.gpu >= 0 )
        best = std::max( best, sign * a_value );
    if ( b.gpu >= 0 )
        best = std::max( best, sign * b_value );
    return sign * best;
}

bool isModelParallel( ShardingType s )
{
    return s != ShardingType::data_parallel;
}
} // namespace

PlanState::PlanState( const Workload& workload, const Platform& platform, std::int64_t global_batch,
                      double capacity_bytes, const LearnedShardCost& learned,
                      const GemmPricer& gemm )
    : workload_( &workload ), platform_( &platform ), capacity_( capacity_bytes ),
      learned_( learned )
{
    num_gpus_ = platform.numGpus();
    global_ = static_cast<double>( global_batch > 0 ? global_batch : workload.global_batch );
    local_ = global_ / num_gpus_;
    double sum_dims = 0.0;
    for ( const TableSpec& t : workload.tables )
        sum_dims += t.dim;
    const DenseCost dense =
        denseCost( platform.gpu, workload.dense, static_cast<int>( workload.tables.size() ),
                   sum_dims, local_, gemm );
    dense_durations_.bottom_fwd = dense.bottom_fwd_ms;
    dense_durations_.bottom_bwd = dense.bottom_bwd_ms;
    dense_durations_.top_fwd = dense.top_fwd_ms;
    dense_durations_.top_bwd = dense.top_bwd_ms;
    dense_gradient_bytes_ = dense.parameters * dataTypeBytes( workload.dense.dtype );
    fixed_bytes_ = denseReplicaBytes( workload.dense, dense.parameters ) + dense.activation_bytes +
                   platform.hbm_reserve_GiB * kBytesPerGiB;
    tables_.resize( workload.tables.size() );
    stats_.resize( workload.tables.size() );
    stats_memo_ =
        std::make_shared<std::map<std::tuple<int, double, double>, EmbeddingTableStats>>();
    for ( std::size_t t = 0; t < workload.tables.size(); ++t )
        setTablePlan( static_cast<int>( t ), TablePlan{} );
    fwd_.assign( num_gpus_, 0.0 );
    bwd_ = hbm_ = memory_ = pooled_ = ids_ = fwd_;
    refresh();
}

void PlanState::setTablePlan( int t, const TablePlan& tp )
{
    tables_[t] = tp;
    const double batch = stepTableBatch( tp.sharding, global_, num_gpus_ );
    const double cache = stepTableCache( tp.kernel, tp.cache_fraction );
    const auto key = std::make_tuple( t, batch, cache );
    auto found = stats_memo_->find( key );
    if ( found == stats_memo_->end() )
        found =
            stats_memo_->emplace( key, embeddingTableStats( workload_->tables[t], batch, cache ) )
                .first;
    stats_[t] = found->second;
}

PlanShard PlanState::price( int t, int gpu, std::int64_t row_offset, std::int64_t num_rows,
                            int col_offset, int num_cols ) const
{
    const TableSpec& spec = workload_->tables[t];
    const TablePlan& tp = tables_[t];
    PlanShard s;
    s.table = t;
    s.gpu = gpu;
    s.row_offset = row_offset;
    s.num_rows = num_rows;
    s.col_offset = col_offset;
    s.num_cols = num_cols;
    const double rows = static_cast<double>( num_rows );
    const double share = spec.rows > 0 ? rows / static_cast<double>( spec.rows ) : 0.0;
    const bool mp = isModelParallel( tp.sharding );
    EmbeddingCost c =
        embeddingShardCostFromStats( platform_->gpu, platform_->host_to_gpu_GBps, spec, stats_[t],
                                     share, num_cols, mp ? global_ : local_, tp.kernel );
    if ( learned_.active() )
    {
        double x[kLearnedShardFeatures];
        learnedShardFeatures( spec, tp.sharding, tp.kernel, tp.cache_fraction, rows, num_cols,
                              global_, num_gpus_, learned_.platform_code, x );
        c = learnedShardCost( learned_, c, x );
    }
    s.fwd_ms = c.fwd_ms;
    s.bwd_ms = c.bwd_ms;
    s.hbm_bytes = shardHbmBytes( spec, rows, num_cols, tp.kernel, tp.cache_fraction );
    const double elem = dataTypeBytes( spec.dtype );
    if ( mp )
    {
        s.pooled_bytes = local_ * num_cols * elem;
        s.id_bytes = local_ * spec.pooling_factor * share * kIndexBytes;
    }
    // predictStep's memory terms of this shard on its GPU (plan_state.hpp): activations, ids
    // received from the P-1 others, pooled values sent to them, minus its own part of the
    // pooled values every GPU receives (counted in the shared term).
    const double p = num_gpus_;
    s.memory_bytes = s.hbm_bytes + 2.0 * ( mp ? global_ : local_ ) * num_cols * elem +
                     ( p - 1.0 ) * s.id_bytes + 2.0 * ( p - 2.0 ) * s.pooled_bytes;
    return s;
}

void PlanState::addShard( const PlanShard& s )
{
    shards_.push_back( s );
    fwd_[s.gpu] += s.fwd_ms;
    bwd_[s.gpu] += s.bwd_ms;
    hbm_[s.gpu] += s.hbm_bytes;
    memory_[s.gpu] += s.memory_bytes;
    pooled_[s.gpu] += s.pooled_bytes;
    ids_[s.gpu] += s.id_bytes;
    total_pooled_ += s.pooled_bytes;
    total_ids_ += s.id_bytes;
    if ( !isModelParallel( tables_[s.table].sharding ) )
        dp_gradient_bytes_ += static_cast<double>( s.num_rows ) * s.num_cols *
                              dataTypeBytes( workload_->tables[s.table].dtype ) / num_gpus_;
}

void PlanState::removeShard( int index )
{
    const PlanShard s = shards_[index];
    fwd_[s.gpu] -= s.fwd_ms;
    bwd_[s.gpu] -= s.bwd_ms;
    hbm_[s.gpu] -= s.hbm_bytes;
    memory_[s.gpu] -= s.memory_bytes;
    pooled_[s.gpu] -= s.pooled_bytes;
    ids_[s.gpu] -= s.id_bytes;
    total_pooled_ -= s.pooled_bytes;
    total_ids_ -= s.id_bytes;
    if ( !isModelParallel( tables_[s.table].sharding ) )
        dp_gradient_bytes_ -= static_cast<double>( s.num_rows ) * s.num_cols *
                              dataTypeBytes( workload_->tables[s.table].dtype ) / num_gpus_;
    shards_[index] = shards_.back();
    shards_.pop_back();
}

void PlanState::moveShard( int index, int gpu )
{
    PlanShard s = shards_[index];
    removeShard( index );
    s.gpu = gpu;
    addShard( s );
    std::swap( shards_[index], shards_.back() ); // keep the shard's index
}

void PlanState::removeTable( int t )
{
    for ( int i = numShards() - 1; i >= 0; --i )
        if ( shards_[i].table == t )
            removeShard( i );
}

void PlanState::load( const Plan& plan )
{
    shards_.clear();
    std::fill( fwd_.begin(), fwd_.end(), 0.0 );
    bwd_ = hbm_ = memory_ = pooled_ = ids_ = fwd_;
    total_pooled_ = total_ids_ = dp_gradient_bytes_ = 0.0;
    for ( std::size_t t = 0; t < plan.tables.size(); ++t )
        setTablePlan( static_cast<int>( t ), plan.tables[t] );
    for ( const ShardSpec& s : plan.shards )
        addShard( price( s.table, s.gpu, s.row_offset, s.num_rows, s.col_offset, s.num_cols ) );
    refresh();
}

Plan PlanState::toPlan() const
{
    Plan plan;
    plan.tables = tables_;
    plan.shards.reserve( shards_.size() );
    for ( const PlanShard& s : shards_ )
        plan.shards.push_back(
            { s.table, s.gpu, s.row_offset, s.num_rows, s.col_offset, s.num_cols } );
    // Shards grouped by table, then by position, so plan files read naturally.
    std::sort( plan.shards.begin(), plan.shards.end(),
               []( const ShardSpec& a, const ShardSpec& b )
               {
                   if ( a.table != b.table )
                       return a.table < b.table;
                   if ( a.col_offset != b.col_offset )
                       return a.col_offset < b.col_offset;
                   return a.row_offset < b.row_offset;
               } );
    return plan;
}

void PlanState::refresh()
{
    topThree( fwd_, 1.0, top_fwd_ );
    topThree( bwd_, 1.0, top_bwd_ );
    topThree( pooled_, 1.0, top_pooled_ );
    topThree( ids_, 1.0, top_ids_ );
    topThree( memory_, 1.0, top_memory_ );
    spread_ = 0.0;
    for ( int g = 0; g < num_gpus_; ++g )
        spread_ += fwd_[g] * fwd_[g] + bwd_[g] * bwd_[g];
    allreduce_ms_ = num_gpus_ > 1
                        ? 1e-6 * collectiveTimeNs( platform_->network, platform_->system,
                                                   Collective::all_reduce,
                                                   dense_gradient_bytes_ + dp_gradient_bytes_ )
                        : 0.0;
}

double PlanState::compose( double max_fwd, double max_bwd, double index_ms, double a2a_fwd_ms,
                           double a2a_bwd_ms ) const
{
    StepDurations d = dense_durations_;
    d.input_dist = index_ms;
    d.embedding_fwd = max_fwd;
    d.a2a_fwd = a2a_fwd_ms;
    d.a2a_bwd = a2a_bwd_ms;
    d.embedding_bwd = max_bwd;
    d.dense_allreduce = allreduce_ms_;
    return stepTimeline( d ).iteration;
}

double PlanState::objectiveWith( const GpuDelta& a, const GpuDelta& b ) const
{
    auto val = [&]( const std::vector<double>& v, const GpuDelta& d, double GpuDelta::*field )
    { return d.gpu >= 0 ? v[d.gpu] + d.*field : 0.0; };
    // Memory: a GPU whose memory grows must stay within the capacity. More pooled values in
    // total grow every GPU's receive buffers, so then the fullest other GPU must fit as well.
    const double shared_growth = 2.0 * ( a.pooled + b.pooled );
    const double shared = sharedMemory() + shared_growth;
    const double limit = this->limit();
    for ( const GpuDelta* d : { &a, &b } )
        if ( d->gpu >= 0 && d->memory + shared_growth > 0.0 &&
             memory_[d->gpu] + d->memory + shared > limit )
            return kInf;
    if ( shared_growth > 0.0 )
    {
        for ( int k = 0; k < 3; ++k )
            if ( top_memory_[k] >= 0 && top_memory_[k] != a.gpu && top_memory_[k] != b.gpu )
            {
                if ( memory_[top_memory_[k]] + shared > limit )
                    return kInf;
                break;
            }
    }
    const double max_fwd = extremeWith( fwd_, top_fwd_, 1.0, a, val( fwd_, a, &GpuDelta::fwd ), b,
                                        val( fwd_, b, &GpuDelta::fwd ) );
    const double max_bwd = extremeWith( bwd_, top_bwd_, 1.0, a, val( bwd_, a, &GpuDelta::bwd ), b,
                                        val( bwd_, b, &GpuDelta::bwd ) );
    if ( num_gpus_ <= 1 )
        return compose( max_fwd, max_bwd, 0.0, 0.0, 0.0 );
    // The all-to-all volumes as predictStep builds them: a GPU sends its pooled values to every
    // other GPU and receives everyone else's; it receives ids from every other GPU.
    const double p1 = num_gpus_ - 1.0;
    const double total_pooled = total_pooled_ + a.pooled + b.pooled;
    const double total_ids = total_ids_ + a.ids + b.ids;
    send_pooled_.resize( num_gpus_ );
    recv_pooled_.resize( num_gpus_ );
    send_ids_.resize( num_gpus_ );
    recv_ids_.resize( num_gpus_ );
    for ( int g = 0; g < num_gpus_; ++g )
    {
        double pooled = pooled_[g], ids = ids_[g];
        if ( g == a.gpu )
            pooled += a.pooled, ids += a.ids;
        if ( g == b.gpu )
            pooled += b.pooled, ids += b.ids;
        send_pooled_[g] = p1 * pooled;
        recv_pooled_[g] = total_pooled - pooled;
        send_ids_[g] = total_ids - ids;
        recv_ids_[g] = p1 * ids;
    }
    const Network& net = platform_->network;
    const SystemConfig& sys = platform_->system;
    const double index_ms =
        1e-6 * allToAllvTimeNs( net, sys, send_ids_.data(), recv_ids_.data(), num_gpus_ );
    const double fwd_ms =
        1e-6 * allToAllvTimeNs( net, sys, send_pooled_.data(), recv_pooled_.data(), num_gpus_ );
    const double bwd_ms =
        1e-6 * allToAllvTimeNs( net, sys, recv_pooled_.data(), send_pooled_.data(), num_gpus_ );
    return compose( max_fwd, max_bwd, index_ms, fwd_ms, bwd_ms );
}

double PlanState::objective() const
{
    return objectiveWith( GpuDelta{}, GpuDelta{} );
}

double PlanState::spreadWith( const GpuDelta& a, const GpuDelta& b ) const
{
    double sum = spread();
    for ( const GpuDelta* d : { &a, &b } )
        if ( d->gpu >= 0 )
        {
            const double f = fwd_[d->gpu] + d->fwd, w = bwd_[d->gpu] + d->bwd;
            sum += f * f + w * w - fwd_[d->gpu] * fwd_[d->gpu] - bwd_[d->gpu] * bwd_[d->gpu];
        }
    return sum;
}

} // namespace shardsweep
