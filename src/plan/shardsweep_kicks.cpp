// shardsweep's planner, step 4: the iterated search, random and structural kicks each searched
// again by the local search (docs/PLANNERS.md).
#include "plan_state.hpp"
#include "planner_detail.hpp"
#include "shardsweep_search.hpp"

#include <algorithm>
#include <limits>
#include <shardsweep/model/rng.hpp>
#include <vector>

namespace shardsweep
{
namespace planner_detail
{

namespace
{
constexpr double kInf = std::numeric_limits<double>::infinity();

//! Table t whole again (table-wise, in HBM), on the GPU where the objective grows least: undoes
//! a split (row blocks, column blocks) or a replication.
PlanState wholeAgain( const PlanState& st, const Workload& w, int t )
{
    PlanState trial = st;
    resetSharding( trial, t, ShardingType::table_wise );
    trial.refresh();
    PlanShard whole = trial.price( t, 0, 0, w.tables[t].rows, 0, w.tables[t].dim );
    int where = 0;
    double where_obj = kInf;
    for ( int g = 0; g < trial.numGpus(); ++g )
    {
        const double obj = trial.objectiveWith( deltaOf( g, whole, nullptr ), {} );
        if ( obj < where_obj )
            where = g, where_obj = obj;
    }
    whole.gpu = where;
    trial.addShard( whole );
    trial.refresh();
    return trial;
}

//! A structural kick: table t made data-parallel, or made whole again.
struct StructuralKick
{
    int table;
    bool replicate;
};

//! The structural kicks worth trying on `st`, the two kinds alternating:
//! - replications of the HBM tables that can go data-parallel with every GPU still fitting,
//!   least harm to the objective first;
//! - tables in HBM split into blocks or replicated whose blocks look up more in total than the
//!   whole table would, made whole again, most lookup time saved first.
std::vector<StructuralKick> structuralKicks( const PlanState& st, const Workload& w,
                                             const Budget& budget )
{
    std::vector<std::pair<double, int>> harm, saving;
    const std::vector<TableLoad> loads = tableLoads( st, w.tables.size() );
    PlanState whole_tables = st; // prices each table whole (its plan's sharding decides the batch)
    for ( int t = 0; t < static_cast<int>( w.tables.size() ) && !budget.spent(); ++t )
    {
        const TablePlan& tp = st.tablePlan( t );
        if ( tp.kernel != ComputeKernel::hbm )
            continue;
        if ( tp.sharding != ShardingType::data_parallel )
        {
            const PlanState trial = replicated( st, w, t );
            if ( allFit( trial ) )
                harm.push_back( { trial.objective(), t } );
        }
        if ( tp.sharding != ShardingType::table_wise )
        {
            TablePlan whole_plan = tp;
            whole_plan.sharding = ShardingType::table_wise;
            whole_tables.setTablePlan( t, whole_plan );
            const PlanShard whole =
                whole_tables.price( t, 0, 0, w.tables[t].rows, 0, w.tables[t].dim );
            const double saved = loads[t].ms - ( whole.fwd_ms + whole.bwd_ms );
            if ( saved > 1e-3 * loads[t].ms )
                saving.push_back( { -saved, t } );
        }
    }
    std::sort( harm.begin(), harm.end() );
    std::sort( saving.begin(), saving.end() );
    std::vector<StructuralKick> kicks;
    for ( std::size_t k = 0; k < std::max( harm.size(), saving.size() ); ++k )
    {
        if ( k < harm.size() )
            kicks.push_back( { harm[k].second, true } );
        if ( k < saving.size() )
            kicks.push_back( { saving[k].second, false } );
    }
    return kicks;
}

} // namespace

//! 4. Iterated local search: while budget is left, kick the best plan, search again from there
//! and keep the result if it is better. Two kinds of kick alternate:
//! - random: relocate a tenth of the movable shards, at least two, to GPUs with room, drawn
//!   from the seed's Philox stream (so a task and seed give one plan); at most kRandomKicks;
//! - structural (structuralKicks, each candidate once): make one more HBM table data-parallel,
//!   or a split or replicated table whole again (which the search after it may not split
//!   again). Such a change usually costs time at first and pays only after the search has
//!   rebalanced the GPUs around it, which the local search's own steps (gain alone) miss: on
//!   NeuroShard's task 77 the replication that helps most makes the plan 9 % slower before its
//!   search, and 5 % faster after it. Row blocks never move and nothing else merges them, so
//!   without these kicks a table split early stays split.
void iteratedSearch( PlanState& best, const Workload& w, const Platform& platform, Budget& budget,
                     std::uint64_t seed )
{
    const int gpus = best.numGpus();
    if ( gpus < 2 )
        return;
    constexpr int kRandomKicks = 16;
    const std::vector<StructuralKick> structural = structuralKicks( best, w, budget );
    std::size_t next_structural = 0;
    int random_kicks = 0;
    auto searchAndKeep = [&]( PlanState& trial, int keep_whole )
    {
        localSearch( trial, w, platform, budget, false, keep_whole );
        trial.refresh();
        best.refresh();
        if ( trial.objective() < best.objective() * ( 1.0 - kTie ) )
            best = std::move( trial );
    };
    {
        // First, every table a structural kick would make whole, all at once: where every
        // table is split or replicated (NeuroShard's task 70) nothing can move, so a single
        // table made whole cannot be balanced, and the search after it splits it again.
        PlanState trial = best;
        bool changed = false;
        for ( const StructuralKick& kick : structural )
            if ( !kick.replicate )
                trial = wholeAgain( trial, w, kick.table ), changed = true;
        if ( changed && allFit( trial ) )
            searchAndKeep( trial, -1 );
    }
    while ( !budget.spent() )
    {
        if ( next_structural < structural.size() &&
             ( random_kicks >= kRandomKicks || ( random_kicks + next_structural ) % 2 == 1 ) )
        {
            const StructuralKick kick = structural[next_structural++];
            const TablePlan& tp = best.tablePlan( kick.table );
            if ( tp.kernel != ComputeKernel::hbm ||
                 tp.sharding ==
                     ( kick.replicate ? ShardingType::data_parallel : ShardingType::table_wise ) )
                continue; // an earlier kick changed the table already
            PlanState trial = kick.replicate ? replicated( best, w, kick.table )
                                             : wholeAgain( best, w, kick.table );
            if ( allFit( trial ) )
                searchAndKeep( trial, kick.replicate ? -1 : kick.table );
            continue;
        }
        if ( random_kicks >= kRandomKicks )
            return;
        PlanState trial = best;
        std::vector<int> movable_shards;
        for ( int s = 0; s < trial.numShards(); ++s )
            if ( movable( trial, trial.shard( s ) ) )
                movable_shards.push_back( s );
        if ( movable_shards.size() < 2 )
        {
            random_kicks = kRandomKicks;
            continue;
        }
        CounterRng rng( seed, static_cast<std::uint64_t>( random_kicks++ ), 1 );
        const int kicks = std::max<int>( 2, static_cast<int>( movable_shards.size() ) / 10 );
        for ( int k = 0; k < kicks; ++k )
        {
            const int s = movable_shards[rng.uniformInt( 0, movable_shards.size() - 1 )];
            const int g = static_cast<int>( rng.uniformInt( 0, gpus - 1 ) );
            const PlanShard& sh = trial.shard( s );
            if ( g != sh.gpu && mayGoTo( trial, sh, g ) &&
                 trial.objectiveWith( removal( sh ), deltaOf( g, sh, nullptr ) ) < kInf )
            {
                trial.moveShard( s, g );
                trial.refresh();
            }
        }
        searchAndKeep( trial, -1 );
    }
}

} // namespace planner_detail
} // namespace shardsweep
