// OUT.h5.journal/lock: open file description locks (fcntl F_OFD_SETLK, Linux >= 3.15).
#include "output_lock.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <stdexcept>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace shardsweep
{
namespace detail
{

namespace
{

//! Sets (or converts to) a lock of `type` on the whole file without waiting; false with errno set
//! when it cannot.
bool setLock( int fd, short type )
{
    struct flock lock = {};
    lock.l_type = type;
    lock.l_whence = SEEK_SET;
    lock.l_start = 0;
    lock.l_len = 0; // the whole file
    return ::fcntl( fd, F_OFD_SETLK, &lock ) == 0;
}

//! True while `path` still names the file open as `fd`: a run that finishes removes its journal
//! directory with the lock file in it, and a lock taken on the removed file protects nothing.
bool stillNamed( int fd, const std::string& path )
{
    struct stat open_file, named;
    return ::fstat( fd, &open_file ) == 0 && ::stat( path.c_str(), &named ) == 0 &&
           open_file.st_ino == named.st_ino && open_file.st_dev == named.st_dev;
}

//! What acquire() gives back when `abandon` ended the wait.
constexpr int kAbandoned = -2;

//! Opens the lock file and takes it as `first`, then converts to `then` (an atomic conversion for
//! OFD locks), waiting as OutputLock::exclusiveThenShared says. Returns the descriptor, -1 (no
//! locks on this file system: `warning` says so) or kAbandoned.
int acquire( const std::string& dir, short first, short then, double wait_s,
             const std::function<void( double )>& waiting, const std::function<bool()>& abandon,
             std::string& warning )
{
    const std::string path = OutputLock::path( dir );
    const auto t0 = std::chrono::steady_clock::now();
    double next_report = 0;
    for ( int sleep_ms = 5;; sleep_ms = std::min( 2 * sleep_ms, 200 ) )
    {
        if ( abandon && abandon() )
            return kAbandoned;
        std::error_code ec;
        std::filesystem::create_directories( dir, ec );
        const int fd = ::open( path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644 );
        if ( fd < 0 )
            throw std::runtime_error( "cannot create the lock file " + path + ": " +
                                      std::strerror( errno ) );
        if ( setLock( fd, first ) )
        {
            if ( stillNamed( fd, path ) && ( first == then || setLock( fd, then ) ) )
                return fd;
            ::close( fd );
            continue; // removed meanwhile: lock the new one
        }
        const int why = errno;
        ::close( fd );
        if ( why != EAGAIN && why != EACCES )
        {
            // No OFD locks here (an old kernel, a network file system without them): go on as
            // before locks existed, and say so.
            warning = "cannot lock " + path + " (" + std::strerror( why ) +
                      "): nothing keeps another run off this output while this one works on it";
            return -1;
        }
        const double waited =
            std::chrono::duration<double>( std::chrono::steady_clock::now() - t0 ).count();
        if ( waited >= wait_s )
            throw OutputLock::Busy( "still held after " + std::to_string( int( waited ) ) + " s" );
        if ( waiting && waited >= next_report )
        {
            waiting( waited );
            next_report = waited + 10;
        }
        std::this_thread::sleep_for( std::chrono::milliseconds( sleep_ms ) );
    }
}

} // namespace

OutputLock::~OutputLock()
{
    if ( _fd >= 0 )
        ::close( _fd );
}

OutputLock::OutputLock( OutputLock&& other ) noexcept
    : _fd( other._fd ), _abandoned( other._abandoned ), _warning( std::move( other._warning ) )
{
    other._fd = -1;
}

OutputLock& OutputLock::operator=( OutputLock&& other ) noexcept
{
    if ( this != &other )
    {
        if ( _fd >= 0 )
            ::close( _fd );
        _fd = other._fd;
        _abandoned = other._abandoned;
        _warning = std::move( other._warning );
        other._fd = -1;
    }
    return *this;
}

OutputLock OutputLock::take( const std::string& dir, short first, double wait_s,
                             const std::function<void( double )>& waiting,
                             const std::function<bool()>& abandon )
{
    OutputLock lock;
    const int fd = acquire( dir, first, F_RDLCK, wait_s, waiting, abandon, lock._warning );
    lock._abandoned = fd == kAbandoned;
    lock._fd = lock._abandoned ? -1 : fd;
    return lock;
}

OutputLock OutputLock::exclusiveThenShared( const std::string& dir, double wait_s,
                                            const std::function<void( double )>& waiting,
                                            const std::function<bool()>& abandon )
{
    return take( dir, F_WRLCK, wait_s, waiting, abandon );
}

OutputLock OutputLock::shared( const std::string& dir, double wait_s,
                               const std::function<bool()>& abandon )
{
    return take( dir, F_RDLCK, wait_s, {}, abandon );
}

} // namespace detail
} // namespace shardsweep
