#pragma once
//! \file yaml_util.hpp
//! \brief Strict, well-reported reading of YAML input files.
//!
//! Every input parser (GPU catalog, platforms, workloads, plans, sweeps) reads through YamlView so
//! that every error has the same shape: "file:line:col: field 'tables[3].dim': expected an
//! integer > 0, found '0'" (InputError, exit status 2). Line and column are 1-based and point at
//! the offending value; for a missing field they point at the mapping that should hold it.
//!
//! Typical use:
//! \code
//!   YamlView root = loadYamlFile( path );
//!   root.checkKeys( { "kind", "name", "tables" }, { "description" } );
//!   for ( std::size_t i = 0; i < root.at( "tables" ).size(); ++i )
//!   {
//!       YamlView t = root.at( "tables" ).element( i ); // path "tables[i]"
//!       int dim = t.getInt32( "dim", Range::positive() );
//!   }
//! \endcode

#include <cstdint>
#include <optional>
#include <shardsweep/io/input_text.hpp>
#include <string>
#include <utility>
#include <vector>
#include <yaml-cpp/yaml.h>

namespace shardsweep
{

//! A numeric constraint with its own wording for error messages ("a number > 0").
struct Range
{
    double min = -1.0e308;
    double max = 1.0e308;
    bool min_inclusive = true;
    bool max_inclusive = true;

    static Range any() { return {}; }
    //! x > 0 (sizes, bandwidths, counts).
    static Range positive() { return { 0.0, 1.0e308, false, true }; }
    //! x >= 0 (latencies, reserves).
    static Range nonNegative() { return { 0.0, 1.0e308, true, true }; }
    //! lo <= x <= hi.
    static Range between( double lo, double hi ) { return { lo, hi, true, true }; }
    //! x >= lo.
    static Range atLeast( double lo ) { return { lo, 1.0e308, true, true }; }
    //! 0 <= x <= 1.
    static Range fraction() { return { 0.0, 1.0, true, true }; }

    bool contains( double x ) const;
    //! E.g. "a number > 0", "an integer in [1, 4]"; `noun` is "a number" or "an integer".
    std::string describe( const std::string& noun ) const;
};

//! A YAML node together with the file it came from and its field path inside that file.
//! Copies are cheap (yaml-cpp nodes are reference-counted handles).
class YamlView
{
  public:
    YamlView() = default;
    YamlView( YAML::Node node, std::string file, std::string path );

    const YAML::Node& node() const { return _node; }
    const std::string& file() const { return _file; }
    //! Dotted field path, e.g. "tables[3].dim"; empty for the document root.
    const std::string& path() const { return _path; }
    //! 1-based position of the node (0 if unknown).
    int line() const;
    int column() const;

    bool isMap() const { return _node.IsMap(); }
    bool isSequence() const { return _node.IsSequence(); }
    bool isScalar() const { return _node.IsScalar(); }
    bool isNull() const { return !_node.IsDefined() || _node.IsNull(); }
    //! Human-readable description of the node for "found ..." ('3.5', "a mapping", "a list").
    std::string describe() const;

    // ---- structure -------------------------------------------------------------------------
    //! Throws unless this node is a mapping ("expected <what>").
    void requireMap( const std::string& what = "a mapping of keys to values" ) const;
    //! Throws unless this node is a list.
    void requireSequence( const std::string& what = "a list" ) const;
    //! True if the mapping has the key (with any value, null included).
    bool has( const std::string& key ) const;
    //! The value of a required key; throws "expected a value for 'key'" naming this mapping.
    YamlView at( const std::string& key ) const;
    //! The value of an optional key; nullopt when absent or null.
    std::optional<YamlView> find( const std::string& key ) const;
    //! Element i of a list (path "path[i]").
    YamlView element( std::size_t i ) const;
    //! Number of elements of a list or entries of a mapping; 0 for scalars and null.
    std::size_t size() const;
    //! Keys of a mapping in file order.
    std::vector<std::string> keys() const;

    //! Strict keys: throws on a key outside required + optional (listing the allowed keys and the
    //! closest one), on a duplicated key, and on a missing required key. Also requires a mapping.
    void checkKeys( const std::vector<std::string>& required,
                    const std::vector<std::string>& optional = {} ) const;

