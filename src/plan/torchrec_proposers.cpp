// TorchRec's proposers over the enumerated options: GreedyProposer (by depth or sum), Uniform
// and GridSearch; TorchRec a48cef79, torchrec/distributed/planner/proposers.py.
#include "torchrec_proposers.hpp"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace shardsweep
{

TorchrecGreedyProposer::TorchrecGreedyProposer(
    const std::vector<std::vector<TorchrecOption>>& options, bool use_depth, int threshold )
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

bool TorchrecGreedyProposer::propose( TorchrecProposal& p ) const
{
    if ( _done || ( _threshold > 0 && _inferior > _threshold ) )
        return false;
    p.resize( _current.size() );
    for ( std::size_t t = 0; t < _current.size(); ++t )
        p[t] = _sorted[t][_current[t]];
    return true;
}

void TorchrecGreedyProposer::feedback( bool partitionable, double rating )
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

//! UniformProposer: for each sharding type every table offers, the best-scoring
//! option per table.
std::vector<TorchrecProposal>
torchrecUniformProposals( const std::vector<std::vector<TorchrecOption>>& options )
{
    std::vector<ShardingType> types;
    for ( const auto& opts : options )
        for ( const auto& o : opts )
            if ( std::find( types.begin(), types.end(), o.type ) == types.end() )
                types.push_back( o.type );
    std::vector<TorchrecProposal> out;
    for ( ShardingType type : types )
    {
        TorchrecProposal p;
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
std::vector<TorchrecProposal>
torchrecGridProposals( const std::vector<std::vector<TorchrecOption>>& options )
{
    double count = 1.0;
    for ( const auto& opts : options )
        count *= static_cast<double>( opts.size() );
    std::vector<TorchrecProposal> out;
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
        TorchrecProposal p( options.size() );
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

std::vector<std::vector<int>>
torchrecGreedyProposals( const std::vector<std::vector<TorchrecOption>>& options, bool use_depth,
                         int threshold, const std::vector<double>& ratings )
{
    TorchrecGreedyProposer g( options, use_depth, threshold );
    std::vector<std::vector<int>> out;
    TorchrecProposal p;
    while ( g.propose( p ) )
    {
        out.push_back( p );
        const std::size_t i = out.size() - 1;
        g.feedback( true, i < ratings.size() ? ratings[i] : 0.0 );
    }
    return out;
}

} // namespace shardsweep
