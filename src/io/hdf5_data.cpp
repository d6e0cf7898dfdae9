// RAII wrappers over the HDF5 C API: attributes, groups and datasets (with hdf5.cpp, the only
// files with raw H5* calls).
#include "hdf5_detail.hpp"

#include <algorithm>
#include <stdexcept>

namespace shardsweep
{
namespace h5
{

using namespace detail;

namespace
{

Handle createAttribute( Id object, const std::string& name, hid_t type )
{
    if ( H5Aexists( object, name.c_str() ) > 0 )
        check( H5Adelete( object, name.c_str() ), "H5Adelete(" + name + ")", 0 );
    Handle space = scalarSpace();
    return Handle(
        check( H5Acreate2( object, name.c_str(), type, space.id(), H5P_DEFAULT, H5P_DEFAULT ),
               "H5Acreate(" + name + ")" ),
        Handle::Kind::attribute );
}

} // namespace

//---------------------------------------------------------------------------------------------//
void writeAttribute( Id object, const std::string& name, const std::string& value )
{
    Handle type = stringType( 0, true );
    Handle attr = createAttribute( object, name, type.id() );
    const char* text = value.c_str();
    check( H5Awrite( attr.id(), type.id(), &text ), "H5Awrite(" + name + ")", 0 );
    attr.close();
}

void writeAttribute( Id object, const std::string& name, std::int64_t value )
{
    Handle attr = createAttribute( object, name, H5T_STD_I64LE );
    check( H5Awrite( attr.id(), H5T_NATIVE_INT64, &value ), "H5Awrite(" + name + ")", 0 );
    attr.close();
}

void writeAttribute( Id object, const std::string& name, double value )
{
    Handle attr = createAttribute( object, name, H5T_IEEE_F64LE );
    check( H5Awrite( attr.id(), H5T_NATIVE_DOUBLE, &value ), "H5Awrite(" + name + ")", 0 );
    attr.close();
}

bool hasAttribute( Id object, const std::string& name )
{
    return H5Aexists( object, name.c_str() ) > 0;
}

std::string readStringAttribute( Id object, const std::string& name )
{
    Handle attr( check( H5Aopen( object, name.c_str(), H5P_DEFAULT ), "H5Aopen(" + name + ")" ),
                 Handle::Kind::attribute );
    Handle stored( check( H5Aget_type( attr.id() ), "H5Aget_type" ), Handle::Kind::datatype );
    if ( H5Tget_class( stored.id() ) != H5T_STRING )
        throw std::runtime_error( "HDF5: attribute '" + name + "' is not a string" );
    if ( H5Tis_variable_str( stored.id() ) > 0 )
    {
        Handle type = stringType( 0, true );
        char* text = nullptr;
        check( H5Aread( attr.id(), type.id(), &text ), "H5Aread(" + name + ")", 0 );
        std::string value = text ? text : "";
        H5free_memory( text );
        return value;
    }
    std::size_t length = H5Tget_size( stored.id() );
    std::string value( length, '\0' );
    check( H5Aread( attr.id(), stored.id(), value.data() ), "H5Aread(" + name + ")", 0 );
    return value.substr( 0, value.find( '\0' ) );
}

std::int64_t readIntAttribute( Id object, const std::string& name )
{
    Handle attr( check( H5Aopen( object, name.c_str(), H5P_DEFAULT ), "H5Aopen(" + name + ")" ),
                 Handle::Kind::attribute );
    std::int64_t value = 0;
    check( H5Aread( attr.id(), H5T_NATIVE_INT64, &value ), "H5Aread(" + name + ")", 0 );
    return value;
}

namespace
{
herr_t collectName( hid_t, const char* name, const H5A_info_t*, void* data )
{
    static_cast<std::vector<std::string>*>( data )->push_back( name );
    return 0;
}
herr_t collectLink( hid_t, const char* name, const H5L_info_t*, void* data )
{
    static_cast<std::vector<std::string>*>( data )->push_back( name );
    return 0;
}
} // namespace

std::vector<std::string> attributeNames( Id object )
{
    std::vector<std::string> names;
    hsize_t index = 0;
    check( H5Aiterate2( object, H5_INDEX_NAME, H5_ITER_INC, &index, collectName, &names ),
           "H5Aiterate", 0 );
    return names;
}

//---------------------------------------------------------------------------------------------//
Group Group::createGroup( const std::string& name ) const
{
    return Group(
        Handle( check( H5Gcreate2( id(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT ),
                       "H5Gcreate(" + name + ")" ),
                Handle::Kind::group ) );
}

Group Group::openGroup( const std::string& name ) const
{
    return Group(
        Handle( check( H5Gopen2( id(), name.c_str(), H5P_DEFAULT ), "H5Gopen(" + name + ")" ),
                Handle::Kind::group ) );
}

std::vector<std::string> Group::members() const
{
    std::vector<std::string> names;
    hsize_t index = 0;
    check( H5Literate( id(), H5_INDEX_NAME, H5_ITER_INC, &index, collectLink, &names ),
           "H5Literate", 0 );
    return names;
}

bool Group::has( const std::string& name ) const
{
    return H5Lexists( id(), name.c_str(), H5P_DEFAULT ) > 0;
}

Dataset Group::createDatasetOfType( const std::string& name, Type type, std::uint64_t size,
                                    std::uint64_t chunk, const void* fill, int gzip_level ) const
{
    hsize_t dims = size;
    Handle space( check( H5Screate_simple( 1, &dims, nullptr ), "H5Screate_simple" ),
                  Handle::Kind::dataspace );
    // An empty dataset cannot be chunked (chunk > extent): it keeps the contiguous layout.
    PropertyList dcpl =
        size > 0
            ? PropertyList::datasetChunked( std::min<std::uint64_t>( chunk, size ), gzip_level )
            : PropertyList::datasetContiguous();
    check( H5Pset_fill_value( dcpl.id(), nativeType( type ), fill ), "H5Pset_fill_value", 0 );
    // Every element is written before the file is complete (docs/HDF5_LAYOUT.md): writing fill
    // values at allocation would double the I/O. Readers still see the fill value property.
    check( H5Pset_fill_time( dcpl.id(), H5D_FILL_TIME_NEVER ), "H5Pset_fill_time", 0 );
    return Dataset( Handle( check( H5Dcreate2( id(), name.c_str(), fileType( type ), space.id(),
                                               H5P_DEFAULT, dcpl.id(), H5P_DEFAULT ),
                                   "H5Dcreate(" + name + ")" ),
                            Handle::Kind::dataset ) );
}

void Group::createStringDataset( const std::string& name,
                                 const std::vector<std::string>& values ) const
{
    std::size_t length = 1;
    for ( const auto& v : values )
        length = std::max( length, v.size() );
    std::string buffer( length * values.size(), '\0' );
    for ( std::size_t i = 0; i < values.size(); ++i )
        std::copy( values[i].begin(), values[i].end(), buffer.begin() + i * length );
    Handle type = stringType( length, false );
    hsize_t dims = values.size();
    Handle space( check( H5Screate_simple( 1, &dims, nullptr ), "H5Screate_simple" ),
                  Handle::Kind::dataspace );
    Handle set( check( H5Dcreate2( id(), name.c_str(), type.id(), space.id(), H5P_DEFAULT,
                                   H5P_DEFAULT, H5P_DEFAULT ),
                       "H5Dcreate(" + name + ")" ),
                Handle::Kind::dataset );
    if ( !values.empty() )
    {
        // Every rank writes the same bytes: a collective write with identical selections.
        check( H5Dwrite( set.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data() ),
               "H5Dwrite(" + name + ")", 0 );
    }
    set.close();
}

std::vector<std::string> Group::readStringDataset( const std::string& name ) const
{
    Handle set( check( H5Dopen2( id(), name.c_str(), H5P_DEFAULT ), "H5Dopen(" + name + ")" ),
                Handle::Kind::dataset );
    Handle type( check( H5Dget_type( set.id() ), "H5Dget_type" ), Handle::Kind::datatype );
    Handle space( check( H5Dget_space( set.id() ), "H5Dget_space" ), Handle::Kind::dataspace );
    hsize_t n = 0;
    H5Sget_simple_extent_dims( space.id(), &n, nullptr );
    std::size_t length = H5Tget_size( type.id() );
    std::string buffer( length * n, '\0' );
    std::vector<std::string> out;
    if ( n == 0 )
        return out;
    check( H5Dread( set.id(), type.id(), H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data() ),
           "H5Dread(" + name + ")", 0 );
    for ( hsize_t i = 0; i < n; ++i )
    {
        std::string s = buffer.substr( i * length, length );
        out.push_back( s.substr( 0, s.find( '\0' ) ) );
    }
    return out;
}

Dataset Group::openDataset( const std::string& name ) const
{
    return Dataset(
        Handle( check( H5Dopen2( id(), name.c_str(), H5P_DEFAULT ), "H5Dopen(" + name + ")" ),
                Handle::Kind::dataset ) );
}

//---------------------------------------------------------------------------------------------//
std::uint64_t Dataset::size() const
{
    Handle space( check( H5Dget_space( id() ), "H5Dget_space" ), Handle::Kind::dataspace );
    hsize_t n = 0;
    check( H5Sget_simple_extent_dims( space.id(), &n, nullptr ) < 0 ? -1 : 0,
           "H5Sget_simple_extent_dims", 0 );
    return n;
}

void Dataset::shrink( std::uint64_t size ) const
{
    hsize_t dims = size;
    check( H5Dset_extent( id(), &dims ), "H5Dset_extent", 0 );
}

Type Dataset::type() const
{
    Handle t( check( H5Dget_type( id() ), "H5Dget_type" ), Handle::Kind::datatype );
    const Type all[] = { Type::i8,  Type::u8,  Type::i32, Type::u32,
                         Type::i64, Type::u64, Type::f64 };
    for ( Type candidate : all )
        if ( H5Tequal( t.id(), fileType( candidate ) ) > 0 )
            return candidate;
    throw std::runtime_error( "HDF5: dataset of an unsupported type" );
}

void Dataset::writeRaw( const std::vector<Run>& runs, Type type, const void* data, bool collective )
{
    // An empty dataset has no storage: HDF5 refuses even an empty write to it (addr overflow).
    // size() is the same on every rank, so collective callers all skip together.
    if ( size() == 0 )
        return;
    const std::uint64_t n = totalCount( runs );
    Dataspace file_space( size(), runs );
    Dataspace memory_space( n, n ? std::vector<Run>{ Run{ 0, n } } : std::vector<Run>{} );
    PropertyList xfer =
        collective ? PropertyList::transferCollective() : PropertyList::transferDefault();
    check(
        H5Dwrite( id(), nativeType( type ), memory_space.id(), file_space.id(), xfer.id(), data ),
        "H5Dwrite", 0 );
}

void Dataset::readRaw( const std::vector<Run>& runs, Type type, void* data ) const
{
    const std::uint64_t n = totalCount( runs );
    Dataspace file_space( size(), runs );
    Dataspace memory_space( n, n ? std::vector<Run>{ Run{ 0, n } } : std::vector<Run>{} );
    check(
        H5Dread( id(), nativeType( type ), memory_space.id(), file_space.id(), H5P_DEFAULT, data ),
        "H5Dread", 0 );
}

std::uint64_t Dataset::chunk() const
{
    Handle dcpl( check( H5Dget_create_plist( id() ), "H5Dget_create_plist" ), Handle::Kind::plist );
    if ( H5Pget_layout( dcpl.id() ) != H5D_CHUNKED )
        return 0;
    hsize_t c = 0;
    H5Pget_chunk( dcpl.id(), 1, &c );
    return c;
}

int Dataset::gzipLevel() const
{
    Handle dcpl( check( H5Dget_create_plist( id() ), "H5Dget_create_plist" ), Handle::Kind::plist );
    int n = H5Pget_nfilters( dcpl.id() );
    for ( int i = 0; i < n; ++i )
    {
        unsigned flags = 0, values[4] = {};
        size_t nvalues = 4;
        if ( H5Pget_filter2( dcpl.id(), static_cast<unsigned>( i ), &flags, &nvalues, values, 0,
                             nullptr, nullptr ) == H5Z_FILTER_DEFLATE )
            return nvalues > 0 ? static_cast<int>( values[0] ) : 1;
    }
    return 0;
}

} // namespace h5
} // namespace shardsweep
