#pragma once
//! \file planner_test_support.hpp
//! \brief DLRM planner tasks as `shardsweep bench planners` draws them, and planner options
//! whose result does not depend on timing (tstShardsweepPlanner, tstLowerBound).
#include <shardsweep/build_paths.hpp>
#include <shardsweep/io/locality_stats.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/plan/planner.hpp>
#include <shardsweep/scenario/scenario_space.hpp>
#include <shardsweep/scenario/table_pool.hpp>
#include <shardsweep/scenario/task_generator.hpp>
#include <string>
#include <vector>

namespace Test
{
using namespace shardsweep;

namespace
{
struct Task
{
    Workload workload;
    Platform platform;
};

//! Tasks of the NeuroShard, DreamShard and AutoShard protocols (synthetic pool), as
//! `shardsweep bench planners` draws them.
std::vector<Task> protocolTasks( int per_protocol, int first = 0 )
{
    const std::string source = SHARDSWEEP_SOURCE_DIR;
    const NamedPlatform base =
        readPlatformFile( source + "/inputs/platforms/dgx-a100-4node-ib.yaml" );
    static const TablePool pool = syntheticTablePool( // built once: fitting it takes a while
        readLocalityStats( source + "/inputs/locality/dlrm_datasets_2021_locality_stats.txt" )
            .at( 0 ),
        SyntheticPoolOptions{} );
    const std::vector<int> split = dreamshardSplit( static_cast<int>( pool.size() ), 1 );
    std::vector<Task> tasks;
    for ( TaskProtocol protocol :
          { TaskProtocol::neuroshard, TaskProtocol::dreamshard, TaskProtocol::autoshard } )
        for ( int i = first; i < first + per_protocol; ++i )
        {
            GeneratedTask g =
                generateTask( protocol, pool, 1, i, TaskOptions{}, DenseModel{}, &split );
            Platform p = resizePlatform( base.platform, g.num_gpus, g.gpus_per_node );
            if ( g.memory_cap_GiB > 0 )
                p = applyMemoryCap( p, g.memory_cap_GiB );
            tasks.push_back( { std::move( g.workload ), p } );
        }
    return tasks;
}

PlannerOptions deterministic()
{
    PlannerOptions o;
    o.max_iterations = 150;
    o.time_budget_s = 60.0; // the iteration cap binds: the result does not depend on timing
    return o;
}

} // namespace
} // namespace Test
