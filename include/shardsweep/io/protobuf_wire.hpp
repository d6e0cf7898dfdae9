#pragma once
//! \file protobuf_wire.hpp
//! \brief Protobuf's wire format (varints, tags, length-delimited and packed fields), written and
//! read by hand for the Chakra trace files (io/chakra_et.hpp). Schema-free: field numbers and
//! message layouts belong to the caller. Kept apart from the Chakra schema so that the encoding
//! rules and the bounds-checked reader are tested once and read in one place.
//!
//! Why by hand rather than libprotobuf: README.md's dependency note and docs/model/chakra.md.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace shardsweep
{
namespace wire
{

constexpr int kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5;

void putVarint( std::string& out, std::uint64_t v );
void putTag( std::string& out, int field, int wire_type );
//! A length-delimited field (sub-message, string or packed run), written even when empty.
void putBytes( std::string& out, int field, const std::string& bytes );
//! Scalar fields as proto3 writes them: left out when equal to their default.
void putVarintField( std::string& out, int field, std::uint64_t v );
void putStringField( std::string& out, int field, const std::string& s );
//! A packed repeated integer field, left out when empty.
void putPacked( std::string& out, int field, const std::vector<std::uint64_t>& values );

//! A bounded reader over bytes [begin, end) of `data`; every error is an InputError naming the
//! source file, the byte offset and the caller's context ("node 12, attr 3").
class Reader
{
  public:
    Reader( const std::string& data, std::size_t begin, std::size_t end, const std::string& source,
            std::string context );

    bool done() const { return _pos >= _end; }
    std::size_t position() const { return _pos; }
    const std::string& context() const { return _context; }

    [[noreturn]] void fail( const std::string& what ) const;

    std::uint64_t varint();
    //! The bounds [begin, end) of a length-delimited payload, skipped.
    std::pair<std::size_t, std::size_t> lengthDelimited();
    std::string string();
    //! Skips one value of `wire_type` (fields the caller does not know).
    void skip( int wire_type );
    //! A reader over [begin, end) of the same data (a sub-message).
    Reader sub( std::size_t begin, std::size_t end, std::string context ) const;

    //! Appends the integers of a repeated field: packed (one length-delimited run) or one
    //! varint per tag, as protobuf readers must accept both.
    void repeated( int wire_type, std::vector<std::uint64_t>& out );
    //! Fails unless the field `field` arrived with the wire type its schema declares.
    void expectWireType( int found, int expected, const char* field ) const;

  private:
    void advance( std::size_t n );

    const std::string& _data;
    std::size_t _pos, _end;
    const std::string& _source;
    std::string _context;
};

} // namespace wire
} // namespace shardsweep
