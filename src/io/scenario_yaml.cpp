#include <filesystem>
#include <shardsweep/io/plan_yaml.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/scenario_yaml.hpp>
#include <shardsweep/io/workload_yaml.hpp>
#include <shardsweep/scenario/scenario_space.hpp>

namespace shardsweep
{

namespace
{
// A `key:` holding either the path of a file (relative to this file) or the document inline.
YamlView documentOf( const YamlView& value )
{
    if ( value.isScalar() )
        return loadYamlFile( value.resolvePath( value.asName() ) );
    return value;
}

// Resizes the scenario's platform to `gpus` GPUs, as sweeps do; `where` is blamed when it cannot.
void resizeScenarioPlatform( ScenarioFile& s, int gpus, const YamlView& where )
{
    try
    {
        s.platform.platform = resizePlatform( s.platform.platform, gpus );
    }
    catch ( const std::invalid_argument& e )
    {
        where.fail( "a GPU count platform '" + s.platform.name + "' can take",
                    std::to_string( gpus ) + " GPUs (" + e.what() + ")" );
    }
}

// A DLRM scenario's global batch: `batch` when given, else the workload's (`workload` is blamed);
// the platform's GPUs must divide it.
std::int64_t dlrmGlobalBatch( const ScenarioFile& s, const YamlView* batch,
                              const YamlView& workload )
{
    const std::int64_t gpus = s.platform.platform.numGpus();
    if ( batch )
    {
        const std::int64_t b = batch->asInt( Range::between( 1, 1.0e9 ) );
        if ( b % gpus != 0 )
            batch->fail( "a batch divisible by the platform's " + std::to_string( gpus ) + " GPUs",
                         "'" + std::to_string( b ) + "'" );
        return b;
    }
    if ( s.workload.global_batch % gpus != 0 )
        workload.fail( "a workload whose global_batch is divisible by the platform's " +
                           std::to_string( gpus ) + " GPUs",
                       "global_batch " + std::to_string( s.workload.global_batch ) );
    return s.workload.global_batch;
}

// A plan file that `shardsweep plan -o` wrote: its `source:` names the workload and platform
// (paths relative to the plan), the GPU count and the batch it was planned for.
ScenarioFile scenarioOfPlanFile( const YamlView& root, const GpuCatalog& catalog )
{
    if ( !root.has( "source" ) )
        root.at( "kind" ).fail( "a scenario file, or a plan written by 'shardsweep plan -o' (its "
                                "'source:' names the workload and platform)",
                                "a plan without 'source:'" );
    const YamlView source = root.at( "source" );
    source.checkKeys( { "workload", "platform" }, { "gpus", "global_batch" } );
    ScenarioFile s;
    s.name = std::filesystem::path( root.file() ).stem().string();
    s.workload = parseWorkload( documentOf( source.at( "workload" ) ) );
    s.platform = parsePlatform( documentOf( source.at( "platform" ) ), catalog );
    if ( auto g = source.find( "gpus" ) )
        resizeScenarioPlatform( s, g->asInt32( Range::between( 1, 1 << 20 ) ), *g );
    if ( s.workload.isTransformer() )
    {
        s.plan = parsePlan( root, &s.workload, &s.platform.platform );
        s.global_batch = s.plan.parallel.global_batch;
        return s;
    }
    const auto batch = source.find( "global_batch" );
    s.global_batch = dlrmGlobalBatch( s, batch ? &*batch : nullptr, source.at( "workload" ) );
    s.plan = parsePlan( root, &s.workload, &s.platform.platform );
    return s;
}

// A transformer scenario: the parallel configuration inline (`parallel:`) or from a plan file
// (`plan:`); `gpus:` (else tp·pp·dp when dp is given, else the platform's own) resizes the
// platform to that many GPUs, as sweeps do.
void parseTransformerScenario( const YamlView& root, ScenarioFile& s )
{
    root.checkKeys(
        { "kind", "workload", "platform" },
        { "name", "description", "global_batch", "cost_model", "gpus", "parallel", "plan" } );
    if ( root.has( "parallel" ) == root.has( "plan" ) )
        root.fail( "exactly one of 'parallel:' (the configuration inline) or 'plan:' (a plan "
                   "file) for transformer workload '" +
                       s.workload.name + "'",
                   root.has( "plan" ) ? "both" : "neither" );
    if ( auto c = root.find( "cost_model" ) )
        c->asOneOf( { "native" } );
    YamlView parallel = root.has( "parallel" ) ? root.at( "parallel" ) : root.at( "plan" );
    if ( !root.has( "parallel" ) )
    {
        YamlView doc = documentOf( parallel );
        parsePlan( doc, &s.workload, nullptr, !parallel.isScalar() );
        parallel = doc.at( "parallel" );
    }
    parallel.requireMap( "a mapping of parallel-configuration fields" );
    int gpus = s.platform.platform.numGpus();
    if ( auto g = root.find( "gpus" ) )
        gpus = g->asInt32( Range::between( 1, 1 << 20 ) );
    else if ( parallel.has( "dp" ) )
        gpus = parallel.getInt32Or( "tp", 1, Range::between( 1, 1 << 20 ) ) *
               parallel.getInt32Or( "cp", 1, Range::between( 1, 1 << 20 ) ) *
               parallel.getInt32Or( "pp", 1, Range::between( 1, 1 << 20 ) ) *
               parallel.getInt32( "dp", Range::between( 1, 1 << 20 ) );
    resizeScenarioPlatform( s, gpus, root.has( "gpus" ) ? root.at( "gpus" ) : parallel );
    s.global_batch = s.workload.global_batch;
    if ( auto b = root.find( "global_batch" ) )
        s.global_batch = b->asInt( Range::between( 1, 1.0e9 ) );
    // A global_batch inside the configuration wins over the scenario's and the workload's.
    s.plan.parallel =
        parseParallelConfig( parallel, &s.workload.transformer, gpus, s.global_batch );
    s.global_batch = s.plan.parallel.global_batch;
}
} // namespace

ScenarioFile parseScenario( const YamlView& root, const GpuCatalog& catalog )
{
    if ( root.isMap() && root.has( "kind" ) && root.at( "kind" ).isScalar() &&
         root.at( "kind" ).asString() == "plan" )
        return scenarioOfPlanFile( root, catalog );
    expectKind( root, "scenario" );
    ScenarioFile s;
    s.name = root.find( "name" ) ? root.at( "name" ).asName()
                                 : std::filesystem::path( root.file() ).stem().string();
    YamlView workload = root.at( "workload" );
    YamlView platform = root.at( "platform" );
    s.workload = parseWorkload( documentOf( workload ), !workload.isScalar() );
    s.platform = parsePlatform( documentOf( platform ), catalog, !platform.isScalar() );
    if ( s.workload.isTransformer() )
    {
        parseTransformerScenario( root, s );
        return s;
    }
    root.checkKeys( { "kind", "workload", "platform", "plan" },
                    { "name", "description", "global_batch", "cost_model", "cost_model_file" } );
    s.cost_model = root.find( "cost_model" )
                       ? root.at( "cost_model" ).asOneOf( { "native", "torchrec", "learned" } )
                       : std::string( "native" );
    if ( auto f = root.find( "cost_model_file" ) )
    {
        if ( s.cost_model != "learned" )
            f->fail( "no 'cost_model_file' unless cost_model: learned", "'" + s.cost_model + "'" );
        s.cost_model_file = f->resolvePath( f->asName() );
    }
    else if ( s.cost_model == "learned" )
        root.at( "cost_model" )
            .fail( "a 'cost_model_file: MODEL.mlp' beside cost_model: learned", "none" );

    const auto batch = root.find( "global_batch" );
    s.global_batch = dlrmGlobalBatch( s, batch ? &*batch : nullptr, workload );
    YamlView plan = root.at( "plan" );
    YamlView plan_doc = documentOf( plan );
    s.plan = parsePlan( plan_doc, &s.workload, &s.platform.platform, !plan.isScalar() );
    return s;
}

ScenarioFile readScenarioFile( const std::string& path )
{
    return readScenarioFile( path, defaultGpuCatalog() );
}

ScenarioFile readScenarioFile( const std::string& path, const GpuCatalog& catalog )
{
    return parseScenario( loadYamlFile( path ), catalog );
}

ScenarioFile parseScenarioString( const std::string& text, const std::string& name,
                                  const GpuCatalog& catalog )
{
    return parseScenario( loadYamlString( text, name ), catalog );
}

} // namespace shardsweep
