// TorchRec's sharding planner (enumerator, proposers, greedy-perf partitioner,
// planner loop) on the TorchRec-compatible estimator;
// reference/torchrec_estimator.md §4.
#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <set>
#include <shardsweep/model/torchrec/adapter.hpp>
#include <shardsweep/plan/torchrec_planner.hpp>
#include <tuple>

namespace shardsweep
{

double TorchrecOption::score( bool use_depth ) const
{
    double s = 0.0;
    for ( const auto& sh : shards )
        s = use_depth ? std::max( s, sh.perf.total() ) : s + sh.perf.total();
    return s;
}

TorchrecStorage TorchrecOption::totalStorage() const
{
    TorchrecStorage t;
    for ( const auto& sh : shards )
    {
        t.hbm += sh.storage.hbm;
        t.ddr += sh.storage.ddr;
    }
    return t;
}

namespace
{
bool storageLess( const TorchrecStorage& a, const TorchrecStorage& b )
{
    return std::tie( a.hbm, a.ddr ) < std::tie( b.hbm, b.ddr );
}

TorchrecOption makeOption( int table, const TorchrecTableInput& t, ShardingType type,
                           TorchrecKernel kernel, const TorchrecPlannerConfig& c )
{
    const TorchrecTopology& topo = c.topology;
    const int W = topo.world_size, L = topo.local_world_size;
    TorchrecOption o;
    o.table = table;
    o.type = type;
    o.kernel = kernel;
    const int block = torchrecColumnBlock( t.dim, t.min_partition );
    const int blocks = t.dim / block;
    auto add = [&]( std::int64_t rows, std::int64_t row_off, int cols, int col_off )
    {
        TorchrecShardPlacement p;
        p.rows = rows;
        p.row_offset = row_off;
        p.cols = cols;
        p.col_offset = col_off;
        o.shards.push_back( p );
    };
    // Column blocks: the last one takes the residual
    // (calculate_shard_sizes_and_offsets).
    auto colWidth = [&]( int b ) { return b + 1 < blocks ? block : t.dim - block * b; };
    switch ( type )
    {
    case ShardingType::table_wise:
        add( t.rows, 0, t.dim, 0 );
        break;
    case ShardingType::data_parallel:
        for ( int r = 0; r < W; ++r )
            add( t.rows, 0, t.dim, 0 );
        break;
    case ShardingType::row_wise:
    case ShardingType::table_row_wise:
    {
        const int n = type == ShardingType::row_wise ? W : L;
        for ( int r = 0; r < n; ++r )
            add( torchrecRowBlockRows( t.rows, n, r ), torchrecRowBlockOffset( t.rows, n, r ),
                 t.dim, 0 );
        break;
    }
    case ShardingType::column_wise:
    case ShardingType::table_column_wise:
        for ( int b = 0; b < blocks; ++b )
            add( t.rows, 0, colWidth( b ), b * block );
        break;
    case ShardingType::grid_shard:
        for ( int b = 0; b < blocks; ++b )
            for ( int r = 0; r < L; ++r )
                add( torchrecRowBlockRows( t.rows, L, r ), torchrecRowBlockOffset( t.rows, L, r ),
                     colWidth( b ), b * block );
        break;
    }
    for ( auto& p : o.shards )
    {
        TorchrecShard s;
        s.sharding = type;
        s.kernel = kernel;
        s.rows = t.rows;
        s.dim = t.dim;
        s.shard_rows = p.rows;
        s.shard_dim = p.cols;
        s.lookups = t.lookups;
        s.pooled_outputs = t.pooled_outputs;
        s.dtype_bytes = t.dtype_bytes;
        s.weighted = t.weighted;
        s.cache_load_factor = t.cache_load_factor;
        p.perf = torchrecPerf( topo, s );
        TorchrecStorageOptions so = c.storage;
        so.optimizer_multiplier = t.optimizer_multiplier;
        p.storage = torchrecShardStorage( topo, s, so );
    }
    return o;
}

bool fits( const TorchrecStorage& s, const TorchrecRankState& d )
{
    return static_cast<double>( s.hbm ) <= d.hbm && static_cast<double>( s.ddr ) <= d.ddr;
}

void place( TorchrecShardPlacement& sh, TorchrecRankState& d )
{
    sh.rank = d.rank;
    d.hbm -= static_cast<double>( sh.storage.hbm );
    d.ddr -= static_cast<double>( sh.storage.ddr );
    d.perf += sh.perf.total();
}

//! Heap placement of `o`'s shards over `devs` (indices into devices): min
//! (perf, rank % L, rank).
bool placeOnDevices( TorchrecOption& o, std::vector<TorchrecRankState>& devices,
                     const std::vector<int>& devs, int L )
{
    for ( auto& sh : o.shards )
    {
        int best = -1;
        for ( int i : devs )
        {
            const TorchrecRankState& d = devices[i];
            if ( !fits( sh.storage, d ) )
                continue;
            if ( best < 0 || std::make_tuple( d.perf, d.rank % L, d.rank ) <
                                 std::make_tuple( devices[best].perf, devices[best].rank % L,
                                                  devices[best].rank ) )
                best = i;
        }
        if ( best < 0 )
            return false;
        place( sh, devices[best] );
    }
    return true;
}

//! Uniform placement: shard i on devs[i]; all or nothing.
bool placeUniform( TorchrecOption& o, std::vector<TorchrecRankState>& devices,
                   const std::vector<int>& devs )
{
    if ( o.shards.size() != devs.size() )
        return false;
    for ( std::size_t i = 0; i < devs.size(); ++i )
        if ( !fits( o.shards[i].storage, devices[devs[i]] ) )
            return false;
    for ( std::size_t i = 0; i < devs.size(); ++i )
        place( o.shards[i], devices[devs[i]] );
    return true;
}
} // namespace

std::vector<std::vector<TorchrecOption>>
torchrecEnumerate( const std::vector<TorchrecTableInput>& tables,
                   const TorchrecPlannerConfig& config )
{
    std::vector<std::vector<TorchrecOption>> all( tables.size() );
    for ( std::size_t t = 0; t < tables.size(); ++t )
        for ( ShardingType type : config.sharding_types )
        {
            if ( type == ShardingType::data_parallel )
            {
                all[t].push_back( makeOption( static_cast<int>( t ), tables[t], type,
                                              TorchrecKernel::dense, config ) );
                continue;
            }
            for ( TorchrecKernel k : config.kernels )
                if ( torchrecKernelSupported( config.topology, k ) )
                    all[t].push_back(
                        makeOption( static_cast<int>( t ), tables[t], type, k, config ) );
        }
    return all;
}

std::vector<TorchrecRankState>
torchrecReservedDevices( const std::vector<TorchrecTableInput>& tables,
                         const TorchrecPlannerConfig& config )
{
    double kjt_lookups = 0.0;
    for ( const auto& t : tables )
        kjt_lookups += t.lookups;
    const TorchrecTopology& topo = config.topology;
    std::vector<TorchrecRankState> devices( topo.world_size );
    const bool cpu = topo.device == TorchrecDevice::cpu;
    for ( int r = 0; r < topo.world_size; ++r )
    {
        devices[r].rank = r;
        // The percentage applies to HBM only; dense and KJT come out of DDR on cpu.
        const double hbm = cpu ? 0.0 : topo.hbm_cap_bytes;
        const double reserved = torchrecReservedHbm( cpu ? topo.ddr_cap_bytes : hbm,
                                                     cpu ? 0.0 : config.reservation_percentage,
                                                     config.dense_param_bytes, kjt_lookups, false );
        devices[r].hbm = cpu ? 0.0 : reserved;
        devices[r].ddr = cpu ? reserved : topo.ddr_cap_bytes;
    }
    return devices;
}

bool torchrecPartition( std::vector<TorchrecOption>& proposal,
                        std::vector<TorchrecRankState> devices, int L, std::string* why )
{
    const int W = static_cast<int>( devices.size() );
    auto failed = [&]( const TorchrecOption& o )
    {
        if ( why )
            *why = fmt::format( "table {} ({} shards) does not fit", o.table, o.shards.size() );
        return false;
    };
    std::vector<int> all( W );
    std::iota( all.begin(), all.end(), 0 );
    // 1. Uniform options (RW, DP): shard i on rank i.
    std::vector<int> others;
    for ( std::size_t i = 0; i < proposal.size(); ++i )
    {
        TorchrecOption& o = proposal[i];
        if ( o.type == ShardingType::row_wise || o.type == ShardingType::data_parallel )
        {
            if ( !placeUniform( o, devices, all ) )
                return failed( o );
        }
        else
            others.push_back( static_cast<int>( i ) );
    }
    // 2. The rest, one group per table, by total storage descending (stable).
    std::stable_sort(
        others.begin(), others.end(),
        [&]( int a, int b )
        { return storageLess( proposal[b].totalStorage(), proposal[a].totalStorage() ); } );
    const int hosts = W / L;
    auto hostRanks = [&]( int h )
    {
        std::vector<int> r( L );
        std::iota( r.begin(), r.end(), h * L );
        return r;
    };
    auto hostsByPerf = [&]()
    {
        std::vector<int> order( hosts );
        std::iota( order.begin(), order.end(), 0 );
        std::vector<double> perf( hosts, 0.0 );
        for ( int h = 0; h < hosts; ++h )
            for ( int r : hostRanks( h ) )
                perf[h] += devices[r].perf;
        std::stable_sort( order.begin(), order.end(),
                          [&]( int a, int b ) { return perf[a] < perf[b]; } );
        return order;
    };
    for ( int i : others )
    {
        TorchrecOption& o = proposal[i];
        if ( o.type == ShardingType::table_wise || o.type == ShardingType::column_wise )
        {
            if ( !placeOnDevices( o, devices, all, L ) )
                return failed( o );
        }
        else if ( o.type == ShardingType::table_row_wise ||
                  o.type == ShardingType::table_column_wise )
        {
            const TorchrecStorage need = o.totalStorage();
            bool done = false;
            for ( int h : hostsByPerf() )
            {
                const std::vector<int> ranks = hostRanks( h );
                double hbm = 0.0, ddr = 0.0;
                for ( int r : ranks )
                {
                    hbm += devices[r].hbm;
                    ddr += devices[r].ddr;
                }
                if ( hbm < need.hbm || ddr < need.ddr )
                    continue;
                std::vector<TorchrecRankState> trial = devices;
                TorchrecOption copy = o;
                const bool ok = o.type == ShardingType::table_row_wise
                                    ? placeUniform( copy, trial, ranks )
                                    : placeOnDevices( copy, trial, ranks, L );
                if ( ok )
                {
                    devices = trial;
                    o = copy;
                    done = true;
                    break;
                }
            }
            if ( !done )
                return failed( o );
        }
        else // grid_shard: a window of k consecutive hosts in perf order, uniform
             // placement
        {
            const int k = static_cast<int>( o.shards.size() ) / L;
            if ( k * L != static_cast<int>( o.shards.size() ) || k > hosts )
                return failed( o );
            const std::vector<int> order = hostsByPerf();
            bool done = false;
            for ( int start = 0; start + k <= hosts && !done; ++start )
            {
                std::vector<int> ranks;
                for ( int j = 0; j < k; ++j )
                    for ( int r : hostRanks( order[start + j] ) )
                        ranks.push_back( r );
                std::vector<TorchrecRankState> trial = devices;
                TorchrecOption copy = o;
                if ( placeUniform( copy, trial, ranks ) )
                {
                    devices = trial;
                    o = copy;
                    done = true;
                }
            }
            if ( !done )
                return failed( o );
        }
    }
    return true;
}

double torchrecRating( const std::vector<TorchrecOption>& proposal, int world_size )
{
    std::vector<double> perf( world_size, 0.0 );
    for ( const auto& o : proposal )
        for ( const auto& sh : o.shards )
            if ( sh.rank >= 0 )
                perf[sh.rank] += sh.perf.total();
    return perf.empty() ? 0.0 : *std::max_element( perf.begin(), perf.end() );
}

namespace
{
using Proposal = std::vector<int>; //!< option index (into the enumerated list) per table

//! GreedyProposer: per table the options by ascending score; after each
//! proposal the table whose current option needs the most storage moves on to
//! its next option.
class GreedyProposer
{
  public:
    GreedyProposer( const std::vector<std::vector<TorchrecOption>>& options, bool use_depth,
                    int threshold )
        : _options( options ), _threshold( threshold )
    {
        for ( const auto& opts : options )
        {
            std::vector<int> order( opts.size() );
            std::iota( order.begin(), order.end(), 0 );
            std::stable_sort( order.begin(), order.end(),
                              [&]( int a, int b )
                              { return opts[a].score( use_depth ) < opts[b].score( use_depth ); } );
            _sorted.push_back( order );
        }
        _current.assign( options.size(), 0 );
        _done = options.empty();
        for ( const auto& s : _sorted )
            _done = _done || s.empty();
    }

