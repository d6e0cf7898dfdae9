#pragma once
//! \file nccl_tests_log.hpp
//! \brief nccl-tests results (github.com/NVIDIA/nccl-tests) as users save them: the standard
//! output of all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf and
//! sendrecv_perf, read for `shardsweep calibrate network`.
//!
//! What is read from a log (src/common.cu prints it):
//! - `#  Rank  N Group G Pid P on HOST device D [bus] NAME` lines: the ranks and their hosts;
//! - the column header `#  size  count  type  redop  root  time  algbw  busbw  #wrong  time ...`
//!   (older versions lack redop/root): the first `time` column is out-of-place, in µs;
//! - the data rows under it. Lines of NCCL INFO output, srun's `N: ` label and a CRLF end are
//!   tolerated; a row cut short (a truncated log) is an error naming the file and line.
//! Which collective a log measured is not printed: it comes from the file name (all_reduce,
//! allreduce, all_gather, reduce_scatter, alltoall/all_to_all, sendrecv) or from a `KIND=PATH`
//! argument. The same reader takes vTrain's nccl-tests CSV tables (`size(B),count,type,time(ns),
//! busbw(GB/s),time(ns),busbw(GB/s)`, one node, ranks from an `_<N>gpu` in the file name).

#include <string>
#include <vector>

namespace shardsweep
{

enum class NcclTest : unsigned char
{
    all_reduce = 0,
    all_gather = 1,
    reduce_scatter = 2,
    all_to_all = 3,
    sendrecv = 4,
};

struct NcclTestsLog
{
    std::string path;
    NcclTest test = NcclTest::all_reduce;
    int ranks = 0;
    int hosts = 0;
    int ranks_line = 0; //!< line of the first Rank line (0: none, a CSV table)
    struct Row
    {
        double bytes = 0.0;   //!< nccl-tests' size column
        double time_us = 0.0; //!< out-of-place
        int line = 0;
    };
    std::vector<Row> rows;
};

//! The test's name as nccl-tests' binary spells it without _perf ("all_reduce", ...).
const char* ncclTestName( NcclTest t );

//! Reads `spec`: PATH, or KIND=PATH with KIND one of the names above. Throws InputError naming
//! the file and line for an unknown collective, a missing header or rank list, a short row or a
//! non-positive size or time.
NcclTestsLog readNcclTestsLog( const std::string& spec );

} // namespace shardsweep
