#pragma once
//! \file hdf5_detail.hpp
//! \brief What the two sources of the HDF5 wrappers share (src/io/hdf5.cpp: handles, property
//! lists, files; src/io/hdf5_data.cpp: attributes, groups, datasets): error checks and the type
//! mapping. Includes <hdf5.h>: only those two files include it (raw H5* calls stay there).
#include <cstdint>
#include <hdf5.h>
#include <shardsweep/io/hdf5.hpp>
#include <string>
#include <vector>

namespace shardsweep
{
namespace h5
{
namespace detail
{

[[noreturn]] void fail( const std::string& what );
//! `id` if valid, else throws naming `what`.
hid_t check( hid_t id, const std::string& what );
//! Throws naming `what` if `status` < 0 (the int tells it from the hid_t overload).
void check( herr_t status, const std::string& what, int );
//! The native (in-memory) type of `type`.
hid_t nativeType( Type type );
//! Little-endian file types: the same bytes whatever machine wrote the file.
hid_t fileType( Type type );
std::uint64_t totalCount( const std::vector<Run>& runs );
Handle scalarSpace();
Handle stringType( std::size_t length, bool variable );

} // namespace detail
} // namespace h5
} // namespace shardsweep
