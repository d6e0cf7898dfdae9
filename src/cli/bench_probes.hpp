#pragma once
// What the benchmarks measure about this process and the machine (internal to src/cli/bench_*):
// wall and CPU time, peak resident memory, bytes written, the disk's sequential write rate.
#include <chrono>
#include <string>

namespace shardsweep::bench
{

//! Wall seconds since `start` (steady clock).
double secondsSince( std::chrono::steady_clock::time_point start );

//! Resets the kernel's peak-RSS mark of this process (Linux >= 4.0: "5" to clear_refs), so that
//! the next peakRssMiB() is the peak of one case, not of the process' lifetime.
bool resetPeakRss();

//! Peak resident set since the last reset (VmHWM), MiB; ru_maxrss (lifetime) if unavailable.
double peakRssMiB();

//! CPU seconds (user + system, all threads) this process has used so far.
double cpuSeconds();

//! Bytes this process has passed to write calls so far (/proc/self/io `wchar`, every thread: the
//! journal's appends and the results file's MPI-IO writes); 0 where the file is missing.
double writtenBytes();

//! The baseline of the written_MB_per_s column: sequential writes of 256 MiB to a file in `dir`,
//! 4 MiB at a time, then fdatasync (as `dd bs=4M count=64 conv=fdatasync`), in MB/s. This is
//! what the journals and the results file are written against: they too end in fsyncs.
double diskWriteMBps( const std::string& dir );

} // namespace shardsweep::bench
