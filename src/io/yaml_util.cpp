// YamlView: strict navigation of a YAML document with file:line:col errors, typed values and
// fields; loading files and checking their kind (yaml_util.hpp). Number parsing and the wording
// of names and ranges: input_text.cpp.
#include <filesystem>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/input_text.hpp>
#include <shardsweep/io/text_file.hpp>
#include <shardsweep/io/yaml_util.hpp>

namespace shardsweep
{

// ---- YamlView ------------------------------------------------------------------------------

YamlView::YamlView( YAML::Node node, std::string file, std::string path )
    : _node( std::move( node ) ), _file( std::move( file ) ), _path( std::move( path ) )
{
    if ( _node.IsDefined() )
    {
        YAML::Mark m = _node.Mark();
        if ( m.line >= 0 )
        {
            _line = m.line + 1;
            _column = m.column + 1;
        }
    }
}

int YamlView::line() const
{
    return _line;
}
int YamlView::column() const
{
    return _column;
}

std::string YamlView::describe() const
{
    if ( !_node.IsDefined() || _node.IsNull() )
        return "nothing";
    if ( _node.IsMap() )
        return "a mapping";
    if ( _node.IsSequence() )
        return "a list";
    std::string s = _node.Scalar();
    if ( s.size() > 60 )
        s = s.substr( 0, 57 ) + "...";
    return "'" + s + "'";
}

void YamlView::fail( const std::string& expected ) const
{
    fail( expected, describe() );
}

void YamlView::fail( const std::string& expected, const std::string& found ) const
{
    throw InputError( _file, _line, _column, _path.empty() ? std::string( "(document)" ) : _path,
                      expected, found );
}

std::string YamlView::childPath( const std::string& key ) const
{
    return _path.empty() ? key : _path + "." + key;
}

void YamlView::requireMap( const std::string& what ) const
{
    if ( !_node.IsMap() )
        fail( what );
}

void YamlView::requireSequence( const std::string& what ) const
{
    if ( !_node.IsSequence() )
        fail( what );
}

bool YamlView::has( const std::string& key ) const
{
    if ( !_node.IsMap() )
        return false;
    for ( auto it = _node.begin(); it != _node.end(); ++it )
        if ( it->first.IsScalar() && it->first.Scalar() == key )
            return true;
    return false;
}

YamlView YamlView::at( const std::string& key ) const
{
    requireMap();
    for ( auto it = _node.begin(); it != _node.end(); ++it )
    {
        if ( it->first.IsScalar() && it->first.Scalar() == key )
        {
            YamlView v( it->second, _file, childPath( key ) );
            if ( v._line == 0 ) // some null values carry no mark: point at the key
            {
                YamlView k( it->first, _file, v._path );
                v._line = k._line;
                v._column = k._column;
            }
            return v;
        }
    }
    YamlView missing( YAML::Node(), _file, childPath( key ) );
    missing._line = _line;
    missing._column = _column;
    missing.fail( "a value (the field is required)", "no '" + key + "' key in this mapping" );
}

std::optional<YamlView> YamlView::find( const std::string& key ) const
{
    if ( !has( key ) )
        return std::nullopt;
    YamlView v = at( key );
    if ( v.isNull() )
        return std::nullopt;
    return v;
}

YamlView YamlView::element( std::size_t i ) const
{
    requireSequence();
    YamlView v( _node[i], _file, _path + "[" + std::to_string( i ) + "]" );
    if ( v._line == 0 )
    {
        v._line = _line;
        v._column = _column;
    }
    return v;
}

std::size_t YamlView::size() const
{
    return _node.IsMap() || _node.IsSequence() ? _node.size() : 0;
}

std::vector<std::string> YamlView::keys() const
{
    std::vector<std::string> out;
    if ( _node.IsMap() )
        for ( auto it = _node.begin(); it != _node.end(); ++it )
            out.push_back( it->first.IsScalar() ? it->first.Scalar() : std::string() );
    return out;
}

void YamlView::checkKeys( const std::vector<std::string>& required,
                          const std::vector<std::string>& optional ) const
{
    requireMap();
    std::vector<std::string> allowed = required;
    for ( const auto& o : optional )
        if ( std::find( allowed.begin(), allowed.end(), o ) == allowed.end() )
            allowed.push_back( o );
    std::vector<std::pair<std::string, int>> seen;
    for ( auto it = _node.begin(); it != _node.end(); ++it )
    {
        YamlView key( it->first, _file, _path );
        if ( !it->first.IsScalar() )
            key.fail( "a key name" );
        const std::string name = it->first.Scalar();
        key._path = childPath( name );
        if ( std::find( allowed.begin(), allowed.end(), name ) == allowed.end() )
            key.fail( "one of the keys " + joinChoices( allowed ) + didYouMean( name, allowed ),
                      "unknown key '" + name + "'" );
        for ( const auto& s : seen )
            if ( s.first == name )
                key.fail( "each key once", "'" + name + "' again (first on line " +
                                               std::to_string( s.second ) + ")" );
        seen.emplace_back( name, key._line );
    }
    for ( const auto& r : required )
        at( r ); // throws for a missing key, pointing at this mapping
}

// ---- values --------------------------------------------------------------------------------

double YamlView::asDouble( const Range& range ) const
{
    double x = 0.0;
    if ( !_node.IsScalar() || !parseNumber( _node.Scalar(), x ) || !range.contains( x ) )
        fail( range.describe( "a number" ) );
    return x;
}

std::int64_t YamlView::asInt( const Range& range ) const
{
    std::int64_t x = 0;
    if ( !_node.IsScalar() || !parseInteger( _node.Scalar(), x ) ||
         !range.contains( static_cast<double>( x ) ) )
        fail( range.describe( "an integer" ) );
    return x;
}

int YamlView::asInt32( const Range& range ) const
{
    Range r = range;
    r.min = std::max( r.min, static_cast<double>( std::numeric_limits<int>::min() ) );
    r.max = std::min( r.max, static_cast<double>( std::numeric_limits<int>::max() ) );
    std::int64_t x = 0;
    if ( !_node.IsScalar() || !parseInteger( _node.Scalar(), x ) ||
         !r.contains( static_cast<double>( x ) ) )
        fail( range.describe( "an integer" ) );
    return static_cast<int>( x );
}

bool YamlView::asBool() const
{
    if ( _node.IsScalar() )
    {
        std::string s = lowerCase( _node.Scalar() );
        if ( s == "true" )
            return true;
        if ( s == "false" )
            return false;
    }
    fail( "true or false" );
}

std::string YamlView::asString() const
{
    if ( !_node.IsScalar() )
        fail( "a text value" );
    return _node.Scalar();
}

std::string YamlView::asName() const
{
    if ( !_node.IsScalar() || _node.Scalar().empty() )
        fail( "a non-empty name" );
    return _node.Scalar();
}

std::string YamlView::asOneOf( const std::vector<std::string>& names ) const
{
    if ( _node.IsScalar() )
    {
        const std::string s = _node.Scalar();
        if ( std::find( names.begin(), names.end(), s ) != names.end() )
            return s;
        fail( "one of " + joinChoices( names ) + didYouMean( s, names ) );
    }
    fail( "one of " + joinChoices( names ) );
}

std::vector<double> YamlView::asDoubleList( const Range& range ) const
{
    requireSequence( "a list of numbers" );
    std::vector<double> out;
    for ( std::size_t i = 0; i < size(); ++i )
        out.push_back( element( i ).asDouble( range ) );
    return out;
}

std::vector<std::int64_t> YamlView::asIntList( const Range& range ) const
{
    requireSequence( "a list of integers" );
    std::vector<std::int64_t> out;
    for ( std::size_t i = 0; i < size(); ++i )
        out.push_back( element( i ).asInt( range ) );
    return out;
}

std::vector<std::string> YamlView::asStringList() const
{
    requireSequence( "a list of names" );
    std::vector<std::string> out;
    for ( std::size_t i = 0; i < size(); ++i )
        out.push_back( element( i ).asName() );
    return out;
}

// ---- fields --------------------------------------------------------------------------------

double YamlView::getDouble( const std::string& key, const Range& range ) const
{
    return at( key ).asDouble( range );
}

double YamlView::getDoubleOr( const std::string& key, double fallback, const Range& range ) const
{
    auto v = find( key );
    return v ? v->asDouble( range ) : fallback;
}

std::int64_t YamlView::getInt( const std::string& key, const Range& range ) const
{
    return at( key ).asInt( range );
}

std::int64_t YamlView::getIntOr( const std::string& key, std::int64_t fallback,
                                 const Range& range ) const
{
    auto v = find( key );
    return v ? v->asInt( range ) : fallback;
}

int YamlView::getInt32( const std::string& key, const Range& range ) const
{
    return at( key ).asInt32( range );
}

int YamlView::getInt32Or( const std::string& key, int fallback, const Range& range ) const
{
    auto v = find( key );
    return v ? v->asInt32( range ) : fallback;
}

bool YamlView::getBool( const std::string& key ) const
{
    return at( key ).asBool();
}

bool YamlView::getBoolOr( const std::string& key, bool fallback ) const
{
    auto v = find( key );
    return v ? v->asBool() : fallback;
}

std::string YamlView::getString( const std::string& key ) const
{
    return at( key ).asString();
}

std::string YamlView::getStringOr( const std::string& key, const std::string& fallback ) const
{
    auto v = find( key );
    return v ? v->asString() : fallback;
}

std::string YamlView::resolvePath( const std::string& written ) const
{
    namespace fs = std::filesystem;
    fs::path p( written );
    if ( p.is_absolute() )
        return written;
    fs::path dir = fs::path( _file ).parent_path();
    if ( dir.empty() )
        return written;
    return ( dir / p ).lexically_normal().string();
}

// ---- files ---------------------------------------------------------------------------------

YamlView loadYamlString( const std::string& text, const std::string& name )
{
    try
    {
        return YamlView( YAML::Load( text ), name, "" );
    }
    catch ( const YAML::ParserException& e )
    {
        throw InputError( name, e.mark.line + 1, e.mark.column + 1, "(syntax)", "valid YAML",
                          e.msg );
    }
}

YamlView loadYamlFile( const std::string& path )
{
    return loadYamlString( readTextFile( path ), path );
}

std::string fileKind( const YamlView& root )
{
    root.requireMap( "a mapping with a 'kind:' key" );
    return root.at( "kind" ).asName();
}

void expectKind( const YamlView& root, const std::string& kind )
{
    root.requireMap( "a mapping with 'kind: " + kind + "'" );
    YamlView k = root.at( "kind" );
    if ( !k.isScalar() || k.asString() != kind )
        k.fail( "'" + kind + "'" );
}

} // namespace shardsweep
