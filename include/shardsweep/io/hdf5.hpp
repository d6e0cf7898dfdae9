#pragma once
//! \file hdf5.hpp
//! \brief Small RAII wrappers over the HDF5 C API: files (serial or MPI-IO), groups, 1-D datasets,
//! dataspaces, property lists and attributes. Raw H5* calls live only in src/io/hdf5.cpp and
//! src/io/hdf5_data.cpp.
//!
//! Parallel rules (the HDF5 manual's "Collective Calling Requirements in Parallel HDF5"): creating
//! files, groups, datasets and attributes, writing attributes, flush and close are collective:
//! every rank calls them with identical arguments. Dataset writes are collective here too
//! (H5FD_MPIO_COLLECTIVE): a rank with nothing to write passes no runs and still takes part.

#include <cstdint>
#include <future>
#include <mpi.h>
#include <string>
#include <type_traits>
#include <vector>

namespace shardsweep
{
namespace h5
{

using Id = std::int64_t; //!< hid_t (an int64 in HDF5 >= 1.10)

//! Element types of 1-D datasets.
enum class Type
{
    i8,
    u8,
    i32,
    u32,
    i64,
    u64,
    f64,
};

template <class T>
constexpr Type typeOf()
{
    static_assert( std::is_arithmetic<T>::value, "1-D datasets hold numbers" );
    if constexpr ( std::is_same<T, double>::value )
        return Type::f64;
    else if constexpr ( std::is_signed<T>::value && sizeof( T ) == 1 )
        return Type::i8;
    else if constexpr ( sizeof( T ) == 1 )
        return Type::u8;
    else if constexpr ( std::is_signed<T>::value && sizeof( T ) == 4 )
        return Type::i32;
    else if constexpr ( sizeof( T ) == 4 )
        return Type::u32;
    else if constexpr ( std::is_signed<T>::value && sizeof( T ) == 8 )
        return Type::i64;
    else
        return Type::u64;
}

//! Owns one hid_t and closes it with the matching H5?close.
class Handle
{
  public:
    enum class Kind
    {
        file,
        group,
        dataset,
        dataspace,
        plist,
        attribute,
        datatype,
    };
    Handle() = default;
    Handle( Id id, Kind kind ) : _id( id ), _kind( kind ) {}
    ~Handle() { reset(); }
    Handle( Handle&& other ) noexcept : _id( other._id ), _kind( other._kind ) { other._id = -1; }
    Handle& operator=( Handle&& other ) noexcept;
    Handle( const Handle& ) = delete;
    Handle& operator=( const Handle& ) = delete;

    Id id() const { return _id; }
    bool valid() const { return _id >= 0; }
    //! Closes now; throws if HDF5 reports an error (a failed close of a file loses data).
    void close();

  private:
    void reset() noexcept;
    Id _id = -1;
    Kind _kind = Kind::file;
};

//! A contiguous range [offset, offset + count) of a 1-D dataset.
struct Run
{
    std::uint64_t offset = 0;
    std::uint64_t count = 0;
};

//! A selection of a 1-D dataspace: a union of runs (or nothing).
class Dataspace
{
  public:
    //! A 1-D dataspace of `size` elements, nothing selected when `runs` is empty.
    Dataspace( std::uint64_t size, const std::vector<Run>& runs );
    Id id() const { return _handle.id(); }

  private:
    Handle _handle;
};

//! Property lists the wrappers need.
class PropertyList
{
  public:
    static PropertyList fileAccessMpio( MPI_Comm comm ); //!< MPI-IO + collective metadata
    static PropertyList fileAccessSerial();
    static PropertyList datasetChunked( std::uint64_t chunk, int gzip_level ); //!< 0: no filter
    static PropertyList datasetContiguous();
    static PropertyList transferCollective();
    static PropertyList transferDefault();
    Id id() const { return _handle.id(); }

  private:
    explicit PropertyList( Handle h ) : _handle( std::move( h ) ) {}
    Handle _handle;
};

//! Attribute helpers on any object (file root, group, dataset). Writing is collective in parallel.
void writeAttribute( Id object, const std::string& name, const std::string& value );
void writeAttribute( Id object, const std::string& name, std::int64_t value );
void writeAttribute( Id object, const std::string& name, double value );
bool hasAttribute( Id object, const std::string& name );
std::string readStringAttribute( Id object, const std::string& name );
std::int64_t readIntAttribute( Id object, const std::string& name );
std::vector<std::string> attributeNames( Id object );

class Dataset;

//! A group (or the file's root group).
class Group
{
  public:
    Group( Handle h ) : _handle( std::move( h ) ) {}
    Id id() const { return _handle.id(); }

    Group createGroup( const std::string& name ) const;
    Group openGroup( const std::string& name ) const;
    //! Names of the links in this group, in HDF5's name order.
    std::vector<std::string> members() const;
    bool has( const std::string& name ) const;

