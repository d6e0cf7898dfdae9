// shardsweep's planner, step 3: the re-sharding options the local search tries for one shard
// (docs/PLANNERS.md, "Re-sharding").
#include "lower_bound_detail.hpp"
#include "plan_state.hpp"
#include "planner_detail.hpp"
#include "shardsweep_search.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace shardsweep
{
namespace planner_detail
{

namespace
{
constexpr double kInf = std::numeric_limits<double>::infinity();
//! Row blocks on fewer GPUs than a node has: 2 or 3 (more moved no plan of the large task).
constexpr int kMaxPartialRowBlocks = 3;
} // namespace

std::vector<PlanState> reshardings( const PlanState& st, const Workload& w,
                                    const Platform& platform, int s )
{
    std::vector<PlanState> out;
    const PlanShard sh = st.shard( s );
    const int t = sh.table;
    const int gpus = st.numGpus();
    if ( sh.num_cols >= 8 && sh.num_cols % 8 == 0 ) // halves of a multiple of 4 columns
    {
        PlanState trial = st;
        TablePlan tp = trial.tablePlan( t );
        tp.sharding = ShardingType::column_wise;
        trial.setTablePlan( t, tp );
        trial.removeShard( s );
        const int half = sh.num_cols / 2;
        trial.addShard( trial.price( t, sh.gpu, sh.row_offset, sh.num_rows, sh.col_offset, half ) );
        trial.refresh();
        PlanShard second =
            trial.price( t, sh.gpu, sh.row_offset, sh.num_rows, sh.col_offset + half, half );
        int where = -1;
        double where_obj = kInf;
        for ( int g = 0; g < gpus; ++g )
        {
            const double obj = trial.objectiveWith( deltaOf( g, second, nullptr ), {} );
            if ( obj < where_obj )
                where = g, where_obj = obj;
        }
        if ( where >= 0 )
        {
            second.gpu = where;
            trial.addShard( second );
            trial.refresh();
            out.push_back( std::move( trial ) );
        }
    }
    if ( st.tablePlan( t ).sharding != ShardingType::table_wise )
        return out;
    const int per_node = platform.gpus_per_node;
    PlanState rows = st;
    if ( reshardRows( rows, w, t, ShardingType::row_wise, 0, gpus, false ) )
        out.push_back( std::move( rows ) );
    if ( platform.num_nodes > 1 && per_node > 1 )
    {
        PlanState node = st;
        if ( reshardRows( node, w, t, ShardingType::table_row_wise, sh.gpu / per_node * per_node,
                          per_node, false ) )
            out.push_back( std::move( node ) );
    }
    // Fewer row blocks than the node has GPUs (most of the L2 reuse of small blocks for fewer
    // pooled partial sums), and column halves in row blocks (narrower rows: more of them fit in
    // L2), where they look up less than the whole table. The blocks go to the shard's own GPU
    // and the node's least-loaded ones.
    const TableSpec& spec = w.tables[t];
    std::vector<int> on = { sh.gpu };
    const int node_first = sh.gpu / per_node * per_node;
    for ( int g = node_first; g < node_first + per_node && g < gpus; ++g )
        if ( g != sh.gpu )
            on.push_back( g );
    std::stable_sort( on.begin() + 1, on.end(),
                      [&]( int a, int b )
                      { return st.fwd( a ) + st.bwd( a ) < st.fwd( b ) + st.bwd( b ); } );
    // Column blocks of `block_rows`-row blocks (`row_blocks` of them, the last the rest), on the
    // first of those GPUs.
    auto addBlocks = [&]( int col_blocks, std::int64_t block_rows, std::int64_t row_blocks )
    {
        const std::vector<int> blocks_on(
            on.begin(), on.begin() + std::min<std::int64_t>( on.size(), col_blocks * row_blocks ) );
        PlanState trial = st;
        if ( reshardBlockRowsOn( trial, w, t,
                                 col_blocks == 1 ? ShardingType::table_row_wise
                                                 : ShardingType::grid_shard,
                                 col_blocks, block_rows, blocks_on ) )
            out.push_back( std::move( trial ) );
    };
    for ( int k = 2; k <= kMaxPartialRowBlocks; ++k )
        for ( int col_blocks : { 1, 2 } )
        {
            if ( col_blocks == 1 ? k >= static_cast<int>( on.size() ) : spec.dim % 8 != 0 )
                continue; // the node's own row blocks: above; halves of a multiple of 4 columns
            const PlanShard block = st.price( t, 0, 0, spec.rows / k, 0, spec.dim / col_blocks );
            if ( col_blocks * k * ( block.fwd_ms + block.bwd_ms ) >= sh.fwd_ms + sh.bwd_ms )
                continue; // no less work in total: only more to send
            if ( spec.rows >= k )
                addBlocks( col_blocks, ( spec.rows + k - 1 ) / k, k );
        }
    // Row blocks of the share at which a block looks up least per row (for a skewed table often
    // where its distinct rows just stop fitting the L2, which then still serves a fixed number
    // of repeats while the DRAM side catches up), the rest in one more block: equal blocks miss
    // that share when it does not divide the rows (NeuroShard task 3's 4M x 32 table: 0.79 and
    // 0.21 of the rows look up 9 % less than two halves).
    for ( int col_blocks : { 1, 2 } )
    {
        if ( col_blocks == 2 && spec.dim % 8 != 0 )
            continue;
        const int cols = spec.dim / col_blocks;
        const double share = bound_detail::leastCostRowShare( platform, spec, st.tableStats( t ),
                                                              st.globalBatch(), cols );
        const auto block_rows =
            static_cast<std::int64_t>( std::ceil( share * static_cast<double>( spec.rows ) ) );
        const std::int64_t row_blocks = ( spec.rows + block_rows - 1 ) / block_rows;
        if ( row_blocks < 2 || col_blocks * row_blocks > static_cast<std::int64_t>( on.size() ) ||
             spec.rows % block_rows == 0 )
            continue; // whole, more blocks than the node's GPUs, or equal blocks (above)
        const std::int64_t rest = spec.rows - ( row_blocks - 1 ) * block_rows;
        const PlanShard block = st.price( t, 0, 0, block_rows, 0, cols );
        const PlanShard last = st.price( t, 0, 0, rest, 0, cols );
        if ( col_blocks * ( ( row_blocks - 1 ) * ( block.fwd_ms + block.bwd_ms ) + last.fwd_ms +
                            last.bwd_ms ) >=
             sh.fwd_ms + sh.bwd_ms )
            continue;
        addBlocks( col_blocks, block_rows, row_blocks );
    }
    return out;
}

} // namespace planner_detail
} // namespace shardsweep
