// Append-only, checksummed, fsynced per-rank journals of sweep results.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <shardsweep/sweep/journal.hpp>
#include <stdexcept>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

namespace shardsweep
{

namespace
{

constexpr std::uint64_t kMagic = 0x314c4e524a535353ull; // "SSSJRNL1"

struct RecordHeader
{
    std::uint64_t magic = kMagic;
    std::uint64_t payload_bytes = 0;
    std::uint32_t num_scenarios = 0;
    std::uint32_t num_gpus = 0;
    std::uint32_t num_shards = 0;
    std::uint32_t schema = kSweepSchemaVersion;
    std::uint64_t first_id = 0;
    std::uint64_t last_id = 0;
    std::uint64_t payload_checksum = 0;
    std::uint64_t header_checksum = 0; //!< of the fields above
};
static_assert( sizeof( RecordHeader ) == 64, "fixed header size" );

std::uint64_t headerChecksum( const RecordHeader& h )
{
    return journalChecksum( &h, offsetof( RecordHeader, header_checksum ) );
}

std::string errnoText()
{
    return std::strerror( errno );
}

bool readFully( int fd, void* data, std::size_t bytes, std::uint64_t offset )
{
    char* p = static_cast<char*>( data );
    while ( bytes > 0 )
    {
        ssize_t n = ::pread( fd, p, bytes, static_cast<off_t>( offset ) );
        if ( n < 0 && errno == EINTR )
            continue;
        if ( n <= 0 )
            return false;
        p += n;
        bytes -= std::size_t( n );
        offset += std::uint64_t( n );
    }
    return true;
}

std::uint64_t payloadBytes( const RecordHeader& h )
{
    return std::uint64_t( h.num_scenarios ) * sizeof( ScenarioRow ) +
           std::uint64_t( h.num_gpus ) * sizeof( GpuRow ) +
           std::uint64_t( h.num_shards ) * sizeof( ShardRow );
}

class Fd
{
  public:
    Fd( const std::string& path ) : fd( ::open( path.c_str(), O_RDONLY ) )
    {
        if ( fd < 0 )
            throw std::runtime_error( "cannot open journal " + path + ": " + errnoText() );
    }
    ~Fd() { ::close( fd ); }
    int fd;
};

} // namespace

void JournalChecksum::add( const void* data, std::size_t bytes )
{
    constexpr std::uint64_t kPrime = 0x100000001b3ull;
    const char* p = static_cast<const char*>( data );
    const auto word = [&]( std::uint64_t w )
    {
        std::uint64_t& lane = _lane[_words % 4];
        lane = ( lane ^ w ) * kPrime;
        ++_words;
    };
    const auto load = []( const char* at )
    {
        std::uint64_t w;
        std::memcpy( &w, at, 8 );
        return w;
    };
    for ( ; bytes >= 8 && _words % 4 != 0; p += 8, bytes -= 8 )
        word( load( p ) );
    // Whole groups of four words, one per lane: the four chains are independent.
    std::uint64_t a = _lane[0], b = _lane[1], c = _lane[2], d = _lane[3];
    const std::size_t groups = bytes / 32;
    for ( std::size_t g = 0; g < groups; ++g, p += 32 )
    {
        a = ( a ^ load( p ) ) * kPrime;
        b = ( b ^ load( p + 8 ) ) * kPrime;
        c = ( c ^ load( p + 16 ) ) * kPrime;
        d = ( d ^ load( p + 24 ) ) * kPrime;
    }
    _lane[0] = a;
    _lane[1] = b;
    _lane[2] = c;
    _lane[3] = d;
    _words += 4 * groups;
    bytes -= 32 * groups;
    for ( ; bytes >= 8; p += 8, bytes -= 8 )
        word( load( p ) );
    if ( bytes > 0 )
    {
        char tail[8] = {};
        std::memcpy( tail, p, bytes );
        word( load( tail ) ^ ( std::uint64_t( bytes ) << 56 ) );
    }
}

std::uint64_t JournalChecksum::value() const
{
    constexpr std::uint64_t kPrime = 0x100000001b3ull;
    std::uint64_t h = kOffset;
    for ( std::uint64_t lane : _lane )
        h = ( h ^ lane ) * kPrime;
    return ( h ^ _words ) * kPrime;
}

std::uint64_t journalChecksum( const void* data, std::size_t bytes )
{
    JournalChecksum checksum;
    checksum.add( data, bytes );
    return checksum.value();
}

//---------------------------------------------------------------------------------------------//
JournalWriter::JournalWriter( const std::string& path ) : _path( path )
{
    _fd = ::open( path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644 );
    if ( _fd < 0 )
        throw std::runtime_error( "cannot create journal " + path + ": " + errnoText() );
    struct stat st;
    if ( ::fstat( _fd, &st ) != 0 )
    {
        const std::string why = errnoText();
        ::close( _fd );
        throw std::runtime_error( "cannot stat journal " + path + ": " + why );
    }
    _start = std::uint64_t( st.st_size );
}

JournalWriter::~JournalWriter()
{
    if ( _fd >= 0 )
        ::close( _fd );
}

JournalRecordInfo JournalWriter::append( const JournalBatch& batch )
{
    RecordHeader h;
    h.num_scenarios = static_cast<std::uint32_t>( batch.scenarios.size() );
    h.num_gpus = static_cast<std::uint32_t>( batch.gpus.size() );
    h.num_shards = static_cast<std::uint32_t>( batch.shards.size() );
    h.payload_bytes = payloadBytes( h );
    if ( !batch.scenarios.empty() )
    {
        h.first_id = batch.scenarios.front().id;
        h.last_id = batch.scenarios.back().id;
    }
    // The header and the three row arrays go out in one writev, without a staging copy: the
    // journal is the rows' only second copy. The checksum runs over the arrays (whole 8-byte
    // words, static_assert in readJournalRecord) as over one contiguous payload.
    JournalChecksum checksum;
    struct iovec parts[4];
    int num_parts = 0;
    parts[num_parts++] = { &h, sizeof( h ) };
    auto add = [&]( const auto& rows )
    {
        const std::size_t n = rows.size() * sizeof( rows[0] );
        if ( n == 0 )
            return;
        checksum.add( rows.data(), n );
        parts[num_parts++] = { const_cast<void*>( static_cast<const void*>( rows.data() ) ), n };
    };
    add( batch.scenarios );
    add( batch.gpus );
    add( batch.shards );
    h.payload_checksum = checksum.value();
    h.header_checksum = headerChecksum( h );

    struct iovec* part = parts;
    std::size_t left = sizeof( h ) + h.payload_bytes;
    const std::size_t record_bytes = left;
    while ( left > 0 )
    {
        ssize_t n = ::writev( _fd, part, num_parts );
        if ( n < 0 && errno == EINTR )
            continue;
        if ( n < 0 )
            throw std::runtime_error( "writing journal " + _path + ": " + errnoText() );
        left -= std::size_t( n );
        // A short write: skip what went out and go on from there.
        for ( std::size_t done = std::size_t( n ); done > 0 && num_parts > 0; )
        {
            const std::size_t step = std::min( done, part->iov_len );
            part->iov_base = static_cast<char*>( part->iov_base ) + step;
            part->iov_len -= step;
            done -= step;
            if ( part->iov_len == 0 )
            {
                ++part;
                --num_parts;
            }
        }
    }
    if ( ::fdatasync( _fd ) != 0 )
        throw std::runtime_error( "fsync of journal " + _path + ": " + errnoText() );
    JournalRecordInfo info;
    info.offset = _start + _bytes;
    info.first_id = h.first_id;
    info.last_id = h.last_id;
    info.num_scenarios = h.num_scenarios;
    info.num_gpus = h.num_gpus;
    info.num_shards = h.num_shards;
    _bytes += record_bytes;
    return info;
}

//---------------------------------------------------------------------------------------------//
JournalScan scanJournal( const std::string& path )
{
    JournalScan scan;
    scan.path = path;
    Fd f( path );
    struct stat st;
    if ( ::fstat( f.fd, &st ) != 0 )
        throw std::runtime_error( "cannot stat journal " + path + ": " + errnoText() );
    const std::uint64_t size = std::uint64_t( st.st_size );
    std::uint64_t offset = 0;
    std::vector<char> payload;
    while ( offset < size )
    {
        RecordHeader h;
        const bool complete_header =
            size - offset >= sizeof( h ) && readFully( f.fd, &h, sizeof( h ), offset );
        const bool header_ok = complete_header && h.magic == kMagic &&
                               h.header_checksum == headerChecksum( h ) &&
                               h.payload_bytes == payloadBytes( h );
        const bool fits = header_ok && size - offset - sizeof( h ) >= h.payload_bytes;
        bool payload_ok = false;
        if ( fits )
        {
            payload.resize( h.payload_bytes );
            payload_ok = readFully( f.fd, payload.data(), payload.size(), offset + sizeof( h ) ) &&
                         journalChecksum( payload.data(), payload.size() ) == h.payload_checksum;
        }
        if ( !payload_ok )
        {
            // A kill mid-append leaves a prefix of the last record: a torn tail. Anything else
            // (a bad record with complete data after it) is damage.
            const bool at_end =
                !complete_header ||
                ( header_ok && ( !fits || offset + sizeof( h ) + h.payload_bytes == size ) );
            if ( !at_end || ( header_ok && h.schema != kSweepSchemaVersion ) )
                throw std::runtime_error( "journal " + path + " is damaged at byte " +
                                          std::to_string( offset ) +
                                          " (a record fails its checksum before the end of the "
                                          "file); use --fresh to start over" );
            scan.torn_tail = true;
            break;
        }
        if ( h.schema != kSweepSchemaVersion )
            throw std::runtime_error( "journal " + path + " has schema version " +
                                      std::to_string( h.schema ) + ", this build writes " +
                                      std::to_string( kSweepSchemaVersion ) + "; use --fresh" );
        JournalRecordInfo info;
        info.offset = offset;
        info.first_id = h.first_id;
        info.last_id = h.last_id;
        info.num_scenarios = h.num_scenarios;
        info.num_gpus = h.num_gpus;
        info.num_shards = h.num_shards;
        scan.records.push_back( info );
        offset += sizeof( h ) + h.payload_bytes;
        scan.valid_bytes = offset;
    }
    return scan;
}

namespace
{

// The payload is the three row arrays back to back; each is a whole number of 8-byte words, so
// the checksum of the payload is added up over the arrays read one by one.
static_assert( sizeof( ScenarioRow ) % 8 == 0 && sizeof( GpuRow ) % 8 == 0 &&
                   sizeof( ShardRow ) % 8 == 0,
               "JournalChecksum takes the row arrays in 8-byte words" );

[[noreturn]] void damaged( const std::string& path, const JournalRecordInfo& record )
{
    throw std::runtime_error( "journal " + path + " is damaged at byte " +
                              std::to_string( record.offset ) );
}

//! Reads and checks the header of a record found earlier.
RecordHeader readHeader( const Fd& f, const std::string& path, const JournalRecordInfo& record )
{
    RecordHeader h;
    if ( !readFully( f.fd, &h, sizeof( h ), record.offset ) || h.magic != kMagic ||
         h.header_checksum != headerChecksum( h ) )
        throw std::runtime_error( "journal " + path + " changed under the run at byte " +
                                  std::to_string( record.offset ) );
    if ( payloadBytes( h ) != h.payload_bytes )
        damaged( path, record );
    return h;
}

//! Reads `count` rows at `at` into `rows` (resized), adding them to `checksum` (if not null).
template <class Row>
bool readRows( const Fd& f, std::vector<Row>& rows, std::uint64_t count, std::uint64_t& at,
               JournalChecksum* checksum )
{
    rows.resize( count );
    const std::size_t n = rows.size() * sizeof( Row );
    if ( n == 0 )
        return true;
    const bool ok = readFully( f.fd, rows.data(), n, at );
    if ( checksum )
        checksum->add( rows.data(), n );
    at += n;
    return ok;
}

} // namespace

void readJournalRecord( const std::string& path, const JournalRecordInfo& record,
                        JournalBatch& into )
{
    Fd f( path );
    const RecordHeader h = readHeader( f, path, record );
    std::uint64_t at = record.offset + sizeof( h );
    JournalChecksum checksum;
    const bool ok = readRows( f, into.scenarios, h.num_scenarios, at, &checksum ) &&
                    readRows( f, into.gpus, h.num_gpus, at, &checksum ) &&
                    readRows( f, into.shards, h.num_shards, at, &checksum );
    if ( !ok || checksum.value() != h.payload_checksum )
        damaged( path, record );
}

void readJournalRecordHead( const std::string& path, const JournalRecordInfo& record,
                            JournalBatch& into )
{
    Fd f( path );
    const RecordHeader h = readHeader( f, path, record );
    std::uint64_t at = record.offset + sizeof( h );
    into.shards.clear();
    // Not checked here: readJournalShards checks the whole record when it streams the shards.
    if ( !readRows( f, into.scenarios, h.num_scenarios, at, nullptr ) ||
         !readRows( f, into.gpus, h.num_gpus, at, nullptr ) )
        damaged( path, record );
}

void readJournalShards( const std::string& path, const JournalRecordInfo& record,
                        const JournalBatch& head, std::vector<ShardRow>& block,
                        std::size_t block_rows,
                        const std::function<void( std::size_t first, std::size_t count )>& consume )
{
    Fd f( path );
    const RecordHeader h = readHeader( f, path, record );
    if ( head.scenarios.size() != h.num_scenarios || head.gpus.size() != h.num_gpus )
        damaged( path, record );
    JournalChecksum checksum;
    checksum.add( head.scenarios.data(), head.scenarios.size() * sizeof( ScenarioRow ) );
    checksum.add( head.gpus.data(), head.gpus.size() * sizeof( GpuRow ) );
    std::uint64_t at = record.offset + sizeof( h ) +
                       std::uint64_t( h.num_scenarios ) * sizeof( ScenarioRow ) +
                       std::uint64_t( h.num_gpus ) * sizeof( GpuRow );
    block_rows = std::max<std::size_t>( block_rows, 1 );
    for ( std::size_t first = 0; first < h.num_shards; first += block_rows )
    {
        const std::size_t count = std::min<std::size_t>( block_rows, h.num_shards - first );
        if ( !readRows( f, block, count, at, &checksum ) )
            damaged( path, record );
        consume( first, count );
    }
    if ( checksum.value() != h.payload_checksum )
        damaged( path, record );
}

JournalBatch readJournalRecord( const std::string& path, const JournalRecordInfo& record )
{
    JournalBatch batch;
    readJournalRecord( path, record, batch );
    return batch;
}

} // namespace shardsweep