    //! A 1-D dataset of `size` elements, chunked by `chunk` (clamped to [1, size]), filled with
    //! `fill` where never written, optionally gzip-compressed (serial files only on HDF5 1.10).
    template <class T>
    Dataset createDataset( const std::string& name, std::uint64_t size, std::uint64_t chunk, T fill,
                           int gzip_level = 0 ) const;
    //! A dataset of fixed-length strings (one element per entry), written collectively.
    void createStringDataset( const std::string& name,
                              const std::vector<std::string>& values ) const;
    std::vector<std::string> readStringDataset( const std::string& name ) const;
    Dataset openDataset( const std::string& name ) const;

    //! createDataset with the element type given at run time; `fill` points to one element.
    Dataset createDatasetOfType( const std::string& name, Type type, std::uint64_t size,
                                 std::uint64_t chunk, const void* fill, int gzip_level ) const;

  private:
    Handle _handle;
};

//! A 1-D dataset of numbers.
class Dataset
{
  public:
    Dataset( Handle h ) : _handle( std::move( h ) ) {}
    Id id() const { return _handle.id(); }
    std::uint64_t size() const;
    Type type() const;

    //! Writes `data` (Σ run counts elements, in run order) into `runs`; collective when the file
    //! is parallel: every rank calls it, possibly with no runs.
    template <class T>
    void write( const std::vector<Run>& runs, const T* data, bool collective = true )
    {
        writeRaw( runs, typeOf<T>(), data, collective );
    }
    //! Reads the runs into `data` (converting from the stored type to T).
    template <class T>
    void read( const std::vector<Run>& runs, T* data ) const
    {
        readRaw( runs, typeOf<T>(), data );
    }
    template <class T>
    std::vector<T> readAll() const
    {
        std::vector<T> out( size() );
        if ( !out.empty() )
            read( { Run{ 0, out.size() } }, out.data() );
        return out;
    }

    void writeRaw( const std::vector<Run>& runs, Type type, const void* data, bool collective );
    void readRaw( const std::vector<Run>& runs, Type type, void* data ) const;
    //! Cuts a chunked dataset to its first `size` elements (collective when the file is
    //! parallel).
    void shrink( std::uint64_t size ) const;
    //! The chunk length and gzip level of the dataset's creation property list (0: none).
    std::uint64_t chunk() const;
    int gzipLevel() const;

  private:
    Handle _handle;
};

template <class T>
Dataset Group::createDataset( const std::string& name, std::uint64_t size, std::uint64_t chunk,
                              T fill, int gzip_level ) const
{
    return createDatasetOfType( name, typeOf<T>(), size, chunk, &fill, gzip_level );
}

//! An HDF5 file. Parallel files take a communicator; every rank must make the same calls.
class File
{
  public:
    //! Creates (truncating) `path` with MPI-IO on `comm` (collective).
    static File createParallel( const std::string& path, MPI_Comm comm );
    //! Opens `path` read-only on one process (no MPI-IO).
    static File openSerial( const std::string& path, bool writable = false );
    static File createSerial( const std::string& path );
    //! True when `path` is an HDF5 file that HDF5 can open (without printing HDF5's error stack).
    static bool isReadable( const std::string& path );

    Group root() const;
    void flush() const;
    //! Closes the file (collective in parallel); errors are reported, not swallowed. Every group,
    //! dataset and attribute of the file must be closed (destroyed) first.
    void close();
    Id id() const { return _handle.id(); }

  private:
    explicit File( Handle h ) : _handle( std::move( h ) ) {}
    Handle _handle;
};

//! Turns off HDF5's automatic error-stack printing (failures become exceptions instead).
void silenceErrorStack();

//! Flushes a closed file's data to stable storage (open + fsync + close); false on failure.
bool syncPath( const std::string& path );

//! Starts writing a file's dirty pages to storage while the caller goes on writing (Linux's
//! sync_file_range(SYNC_FILE_RANGE_WRITE), on a background thread: submitting the pages waits
//! for the device, which is what the caller must not do; nothing elsewhere). A writer that calls
//! start() after each part it wrote leaves the final syncPath only what was written last,
//! instead of the whole file at once. A hint: failures (no such file, a file system without it)
//! are ignored.
class Writeback
{
  public:
    explicit Writeback( const std::string& path );
    //! Waits for the writeback call in flight (not for the data to reach storage).
    ~Writeback();
    Writeback( const Writeback& ) = delete;
    Writeback& operator=( const Writeback& ) = delete;
    //! Starts writeback of every dirty page of the file not already being written. If the
    //! previous call is still submitting pages, does nothing: the next call (or syncPath) takes
    //! the pages dirtied meanwhile.
    void start();

  private:
    int _fd = -1;
    std::future<void> _pending;
};

} // namespace h5
} // namespace shardsweep
