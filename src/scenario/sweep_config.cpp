#include <algorithm>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/parallel_fields.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <shardsweep/scenario/sweep_config.hpp>

namespace shardsweep
{

CostModel parseCostModelName( const std::string& name )
{
    if ( name == "native" )
        return CostModel::native;
    if ( name == "torchrec" )
        return CostModel::torchrec;
    if ( name == "learned" )
        return CostModel::learned;
    throw UsageError( "unknown cost model '" + name + "' (expected native, torchrec or learned)" );
}

bool usesCostModel( const SweepConfig& config, CostModel model )
{
    const auto in = [model]( const std::vector<CostModel>& list )
    { return std::find( list.begin(), list.end(), model ) != list.end(); };
    if ( config.gridSize() > 0 && in( config.cost_models ) )
        return true;
    for ( const TaskGeneratorConfig& g : config.generators )
        if ( in( g.cost_models ) )
            return true;
    return false;
}

std::uint64_t ParallelGrid::layoutCount( const std::vector<int>& gpu_counts ) const
{
    if ( !every_layout )
        return std::uint64_t( tp.size() ) * pp.size();
    std::uint64_t most = 0;
    for ( int g : gpu_counts )
        most = std::max<std::uint64_t>( most, gpuLayouts( g ).size() );
    return most;
}

std::vector<std::vector<int>> ParallelGrid::defaultValues()
{
    std::vector<std::vector<int>> v;
    for ( const ParallelField& f : parallelFields() )
        v.push_back( { f.fallback } );
    return v;
}

std::uint64_t ParallelGrid::size( const std::vector<int>& gpu_counts ) const
{
    std::uint64_t n = layoutCount( gpu_counts );
    for ( const std::vector<int>& v : values )
        n *= v.size();
    return n;
}

ParallelConfig ParallelGrid::at( std::uint64_t index, int num_gpus,
                                 std::int64_t global_batch ) const
{
    // Mixed radix: the last field of parallelFields() fastest, the layout slowest.
    auto take = [&index]( std::size_t radix )
    {
        const std::uint64_t d = index % radix;
        index /= radix;
        return std::size_t( d );
    };
    ParallelConfig c;
    c.global_batch = global_batch;
    for ( std::size_t k = std::size( kParallelFields ); k-- > 0; )
        kParallelFields[k].set( c, values[k][take( values[k].size() )] );
    c.tp = c.pp = c.dp = 0;
    if ( every_layout )
    {
        // A sweep materialises thousands of scenarios per GPU count, and gpuLayouts allocates:
        // each thread keeps the layouts of the last count it saw (they were a third of the
        // materialisation time of a transformer grid; docs/PERFORMANCE.md).
        thread_local int layouts_of = -1;
        thread_local std::vector<std::pair<int, int>> layouts;
        if ( layouts_of != num_gpus )
        {
            layouts = gpuLayouts( num_gpus );
            layouts_of = num_gpus;
        }
        if ( index < layouts.size() )
        {
            c.tp = layouts[index].first;
            c.pp = layouts[index].second;
        }
    }
    else
    {
        c.pp = pp[take( pp.size() )];
        c.tp = tp[take( tp.size() )];
        if ( num_gpus % ( c.tp * c.pp ) != 0 )
            c.tp = c.pp = 0;
    }
    // Context parallelism takes its share of the GPUs before data parallelism.
    if ( c.tp > 0 && num_gpus % ( c.tp * c.pp * c.cp ) != 0 )
        c.tp = c.pp = 0;
    if ( c.tp > 0 )
        c.dp = num_gpus / ( c.tp * c.pp * c.cp );
    return c;
}

std::uint64_t SweepConfig::plannerAxisSize() const
{
    return planners.size() + ( has_parallel ? parallel.size( gpu_counts ) : 0 );
}

std::uint64_t SweepConfig::gridSize() const
{
    return std::uint64_t( workloads.size() ) * platforms.size() * gpu_counts.size() *
           batches.size() * plannerAxisSize() * cost_models.size();
}

std::uint64_t sweepConfigHash( const SweepConfig& config, std::uint64_t files_fingerprint )
{
    std::uint64_t h = 0xcbf29ce484222325ull;
    const auto add = [&]( unsigned char c )
    {
        h ^= c;
        h *= 0x100000001b3ull;
    };
    for ( unsigned char c : config.text )
        add( c );
    for ( int byte = 0; byte < 8; ++byte )
        add( static_cast<unsigned char>( files_fingerprint >> ( 8 * byte ) ) );
    return h;
}

} // namespace shardsweep
