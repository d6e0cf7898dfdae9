#include <filesystem>
#include <shardsweep/io/plan_yaml.hpp>
#include <shardsweep/io/platform_yaml.hpp>
#include <shardsweep/io/scenario_yaml.hpp>
#include <shardsweep/io/workload_yaml.hpp>

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
} // namespace

ScenarioFile parseScenario( const YamlView& root, const GpuCatalog& catalog )
{
    expectKind( root, "scenario" );
    root.checkKeys( { "kind", "workload", "platform", "plan" },
                    { "name", "description", "global_batch", "cost_model" } );
    ScenarioFile s;
    s.name = root.find( "name" ) ? root.at( "name" ).asName()
                                 : std::filesystem::path( root.file() ).stem().string();
    YamlView workload = root.at( "workload" );
    YamlView platform = root.at( "platform" );
    s.workload = parseWorkload( documentOf( workload ), !workload.isScalar() );
    s.platform = parsePlatform( documentOf( platform ), catalog, !platform.isScalar() );
    s.cost_model = root.find( "cost_model" )
                       ? root.at( "cost_model" ).asOneOf( { "native", "torchrec" } )
                       : std::string( "native" );

    const std::int64_t gpus = s.platform.platform.numGpus();
    if ( auto b = root.find( "global_batch" ) )
    {
        s.global_batch = b->asInt( Range::between( 1, 1.0e9 ) );
        if ( s.global_batch % gpus != 0 )
            b->fail( "a batch divisible by the platform's " + std::to_string( gpus ) + " GPUs",
                     "'" + std::to_string( s.global_batch ) + "'" );
    }
    else
    {
        s.global_batch = s.workload.global_batch;
        if ( s.global_batch % gpus != 0 )
            workload.fail( "a workload whose global_batch is divisible by the platform's " +
                               std::to_string( gpus ) + " GPUs",
                           "global_batch " + std::to_string( s.global_batch ) );
    }
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
