// TorchRec's GreedyPerfPartitioner after HeuristicalStorageReservation: assigns ranks to the
// shards of one proposal, and the NoopPerfModel rating; TorchRec a48cef79,
// torchrec/distributed/planner/partitioners.py.
#include <algorithm>
#include <fmt/format.h>
#include <numeric>
#include <shardsweep/model/torchrec/adapter.hpp>
#include <shardsweep/plan/torchrec_planner.hpp>
#include <tuple>

namespace shardsweep
{

namespace
{
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

//! The L ranks of host h.
std::vector<int> hostRanks( int h, int L )
{
    std::vector<int> r( L );
    std::iota( r.begin(), r.end(), h * L );
    return r;
}

//! The hosts by the summed perf of their ranks, ascending (stable).
std::vector<int> hostsByPerf( const std::vector<TorchrecRankState>& devices, int hosts, int L )
{
    std::vector<int> order( hosts );
    std::iota( order.begin(), order.end(), 0 );
    std::vector<double> perf( hosts, 0.0 );
    for ( int h = 0; h < hosts; ++h )
        for ( int r : hostRanks( h, L ) )
            perf[h] += devices[r].perf;
    std::stable_sort( order.begin(), order.end(),
                      [&]( int a, int b ) { return perf[a] < perf[b]; } );
    return order;
}

//! Places `o`'s shards on `ranks` (uniformly or by heap) on trial copies and commits them to `o`
//! and `devices` only when every shard fits.
bool placeAllOrNothing( TorchrecOption& o, std::vector<TorchrecRankState>& devices,
                        const std::vector<int>& ranks, bool uniform, int L )
{
    std::vector<TorchrecRankState> trial = devices;
    TorchrecOption copy = o;
    const bool ok =
        uniform ? placeUniform( copy, trial, ranks ) : placeOnDevices( copy, trial, ranks, L );
    if ( ok )
    {
        devices = trial;
        o = copy;
    }
    return ok;
}

//! table_row_wise (uniform) and table_column_wise (heap): the first host in perf order whose
//! ranks together have the storage and take the shards.
bool placeOnOneHost( TorchrecOption& o, std::vector<TorchrecRankState>& devices, int hosts, int L )
{
    const TorchrecStorage need = o.totalStorage();
    for ( int h : hostsByPerf( devices, hosts, L ) )
    {
        const std::vector<int> ranks = hostRanks( h, L );
        double hbm = 0.0, ddr = 0.0;
        for ( int r : ranks )
        {
            hbm += devices[r].hbm;
            ddr += devices[r].ddr;
        }
        if ( hbm < need.hbm || ddr < need.ddr )
            continue;
        if ( placeAllOrNothing( o, devices, ranks, o.type == ShardingType::table_row_wise, L ) )
            return true;
    }
    return false;
}

//! grid_shard: a window of k consecutive hosts in perf order, uniform placement.
bool placeOnHostWindow( TorchrecOption& o, std::vector<TorchrecRankState>& devices, int hosts,
                        int L )
{
    const int k = static_cast<int>( o.shards.size() ) / L;
    if ( k * L != static_cast<int>( o.shards.size() ) || k > hosts )
        return false;
    const std::vector<int> order = hostsByPerf( devices, hosts, L );
    for ( int start = 0; start + k <= hosts; ++start )
    {
        std::vector<int> ranks;
        for ( int j = 0; j < k; ++j )
            for ( int r : hostRanks( order[start + j], L ) )
                ranks.push_back( r );
        if ( placeAllOrNothing( o, devices, ranks, true, L ) )
            return true;
    }
    return false;
}
} // namespace

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
        { return torchrecStorageLess( proposal[b].totalStorage(), proposal[a].totalStorage() ); } );
    const int hosts = W / L;
    for ( int i : others )
    {
        TorchrecOption& o = proposal[i];
        bool placed;
        if ( o.type == ShardingType::table_wise || o.type == ShardingType::column_wise )
            placed = placeOnDevices( o, devices, all, L );
        else if ( o.type == ShardingType::table_row_wise ||
                  o.type == ShardingType::table_column_wise )
            placed = placeOnOneHost( o, devices, hosts, L );
        else // grid_shard
            placed = placeOnHostWindow( o, devices, hosts, L );
        if ( !placed )
            return failed( o );
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

} // namespace shardsweep
