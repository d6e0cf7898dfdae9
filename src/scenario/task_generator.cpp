#include <algorithm>
#include <optional>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/model/rng.hpp>
#include <shardsweep/scenario/task_generator.hpp>
#include <stdexcept>
#include <string>

namespace shardsweep
{

namespace
{
// NeuroShard's dims, in the order of its gen_tasks.py list.
constexpr int kNeuroShardDims[6] = { 128, 64, 32, 16, 8, 4 };

void addTable( GeneratedTask& task, const TablePool& pool, int id, int dim, DataType dtype )
{
    TableSpec t = pool.tables[id];
    t.dim = dim;
    t.dtype = dtype;
    task.workload.tables.push_back( t );
    task.workload.table_names.push_back( pool.names[id] );
    task.pool_ids.push_back( id );
}

//! Room for n tables (a sweep materialises a task per scenario: no regrowth per table).
void reserveTables( GeneratedTask& task, int n )
{
    task.workload.tables.reserve( std::size_t( n ) );
    task.workload.table_names.reserve( std::size_t( n ) );
    task.pool_ids.reserve( std::size_t( n ) );
}

double fp32GiB( const TableSpec& t, int dim )
{
    return double( t.rows ) * dim * 4.0 / 1073741824.0; // GiB, as the papers' "GB"
}
} // namespace

TaskProtocol parseTaskProtocol( const std::string& name )
{
    const std::optional<TaskProtocol> protocol = enumFromName<TaskProtocol>( name );
    if ( protocol && *protocol != TaskProtocol::none )
        return *protocol;
    throw UsageError( "unknown task protocol '" + name + "' (expected " +
                      joinChoices( taskProtocolNames() ) + ")" );
}

std::vector<std::string> taskProtocolNames()
{
    std::vector<std::string> names;
    for ( const EnumEntry<TaskProtocol>& e : EnumNames<TaskProtocol>::entries )
        if ( e.value != TaskProtocol::none )
            names.emplace_back( e.name );
    return names;
}

ProtocolSpec protocolSpec( TaskProtocol protocol, const TaskOptions& options )
{
    ProtocolSpec s;
    switch ( protocol )
    {
    case TaskProtocol::neuroshard:
        s = { 4, 4, 4.0, DataType::fp32, 10, 59 };
        break;
    case TaskProtocol::dreamshard:
    {
        const int t = options.num_tables > 0 ? options.num_tables : 50;
        s = { 4, 4, 5.0, DataType::fp16, t, t };
        break;
    }
    case TaskProtocol::autoshard:
        s = { 8, 8, 7.0, DataType::fp16, 80, 80 };
        break;
    case TaskProtocol::surco:
        s = { 4, 4, 5.0, DataType::fp16, 10, 60 };
        break;
    case TaskProtocol::large_856x128:
        s = { 128, 8, 0.0, DataType::fp32, 856, 856 };
        break;
    case TaskProtocol::none:
        throw std::invalid_argument( "protocol 'none' generates no tasks" );
    }
    return s;
}

std::vector<int> dreamshardSplit( int pool_size, std::uint64_t seed )
{
    // One shuffle per seed (task id 0 of its own stream), shared by every task of the seed.
    CounterRng rng( seed, 0, kStreamPoolSplit );
    std::vector<int> scratch( pool_size ), ids( pool_size );
    chooseWithoutReplacement( rng, pool_size, pool_size, scratch.data(), ids.data() );
    return ids;
}

namespace
{

//! One task's draw of tables: what the protocols' draws share, and a draw per protocol.
struct TaskDraw
{
    TaskProtocol protocol;
    const ProtocolSpec& spec;
    const TablePool& pool;
    int pool_size;
    std::uint64_t seed, task_index;
    const TaskOptions& options;
    GeneratedTask& task;
    CounterRng &tables, &dims, &count;

    //! Throws std::invalid_argument when the pool holds fewer than n tables.
    void needPool( int n ) const
    {
        if ( pool_size < n )
            throw std::invalid_argument( std::string( nameOf( protocol ) ) + " needs " +
                                         std::to_string( n ) + " pool tables, the pool has " +
                                         std::to_string( pool_size ) );
    }

