#pragma once
//! \file field_table.hpp
//! \brief The shape of a configuration struct's field table: for every field its key (YAML key,
//! CSV column, HDF5 column), kind, valid range, default, unit, /names table, whether files must
//! give it, one help line and the member it reads and sets. parallel_fields.hpp (ParallelConfig)
//! and transformer_fields.hpp (TransformerSpec) are the tables; the readers, writers, printers,
//! `--help` texts and cache keys iterate over them, so that a new field is one row plus the
//! model code that uses it (docs/ARCHITECTURE.md).

#include <cstddef>
#include <shardsweep/core/number_text.hpp>
#include <shardsweep/domain/names.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! One field of struct S. Every value is carried as a V: the number itself, 0/1 for a flag, the
//! enum's code for a choice (its names: `names`, index = code). Integer-only structs (the
//! transformer's) use V = int; a struct with real-valued fields (a DLRM table) uses V = double,
//! which holds its integers (< 2^53) exactly.
template <class S, class V = int>
struct Field
{
    enum Kind
    {
        integer,
        flag,
        choice,
        real, //!< a floating-point number (V = double only)
    };
    const char* key; //!< YAML key, CSV column and HDF5 column
    Kind kind;
    V min, max;        //!< integer, real: the valid range (inclusive but for above_min)
    V fallback;        //!< the default (a code for a choice, 0/1 for a flag)
    bool required;     //!< files must give it (fallback unused)
    const char* unit;  //!< the HDF5 column's unit attribute
    const char* table; //!< choice: the HDF5 /names table of its codes; else ""
    const char* help;  //!< one line: what it is
    V ( *get )( const S& );
    void ( *set )( S&, V );
    std::vector<std::string> ( *names )(); //!< choice: the names in code order
    bool above_min = false;                //!< integer, real: `min` itself is excluded (x > min)
};

//! The names of a choice of element type that a model computes in: every DataType but int8, which
//! is the last code (index = code).
inline std::vector<std::string> computeDataTypeList()
{
    std::vector<std::string> names = enumNameList<DataType>();
    names.pop_back();
    return names;
}

//! The field of `table` whose key is `key`, or null.
template <class S, class V, std::size_t N>
const Field<S, V>* findField( const Field<S, V> ( &table )[N], const std::string& key )
{
    for ( const Field<S, V>& f : table )
        if ( key == f.key )
            return &f;
    return nullptr;
}

//! The value `v` of a field as files write it: "true"/"false" for a flag, the name for a choice,
//! the number otherwise (a real one in its shortest round-trip form).
template <class S, class V>
std::string fieldValueText( const Field<S, V>& field, V v )
{
    switch ( field.kind )
    {
    case Field<S, V>::flag:
        return v ? "true" : "false";
    case Field<S, V>::choice:
        return field.names()[std::size_t( v )];
    case Field<S, V>::real:
        return formatNumber( double( v ) );
    case Field<S, V>::integer:
        break;
    }
    return std::to_string( static_cast<long long>( v ) );
}

//! A choice field's names with their codes, for the readers' enum lookups.
template <class S, class V>
NamePairs<int> fieldChoices( const Field<S, V>& field )
{
    NamePairs<int> pairs;
    for ( const std::string& n : field.names() )
        pairs.emplace_back( n, int( pairs.size() ) );
    return pairs;
}

//! The values a field takes, for help texts: "a | b", "0 | 1" or "min..max" (a real field's
//! bounds are whole numbers in every table).
template <class S, class V>
std::string fieldValuesText( const Field<S, V>& field )
{
    if ( field.kind == Field<S, V>::flag )
        return "0 | 1";
    if ( field.kind == Field<S, V>::integer || field.kind == Field<S, V>::real )
        return std::to_string( static_cast<long long>( field.min ) ) + ".." +
               std::to_string( static_cast<long long>( field.max ) );
    std::string values;
    for ( const std::string& n : field.names() )
        values += ( values.empty() ? "" : " | " ) + n;
    return values;
}

} // namespace shardsweep