    // ---- this node as a value --------------------------------------------------------------
    //! A number (YAML int or float; '_' between digits allowed, e.g. 40_000_000). nan/inf are
    //! rejected.
    double asDouble( const Range& range = Range::any() ) const;
    //! An integer; integral floats such as 4e7 are accepted.
    std::int64_t asInt( const Range& range = Range::any() ) const;
    int asInt32( const Range& range = Range::any() ) const;
    //! true/false (any case).
    bool asBool() const;
    //! A non-null scalar as text.
    std::string asString() const;
    //! A non-empty scalar.
    std::string asName() const;
    //! One of `names` (exact match); the error lists them and suggests the closest.
    std::string asOneOf( const std::vector<std::string>& names ) const;
    //! Maps a name to an enum value; the error lists the names and suggests the closest.
    template <class E>
    E asEnum( const std::vector<std::pair<std::string, E>>& names ) const
    {
        std::vector<std::string> keys;
        for ( const auto& n : names )
            keys.push_back( n.first );
        std::string s = asOneOf( keys );
        for ( const auto& n : names )
            if ( n.first == s )
                return n.second;
        return names.front().second; // unreachable: asOneOf threw
    }
    //! A list of numbers (a single scalar is NOT accepted: the schema says "list").
    std::vector<double> asDoubleList( const Range& range = Range::any() ) const;
    std::vector<std::int64_t> asIntList( const Range& range = Range::any() ) const;
    std::vector<std::string> asStringList() const;

    // ---- fields of this mapping (required, then with a default when absent) -----------------
    double getDouble( const std::string& key, const Range& range = Range::any() ) const;
    double getDoubleOr( const std::string& key, double fallback,
                        const Range& range = Range::any() ) const;
    std::int64_t getInt( const std::string& key, const Range& range = Range::any() ) const;
    std::int64_t getIntOr( const std::string& key, std::int64_t fallback,
                           const Range& range = Range::any() ) const;
    int getInt32( const std::string& key, const Range& range = Range::any() ) const;
    int getInt32Or( const std::string& key, int fallback, const Range& range = Range::any() ) const;
    bool getBool( const std::string& key ) const;
    bool getBoolOr( const std::string& key, bool fallback ) const;
    std::string getString( const std::string& key ) const;
    std::string getStringOr( const std::string& key, const std::string& fallback ) const;
    template <class E>
    E getEnum( const std::string& key, const std::vector<std::pair<std::string, E>>& names ) const
    {
        return at( key ).asEnum( names );
    }
    template <class E>
    E getEnumOr( const std::string& key, E fallback,
                 const std::vector<std::pair<std::string, E>>& names ) const
    {
        auto v = find( key );
        return v ? v->asEnum( names ) : fallback;
    }

    // ---- errors ---------------------------------------------------------------------------
    //! Throws InputError at this node: "field '<path>': expected <expected>, found <describe()>".
    [[noreturn]] void fail( const std::string& expected ) const;
    //! Same with an explicit "found" text.
    [[noreturn]] void fail( const std::string& expected, const std::string& found ) const;

    //! Resolves a path written in this file relative to the file's directory (absolute paths and
    //! files given without a directory are returned as they are resolved against the YAML file).
    std::string resolvePath( const std::string& written ) const;

  private:
    std::string childPath( const std::string& key ) const;

    YAML::Node _node;
    std::string _file;
    std::string _path;
    // Position of the mapping a missing key was looked up in, so "missing field" errors point
    // somewhere useful (yaml-cpp gives undefined nodes no mark).
    int _line = 0;
    int _column = 0;
};

//! Reads and parses a YAML file. A missing file or a syntax error throws InputError with the
//! parser's line and column.
YamlView loadYamlFile( const std::string& path );
//! Parses YAML text (tests, embedded documents); `name` stands for the file in messages.
YamlView loadYamlString( const std::string& text, const std::string& name );

//! Checks the document's top-level `kind:` (every input file has one) and returns it.
std::string fileKind( const YamlView& root );
//! Throws unless the document is a mapping whose `kind:` is `kind`.
void expectKind( const YamlView& root, const std::string& kind );

} // namespace shardsweep