    //! NeuroShard: T tables with replacement, redrawn until they fit.
    void neuroShard()
    {
        // gen_tasks.py: T = randint(10, 60), ids with replacement, a dim per table; the whole
        // draw is repeated until the task's fp32 size fits 4 GPUs × 4 GB minus 1 GB.
        needPool( 1 );
        const double max_total_GiB = spec.memory_cap_GiB * spec.num_gpus - 1.0;
        for ( int attempt = 0;; ++attempt )
        {
            if ( attempt >= 10000 )
                throw std::invalid_argument( "neuroshard: no draw of the pool fits 15 GiB "
                                             "after 10000 attempts (tables too large)" );
            const int n = static_cast<int>( count.uniformInt( spec.min_tables, spec.max_tables ) );
            task.workload.tables.clear();
            task.workload.table_names.clear();
            task.pool_ids.clear();
            reserveTables( task, n );
            double total = 0.0;
            for ( int i = 0; i < n; ++i )
            {
                const int id = static_cast<int>( tables.uniformInt( 0, pool_size - 1 ) );
                const int dim = kNeuroShardDims[dims.uniformInt( 0, 5 )];
                total += fp32GiB( pool.tables[id], dim );
                addTable( task, pool, id, dim, spec.dtype );
            }
            task.resamples = attempt;
            if ( total <= max_total_GiB )
                break;
        }
    }

    //! Dreamshard and SurCo; `split_ids`: the seed's split if computed already (or null).
    void dreamShard( const std::vector<int>* split_ids )
    {
        // gen_tasks.py: shuffle the ids, first half train, second half test; T tables without
        // replacement from one half; dim 16. SurCo: T = 10, 20, ..., 60 in turn.
        std::vector<int> own_split;
        if ( !split_ids || int( split_ids->size() ) != pool_size )
        {
            own_split = dreamshardSplit( pool_size, seed );
            split_ids = &own_split;
        }
        const std::vector<int>& split = *split_ids;
        const int half = pool_size / 2;
        const int first = options.split == PoolSplit::train ? 0 : half;
        const int size = options.split == PoolSplit::train ? half : pool_size - half;
        const int n =
            protocol == TaskProtocol::surco ? 10 * ( 1 + int( task_index % 6 ) ) : spec.min_tables;
        if ( size < n )
            needPool( 2 * n );
        std::vector<int> scratch( size ), picked( n );
        chooseWithoutReplacement( tables, size, n, scratch.data(), picked.data() );
        reserveTables( task, n );
        for ( int i = 0; i < n; ++i )
            addTable( task, pool, split[first + picked[i]], 16, spec.dtype );
    }

    //! AutoShard: T tables without replacement from the whole pool.
    void autoShard()
    {
        // gen_dlrm_data.py: 80 tables without replacement from all tables, dims from {16, 32}.
        const int n = spec.min_tables;
        needPool( n );
        std::vector<int> scratch( pool_size ), picked( n );
        chooseWithoutReplacement( tables, pool_size, n, scratch.data(), picked.data() );
        reserveTables( task, n );
        for ( int i = 0; i < n; ++i )
            addTable( task, pool, picked[i], dims.uniformInt( 0, 1 ) ? 32 : 16, spec.dtype );
    }

    //! large-856x128: every table of the pool.
    void large856x128()
    {
        // The planner benchmark's scale task: every pool table once, NeuroShard's dims.
        needPool( spec.min_tables );
        reserveTables( task, spec.min_tables );
        for ( int i = 0; i < spec.min_tables; ++i )
            addTable( task, pool, i, kNeuroShardDims[dims.uniformInt( 0, 5 )], spec.dtype );
    }
};

} // namespace

GeneratedTask generateTask( TaskProtocol protocol, const TablePool& pool, std::uint64_t seed,
                            std::uint64_t task_index, const TaskOptions& options,
                            const DenseModel& dense, const std::vector<int>* split_ids )
{
    const ProtocolSpec spec = protocolSpec( protocol, options );
    const int pool_size = static_cast<int>( pool.size() );
    GeneratedTask task;
    task.num_gpus = spec.num_gpus;
    task.gpus_per_node = spec.gpus_per_node;
    task.memory_cap_GiB = spec.memory_cap_GiB;
    task.workload.dense = dense;
    task.workload.global_batch = options.global_batch;
    task.workload.name = std::string( nameOf( protocol ) ) + "#" + std::to_string( task_index );

    CounterRng tables( seed, task_index, kStreamTaskTables );
    CounterRng dims( seed, task_index, kStreamTaskDims );
    CounterRng count( seed, task_index, kStreamTaskCount );
    TaskDraw draw{ protocol, spec, pool,   pool_size, seed, task_index,
                   options,  task, tables, dims,      count };
    switch ( protocol )
    {
    case TaskProtocol::neuroshard:
        draw.neuroShard();
        break;
    case TaskProtocol::dreamshard:
    case TaskProtocol::surco:
        draw.dreamShard( split_ids );
        break;
    case TaskProtocol::autoshard:
        draw.autoShard();
        break;
    case TaskProtocol::large_856x128:
        draw.large856x128();
        break;
    case TaskProtocol::none:
        break;
    }
    return task;
}

} // namespace shardsweep
