#include <filesystem>
#include <iterator>
#include <map>
#include <ostream>
#include <set>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/domain/parallel_fields.hpp>
#include <shardsweep/io/plan_yaml.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>
#include <sstream>

namespace shardsweep
{

namespace
{
struct ParsedShard
{
    ShardSpec spec;
    YamlView node;
};

bool overlaps( const ShardSpec& a, const ShardSpec& b )
{
    return a.row_offset < b.row_offset + b.num_rows && b.row_offset < a.row_offset + a.num_rows &&
           a.col_offset < b.col_offset + b.num_cols && b.col_offset < a.col_offset + a.num_cols;
}

//! Checks that shard `s` lies inside table `t` (named `name`) and has the shape that the
//! sharding type asks for.
void checkShardShape( const ParsedShard& s, const TableSpec& t, const std::string& name,
                      ShardingType type )
{
    if ( s.spec.row_offset + s.spec.num_rows > t.rows )
        s.node.fail( "rows inside table '" + name + "' (" + std::to_string( t.rows ) + " rows)",
                     "rows " + std::to_string( s.spec.row_offset ) + " to " +
                         std::to_string( s.spec.row_offset + s.spec.num_rows ) );
    if ( s.spec.col_offset + s.spec.num_cols > t.dim )
        s.node.fail( "columns inside table '" + name + "' (dim " + std::to_string( t.dim ) + ")",
                     "columns " + std::to_string( s.spec.col_offset ) + " to " +
                         std::to_string( s.spec.col_offset + s.spec.num_cols ) );
    const bool full_rows = s.spec.row_offset == 0 && s.spec.num_rows == t.rows;
    const bool full_cols = s.spec.col_offset == 0 && s.spec.num_cols == t.dim;
    bool ok = true;
    const char* shape = "";
    switch ( type )
    {
    case ShardingType::table_wise:
    case ShardingType::data_parallel:
        ok = full_rows && full_cols;
        shape = "the whole table";
        break;
    case ShardingType::column_wise:
    case ShardingType::table_column_wise:
        ok = full_rows;
        shape = "all rows of a column block";
        break;
    case ShardingType::row_wise:
    case ShardingType::table_row_wise:
        ok = full_cols;
        shape = "all columns of a row block";
        break;
    case ShardingType::grid_shard:
        break;
    }
    if ( !ok )
        s.node.fail( std::string( "a shard holding " ) + shape + " (" + nameOf( type ) + ")",
                     "rows " + std::to_string( s.spec.row_offset ) + "+" +
                         std::to_string( s.spec.num_rows ) + ", columns " +
                         std::to_string( s.spec.col_offset ) + "+" +
                         std::to_string( s.spec.num_cols ) );
}

//! data_parallel: one full copy per GPU (on each GPU of `platform` when given).
void checkDataParallelCopies( const YamlView& entry, const std::vector<ParsedShard>& shards,
                              const Platform* platform )
{
    std::set<int> gpus;
    for ( const auto& s : shards )
        if ( !gpus.insert( s.spec.gpu ).second )
            s.node.fail( "one copy per GPU (data_parallel)",
                         "a second copy on GPU " + std::to_string( s.spec.gpu ) );
    if ( platform && static_cast<int>( shards.size() ) != platform->numGpus() )
        entry.at( "shards" )
            .fail( "one full copy on each of the " + std::to_string( platform->numGpus() ) +
                       " GPUs",
                   std::to_string( shards.size() ) + " shards" );
}

//! The shards partition table `t`: no overlap, and the areas add up to rows x dim.
void checkPartition( const YamlView& entry, const std::vector<ParsedShard>& shards,
                     const TableSpec& t, const std::string& name )
{
    double area = 0.0;
    for ( std::size_t i = 0; i < shards.size(); ++i )
    {
        area += double( shards[i].spec.num_rows ) * shards[i].spec.num_cols;
        for ( std::size_t j = 0; j < i; ++j )
            if ( overlaps( shards[i].spec, shards[j].spec ) )
                shards[i].node.fail( "shards that do not overlap",
                                     "an overlap with shards[" + std::to_string( j ) + "]" );
    }
    if ( area != double( t.rows ) * t.dim )
        entry.at( "shards" )
            .fail( "shards covering all " + std::to_string( t.rows ) + " x " +
                       std::to_string( t.dim ) + " elements of '" + name + "'",
                   "shards covering " + formatNumber( area ) );
}

//! The row blocks of table_row_wise (and of each grid column block) stay inside one node.
void checkRowBlocksOnOneNode( const std::vector<ParsedShard>& shards, ShardingType type,
                              const Platform& platform )
{
    std::map<int, int> node_of_block;
    for ( const auto& s : shards )
    {
        int node = s.spec.gpu / platform.gpus_per_node;
        auto [it, fresh] = node_of_block.emplace( s.spec.col_offset, node );
        if ( !fresh && it->second != node )
            s.node.fail( std::string( "a GPU of node " ) + std::to_string( it->second ) +
                             " like the block's other shards (" + nameOf( type ) + ")",
                         "GPU " + std::to_string( s.spec.gpu ) + " on node " +
                             std::to_string( node ) );
    }
}

// Checks one table's shards against its TableSpec and sharding type.
void checkShards( const YamlView& entry, const std::vector<ParsedShard>& shards, const TableSpec& t,
                  const std::string& name, ShardingType type, const Platform* platform )
{
    for ( const auto& s : shards )
        checkShardShape( s, t, name, type );
    if ( type == ShardingType::table_wise && shards.size() != 1 )
        entry.at( "shards" )
            .fail( "exactly one shard (table_wise)", std::to_string( shards.size() ) + " shards" );
    if ( type == ShardingType::data_parallel )
    {
        checkDataParallelCopies( entry, shards, platform );
        return;
    }
    // Everything else partitions the table.
    checkPartition( entry, shards, t, name );
    if ( platform && ( type == ShardingType::table_row_wise || type == ShardingType::grid_shard ) )
        checkRowBlocksOnOneNode( shards, type, *platform );
}

//! The position in `workload` of the table `name` of a plan entry (its node: `name_node`).
std::size_t workloadTableOf( const YamlView& name_node, const std::string& name,
                             const Workload& workload,
                             const std::map<std::string, std::size_t>& index )
{
    auto it = index.find( name );
    if ( it == index.end() )
    {
        std::vector<std::string> names = workload.table_names;
        std::string c = closestName( name, names );
        name_node.fail( "a table of workload '" + workload.name + "'" +
                        ( c.empty() ? "" : " (did you mean '" + c + "'?)" ) );
    }
    return it->second;
}

//! The sharding, compute kernel and cache fraction of a plan entry.
void parseTablePlan( const YamlView& entry, TablePlan& tp )
{
    tp.sharding = entry.at( "sharding" ).asEnum( enumPairs<ShardingType>() );
    tp.kernel = entry.at( "compute_kernel" ).asEnum( enumPairs<ComputeKernel>() );
    if ( auto cf = entry.find( "cache_fraction" ) )
    {
        tp.cache_fraction = cf->asDouble( Range::fraction() );
        if ( tp.kernel != ComputeKernel::uvm_caching && tp.cache_fraction != 0.0 )
            cf->fail( "0 unless compute_kernel is fused_uvm_caching" );
    }
}

//! The 'shards:' list of a plan entry for table `t`, GPUs checked against `platform` if given.
std::vector<ParsedShard> parseEntryShards( const YamlView& entry, std::size_t t,
                                           const Platform* platform )
{
    YamlView shards = entry.at( "shards" );
    shards.requireSequence( "a list of shards" );
    if ( shards.size() == 0 )
        shards.fail( "at least one shard" );
    std::vector<ParsedShard> parsed;
    const Range gpu_range =
        platform ? Range::between( 0, platform->numGpus() - 1 ) : Range::between( 0, 1.0e7 );
    for ( std::size_t s = 0; s < shards.size(); ++s )
    {
        YamlView sn = shards.element( s );
        sn.checkKeys( { "gpu", "row_offset", "num_rows", "col_offset", "num_cols" } );
        ShardSpec spec;
        spec.table = static_cast<int>( t );
        spec.gpu = sn.getInt32( "gpu", gpu_range );
        spec.row_offset = sn.getInt( "row_offset", Range::between( 0, 1.0e13 ) );
        spec.num_rows = sn.getInt( "num_rows", Range::between( 1, 1.0e13 ) );
        spec.col_offset = sn.getInt32( "col_offset", Range::between( 0, 65535 ) );
        spec.num_cols = sn.getInt32( "num_cols", Range::between( 1, 65536 ) );
        parsed.push_back( { spec, sn } );
    }
    return parsed;
}

//! A DLRM plan's 'tables:' list: one entry per table of `workload` (when given) with its
//! sharding and shards; the plan's shards in table order.
Plan parseTablesPlan( const YamlView& root, const Workload* workload, const Platform* platform )
{
    YamlView list = root.at( "tables" );
    list.requireSequence( "a list with one entry per table" );
    std::map<std::string, std::size_t> index;
    if ( workload )
        for ( std::size_t i = 0; i < workload->table_names.size(); ++i )
            index.emplace( workload->table_names[i], i );
    const std::size_t num_tables = workload ? workload->tables.size() : list.size();

    Plan plan;
    plan.tables.resize( num_tables );
    std::vector<int> entry_of( num_tables, -1 );
    std::vector<std::vector<ShardSpec>> shards_of( num_tables );
    for ( std::size_t e = 0; e < list.size(); ++e )
    {
        YamlView entry = list.element( e );
        entry.checkKeys( { "table", "sharding", "compute_kernel", "shards" },
                         { "cache_fraction" } );
        YamlView name_node = entry.at( "table" );
        const std::string name = name_node.asName();
        const std::size_t t = workload ? workloadTableOf( name_node, name, *workload, index ) : e;
        if ( entry_of[t] >= 0 )
            name_node.fail( "one entry per table", "'" + name + "' again (first: tables[" +
                                                       std::to_string( entry_of[t] ) + "])" );
        entry_of[t] = static_cast<int>( e );

        TablePlan& tp = plan.tables[t];
        parseTablePlan( entry, tp );
        const std::vector<ParsedShard> parsed = parseEntryShards( entry, t, platform );
        if ( workload )
            checkShards( entry, parsed, workload->tables[t], name, tp.sharding, platform );
        for ( const auto& p : parsed )
            shards_of[t].push_back( p.spec );
    }
    if ( workload )
        for ( std::size_t t = 0; t < num_tables; ++t )
            if ( entry_of[t] < 0 )
                list.fail( "an entry for every table of workload '" + workload->name + "'",
                           "none for '" + workload->table_names[t] + "'" );
    for ( const auto& s : shards_of )
        plan.shards.insert( plan.shards.end(), s.begin(), s.end() );
    return plan;
}
} // namespace

namespace
{
//! One field of a `parallel:` mapping, or its default when absent.
int parallelFieldValue( const YamlView& node, const ParallelField& f )
{
    switch ( f.kind )
    {
    case ParallelField::flag:
        return node.getBoolOr( f.key, f.fallback != 0 ) ? 1 : 0;
    case ParallelField::choice:
        return node.getEnumOr( f.key, f.fallback, fieldChoices( f ) );
    case ParallelField::integer:
    case ParallelField::real: // integer-valued tables have none
        break;
    }
    return node.getInt32Or( f.key, f.fallback, Range::between( f.min, f.max ) );
}
} // namespace

ParallelConfig parseParallelConfig( const YamlView& node, const TransformerSpec* model,
                                    int num_gpus, std::int64_t global_batch )
{
    std::vector<std::string> keys = { "tp", "pp", "dp", "global_batch" };
    for ( const ParallelField& f : parallelFields() )
        keys.emplace_back( f.key );
    node.checkKeys( {}, keys );
    const Range degree = Range::between( 1, 1 << 20 );
    ParallelConfig c = defaultParallelConfig();
    c.tp = node.getInt32Or( "tp", 1, degree );
    c.pp = node.getInt32Or( "pp", 1, degree );
    for ( const ParallelField& f : parallelFields() )
        f.set( c, parallelFieldValue( node, f ) );
    const int derived_dp = num_gpus > 0 ? num_gpus / ( c.tp * c.pp * c.cp ) : 1;
    c.dp = node.getInt32Or( "dp", derived_dp, degree );
    c.global_batch = node.getIntOr( "global_batch", global_batch, Range::between( 1, 1.0e9 ) );
    auto at = [&]( const char* key ) { return node.has( key ) ? node.at( key ) : node; };
    auto n = []( std::int64_t x ) { return std::to_string( x ); };
    if ( model )
    {
        if ( const std::string error = tensorParallelError( *model, c.tp ); !error.empty() )
            at( "tp" ).fail( "a tensor-parallel degree that splits the model (" + error + ")",
                             "'" + n( c.tp ) + "'" );
    }
    if ( num_gpus > 0 && std::int64_t( c.numGpus() ) != num_gpus )
    {
        const std::string cp = c.cp > 1 ? " x cp" : "";
        at( node.has( "dp" ) ? "dp" : "pp" )
            .fail( "tp" + cp + " x pp x dp = the " + n( num_gpus ) + " GPUs",
                   n( c.tp ) + ( c.cp > 1 ? " x " + n( c.cp ) : "" ) + " x " + n( c.pp ) + " x " +
                       n( c.dp ) + " = " + n( std::int64_t( c.tp ) * c.cp * c.pp * c.dp ) );
    }
    if ( c.global_batch > 0 && c.global_batch % ( std::int64_t( c.micro_batch ) * c.dp ) != 0 )
        at( "micro_batch" )
            .fail( "micro_batch x dp dividing the global batch " + n( c.global_batch ),
                   n( c.micro_batch ) + " x " + n( c.dp ) + " = " +
                       n( std::int64_t( c.micro_batch ) * c.dp ) );
    if ( model )
        if ( const ModelFieldProblem p = parallelKnobProblem( *model, c ); !p.key.empty() )
        {
            const ParallelField* f = findParallelField( p.key );
            const std::string value = f ? parallelFieldText( *f, c ) : n( c.pp );
            at( p.key.c_str() ).fail( p.expected, "'" + value + "'" );
        }
    return c;
}

std::string parallelConfigYaml( const ParallelConfig& c )
{
    std::ostringstream out;
    out << "{ tp: " << c.tp << ", pp: " << c.pp << ", dp: " << c.dp;
    for ( const ParallelField& f : parallelFields() )
    {
        // A default that means "derived" (even stages) lies outside the range: left out, as a
        // reader takes it from the missing key.
        const bool derived =
            f.get( c ) == f.fallback && ( f.fallback < f.min || f.fallback > f.max );
        if ( derived )
            continue;
        out << ", " << f.key << ": " << parallelFieldText( f, c );
        if ( std::string( f.key ) == "micro_batch" ) // next to the micro-batch that divides it
            out << ", global_batch: " << c.global_batch;
    }
    out << " }";
    return out.str();
}

void writeTransformerPlanYaml( std::ostream& out, const ParallelConfig& config,
                               const std::string& workload_name )
{
    out << "kind: plan\n";
    if ( !workload_name.empty() )
        out << "workload: " << jsonQuoted( workload_name ) << "\n";
    out << "parallel: " << parallelConfigYaml( config ) << "\n";
}

Plan parsePlan( const YamlView& root, const Workload* workload, const Platform* platform,
                bool embedded )
{
    const bool transformer = root.isMap() && root.has( "parallel" );
    std::vector<std::string> required = { transformer ? "parallel" : "tables" };
    if ( embedded && !root.has( "kind" ) )
        root.requireMap( "a plan file path or a mapping of plan fields" );
    else
    {
        expectKind( root, "plan" );
        required.insert( required.begin(), "kind" );
    }
    root.checkKeys( required, { "name", "description", "workload", "source" } );
    if ( workload && workload->isTransformer() != transformer )
        root.at( required.back() )
            .fail( workload->isTransformer()
                       ? "a 'parallel:' configuration (workload '" + workload->name +
                             "' is a transformer)"
                       : "'tables:' (workload '" + workload->name + "' is a DLRM)",
                   "'" + required.back() + ":'" );
    if ( transformer )
    {
        Plan plan;
        plan.parallel = parseParallelConfig(
            root.at( "parallel" ), workload ? &workload->transformer : nullptr,
            platform ? platform->numGpus() : 0, workload ? workload->global_batch : 0 );
        return plan;
    }
    return parseTablesPlan( root, workload, platform );
}

std::string planSourceYaml( const PlanSource& source, const std::string& plan_path )
{
    const std::filesystem::path folder =
        std::filesystem::absolute( plan_path ).lexically_normal().parent_path();
    // Relative to the plan's folder (the pair moves together with a checkout), absolute when
    // they share no folder but the root (a plan in /tmp of inputs in /home).
    auto relative = [&]( const std::string& path )
    {
        const std::filesystem::path file = std::filesystem::absolute( path ).lexically_normal();
        const bool share = std::distance( file.begin(), file.end() ) > 1 &&
                           std::distance( folder.begin(), folder.end() ) > 1 &&
                           *std::next( file.begin() ) == *std::next( folder.begin() );
        return jsonQuoted( ( share ? file.lexically_relative( folder ) : file ).generic_string() );
    };
    return "source: { workload: " + relative( source.workload_path ) +
           ", platform: " + relative( source.platform_path ) +
           ", gpus: " + std::to_string( source.gpus ) +
           ", global_batch: " + std::to_string( source.global_batch ) + " }\n";
}

Plan readPlanFile( const std::string& path, const Workload* workload, const Platform* platform )
{
    return parsePlan( loadYamlFile( path ), workload, platform );
}

Plan parsePlanString( const std::string& text, const std::string& name, const Workload* workload,
                      const Platform* platform )
{
    return parsePlan( loadYamlString( text, name ), workload, platform );
}

void writePlanYaml( std::ostream& out, const Plan& plan,
                    const std::vector<std::string>& table_names, const std::string& workload_name )
{
    out << "kind: plan\n";
    if ( !workload_name.empty() )
        out << "workload: " << jsonQuoted( workload_name ) << "\n";
    out << "tables:\n";
    for ( std::size_t t = 0; t < plan.tables.size(); ++t )
    {
        const TablePlan& tp = plan.tables[t];
        out << "  - table: "
            << jsonQuoted( t < table_names.size() ? table_names[t] : "t" + std::to_string( t ) )
            << "\n"
            << "    sharding: " << nameOf( tp.sharding ) << "\n"
            << "    compute_kernel: " << nameOf( tp.kernel ) << "\n";
        if ( tp.kernel == ComputeKernel::uvm_caching )
            out << "    cache_fraction: " << formatNumber( tp.cache_fraction ) << "\n";
        out << "    shards:\n";
        for ( const ShardSpec& s : plan.shards )
            if ( s.table == static_cast<int>( t ) )
                out << "      - { gpu: " << s.gpu << ", row_offset: " << s.row_offset
                    << ", num_rows: " << s.num_rows << ", col_offset: " << s.col_offset
                    << ", num_cols: " << s.num_cols << " }\n";
    }
}

std::string planToYaml( const Plan& plan, const std::vector<std::string>& table_names,
                        const std::string& workload_name )
{
    std::ostringstream out;
    writePlanYaml( out, plan, table_names, workload_name );
    return out.str();
}

} // namespace shardsweep