    bool propose( Proposal& p ) const
    {
        if ( _done || ( _threshold > 0 && _inferior > _threshold ) )
            return false;
        p.resize( _current.size() );
        for ( std::size_t t = 0; t < _current.size(); ++t )
            p[t] = _sorted[t][_current[t]];
        return true;
    }

    void feedback( bool partitionable, double rating )
    {
        if ( _threshold > 0 && partitionable )
        {
            ++_inferior;
            if ( rating < _best )
            {
                _best = rating;
                _inferior = 0;
            }
        }
        int largest = -1;
        std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t> big{ 0, 0, 0, 0 };
        for ( std::size_t t = 0; t < _current.size(); ++t )
        {
            if ( _current[t] + 1 >= static_cast<int>( _sorted[t].size() ) )
                continue;
            const TorchrecOption& o = _options[t][_sorted[t][_current[t]]];
            std::int64_t max_hbm = 0, sum_hbm = 0, max_ddr = 0, sum_ddr = 0;
            for ( const auto& sh : o.shards )
            {
                max_hbm = std::max( max_hbm, sh.storage.hbm );
                sum_hbm += sh.storage.hbm;
                max_ddr = std::max( max_ddr, sh.storage.ddr );
                sum_ddr += sh.storage.ddr;
            }
            const auto key = std::make_tuple( max_hbm, sum_hbm, max_ddr, sum_ddr );
            if ( key > big )
            {
                big = key;
                largest = static_cast<int>( t );
            }
        }
        if ( largest < 0 )
            _done = true;
        else
            ++_current[largest];
    }

