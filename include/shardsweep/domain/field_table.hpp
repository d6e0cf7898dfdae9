#pragma once
//! \file field_table.hpp
//! \brief The shape of a configuration struct's field table: for every field its key (YAML key,
//! CSV column, HDF5 column), kind, valid range, default, unit, /names table, whether files must
//! give it, one help line and the member it reads and sets. parallel_fields.hpp (ParallelConfig)
//! and transformer_fields.hpp (TransformerSpec) are the tables; the readers, writers, printers,
//! `--help` texts and cache keys iterate over them, so that a new field is one row plus the
//! model code that uses it (docs/ARCHITECTURE.md).

#include <cstddef>
#include <shardsweep/domain/names.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! One field of struct S. Every value is carried as an int: the number itself, 0/1 for a flag,
//! the enum's code for a choice (its names: `names`, index = code).
template <class S>
struct Field
{
    enum Kind
    {
        integer,
        flag,
        choice,
    };
    const char* key; //!< YAML key, CSV column and HDF5 column
    Kind kind;
    int min, max;      //!< integer: the valid range
    int fallback;      //!< the default (a code for a choice, 0/1 for a flag)
    bool required;     //!< files must give it (fallback unused)
    const char* unit;  //!< the HDF5 column's unit attribute
    const char* table; //!< choice: the HDF5 /names table of its codes; else ""
    const char* help;  //!< one line: what it is
    int ( *get )( const S& );
    void ( *set )( S&, int );
    std::vector<std::string> ( *names )(); //!< choice: the names in code order
};

//! The field of `table` whose key is `key`, or null.
template <class S, std::size_t N>
const Field<S>* findField( const Field<S> ( &table )[N], const std::string& key )
{
    for ( const Field<S>& f : table )
        if ( key == f.key )
            return &f;
    return nullptr;
}

//! The value `v` of `field` as files write it: "true"/"false" for a flag, the name for a choice,
//! the number otherwise.
template <class S>
std::string fieldValueText( const Field<S>& field, int v )
{
    switch ( field.kind )
    {
    case Field<S>::flag:
        return v ? "true" : "false";
    case Field<S>::choice:
        return field.names()[std::size_t( v )];
    case Field<S>::integer:
        break;
    }
    return std::to_string( v );
}

//! A choice field's names with their codes, for the readers' enum lookups.
template <class S>
NamePairs<int> fieldChoices( const Field<S>& field )
{
    NamePairs<int> pairs;
    for ( const std::string& n : field.names() )
        pairs.emplace_back( n, int( pairs.size() ) );
    return pairs;
}

//! The values a field takes, for help texts: "a | b", "0 | 1" or "min..max".
template <class S>
std::string fieldValuesText( const Field<S>& field )
{
    if ( field.kind == Field<S>::flag )
        return "0 | 1";
    if ( field.kind == Field<S>::integer )
        return std::to_string( field.min ) + ".." + std::to_string( field.max );
    std::string values;
    for ( const std::string& n : field.names() )
        values += ( values.empty() ? "" : " | " ) + n;
    return values;
}

} // namespace shardsweep
