#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <optional>
#include <shardsweep/build_paths.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/mlp_file.hpp>
#include <shardsweep/io/text_file.hpp>
#include <sstream>

namespace shardsweep
{

namespace
{
//! One non-empty, non-comment line split into words.
struct Line
{
    int number = 0;
    std::vector<std::string> words;
};

class Lines
{
  public:
    Lines( const std::string& text, const std::string& name ) : _name( name )
    {
        std::istringstream in( text );
        std::string s;
        int n = 0;
        while ( std::getline( in, s ) )
        {
            ++n;
            const auto hash = s.find( '#' );
            if ( hash != std::string::npos )
                s.erase( hash );
            std::istringstream ws( s );
            Line l;
            l.number = n;
            for ( std::string w; ws >> w; )
                l.words.push_back( w );
            if ( !l.words.empty() )
                _lines.push_back( l );
        }
        _last = n;
    }

    //! The next line, which must start with `key`.
    const Line& expect( const std::string& key )
    {
        if ( _next >= _lines.size() )
            throw InputError( _name, _last + 1, 1, key, "a line '" + key + " ...'",
                              "the end of the file" );
        const Line& l = _lines[_next];
        if ( l.words[0] != key )
            throw InputError( _name, l.number, 1, key, "a line '" + key + " ...'",
                              "'" + l.words[0] + "'" );
        ++_next;
        return l;
    }
    bool peek( const std::string& key ) const
    {
        return _next < _lines.size() && _lines[_next].words[0] == key;
    }
    bool done() const { return _next >= _lines.size(); }
    const Line& current() const { return _lines[_next]; }

    [[noreturn]] void fail( const Line& l, const std::string& field, const std::string& expected,
                            const std::string& found ) const
    {
        throw InputError( _name, l.number, 1, field, expected, found );
    }

    double number( const Line& l, std::size_t i, const std::string& field ) const
    {
        const std::string& w = l.words[i];
        char* end = nullptr;
        const double x = std::strtod( w.c_str(), &end );
        if ( end == w.c_str() || *end != '\0' || !std::isfinite( x ) )
            fail( l, field + " value " + std::to_string( i ), "a finite number", "'" + w + "'" );
        return x;
    }
    int count( const Line& l, std::size_t i, const std::string& field, int lo, int hi ) const
    {
        if ( i >= l.words.size() )
            fail( l, field, "an integer", "nothing" );
        const double x = number( l, i, field );
        if ( x != std::floor( x ) || x < lo || x > hi )
            fail( l, field,
                  "an integer in [" + std::to_string( lo ) + ", " + std::to_string( hi ) + "]",
                  "'" + l.words[i] + "'" );
        return static_cast<int>( x );
    }
    //! All numbers after the keyword; exactly `n` of them.
    std::vector<double> numbers( const Line& l, std::size_t n, const std::string& field ) const
    {
        if ( l.words.size() - 1 != n )
            fail( l, field, std::to_string( n ) + " numbers",
                  std::to_string( l.words.size() - 1 ) );
        std::vector<double> v( n );
        for ( std::size_t i = 0; i < n; ++i )
            v[i] = number( l, i + 1, field );
        return v;
    }

