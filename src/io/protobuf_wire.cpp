// Protobuf's wire format by hand (protobuf.dev/programming-guides/encoding).
#include <fmt/format.h>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/protobuf_wire.hpp>

namespace shardsweep
{
namespace wire
{

// ---- encoding -------------------------------------------------------------------------------

void putVarint( std::string& out, std::uint64_t v )
{
    while ( v >= 0x80 )
    {
        out.push_back( static_cast<char>( ( v & 0x7f ) | 0x80 ) );
        v >>= 7;
    }
    out.push_back( static_cast<char>( v ) );
}

void putTag( std::string& out, int field, int wire_type )
{
    putVarint( out,
               ( static_cast<std::uint64_t>( field ) << 3 ) | static_cast<unsigned>( wire_type ) );
}

void putBytes( std::string& out, int field, const std::string& bytes )
{
    putTag( out, field, kLengthDelimited );
    putVarint( out, bytes.size() );
    out += bytes;
}

void putVarintField( std::string& out, int field, std::uint64_t v )
{
    if ( v == 0 )
        return;
    putTag( out, field, kVarint );
    putVarint( out, v );
}

void putStringField( std::string& out, int field, const std::string& s )
{
    if ( !s.empty() )
        putBytes( out, field, s );
}

void putPacked( std::string& out, int field, const std::vector<std::uint64_t>& values )
{
    if ( values.empty() )
        return;
    std::string packed;
    for ( std::uint64_t v : values )
        putVarint( packed, v );
    putBytes( out, field, packed );
}

// ---- decoding -------------------------------------------------------------------------------

Reader::Reader( const std::string& data, std::size_t begin, std::size_t end,
                const std::string& source, std::string context )
    : _data( data ), _pos( begin ), _end( end ), _source( source ), _context( std::move( context ) )
{
}

void Reader::fail( const std::string& what ) const
{
    throw InputError( _source, fmt::format( "byte {}: {}: {}", _pos, _context, what ) );
}

std::uint64_t Reader::varint()
{
    std::uint64_t v = 0;
    for ( int shift = 0; shift < 64; shift += 7 )
    {
        if ( _pos >= _end )
            fail( "truncated varint" );
        const auto byte = static_cast<unsigned char>( _data[_pos++] );
        v |= static_cast<std::uint64_t>( byte & 0x7f ) << shift;
        if ( !( byte & 0x80 ) )
            return v;
    }
    fail( "varint longer than 10 bytes" );
}

std::pair<std::size_t, std::size_t> Reader::lengthDelimited()
{
    const std::uint64_t len = varint();
    if ( len > _end - _pos )
        fail( fmt::format( "length {} runs past the end ({} bytes left)", len, _end - _pos ) );
    const std::size_t begin = _pos;
    _pos += static_cast<std::size_t>( len );
    return { begin, _pos };
}

std::string Reader::string()
{
    const auto [b, e] = lengthDelimited();
    return _data.substr( b, e - b );
}

void Reader::skip( int wire_type )
{
    switch ( wire_type )
    {
    case kVarint:
        varint();
        return;
    case kFixed64:
        advance( 8 );
        return;
    case kLengthDelimited:
        lengthDelimited();
        return;
    case kFixed32:
        advance( 4 );
        return;
    default:
        fail( fmt::format( "unsupported wire type {}", wire_type ) );
    }
}

Reader Reader::sub( std::size_t begin, std::size_t end, std::string context ) const
{
    return Reader( _data, begin, end, _source, std::move( context ) );
}

void Reader::repeated( int wire_type, std::vector<std::uint64_t>& out )
{
    if ( wire_type == kVarint )
    {
        out.push_back( varint() );
        return;
    }
    if ( wire_type != kLengthDelimited )
        fail( "a repeated integer field with a wire type other than varint or packed" );
    const auto [b, e] = lengthDelimited();
    Reader packed = sub( b, e, _context );
    while ( !packed.done() )
        out.push_back( packed.varint() );
}

void Reader::expectWireType( int found, int expected, const char* field ) const
{
    if ( found != expected )
        fail( fmt::format( "field '{}' has wire type {}, expected {}", field, found, expected ) );
}

void Reader::advance( std::size_t n )
{
    if ( n > _end - _pos )
        fail( "truncated fixed-width field" );
    _pos += n;
}

} // namespace wire
} // namespace shardsweep