  private:
    const std::vector<std::vector<TorchrecOption>>& _options;
    std::vector<std::vector<int>> _sorted;
    std::vector<int> _current;
    int _threshold = 0;
    int _inferior = 0;
    double _best = 1e300;
    bool _done = false;
};

//! UniformProposer: for each sharding type every table offers, the best-scoring
//! option per table.
std::vector<Proposal> uniformProposals( const std::vector<std::vector<TorchrecOption>>& options )
{
    std::vector<ShardingType> types;
    for ( const auto& opts : options )
        for ( const auto& o : opts )
            if ( std::find( types.begin(), types.end(), o.type ) == types.end() )
                types.push_back( o.type );
    std::vector<Proposal> out;
    for ( ShardingType type : types )
    {
        Proposal p;
        for ( const auto& opts : options )
        {
            int best = -1;
            for ( std::size_t i = 0; i < opts.size(); ++i )
                if ( opts[i].type == type &&
                     ( best < 0 || opts[i].score( true ) < opts[best].score( true ) ) )
                    best = static_cast<int>( i );
            if ( best < 0 )
                break;
            p.push_back( best );
        }
        if ( p.size() == options.size() )
            out.push_back( p );
    }
    return out;
}

//! GridSearchProposer: the Cartesian product of the score-sorted options (last
//! table fastest); nothing when it exceeds 1e4 proposals.
std::vector<Proposal> gridProposals( const std::vector<std::vector<TorchrecOption>>& options )
{
    double count = 1.0;
    for ( const auto& opts : options )
        count *= static_cast<double>( opts.size() );
    std::vector<Proposal> out;
    if ( options.empty() || count > 1e4 || count == 0.0 )
        return out;
    std::vector<std::vector<int>> sorted;
    for ( const auto& opts : options )
    {
        std::vector<int> order( opts.size() );
        std::iota( order.begin(), order.end(), 0 );
        std::stable_sort( order.begin(), order.end(),
                          [&]( int a, int b )
                          { return opts[a].score( true ) < opts[b].score( true ); } );
        sorted.push_back( order );
    }
    std::vector<int> idx( options.size(), 0 );
    while ( true )
    {
        Proposal p( options.size() );
        for ( std::size_t t = 0; t < options.size(); ++t )
            p[t] = sorted[t][idx[t]];
        out.push_back( p );
        int t = static_cast<int>( options.size() ) - 1;
        while ( t >= 0 && ++idx[t] == static_cast<int>( sorted[t].size() ) )
            idx[t--] = 0;
        if ( t < 0 )
            break;
    }
    return out;
}
} // namespace

std::vector<std::vector<int>>
torchrecGreedyProposals( const std::vector<std::vector<TorchrecOption>>& options, bool use_depth,
                         int threshold, const std::vector<double>& ratings )
{
    GreedyProposer g( options, use_depth, threshold );
    std::vector<std::vector<int>> out;
    Proposal p;
    while ( g.propose( p ) )
    {
        out.push_back( p );
        const std::size_t i = out.size() - 1;
        g.feedback( true, i < ratings.size() ? ratings[i] : 0.0 );
    }
    return out;
}

TorchrecPlanOutcome torchrecPlan( const std::vector<TorchrecTableInput>& tables,
                                  const TorchrecPlannerConfig& config )
{
    TorchrecPlanOutcome out;
    const auto start = std::chrono::steady_clock::now();
    const std::vector<TorchrecRankState> devices = torchrecReservedDevices( tables, config );
    const bool cpu = config.topology.device == TorchrecDevice::cpu;
    for ( const auto& d : devices )
        if ( ( cpu ? d.ddr : d.hbm ) < 0.0 )
        {
            out.error = TorchrecPlannerError::insufficient_storage;
            out.message = fmt::format( "the storage reservation (dense model and "
                                       "input buffers) exceeds the memory of "
                                       "rank {}",
                                       d.rank );
            return out;
        }
    if ( tables.empty() )
        return out;
    const auto options = torchrecEnumerate( tables, config );

    std::map<Proposal, std::pair<bool, double>> cache;
    double best_rating = 0.0;
    bool have_best = false;
    TorchrecStorage lowest{ INT64_MAX, INT64_MAX };
    auto timedOut = [&]()
    {
        return config.timeout_seconds > 0.0 &&
               std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count() >
                   config.timeout_seconds;
    };
    // Partitions one proposal (or replays it from the cache); returns
    // (partitionable, rating).
    auto evaluate = [&]( const Proposal& p ) -> std::pair<bool, double>
    {
        Proposal key = p;
        auto it = cache.find( key );
        if ( it != cache.end() )
            return it->second;
        std::vector<TorchrecOption> plan;
        plan.reserve( p.size() );
        for ( std::size_t t = 0; t < p.size(); ++t )
            plan.push_back( options[t][p[t]] );
        ++out.num_proposals;
        std::pair<bool, double> result{ false, 0.0 };
        if ( torchrecPartition( plan, devices, config.topology.local_world_size, nullptr ) )
        {
            const double rating = torchrecRating( plan, config.topology.world_size );
            result = { true, rating };
            if ( !have_best || rating < best_rating )
            {
                have_best = true;
                best_rating = rating;
                out.best = plan;
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
            if ( storageLess( total, lowest ) )
                lowest = total;
        }
        cache.emplace( key, result );
        return result;
    };

    if ( config.use_grid_search )
        for ( const auto& p : gridProposals( options ) )
        {
            if ( timedOut() )
                break;
            evaluate( p );
        }
    for ( bool use_depth : { true, false } )
    {
        GreedyProposer g( options, use_depth, 0 );
        Proposal p;
        while ( !timedOut() && g.propose( p ) )
        {
            const auto r = evaluate( p );
            g.feedback( r.first, r.second );
        }
    }
    for ( const auto& p : uniformProposals( options ) )
    {
        if ( timedOut() )
            break;
        evaluate( p );
    }

    if ( have_best )
    {
        out.rating = best_rating;
        return out;
    }
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
