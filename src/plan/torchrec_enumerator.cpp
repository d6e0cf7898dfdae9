// TorchRec's EmbeddingEnumerator: every sharding option (type x kernel x shard shapes) of every
// table with its perf and storage estimates; TorchRec a48cef79,
// torchrec/distributed/planner/enumerators.py.
#include <algorithm>
#include <shardsweep/model/torchrec/adapter.hpp>
#include <shardsweep/plan/torchrec_planner.hpp>

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

bool torchrecStorageLess( const TorchrecStorage& a, const TorchrecStorage& b )
{
    return std::tie( a.hbm, a.ddr ) < std::tie( b.hbm, b.ddr );
}

namespace
{
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

} // namespace shardsweep
