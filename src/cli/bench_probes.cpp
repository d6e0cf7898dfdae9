// What the benchmarks measure about this process and the machine (bench_probes.hpp).
#include "bench_probes.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>
#include <vector>

namespace shardsweep::bench
{

double secondsSince( std::chrono::steady_clock::time_point start )
{
    return std::chrono::duration<double>( std::chrono::steady_clock::now() - start ).count();
}

//! Resets the kernel's peak-RSS mark of this process (Linux >= 4.0: "5" to clear_refs), so that
//! the next peakRssMiB() is the peak of one case, not of the process' lifetime.
bool resetPeakRss()
{
    std::ofstream f( "/proc/self/clear_refs" );
    f << "5";
    f.flush();
    return bool( f );
}

//! Peak resident set since the last reset (VmHWM), MiB; ru_maxrss (lifetime) if unavailable.
double peakRssMiB()
{
    std::ifstream status( "/proc/self/status" );
    std::string line;
    while ( std::getline( status, line ) )
        if ( line.rfind( "VmHWM:", 0 ) == 0 )
            return std::stod( line.substr( 6 ) ) / 1024.0; // kB
    struct rusage usage = {};
    getrusage( RUSAGE_SELF, &usage );
    return double( usage.ru_maxrss ) / 1024.0;
}

//! CPU seconds (user + system, all threads) this process has used so far.
double cpuSeconds()
{
    struct rusage usage = {};
    getrusage( RUSAGE_SELF, &usage );
    return double( usage.ru_utime.tv_sec + usage.ru_stime.tv_sec ) +
           1e-6 * double( usage.ru_utime.tv_usec + usage.ru_stime.tv_usec );
}

//! Bytes this process has passed to write calls so far (/proc/self/io `wchar`, every thread: the
//! journal's appends and the results file's MPI-IO writes); 0 where the file is missing.
double writtenBytes()
{
    std::ifstream io( "/proc/self/io" );
    std::string key;
    double value = 0;
    while ( io >> key >> value )
        if ( key == "wchar:" )
            return value;
    return 0.0;
}

//! The baseline of the written_MB_per_s column: sequential writes of 256 MiB to a file in `dir`,
//! 4 MiB at a time, then fdatasync (as `dd bs=4M count=64 conv=fdatasync`), in MB/s. This is
//! what the journals and the results file are written against: they too end in fsyncs.
double diskWriteMBps( const std::string& dir )
{
    const std::string path = fmt::format( "{}/shardsweep-bench-disk-{}", dir, ::getpid() );
    const int fd = ::open( path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600 );
    if ( fd < 0 )
        throw std::runtime_error( "bench sweep: cannot create " + path + ": " +
                                  std::strerror( errno ) );
    std::vector<char> block( 4 << 20, 'x' );
    constexpr int kBlocks = 64;
    const double t0 = mpi::wtime();
    bool ok = true;
    for ( int b = 0; b < kBlocks && ok; ++b )
        ok = ::write( fd, block.data(), block.size() ) == ssize_t( block.size() );
    ok = ok && ::fdatasync( fd ) == 0;
    const double seconds = mpi::wtime() - t0;
    ::close( fd );
    std::filesystem::remove( path );
    if ( !ok )
        throw std::runtime_error( "bench sweep: writing " + path + " failed" );
    return double( kBlocks ) * double( block.size() ) / 1e6 / std::max( seconds, 1e-9 );
}

} // namespace shardsweep::bench
