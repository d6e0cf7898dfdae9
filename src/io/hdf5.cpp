// RAII wrappers over the HDF5 C API: handles, dataspaces, property lists and files (with
// hdf5_data.cpp, the only files with raw H5* calls).
#include "hdf5_detail.hpp"

#include <algorithm>
#include <chrono>
#include <fcntl.h>
#include <stdexcept>
#include <unistd.h>

static_assert( sizeof( hid_t ) == sizeof( shardsweep::h5::Id ), "hid_t is a 64-bit integer" );

namespace shardsweep
{
namespace h5
{

namespace detail
{

[[noreturn]] void fail( const std::string& what )
{
    throw std::runtime_error( "HDF5: " + what + " failed" );
}

hid_t check( hid_t id, const std::string& what )
{
    if ( id < 0 )
        fail( what );
    return id;
}

void check( herr_t status, const std::string& what, int )
{
    if ( status < 0 )
        fail( what );
}

hid_t nativeType( Type type )
{
    switch ( type )
    {
    case Type::i8:
        return H5T_NATIVE_INT8;
    case Type::u8:
        return H5T_NATIVE_UINT8;
    case Type::i32:
        return H5T_NATIVE_INT32;
    case Type::u32:
        return H5T_NATIVE_UINT32;
    case Type::i64:
        return H5T_NATIVE_INT64;
    case Type::u64:
        return H5T_NATIVE_UINT64;
    case Type::f64:
        return H5T_NATIVE_DOUBLE;
    }
    return H5T_NATIVE_DOUBLE;
}

hid_t fileType( Type type )
{
    switch ( type )
    {
    case Type::i8:
        return H5T_STD_I8LE;
    case Type::u8:
        return H5T_STD_U8LE;
    case Type::i32:
        return H5T_STD_I32LE;
    case Type::u32:
        return H5T_STD_U32LE;
    case Type::i64:
        return H5T_STD_I64LE;
    case Type::u64:
        return H5T_STD_U64LE;
    case Type::f64:
        return H5T_IEEE_F64LE;
    }
    return H5T_IEEE_F64LE;
}

std::uint64_t totalCount( const std::vector<Run>& runs )
{
    std::uint64_t n = 0;
    for ( const auto& r : runs )
        n += r.count;
    return n;
}

Handle scalarSpace()
{
    return Handle( check( H5Screate( H5S_SCALAR ), "H5Screate" ), Handle::Kind::dataspace );
}

Handle stringType( std::size_t length, bool variable )
{
    Handle t( check( H5Tcopy( H5T_C_S1 ), "H5Tcopy" ), Handle::Kind::datatype );
    check( H5Tset_size( t.id(), variable ? H5T_VARIABLE : std::max<std::size_t>( length, 1 ) ),
           "H5Tset_size", 0 );
    check( H5Tset_cset( t.id(), H5T_CSET_UTF8 ), "H5Tset_cset", 0 );
    if ( !variable )
        check( H5Tset_strpad( t.id(), H5T_STR_NULLPAD ), "H5Tset_strpad", 0 );
    return t;
}

} // namespace detail

using namespace detail;

//---------------------------------------------------------------------------------------------//
Handle& Handle::operator=( Handle&& other ) noexcept
{
    if ( this != &other )
    {
        reset();
        _id = other._id;
        _kind = other._kind;
        other._id = -1;
    }
    return *this;
}

void Handle::close()
{
    if ( _id < 0 )
        return;
    herr_t status = 0;
    switch ( _kind )
    {
    case Kind::file:
        status = H5Fclose( _id );
        break;
    case Kind::group:
        status = H5Gclose( _id );
        break;
    case Kind::dataset:
        status = H5Dclose( _id );
        break;
    case Kind::dataspace:
        status = H5Sclose( _id );
        break;
    case Kind::plist:
        status = H5Pclose( _id );
        break;
    case Kind::attribute:
        status = H5Aclose( _id );
        break;
    case Kind::datatype:
        status = H5Tclose( _id );
        break;
    }
    _id = -1;
    check( status, "close", 0 );
}

void Handle::reset() noexcept
{
    try
    {
        close();
    }
    catch ( ... )
    {
        // Destructors must not throw; explicit close() reports failures.
    }
}

//---------------------------------------------------------------------------------------------//
Dataspace::Dataspace( std::uint64_t size, const std::vector<Run>& runs )
{
    hsize_t dims = std::max<std::uint64_t>( size, 1 );
    _handle = Handle( check( H5Screate_simple( 1, &dims, nullptr ), "H5Screate_simple" ),
                      Handle::Kind::dataspace );
    bool first = true;
    for ( const auto& r : runs )
    {
        if ( r.count == 0 )
            continue;
        hsize_t start = r.offset, count = r.count;
        check( H5Sselect_hyperslab( _handle.id(), first ? H5S_SELECT_SET : H5S_SELECT_OR, &start,
                                    nullptr, &count, nullptr ),
               "H5Sselect_hyperslab", 0 );
        first = false;
    }
    if ( first )
        check( H5Sselect_none( _handle.id() ), "H5Sselect_none", 0 );
}

//---------------------------------------------------------------------------------------------//
PropertyList PropertyList::fileAccessMpio( MPI_Comm comm )
{
    Handle h( check( H5Pcreate( H5P_FILE_ACCESS ), "H5Pcreate" ), Handle::Kind::plist );
    check( H5Pset_fapl_mpio( h.id(), comm, MPI_INFO_NULL ), "H5Pset_fapl_mpio", 0 );
    // The HDF Group's advice for parallel files (the HDF5 parallel I/O tuning guide).
    check( H5Pset_all_coll_metadata_ops( h.id(), true ), "H5Pset_all_coll_metadata_ops", 0 );
    check( H5Pset_coll_metadata_write( h.id(), true ), "H5Pset_coll_metadata_write", 0 );
    return PropertyList( std::move( h ) );
}

PropertyList PropertyList::fileAccessSerial()
{
    Handle h( check( H5Pcreate( H5P_FILE_ACCESS ), "H5Pcreate" ), Handle::Kind::plist );
    return PropertyList( std::move( h ) );
}

PropertyList PropertyList::datasetChunked( std::uint64_t chunk, int gzip_level )
{
    Handle h( check( H5Pcreate( H5P_DATASET_CREATE ), "H5Pcreate" ), Handle::Kind::plist );
    hsize_t c = std::max<std::uint64_t>( chunk, 1 );
    check( H5Pset_chunk( h.id(), 1, &c ), "H5Pset_chunk", 0 );
    if ( gzip_level > 0 )
    {
        check( H5Pset_shuffle( h.id() ), "H5Pset_shuffle", 0 );
        check( H5Pset_deflate( h.id(), static_cast<unsigned>( gzip_level ) ), "H5Pset_deflate", 0 );
    }
    return PropertyList( std::move( h ) );
}

PropertyList PropertyList::datasetContiguous()
{
    return PropertyList(
        Handle( check( H5Pcreate( H5P_DATASET_CREATE ), "H5Pcreate" ), Handle::Kind::plist ) );
}

PropertyList PropertyList::transferCollective()
{
    Handle h( check( H5Pcreate( H5P_DATASET_XFER ), "H5Pcreate" ), Handle::Kind::plist );
    check( H5Pset_dxpl_mpio( h.id(), H5FD_MPIO_COLLECTIVE ), "H5Pset_dxpl_mpio", 0 );
    return PropertyList( std::move( h ) );
}

PropertyList PropertyList::transferDefault()
{
    Handle h( check( H5Pcreate( H5P_DATASET_XFER ), "H5Pcreate" ), Handle::Kind::plist );
    return PropertyList( std::move( h ) );
}

//---------------------------------------------------------------------------------------------//
File File::createParallel( const std::string& path, MPI_Comm comm )
{
    PropertyList fapl = PropertyList::fileAccessMpio( comm );
    return File( Handle( check( H5Fcreate( path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id() ),
                                "H5Fcreate(" + path + ")" ),
                         Handle::Kind::file ) );
}

File File::openSerial( const std::string& path, bool writable )
{
    PropertyList fapl = PropertyList::fileAccessSerial();
    return File(
        Handle( check( H5Fopen( path.c_str(), writable ? H5F_ACC_RDWR : H5F_ACC_RDONLY, fapl.id() ),
                       "H5Fopen(" + path + ")" ),
                Handle::Kind::file ) );
}

File File::createSerial( const std::string& path )
{
    PropertyList fapl = PropertyList::fileAccessSerial();
    return File( Handle( check( H5Fcreate( path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id() ),
                                "H5Fcreate(" + path + ")" ),
                         Handle::Kind::file ) );
}

bool File::isReadable( const std::string& path )
{
    silenceErrorStack();
    if ( H5Fis_hdf5( path.c_str() ) <= 0 )
        return false;
    hid_t f = H5Fopen( path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT );
    if ( f < 0 )
        return false;
    H5Fclose( f );
    return true;
}

Group File::root() const
{
    return Group(
        Handle( check( H5Gopen2( id(), "/", H5P_DEFAULT ), "H5Gopen(/)" ), Handle::Kind::group ) );
}

void File::flush() const
{
    check( H5Fflush( id(), H5F_SCOPE_GLOBAL ), "H5Fflush", 0 );
}

void File::close()
{
    _handle.close();
}

void silenceErrorStack()
{
    H5Eset_auto2( H5E_DEFAULT, nullptr, nullptr );
}

bool syncPath( const std::string& path )
{
    int fd = ::open( path.c_str(), O_RDONLY );
    if ( fd < 0 )
        return false;
    bool ok = ::fsync( fd ) == 0;
    ::close( fd );
    return ok;
}

Writeback::Writeback( const std::string& path ) : _fd( ::open( path.c_str(), O_RDONLY ) ) {}

Writeback::~Writeback()
{
    // The thread uses _fd.
    if ( _pending.valid() )
        _pending.wait();
    if ( _fd >= 0 )
        ::close( _fd );
}

void Writeback::start()
{
#ifdef __linux__
    if ( _fd < 0 )
        return;
    if ( _pending.valid() &&
         _pending.wait_for( std::chrono::seconds( 0 ) ) != std::future_status::ready )
        return;
    // Offset 0, length 0: the whole file. Pages under writeback already are not waited for.
    _pending = std::async( std::launch::async, [fd = _fd]
                           { (void)::sync_file_range( fd, 0, 0, SYNC_FILE_RANGE_WRITE ); } );
#endif
}

} // namespace h5
} // namespace shardsweep