  private:
    std::string _name;
    std::vector<Line> _lines;
    std::size_t _next = 0;
    int _last = 0;
};

//! The optional `input_min` / `input_max` lines (both or neither), one number per input.
void parseInputRange( Lines& in, MlpFile& m )
{
    if ( !in.peek( "input_min" ) )
        return;
    const std::size_t n = m.names.size();
    m.input_min = in.numbers( in.expect( "input_min" ), n, "input_min" );
    const Line& l = in.expect( "input_max" );
    m.input_max = in.numbers( l, n, "input_max" );
    for ( std::size_t i = 0; i < n; ++i )
        if ( !( m.input_min[i] <= m.input_max[i] ) )
            in.fail( l, "input_max value " + std::to_string( i + 1 ),
                     "a number >= its input_min (input " + m.names[i] + ")", l.words[i + 1] );
}

//! The optional `default_for` line: GPUs of the trained_on line.
void parseDefaultFor( Lines& in, MlpFile& m )
{
    if ( !in.peek( "default_for" ) )
        return;
    const Line& l = in.expect( "default_for" );
    m.default_for.assign( l.words.begin() + 1, l.words.end() );
    for ( const std::string& g : m.default_for )
        if ( std::find( m.trained_on.begin(), m.trained_on.end(), g ) == m.trained_on.end() )
            in.fail( l, "default_for", "GPUs of the trained_on line", "'" + g + "'" );
}

std::string joinWords( const Line& l, std::size_t from )
{
    std::string s;
    for ( std::size_t i = from; i < l.words.size(); ++i )
        s += ( i > from ? " " : "" ) + l.words[i];
    return s;
}
} // namespace

MlpFile parseMlpFile( const std::string& text, const std::string& name )
{
    Lines in( text, name );
    MlpFile m;
    m.path = name;
    {
        const Line& l = in.expect( "shardsweep-mlp" );
        m.version = in.count( l, 1, "shardsweep-mlp (format version)", 1, 1000 );
        if ( m.version != kMlpFileVersion )
            in.fail( l, "shardsweep-mlp (format version)",
                     "version " + std::to_string( kMlpFileVersion ), l.words[1] );
    }
    {
        const Line& l = in.expect( "family" );
        if ( l.words.size() != 2 )
            in.fail( l, "family", "one word (gemm, ops, dlrm)", joinWords( l, 1 ) );
        m.family = l.words[1];
    }
    m.target = joinWords( in.expect( "target" ), 1 );
    const Line& li = in.expect( "inputs" );
    const int n = in.count( li, 1, "inputs", 1, kMlpMaxInputs );
    {
        const Line& l = in.expect( "names" );
        if ( static_cast<int>( l.words.size() ) - 1 != n )
            in.fail( l, "names", std::to_string( n ) + " names",
                     std::to_string( l.words.size() - 1 ) );
        m.names.assign( l.words.begin() + 1, l.words.end() );
    }
    m.mean = in.numbers( in.expect( "mean" ), n, "mean" );
    {
        const Line& l = in.expect( "scale" );
        m.scale = in.numbers( l, n, "scale" );
        for ( double s : m.scale )
            if ( !( s > 0.0 ) )
                in.fail( l, "scale", "numbers > 0", std::to_string( s ) );
    }
    parseInputRange( in, m );
    m.output_min = in.numbers( in.expect( "output_min" ), 1, "output_min" )[0];
    {
        const Line& l = in.expect( "trained_on" );
        m.trained_on.assign( l.words.begin() + 1, l.words.end() );
    }
    parseDefaultFor( in, m );
    const Line& ll = in.expect( "layers" );
    const int num_layers = in.count( ll, 1, "layers", 1, kMlpMaxLayers );
    int width = n;
    for ( int k = 0; k < num_layers; ++k )
    {
        const Line& l = in.expect( "layer" );
        const std::string field = "layer " + std::to_string( k + 1 );
        // The messages name relu first (the hidden layers' activation).
        const std::string relu_name = nameOf( MlpActivation::relu ),
                          identity_name = nameOf( MlpActivation::identity );
        if ( l.words.size() != 4 )
            in.fail( l, field, "'layer " + relu_name + "|" + identity_name + " INPUTS OUTPUTS'",
                     joinWords( l, 1 ) );
        MlpFileLayer layer;
        if ( const std::optional<MlpActivation> a = enumFromName<MlpActivation>( l.words[1] ) )
            layer.activation = *a;
        else
            in.fail( l, field + " activation", relu_name + " or " + identity_name,
                     "'" + l.words[1] + "'" );
        layer.inputs = in.count( l, 2, field + " inputs", 1, kMlpMaxWidth );
        layer.outputs = in.count( l, 3, field + " outputs", 1, kMlpMaxWidth );
        if ( layer.inputs != width )
            in.fail( l, field + " inputs", std::to_string( width ) + " (the previous width)",
                     l.words[2] );
        if ( k + 1 == num_layers && layer.outputs != 1 )
            in.fail( l, field + " outputs", "1 (the last layer has one output)", l.words[3] );
        layer.weights =
            in.numbers( in.expect( "weights" ), std::size_t( layer.inputs ) * layer.outputs,
                        field + " weights" );
        layer.bias = in.numbers( in.expect( "bias" ), layer.outputs, field + " bias" );
        width = layer.outputs;
        m.layers.push_back( std::move( layer ) );
    }
    while ( in.peek( "check" ) )
    {
        const Line& l = in.expect( "check" );
        std::vector<double> v = in.numbers( l, n + 1, "check" );
        m.check_outputs.push_back( v.back() );
        v.pop_back();
        m.check_inputs.push_back( std::move( v ) );
        const double y = mlpReferenceEvaluate( m, m.check_inputs.back() );
        const double want = m.check_outputs.back();
        if ( !( std::fabs( y - want ) <= 1e-9 * std::fmax( 1.0, std::fabs( want ) ) ) )
        {
            std::ostringstream s;
            s << std::setprecision( 17 ) << "the trainer's output " << want;
            std::ostringstream f;
            f << std::setprecision( 17 ) << y << " from this file's weights";
            in.fail( l, "check", s.str(), f.str() );
        }
    }
    in.expect( "end" );
    if ( !in.done() )
        in.fail( in.current(), in.current().words[0], "nothing after 'end'",
                 "'" + in.current().words[0] + "'" );
    return m;
}

MlpFile readMlpFile( const std::string& path )
{
    return parseMlpFile( readTextFile( path, "the model file" ), path );
}

void writeMlpFile( std::ostream& out, const MlpFile& m )
{
    const auto row = [&out]( const char* key, const std::vector<double>& v )
    {
        out << key;
        for ( double x : v )
            out << ' ' << x;
        out << '\n';
    };
    const auto old_precision = out.precision( 17 );
    out << "shardsweep-mlp " << m.version << "\nfamily " << m.family << "\ntarget " << m.target
        << "\ninputs " << m.names.size() << "\nnames";
    for ( const std::string& s : m.names )
        out << ' ' << s;
    out << '\n';
    row( "mean", m.mean );
    row( "scale", m.scale );
    if ( !m.input_min.empty() )
    {
        row( "input_min", m.input_min );
        row( "input_max", m.input_max );
    }
    out << "output_min " << m.output_min << "\ntrained_on";
    for ( const std::string& s : m.trained_on )
        out << ' ' << s;
    if ( !m.default_for.empty() )
    {
        out << "\ndefault_for";
        for ( const std::string& s : m.default_for )
            out << ' ' << s;
    }
    out << "\nlayers " << m.layers.size() << '\n';
    for ( const MlpFileLayer& l : m.layers )
    {
        out << "layer " << nameOf( l.activation ) << ' ' << l.inputs << ' ' << l.outputs << '\n';
        row( "weights", l.weights );
        row( "bias", l.bias );
    }
    for ( std::size_t i = 0; i < m.check_inputs.size(); ++i )
    {
        std::vector<double> v = m.check_inputs[i];
        v.push_back( m.check_outputs[i] );
        row( "check", v );
    }
    out << "end\n";
    out.precision( old_precision );
}

void requireMlpFeatures( const MlpFile& m, const std::string& family, const char* const* names,
                         int count )
{
    if ( m.family != family )
        throw InputError( m.path, "field 'family': expected " + family + ", found " + m.family );
    bool same = static_cast<int>( m.names.size() ) == count;
    for ( int i = 0; same && i < count; ++i )
        same = m.names[i] == names[i];
    if ( !same )
    {
        std::string want;
        for ( int i = 0; i < count; ++i )
            want += ( i ? " " : "" ) + std::string( names[i] );
        throw InputError( m.path, "field 'names': this build computes the features '" + want +
                                      "' (retrain with postprocess/train_operator_model.py)" );
    }
}

double mlpReferenceEvaluate( const MlpFile& m, const std::vector<double>& x )
{
    std::vector<double> h( x.size() );
    for ( std::size_t i = 0; i < x.size(); ++i )
    {
        const double xi =
            m.input_min.empty() ? x[i] : std::clamp( x[i], m.input_min[i], m.input_max[i] );
        h[i] = ( xi - m.mean[i] ) / m.scale[i];
    }
    for ( const MlpFileLayer& l : m.layers )
    {
        std::vector<double> next( l.outputs );
        for ( int o = 0; o < l.outputs; ++o )
        {
            double s = l.bias[o];
            for ( int i = 0; i < l.inputs; ++i )
                s += l.weights[std::size_t( o ) * l.inputs + i] * h[i];
            next[o] = l.activation == MlpActivation::relu ? std::max( s, 0.0 ) : s;
        }
        h.swap( next );
    }
    return std::max( h[0], m.output_min );
}

std::vector<double> packMlp( const MlpFile& m, MlpLayout& layout )
{
    std::vector<double> p;
    layout = MlpLayout();
    layout.num_layers = static_cast<int>( m.layers.size() );
    layout.width[0] = static_cast<int>( m.names.size() );
    layout.output_min = m.output_min;
    layout.mean = 0;
    p.insert( p.end(), m.mean.begin(), m.mean.end() );
    layout.scale = static_cast<int>( p.size() );
    p.insert( p.end(), m.scale.begin(), m.scale.end() );
    if ( !m.input_min.empty() )
    {
        layout.input_min = static_cast<int>( p.size() );
        p.insert( p.end(), m.input_min.begin(), m.input_min.end() );
        layout.input_max = static_cast<int>( p.size() );
        p.insert( p.end(), m.input_max.begin(), m.input_max.end() );
    }
    for ( std::size_t l = 0; l < m.layers.size(); ++l )
    {
        const MlpFileLayer& f = m.layers[l];
        layout.width[l + 1] = f.outputs;
        layout.activation[l] = f.activation;
        layout.weights[l] = static_cast<int>( p.size() );
        p.insert( p.end(), f.weights.begin(), f.weights.end() );
        layout.bias[l] = static_cast<int>( p.size() );
        p.insert( p.end(), f.bias.begin(), f.bias.end() );
    }
    return p;
}

MlpModel<> loadMlpModel( const MlpFile& m )
{
    MlpModel<> model;
    const std::vector<double> p = packMlp( m, model.layout );
    Kokkos::View<double*, Kokkos::HostSpace> params(
        Kokkos::view_alloc( Kokkos::WithoutInitializing, "mlp_params" ), p.size() );
    for ( std::size_t i = 0; i < p.size(); ++i )
        params( i ) = p[i];
    model.params = params;
    return model;
}

std::string defaultModelDir()
{
    if ( const char* env = std::getenv( "SHARDSWEEP_MODEL_DIR" ) )
        if ( *env )
            return env;
    std::error_code ec;
    const std::string source = std::string( SHARDSWEEP_SOURCE_DIR ) + "/inputs/models";
    if ( std::filesystem::is_directory( source, ec ) )
        return source;
    return std::string( SHARDSWEEP_INSTALL_DATADIR ) + "/inputs/models";
}

} // namespace shardsweep
