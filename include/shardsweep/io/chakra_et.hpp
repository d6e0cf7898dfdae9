#pragma once
//! \file chakra_et.hpp
//! \brief Chakra execution traces (ET): the subset of Chakra's `et_def.proto` that shardsweep
//! writes and reads, encoded in protobuf's wire format by hand (docs/model/chakra.md).
//!
//! One file per rank: a varint32 length and a `GlobalMetadata` message, then a varint32 length
//! and a `Node` message per node (Chakra's `protoio` stream, gem5's format without the magic
//! number). The encoder writes exactly what proto3 writes: scalar fields equal to their default
//! are left out, repeated integers are packed, a set `oneof` attribute value is always written.
//! The decoder reads every field of `Node` and `AttributeProto` that ASTRA-sim reads, accepts
//! packed and unpacked dependencies, skips fields it does not know (traces from other tools
//! carry `inputs`/`outputs` and other attribute types) and reports malformed input as
//! InputError naming the file, the byte offset and the node.

#include <cstdint>
#include <string>
#include <vector>

namespace shardsweep
{
namespace chakra
{

//! `ChakraProtoMsg::NodeType`.
enum class NodeType : int
{
    invalid = 0,
    metadata = 1,
    mem_load = 2,
    mem_store = 3,
    comp = 4,
    comm_send = 5,
    comm_recv = 6,
    comm_coll = 7,
};

//! `ChakraProtoMsg::CollectiveCommType`.
enum class CommType : int
{
    all_reduce = 0,
    reduce = 1,
    all_gather = 2,
    gather = 3,
    scatter = 4,
    broadcast = 5,
    all_to_all = 6,
    reduce_scatter = 7,
    reduce_scatter_block = 8,
    barrier = 9,
};

const char* nodeTypeName( NodeType t ); //!< "COMP_NODE", "COMM_COLL_NODE", ...
const char* commTypeName( CommType t ); //!< "ALL_REDUCE", "ALL_TO_ALL", ...

//! One `AttributeProto`: a name and one value of the `oneof`. The kinds shardsweep writes are
//! explicit; any other member read from a file is kept as `other` with its field number.
struct Attribute
{
    enum class Kind : std::uint8_t
    {
        bool_value,   //!< bool_val (27)
        int32_value,  //!< int32_val (7)
        int64_value,  //!< int64_val (9)
        uint64_value, //!< uint64_val (13)
        string_value, //!< string_val (29)
        bool_list,    //!< bool_list (28)
        other,        //!< any other member of the oneof (read only)
    };

    std::string name;
    Kind kind = Kind::other;
    std::int64_t int_value = 0;   //!< bool / int32 / int64 (and other varint members)
    std::uint64_t uint_value = 0; //!< uint64
    std::string string_value;
    std::vector<bool> bool_list;
    int other_field = 0; //!< field number of an `other` member

    static Attribute makeBool( std::string name, bool v );
    static Attribute makeInt32( std::string name, std::int32_t v );
    static Attribute makeInt64( std::string name, std::int64_t v );
    static Attribute makeUint64( std::string name, std::uint64_t v );
    static Attribute makeString( std::string name, std::string v );
    static Attribute makeBoolList( std::string name, std::vector<bool> v );
};

//! One `Node` (the fields of et_def.proto's Node except `inputs`/`outputs`, which shardsweep
//! neither writes nor needs; the decoder skips them).
struct Node
{
    std::uint64_t id = 0;
    std::string name;
    NodeType type = NodeType::invalid;
    std::vector<std::uint64_t> ctrl_deps;
    std::vector<std::uint64_t> data_deps;
    std::uint64_t start_time_micros = 0;
    std::uint64_t duration_micros = 0;
    std::vector<Attribute> attrs;

    //! The attribute called `name`, or nullptr.
    const Attribute* find( const std::string& name ) const;
};

//! One rank's trace: `GlobalMetadata.version` and the nodes in file order.
struct Trace
{
    std::string version = "0.0.4";
    std::vector<Node> nodes;
};

//! The bytes of one trace file. The version must not be empty (a zero-length GlobalMetadata
//! reads as end-of-file in Chakra's Python reader).
std::string encodeTrace( const Trace& trace );

//! Decodes one trace file's bytes; `source` names the file in errors (InputError).
Trace decodeTrace( const std::string& bytes, const std::string& source );

//! Writes `<path>`; throws std::runtime_error when the file cannot be written.
void writeTraceFile( const std::string& path, const Trace& trace );

//! Reads `<path>`; InputError when it is missing, gzip-compressed (not supported) or malformed.
Trace readTraceFile( const std::string& path );

} // namespace chakra
} // namespace shardsweep
