// Chakra ET files in protobuf's wire format (mlcommons/chakra schema/protobuf/et_def.proto;
// protobuf encoding spec).
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/chakra_et.hpp>
#include <shardsweep/io/protobuf_wire.hpp>
#include <stdexcept>

namespace shardsweep
{
namespace chakra
{

// Chakra's schema on protobuf's wire format (io/protobuf_wire.hpp).
using namespace wire;

namespace
{

// The field numbers of et_def.proto that shardsweep writes or reads.
namespace node_field
{
constexpr int id = 1, name = 2, type = 3, ctrl_deps = 4, data_deps = 5, start_time_micros = 6,
              duration_micros = 7, attr = 10;
}
namespace attr_field
{
constexpr int name = 1, int32_val = 7, int64_val = 9, uint64_val = 13, bool_val = 27,
              bool_list = 28, string_val = 29;
}
constexpr int kMetadataVersion = 1;
constexpr int kListValues = 1; // BoolList.values

// ---- encoding -------------------------------------------------------------------------------

std::string encodeAttribute( const Attribute& a )
{
    std::string out;
    putStringField( out, attr_field::name, a.name );
    // A set oneof member is written even when it holds its default value.
    switch ( a.kind )
    {
    case Attribute::Kind::bool_value:
        putTag( out, attr_field::bool_val, kVarint );
        putVarint( out, a.int_value != 0 ? 1 : 0 );
        break;
    case Attribute::Kind::int32_value:
        // Negative int32 values are sign-extended to 64 bits on the wire.
        putTag( out, attr_field::int32_val, kVarint );
        putVarint( out, static_cast<std::uint64_t>( static_cast<std::int64_t>(
                            static_cast<std::int32_t>( a.int_value ) ) ) );
        break;
    case Attribute::Kind::int64_value:
        putTag( out, attr_field::int64_val, kVarint );
        putVarint( out, static_cast<std::uint64_t>( a.int_value ) );
        break;
    case Attribute::Kind::uint64_value:
        putTag( out, attr_field::uint64_val, kVarint );
        putVarint( out, a.uint_value );
        break;
    case Attribute::Kind::string_value:
        putBytes( out, attr_field::string_val, a.string_value );
        break;
    case Attribute::Kind::bool_list:
    {
        std::string packed;
        for ( bool b : a.bool_list )
            packed.push_back( b ? 1 : 0 );
        std::string list;
        if ( !packed.empty() )
            putBytes( list, kListValues, packed );
        putBytes( out, attr_field::bool_list, list );
        break;
    }
    case Attribute::Kind::other:
        throw std::logic_error( "chakra::encodeTrace: attribute '" + a.name +
                                "' has a kind the encoder does not write" );
    }
    return out;
}

std::string encodeNode( const Node& n )
{
    std::string out;
    putVarintField( out, node_field::id, n.id );
    putStringField( out, node_field::name, n.name );
    putVarintField( out, node_field::type, static_cast<std::uint64_t>( n.type ) );
    putPacked( out, node_field::ctrl_deps, n.ctrl_deps );
    putPacked( out, node_field::data_deps, n.data_deps );
    putVarintField( out, node_field::start_time_micros, n.start_time_micros );
    putVarintField( out, node_field::duration_micros, n.duration_micros );
    for ( const Attribute& a : n.attrs )
        putBytes( out, node_field::attr, encodeAttribute( a ) );
    return out;
}

// ---- decoding -------------------------------------------------------------------------------

Attribute decodeAttribute( Reader r )
{
    Attribute a;
    while ( !r.done() )
    {
        const std::uint64_t tag = r.varint();
        const int field = static_cast<int>( tag >> 3 );
        const int wire = static_cast<int>( tag & 7 );
        switch ( field )
        {
        case attr_field::name:
            r.expectWireType( wire, kLengthDelimited, "name" );
            a.name = r.string();
            break;
        case attr_field::bool_val:
            r.expectWireType( wire, kVarint, "bool_val" );
            a.kind = Attribute::Kind::bool_value;
            a.int_value = r.varint() != 0;
            break;
        case attr_field::int32_val:
            r.expectWireType( wire, kVarint, "int32_val" );
            a.kind = Attribute::Kind::int32_value;
            a.int_value = static_cast<std::int32_t>( r.varint() );
            break;
        case attr_field::int64_val:
            r.expectWireType( wire, kVarint, "int64_val" );
            a.kind = Attribute::Kind::int64_value;
            a.int_value = static_cast<std::int64_t>( r.varint() );
            break;
        case attr_field::uint64_val:
            r.expectWireType( wire, kVarint, "uint64_val" );
            a.kind = Attribute::Kind::uint64_value;
            a.uint_value = r.varint();
            break;
        case attr_field::string_val:
            r.expectWireType( wire, kLengthDelimited, "string_val" );
            a.kind = Attribute::Kind::string_value;
            a.string_value = r.string();
            break;
        case attr_field::bool_list:
        {
            r.expectWireType( wire, kLengthDelimited, "bool_list" );
            a.kind = Attribute::Kind::bool_list;
            a.bool_list.clear();
            const auto [b, e] = r.lengthDelimited();
            Reader list = r.sub( b, e, r.context() + ", bool_list" );
            while ( !list.done() )
            {
                const std::uint64_t t = list.varint();
                if ( static_cast<int>( t >> 3 ) != kListValues )
                {
                    list.skip( static_cast<int>( t & 7 ) );
                    continue;
                }
                std::vector<std::uint64_t> values;
                list.repeated( static_cast<int>( t & 7 ), values );
                for ( std::uint64_t v : values )
                    a.bool_list.push_back( v != 0 );
            }
            break;
        }
        default:
            // doc_string, or another member of the oneof: kept as `other` (value skipped).
            if ( field != 2 )
            {
                a.kind = Attribute::Kind::other;
                a.other_field = field;
                if ( wire == kVarint )
                {
                    a.int_value = static_cast<std::int64_t>( r.varint() );
                    break;
                }
            }
            r.skip( wire );
        }
    }
    return a;
}

Node decodeNode( Reader r )
{
    Node n;
    while ( !r.done() )
    {
        const std::uint64_t tag = r.varint();
        const int field = static_cast<int>( tag >> 3 );
        const int wire = static_cast<int>( tag & 7 );
        switch ( field )
        {
        case node_field::id:
            r.expectWireType( wire, kVarint, "id" );
            n.id = r.varint();
            break;
        case node_field::name:
            r.expectWireType( wire, kLengthDelimited, "name" );
            n.name = r.string();
            break;
        case node_field::type:
        {
            r.expectWireType( wire, kVarint, "type" );
            const std::uint64_t t = r.varint();
            if ( t > static_cast<std::uint64_t>( NodeType::comm_coll ) )
                r.fail( fmt::format( "unknown node type {}", t ) );
            n.type = static_cast<NodeType>( t );
            break;
        }
        case node_field::ctrl_deps:
            r.repeated( wire, n.ctrl_deps );
            break;
        case node_field::data_deps:
            r.repeated( wire, n.data_deps );
            break;
        case node_field::start_time_micros:
            r.expectWireType( wire, kVarint, "start_time_micros" );
            n.start_time_micros = r.varint();
            break;
        case node_field::duration_micros:
            r.expectWireType( wire, kVarint, "duration_micros" );
            n.duration_micros = r.varint();
            break;
        case node_field::attr:
        {
            r.expectWireType( wire, kLengthDelimited, "attr" );
            const auto [b, e] = r.lengthDelimited();
            n.attrs.push_back( decodeAttribute(
                r.sub( b, e, r.context() + fmt::format( ", attr {}", n.attrs.size() ) ) ) );
            break;
        }
        default: // inputs, outputs and fields added later
            r.skip( wire );
        }
    }
    return n;
}

//! An attribute with its name and kind set (the make* constructors fill the value).
Attribute named( std::string name, Attribute::Kind kind )
{
    Attribute a;
    a.name = std::move( name );
    a.kind = kind;
    return a;
}

} // namespace

const char* nodeTypeName( NodeType t )
{
    static const char* names[] = { "INVALID_NODE",   "METADATA_NODE", "MEM_LOAD_NODE",
                                   "MEM_STORE_NODE", "COMP_NODE",     "COMM_SEND_NODE",
                                   "COMM_RECV_NODE", "COMM_COLL_NODE" };
    const int i = static_cast<int>( t );
    return i >= 0 && i < 8 ? names[i] : "UNKNOWN_NODE";
}

const char* commTypeName( CommType t )
{
    static const char* names[] = {
        "ALL_REDUCE", "REDUCE",         "ALL_GATHER",           "GATHER", "SCATTER", "BROADCAST",
        "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK", "BARRIER" };
    const int i = static_cast<int>( t );
    return i >= 0 && i < 10 ? names[i] : "UNKNOWN";
}

Attribute Attribute::makeBool( std::string name, bool v )
{
    Attribute a = named( std::move( name ), Kind::bool_value );
    a.int_value = v;
    return a;
}

Attribute Attribute::makeInt32( std::string name, std::int32_t v )
{
    Attribute a = named( std::move( name ), Kind::int32_value );
    a.int_value = v;
    return a;
}

Attribute Attribute::makeInt64( std::string name, std::int64_t v )
{
    Attribute a = named( std::move( name ), Kind::int64_value );
    a.int_value = v;
    return a;
}

Attribute Attribute::makeUint64( std::string name, std::uint64_t v )
{
    Attribute a = named( std::move( name ), Kind::uint64_value );
    a.uint_value = v;
    return a;
}

Attribute Attribute::makeString( std::string name, std::string v )
{
    Attribute a = named( std::move( name ), Kind::string_value );
    a.string_value = std::move( v );
    return a;
}

Attribute Attribute::makeBoolList( std::string name, std::vector<bool> v )
{
    Attribute a = named( std::move( name ), Kind::bool_list );
    a.bool_list = std::move( v );
    return a;
}

const Attribute* Node::find( const std::string& attr_name ) const
{
    for ( const Attribute& a : attrs )
        if ( a.name == attr_name )
            return &a;
    return nullptr;
}

std::string encodeTrace( const Trace& trace )
{
    if ( trace.version.empty() )
        throw std::logic_error( "chakra::encodeTrace: empty version (reads as end of file)" );
    std::string out, metadata;
    putStringField( metadata, kMetadataVersion, trace.version );
    putVarint( out, metadata.size() );
    out += metadata;
    for ( const Node& n : trace.nodes )
    {
        const std::string node = encodeNode( n );
        putVarint( out, node.size() );
        out += node;
    }
    return out;
}

Trace decodeTrace( const std::string& bytes, const std::string& source )
{
    if ( bytes.size() >= 2 && static_cast<unsigned char>( bytes[0] ) == 0x1f &&
         static_cast<unsigned char>( bytes[1] ) == 0x8b )
        throw InputError( source, "gzip-compressed trace: gunzip it first" );
    Trace trace;
    trace.version.clear();
    Reader stream( bytes, 0, bytes.size(), source, "GlobalMetadata" );
    if ( stream.done() )
        stream.fail( "empty file (a trace starts with its GlobalMetadata)" );
    const auto [meta_begin, meta_end] = stream.lengthDelimited();
    Reader meta = stream.sub( meta_begin, meta_end, "GlobalMetadata" );
    while ( !meta.done() )
    {
        const std::uint64_t tag = meta.varint();
        if ( static_cast<int>( tag >> 3 ) == kMetadataVersion )
        {
            meta.expectWireType( static_cast<int>( tag & 7 ), kLengthDelimited, "version" );
            trace.version = meta.string();
        }
        else
            meta.skip( static_cast<int>( tag & 7 ) );
    }
    // Then one length-prefixed Node after another up to the end of the file.
    for ( std::size_t pos = meta_end; pos < bytes.size(); )
    {
        const std::string context = fmt::format( "node {}", trace.nodes.size() );
        Reader header = stream.sub( pos, bytes.size(), context );
        const auto [begin, end] = header.lengthDelimited();
        trace.nodes.push_back( decodeNode( header.sub( begin, end, context ) ) );
        pos = end;
    }
    return trace;
}

void writeTraceFile( const std::string& path, const Trace& trace )
{
    const std::string bytes = encodeTrace( trace );
    std::ofstream out( path, std::ios::binary | std::ios::trunc );
    out.write( bytes.data(), static_cast<std::streamsize>( bytes.size() ) );
    if ( !out )
        throw std::runtime_error( "cannot write " + path );
}

Trace readTraceFile( const std::string& path )
{
    std::ifstream in( path, std::ios::binary );
    if ( !in )
        throw InputError( path, "cannot open the trace file" );
    const std::string bytes( ( std::istreambuf_iterator<char>( in ) ),
                             std::istreambuf_iterator<char>() );
    return decodeTrace( bytes, path );
}

} // namespace chakra
} // namespace shardsweep
