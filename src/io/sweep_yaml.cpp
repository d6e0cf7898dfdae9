#include <algorithm>
#include <filesystem>
#include <set>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/domain/parallel_fields.hpp>
#include <shardsweep/io/sweep_yaml.hpp>
#include <shardsweep/io/text_file.hpp>
#include <shardsweep/io/yaml_util.hpp>
#include <shardsweep/model/rng.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>

namespace shardsweep
{

namespace
{
// Larger value lists are almost surely a typo in a range (a step of 1 over batch sizes).
constexpr std::size_t kMaxValues = 1000000;

// {from, to, step} or {from, to, factor}; both ends inclusive.
void expandRange( const YamlView& v, const Range& range, std::vector<std::int64_t>& out )
{
    v.checkKeys( { "from", "to" }, { "step", "factor" } );
    const std::int64_t from = v.getInt( "from", range );
    const std::int64_t to = v.getInt( "to", range );
    if ( to < from )
        v.at( "to" ).fail( "an integer >= from (" + std::to_string( from ) + ")" );
    if ( v.has( "step" ) && v.has( "factor" ) )
        v.at( "factor" ).fail( "either step or factor, not both" );
    if ( v.has( "factor" ) )
    {
        const std::int64_t factor = v.getInt( "factor", Range::atLeast( 2 ) );
        if ( from <= 0 )
            v.at( "from" ).fail( "an integer > 0 (a geometric range)" );
        for ( std::int64_t x = from; x <= to; x *= factor )
        {
            out.push_back( x );
            if ( x > to / factor )
                break;
        }
    }
    else
    {
        const std::int64_t step = v.getIntOr( "step", 1, Range::atLeast( 1 ) );
        if ( std::uint64_t( ( to - from ) / step ) >= kMaxValues )
            v.fail( "a range of at most " + std::to_string( kMaxValues ) + " values" );
        for ( std::int64_t x = from; x <= to; x += step )
            out.push_back( x );
    }
}

// A list of integers and ranges, or one range.
std::vector<std::int64_t> intValues( const YamlView& v, const Range& range )
{
    std::vector<std::int64_t> out;
    if ( v.isMap() )
        expandRange( v, range, out );
    else if ( v.isSequence() )
    {
        for ( std::size_t i = 0; i < v.size(); ++i )
        {
            const YamlView e = v.element( i );
            if ( e.isMap() )
                expandRange( e, range, out );
            else
                out.push_back( e.asInt( range ) );
        }
    }
    else
        v.fail( "a list of integers and ranges {from, to, step|factor}, or one range" );
    if ( out.empty() )
        v.fail( "at least one value" );
    if ( out.size() > kMaxValues )
        v.fail( "at most " + std::to_string( kMaxValues ) + " values" );
    return out;
}

std::vector<std::string> nameList( const YamlView& v, const std::vector<std::string>& names )
{
    v.requireSequence( "a list of names (" + joinChoices( names ) + ")" );
    if ( v.size() == 0 )
        v.fail( "at least one name" );
    std::vector<std::string> out;
    for ( std::size_t i = 0; i < v.size(); ++i )
        out.push_back( v.element( i ).asOneOf( names ) );
    return out;
}

std::vector<PlannerKind> planners( const YamlView& v )
{
    std::vector<std::string> names = enumNameList<PlannerKind>();
    names.resize( kNumPlanners ); // none: configurations come from a parallel: section
    std::vector<PlannerKind> out;
    for ( const std::string& n : nameList( v, names ) )
        out.push_back( PlannerKind( std::find( names.begin(), names.end(), n ) - names.begin() ) );
    return out;
}

std::vector<CostModel> costModels( const YamlView& v )
{
    std::vector<CostModel> out;
    for ( const std::string& n : nameList( v, enumNameList<CostModel>() ) )
        out.push_back( parseCostModelName( n ) );
    return out;
}

std::vector<std::string> paths( const YamlView& v )
{
    v.requireSequence( "a list of file paths" );
    if ( v.size() == 0 )
        v.fail( "at least one file path" );
    std::vector<std::string> out;
    for ( std::size_t i = 0; i < v.size(); ++i )
        out.push_back( v.resolvePath( v.element( i ).asName() ) );
    return out;
}

TablePoolSource poolSource( const std::optional<YamlView>& v )
{
    TablePoolSource pool;
    pool.locality_file = defaultLocalityFile();
    if ( !v )
        return pool;
    v->checkKeys( {}, { "csv", "synthetic", "seed", "locality", "block", "dim", "pooling_sigma",
                        "tilt_sigma", "min_touched_fraction", "max_rows" } );
    if ( v->has( "csv" ) == v->has( "synthetic" ) )
        v->fail( "a pool with exactly one of 'csv: PATH' or 'synthetic: NUM_TABLES'" );
    if ( v->has( "csv" ) )
    {
        for ( const std::string& k : v->keys() )
            if ( k != "csv" )
                v->at( k ).fail( "no other key beside 'csv' (the CSV holds the tables)" );
        pool.csv = v->resolvePath( v->getString( "csv" ) );
        return pool;
    }
    SyntheticPoolOptions& s = pool.synthetic;
    s.num_tables = v->getInt32( "synthetic", Range::between( 1, 1e7 ) );
    s.seed = std::uint64_t( v->getIntOr( "seed", std::int64_t( s.seed ), Range::nonNegative() ) );
    s.default_dim = v->getInt32Or( "dim", s.default_dim, Range::positive() );
    s.pooling_sigma = v->getDoubleOr( "pooling_sigma", s.pooling_sigma, Range::nonNegative() );
    s.tilt_sigma = v->getDoubleOr( "tilt_sigma", s.tilt_sigma, Range::nonNegative() );
    s.min_touched_fraction = v->getDoubleOr( "min_touched_fraction", s.min_touched_fraction,
                                             Range{ 0.0, 1.0, false, true } );
    s.max_rows = v->getIntOr( "max_rows", s.max_rows, Range::atLeast( 100 ) );
    if ( v->has( "locality" ) )
        pool.locality_file = v->resolvePath( v->getString( "locality" ) );
    pool.locality_block = v->getInt32Or( "block", 0, Range::nonNegative() );
    return pool;
}

// A list of names or one name, mapped through `table`.
template <class E>
std::vector<E> enumValues( const YamlView& v, const std::vector<std::pair<std::string, E>>& table )
{
    std::vector<E> out;
    if ( !v.isSequence() )
        return { v.asEnum( table ) };
    if ( v.size() == 0 )
        v.fail( "at least one value" );
    for ( std::size_t i = 0; i < v.size(); ++i )
        out.push_back( v.element( i ).asEnum( table ) );
    return out;
}

std::vector<int> intOrList( const YamlView& v, const Range& range )
{
    std::vector<int> out;
    if ( v.isScalar() )
        return { v.asInt32( range ) };
    for ( std::int64_t x : intValues( v, range ) )
        out.push_back( int( x ) );
    return out;
}

std::vector<int> boolValues( const YamlView& v )
{
    if ( !v.isSequence() )
        return { v.asBool() ? 1 : 0 };
    if ( v.size() == 0 )
        v.fail( "at least one value" );
    std::vector<int> out;
    for ( std::size_t i = 0; i < v.size(); ++i )
        out.push_back( v.element( i ).asBool() ? 1 : 0 );
    return out;
}

// A knob's value or list of values as ints (domain/parallel_fields.hpp).
std::vector<int> fieldValues( const YamlView& v, const ParallelField& f )
{
    switch ( f.kind )
    {
    case ParallelField::flag:
        return boolValues( v );
    case ParallelField::choice:
        return enumValues( v, fieldChoices( f ) );
    case ParallelField::integer:
    case ParallelField::real: // integer-valued tables have none
        break;
    }
    return intOrList( v, Range::between( f.min, f.max ) );
}

// The grid's `parallel:` section (docs/SWEEPS.md): each key a value or a list.
ParallelGrid parallelGrid( const YamlView& v, const std::vector<int>& gpu_counts )
{
    std::vector<std::string> keys = { "tp", "pp" };
    for ( const ParallelField& f : parallelFields() )
        keys.emplace_back( f.key );
    v.checkKeys( {}, keys );
    ParallelGrid g;
    const Range degree = Range::between( 1, 1 << 20 );
    const bool every_tp =
        v.has( "tp" ) && v.at( "tp" ).isScalar() && v.at( "tp" ).asString() == "every";
    const bool every_pp =
        v.has( "pp" ) && v.at( "pp" ).isScalar() && v.at( "pp" ).asString() == "every";
    if ( every_tp != every_pp )
        ( every_tp ? v.at( "pp" ) : v.at( "tp" ) )
            .fail( "'every' for both tp and pp (every layout of the GPU count) or for neither" );
    g.every_layout = every_tp;
    if ( g.every_layout )
    {
        for ( int n : gpu_counts )
            if ( n <= 0 )
                v.at( "tp" ).fail( "explicit grid gpu_counts with 'tp: every'",
                                   "the platform's own GPU count" );
    }
    else
    {
        if ( auto x = v.find( "tp" ) )
            g.tp = intOrList( *x, degree );
        if ( auto x = v.find( "pp" ) )
            g.pp = intOrList( *x, degree );
    }
    for ( std::size_t k = 0; k < std::size( kParallelFields ); ++k )
        if ( auto x = v.find( kParallelFields[k].key ) )
            g.values[k] = fieldValues( *x, kParallelFields[k] );
    return g;
}

SweepConfig parseRoot( const YamlView& root, const std::string& file, const std::string& text )
{
    SweepConfig c;
    c.file = file;
    c.text = text;
    root.checkKeys( { "kind", "name" }, { "description", "seed", "grid", "generators",
                                          "cost_model_file", "gemm_model" } );
    root.at( "kind" ).asOneOf( { "sweep" } );
    c.name = root.at( "name" ).asName();
    c.description = root.getStringOr( "description", "" );
    c.seed = std::uint64_t( root.getIntOr( "seed", 0, Range::nonNegative() ) );
    if ( !root.has( "grid" ) && !root.has( "generators" ) )
        root.fail( "a 'grid' or 'generators' section (or both)", "neither" );

    // Defaults shared by grid and generators.
    c.planners = { PlannerKind::round_robin };
    c.cost_models = { CostModel::native };
    c.batches = { 0 };
    c.gpu_counts = { 0 };
    if ( auto grid = root.find( "grid" ) )
    {
        grid->checkKeys( { "workloads", "platforms" },
                         { "planners", "batches", "gpu_counts", "cost_models", "parallel" } );
        c.workloads = paths( grid->at( "workloads" ) );
        c.platforms = paths( grid->at( "platforms" ) );
        if ( auto v = grid->find( "planners" ) )
            c.planners = planners( *v );
        if ( auto v = grid->find( "batches" ) )
            c.batches = intValues( *v, Range::positive() );
        if ( auto v = grid->find( "gpu_counts" ) )
        {
            c.gpu_counts.clear();
            for ( std::int64_t g : intValues( *v, Range::between( 1, 1 << 20 ) ) )
                c.gpu_counts.push_back( int( g ) );
        }
        if ( auto v = grid->find( "cost_models" ) )
            c.cost_models = costModels( *v );
        if ( auto v = grid->find( "parallel" ) )
        {
            c.has_parallel = true;
            c.parallel = parallelGrid( *v, c.gpu_counts );
            // With explicit configurations, planners are only run when listed.
            if ( !grid->has( "planners" ) )
                c.planners.clear();
        }
    }

    if ( auto gens = root.find( "generators" ) )
    {
        gens->requireSequence( "a list of task generators" );
        std::set<std::string> names;
        for ( std::size_t i = 0; i < gens->size(); ++i )
        {
            const YamlView g = gens->element( i );
            g.checkKeys( { "protocol", "count", "platform" },
                         { "name", "seed", "pool", "tables", "split", "planners", "batches",
                           "cost_models" } );
            TaskGeneratorConfig t;
            t.protocol = parseTaskProtocol( g.at( "protocol" ).asOneOf( taskProtocolNames() ) );
            t.name = g.has( "name" ) ? g.at( "name" ).asName() : nameOf( t.protocol );
            if ( !names.insert( t.name ).second )
                ( g.has( "name" ) ? g.at( "name" ) : g.at( "protocol" ) )
                    .fail( "a generator name not used before in this sweep (add 'name:')",
                           "'" + t.name + "'" );
            t.count = std::uint64_t( g.getInt( "count", Range::nonNegative() ) );
            t.seed = g.has( "seed" ) ? std::uint64_t( g.getInt( "seed", Range::nonNegative() ) )
                                     : mixSeed( c.seed, i );
            t.platform = g.resolvePath( g.at( "platform" ).asName() );
            t.pool = poolSource( g.find( "pool" ) );
            if ( auto v = g.find( "tables" ) )
            {
                if ( t.protocol != TaskProtocol::dreamshard )
                    v->fail( "no 'tables' key: only dreamshard tasks have a table-count option" );
                t.options.num_tables = v->asInt32( Range::between( 1, 1e6 ) );
            }
            if ( auto v = g.find( "split" ) )
            {
                if ( t.protocol != TaskProtocol::dreamshard && t.protocol != TaskProtocol::surco )
                    v->fail( "no 'split' key: only dreamshard and surco split the pool" );
                t.options.split = v->asEnum( enumPairs<PoolSplit>() );
            }
            t.planners = g.has( "planners" ) ? planners( g.at( "planners" ) ) : c.planners;
            t.batches = g.has( "batches" ) ? intValues( g.at( "batches" ), Range::positive() )
                                           : std::vector<std::int64_t>{ t.options.global_batch };
            t.cost_models =
                g.has( "cost_models" ) ? costModels( g.at( "cost_models" ) ) : c.cost_models;
            c.generators.push_back( t );
        }
    }
    if ( auto v = root.find( "gemm_model" ) )
        c.gemm_model = v->asOneOf( { "analytic", "learned" } );
    if ( auto v = root.find( "cost_model_file" ) )
        c.cost_model_file = v->resolvePath( v->asName() );
    else if ( usesCostModel( c, CostModel::learned ) )
        root.fail( "a 'cost_model_file: MODEL.mlp' (the learned model of cost_models: learned, "
                   "exported by postprocess/train_cost_model.py --export-mlp)",
                   "none" );
    return c;
}

} // namespace

SweepConfig parseSweep( const std::string& text, const std::string& name )
{
    return parseRoot( loadYamlString( text, name ), name, text );
}

SweepConfig readSweep( const std::string& path )
{
    return parseSweep( readTextFile( path ), path );
}

std::string defaultLocalityFile()
{
    const std::string name = "dlrm_datasets_2021_locality_stats.txt";
    const std::string source = std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/locality/" + name;
    if ( std::filesystem::exists( source ) )
        return source;
    return std::string( SHARDSWEEP_INSTALL_DATADIR ) + "/inputs/locality/" + name;
}

} // namespace shardsweep
