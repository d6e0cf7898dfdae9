// shardsweep's planner, step 1: the greedy placement, and the shard moves and row re-shardings
// that the search (shardsweep_search.cpp) shares (docs/PLANNERS.md).
#include "plan_state.hpp"
#include "planner_detail.hpp"
#include "shardsweep_search.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <limits>
#include <numeric>
#include <shardsweep/model/memory.hpp>

namespace shardsweep
{
namespace planner_detail
{

namespace
{
constexpr double kInf = std::numeric_limits<double>::infinity();
//! Smallest HBM cache worth a uvm_caching kernel; below it the table is plain UVM.
constexpr double kMinCacheFraction = 1e-3;

std::string tableLabel( const Workload& w, int t )
{
    return t < static_cast<int>( w.table_names.size() )
               ? fmt::format( "{} '{}'", t, w.table_names[t] )
               : std::to_string( t );
}

} // namespace

GpuDelta deltaOf( int gpu, const PlanShard& add, const PlanShard* remove )
{
    GpuDelta d;
    d.gpu = gpu;
    d.fwd = add.fwd_ms - ( remove ? remove->fwd_ms : 0.0 );
    d.bwd = add.bwd_ms - ( remove ? remove->bwd_ms : 0.0 );
    d.memory = add.memory_bytes - ( remove ? remove->memory_bytes : 0.0 );
    d.pooled = add.pooled_bytes - ( remove ? remove->pooled_bytes : 0.0 );
    d.ids = add.id_bytes - ( remove ? remove->id_bytes : 0.0 );
    return d;
}

GpuDelta removal( const PlanShard& s )
{
    PlanShard none;
    GpuDelta d = deltaOf( s.gpu, none, &s );
    return d;
}

bool reshardable( const PlanState& st, const PlanShard& s )
{
    const TablePlan& tp = st.tablePlan( s.table );
    return ( tp.sharding == ShardingType::table_wise ||
             tp.sharding == ShardingType::column_wise ) &&
           ( tp.kernel == ComputeKernel::hbm || tp.kernel == ComputeKernel::dense );
}

bool movable( const PlanState& st, const PlanShard& s )
{
    const TablePlan& tp = st.tablePlan( s.table );
    return reshardable( st, s ) ||
           ( tp.sharding == ShardingType::table_wise && inHostMemory( tp.kernel ) ) ||
           ( ( tp.sharding == ShardingType::table_row_wise ||
               tp.sharding == ShardingType::grid_shard ) &&
             tp.kernel == ComputeKernel::hbm );
}

bool mayGoTo( const PlanState& st, const PlanShard& s, int gpu )
{
    const TablePlan& tp = st.tablePlan( s.table );
    if ( !inHostMemory( tp.kernel ) && tp.sharding != ShardingType::table_row_wise &&
         tp.sharding != ShardingType::grid_shard )
        return true;
    const int per_node = st.gpusPerNode();
    return s.gpu / per_node == gpu / per_node;
}

void resetSharding( PlanState& st, int t, ShardingType type )
{
    st.removeTable( t );
    TablePlan tp = st.tablePlan( t );
    tp.sharding = type;
    st.setTablePlan( t, tp );
}

bool reshardRows( PlanState& st, const Workload& w, int t, ShardingType type, int first, int count,
                  bool check_capacity, int blocks_per_gpu )
{
    std::vector<int> gpus( count );
    std::iota( gpus.begin(), gpus.end(), first );
    if ( !reshardBlocksOn( st, w, t, type, 1, count * blocks_per_gpu, gpus ) )
        return false;
    for ( int g = 0; check_capacity && g < st.numGpus(); ++g )
        if ( !st.fits( g ) )
            return false;
    return true;
}

bool reshardBlocksOn( PlanState& st, const Workload& w, int t, ShardingType type, int col_blocks,
                      int row_blocks, const std::vector<int>& gpus )
{
    const TableSpec& spec = w.tables[t];
    if ( row_blocks < 1 || spec.rows < row_blocks )
        return false;
    return reshardBlockRowsOn( st, w, t, type, col_blocks,
                               ( spec.rows + row_blocks - 1 ) / row_blocks, gpus );
}

bool reshardBlockRowsOn( PlanState& st, const Workload& w, int t, ShardingType type, int col_blocks,
                         std::int64_t block_rows, const std::vector<int>& gpus )
{
    const TableSpec& spec = w.tables[t];
    if ( block_rows < 1 || col_blocks < 1 || spec.dim % col_blocks != 0 || gpus.empty() )
        return false;
    resetSharding( st, t, type );
    const int cols = spec.dim / col_blocks;
    int next = 0;
    for ( int c = 0; c < col_blocks; ++c )
        for ( std::int64_t begin = 0; begin < spec.rows; begin += block_rows )
        {
            const std::int64_t end = std::min<std::int64_t>( begin + block_rows, spec.rows );
            st.addShard(
                st.price( t, gpus[next++ % gpus.size()], begin, end - begin, c * cols, cols ) );
        }
    st.refresh();
    return true;
}

namespace
{

//! The index of the node whose GPUs carry the least embedding work (ties: the lower index).
int leastLoadedNode( const PlanState& st, const Platform& platform )
{
    const int per_node = platform.gpus_per_node;
    int node = 0;
    double node_load = kInf;
    for ( int k = 0; k < platform.num_nodes; ++k )
    {
        double load = 0.0;
        for ( int g = k * per_node; g < ( k + 1 ) * per_node; ++g )
            load += st.fwd( g ) + st.bwd( g );
        if ( load < node_load )
            node = k, node_load = load;
    }
    return node;
}

//! A table that alone costs more than a GPU's fair share can never be balanced whole: its rows
//! go over the least-loaded node (table-row-wise) when a node's share of it is fair, else over
//! all GPUs (row-wise). The search may re-shard it again. False (st unchanged) when the blocks do
//! not fit.
bool splitCostlyTable( PlanState& st, const Workload& w, const Platform& platform, int t,
                       double cost, double fair_share )
{
    const int per_node = platform.gpus_per_node;
    PlanState trial = st;
    bool done = false;
    if ( platform.num_nodes > 1 && per_node > 1 && cost / per_node <= fair_share )
    {
        const int node = leastLoadedNode( st, platform );
        done = reshardRows( trial, w, t, ShardingType::table_row_wise, node * per_node, per_node );
    }
    else
        done = reshardRows( trial, w, t, ShardingType::row_wise, 0, st.numGpus() );
    if ( done )
        st = std::move( trial );
    return done;
}

//! Places the whole table `whole` where the iteration time grows least (ties: the GPU with the
//! least embedding work, then the lower index), among GPUs first_gpu to end_gpu − 1 (−1: the
//! last); returns that GPU, or −1 when it fits on none.
int placeWholeTable( PlanState& st, const PlanShard& whole, int first_gpu = 0, int end_gpu = -1 )
{
    int best = -1;
    double best_obj = kInf, best_load = kInf;
    for ( int g = first_gpu; g < ( end_gpu < 0 ? st.numGpus() : end_gpu ); ++g )
    {
        const double obj = st.objectiveWith( deltaOf( g, whole, nullptr ), GpuDelta{} );
        const double load = st.fwd( g ) + st.bwd( g );
        if ( obj == kInf )
            continue;
        if ( best < 0 || obj < best_obj * ( 1.0 - kTie ) ||
             ( obj <= best_obj * ( 1.0 + kTie ) && load < best_load ) )
            best = g, best_obj = obj, best_load = load;
    }
    if ( best < 0 )
        return -1;
    PlanShard s = whole;
    s.gpu = best;
    st.addShard( s );
    st.refresh();
    return best;
}

//! Memory pressure: keeps table t in host memory (UVM) on a GPU of a node with host room, with
//! the largest HBM cache that fits there (uvm_caching), or none (uvm). `host_used`: UVM tables'
//! host bytes per node, updated. Returns an error message when no node has host room.
std::string placeInHostMemory( PlanState& st, const Workload& w, const Platform& platform, int t,
                               std::vector<double>& host_used )
{
    const int gpus = st.numGpus();
    const int per_node = platform.gpus_per_node;
    const TableSpec& spec = w.tables[t];
    const double weights =
        static_cast<double>( spec.rows ) * spec.dim * dataTypeBytes( spec.dtype );
    const double host_bytes = tableStateBytes( spec );
    const double host_cap = platform.host_memory_GiB > 0.0
                                ? platform.host_memory_GiB * kBytesPerGiB
                                : std::numeric_limits<double>::infinity();
    int roomiest = -1;
    for ( int g = 0; g < gpus; ++g )
        if ( host_used[g / per_node] + host_bytes <= host_cap &&
             ( roomiest < 0 || st.memory( g ) < st.memory( roomiest ) ) )
            roomiest = g;
    if ( roomiest < 0 )
        return fmt::format( "table {} ({:.3f} GiB) fits on no GPU, not even split row-wise, "
                            "as a UVM cache or in host memory",
                            tableLabel( w, t ), host_bytes / kBytesPerGiB );
    // The cache gets what is left of the GPU's memory once the table's activations and
    // all-to-all buffers (those of a plain UVM shard) are counted.
    TablePlan tp;
    tp.kernel = ComputeKernel::uvm;
    st.setTablePlan( t, tp );
    const PlanShard bare = st.price( t, roomiest, 0, spec.rows, 0, spec.dim );
    const double room = st.room( roomiest ) - bare.memory_bytes - 2.0 * bare.pooled_bytes;
    const double fraction = std::min( 1.0, room / weights );
    tp.kernel = fraction >= kMinCacheFraction ? ComputeKernel::uvm_caching : ComputeKernel::uvm;
    tp.cache_fraction = fraction >= kMinCacheFraction ? fraction : 0.0;
    int gpu = roomiest;
    if ( tp.kernel == ComputeKernel::uvm ) // no HBM needed: the least-loaded GPU with room
        for ( int g = 0; g < gpus; ++g )
            if ( host_used[g / per_node] + host_bytes <= host_cap &&
                 st.fwd( g ) + st.bwd( g ) < st.fwd( gpu ) + st.bwd( gpu ) )
                gpu = g;
    host_used[gpu / per_node] += host_bytes;
    st.setTablePlan( t, tp );
    st.addShard( st.price( t, gpu, 0, spec.rows, 0, spec.dim ) );
    st.refresh();
    return {};
}

//! The least GPUs for splitCoarseTable. On 4 GPUs a maximum is shared by at most 4, and the
//! search's re-sharding of the critical GPUs' costliest shards reaches those tables itself:
//! splitting them first made NeuroShard's and DreamShard's plans slightly worse, and NeuroShard's
//! task 45 lost the search's grid (tstPlannerHardTasks.column_halves_in_row_blocks fails with
//! 2 here). On 8 (AutoShard) and 128 GPUs (the large task) it pays (docs/PERFORMANCE.md,
//! "Coarse tables split in the greedy").
constexpr int kCoarseSplitMinGpus = 8;

//! A table whose forward lookups alone exceed half a GPU's fair share of them (`fair_fwd`: Σ over
//! the tables / P) leaves the greedy too coarse to balance the forward pass, whose maximum over
//! the GPUs adds to the backward pass's. On the 856 tables of the large task a few tables each
//! looked up about a mean GPU's forward, and the search did not split them, because one split
//! does not lower a maximum that a dozen GPUs share. Such a table is split in two before it is
//! placed, whichever way looks up less in total: two row blocks on one node (table-row-wise;
//! each block's distinct rows fit the L2 better, but each sends partial sums of every column)
//! or two column halves (each receives every id). Each piece goes where the iteration time grows
//! least, a row block on the first one's node. False (st unchanged) when neither way applies or
//! fits.
bool splitCoarseTable( PlanState& st, const Workload& w, const Platform& platform, int t,
                       const PlanShard& whole, double fair_fwd )
{
    const TableSpec& spec = w.tables[t];
    const int per_node = platform.gpus_per_node;
    if ( whole.fwd_ms <= 0.5 * fair_fwd )
        return false;
    struct Split
    {
        ShardingType type;
        PlanShard first, second;
        double lookups() const
        {
            return first.fwd_ms + first.bwd_ms + second.fwd_ms + second.bwd_ms;
        }
    };
    std::vector<Split> splits;
    if ( per_node > 1 && spec.rows > 1 )
    {
        const std::int64_t half = ( spec.rows + 1 ) / 2;
        splits.push_back( { ShardingType::table_row_wise, st.price( t, 0, 0, half, 0, spec.dim ),
                            st.price( t, 0, half, spec.rows - half, 0, spec.dim ) } );
    }
    if ( spec.dim % 8 == 0 ) // halves of a multiple of 4 columns
    {
        const int half = spec.dim / 2;
        splits.push_back( { ShardingType::column_wise, st.price( t, 0, 0, spec.rows, 0, half ),
                            st.price( t, 0, 0, spec.rows, half, half ) } );
    }
    std::stable_sort( splits.begin(), splits.end(),
                      []( const Split& a, const Split& b ) { return a.lookups() < b.lookups(); } );
    for ( const Split& split : splits )
    {
        PlanState trial = st;
        resetSharding( trial, t, split.type );
        const int first_gpu = placeWholeTable( trial, split.first );
        if ( first_gpu < 0 )
            continue;
        const int node = first_gpu / per_node;
        const bool rows = split.type == ShardingType::table_row_wise;
        if ( placeWholeTable( trial, split.second, rows ? node * per_node : 0,
                              rows ? ( node + 1 ) * per_node : -1 ) >= 0 )
        {
            st = std::move( trial );
            return true;
        }
    }
    return false;
}

} // namespace

//! 1. Longest processing time first on the predicted per-table cost: each table goes where the
//! iteration time grows least (ties: the GPU with the least embedding work, then the lower
//! index). A table costlier than a GPU's fair share is split over a node or all GPUs
//! (splitCostlyTable), one with more than half a GPU's fair forward share in two
//! (splitCoarseTable). A table that fits on no GPU whole is split row-wise over all GPUs when
//! its blocks fit, else kept in host memory with the largest HBM cache that fits (uvm_caching).
std::string greedyPlacement( PlanState& st, const Workload& w, const Platform& platform )
{
    const int gpus = st.numGpus();
    const int n = static_cast<int>( w.tables.size() );
    std::vector<PlanShard> whole( n );
    for ( int t = 0; t < n; ++t )
        whole[t] = st.price( t, 0, 0, w.tables[t].rows, 0, w.tables[t].dim );
    std::vector<int> order( n );
    std::iota( order.begin(), order.end(), 0 );
    std::stable_sort(
        order.begin(), order.end(),
        [&]( int a, int b )
        { return whole[a].fwd_ms + whole[a].bwd_ms > whole[b].fwd_ms + whole[b].bwd_ms; } );
    double total = 0.0, total_fwd = 0.0;
    for ( const PlanShard& s : whole )
        total += s.fwd_ms + s.bwd_ms, total_fwd += s.fwd_ms;
    const double fair_share = total / gpus;
    std::vector<double> host_used( platform.num_nodes, 0.0 ); // UVM tables' host bytes per node
    for ( int t : order )
    {
        const double cost = whole[t].fwd_ms + whole[t].bwd_ms;
        if ( gpus > 1 && cost > fair_share &&
             splitCostlyTable( st, w, platform, t, cost, fair_share ) )
            continue;
        if ( gpus >= kCoarseSplitMinGpus &&
             splitCoarseTable( st, w, platform, t, whole[t], total_fwd / gpus ) )
            continue;
        if ( placeWholeTable( st, whole[t] ) >= 0 )
            continue;
        PlanState trial = st;
        if ( reshardRows( trial, w, t, ShardingType::row_wise, 0, gpus ) )
        {
            st = std::move( trial );
            continue;
        }
        const std::string error = placeInHostMemory( st, w, platform, t, host_used );
        if ( !error.empty() )
            return error;
    }
    return {};
}

} // namespace planner_detail
} // namespace shardsweep
