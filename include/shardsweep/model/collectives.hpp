#pragma once
//! \file collectives.hpp
//! \brief Collective time with ASTRA-sim 2.0's congestion-unaware analytical semantics
//! (checked against AstraSim_Analytical_Congestion_Unaware, astra-sim 518bd51;
//! docs/model/collectives.md).
//!
//! Per step a message of m bytes over h hops costs t(m, h) = ⌊h·L + m/B⌋ ns (B in B/ns with
//! GB = 2^30 B), a reduction of m bytes R(m) = 3·⌊m / local_mem_bw⌋ ns (GB = 10^9 B), and every
//! hand-off the endpoint delay δ. Per-dimension algorithms (ring, direct, halving-doubling,
//! double binary tree) give a phase time; phases on successive dimensions add (localBWAware
//! all-reduce: reduce-scatter up the dimensions, all-reduce on the last, all-gather down).
//! A collective is cut into `preferred_dataset_splits` chunks; on one dimension
//! ⌈splits / active⌉ rounds of one chunk run back to back (the backend has no contention); on
//! several dimensions the chunks pipeline through the dimensions' queues of `active` slots
//! (chunk_pipeline.hpp: a closed form where every phase has its own queue, a chunk-by-chunk
//! simulation where a localBWAware all-reduce's reduce-scatter and all-gather share one).
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/model/chunk_pipeline.hpp>
#include <shardsweep/model/math.hpp>

namespace shardsweep
{

//! Phases of one collective: reduce-scatter, all-reduce and all-gather over at most 4 dims.
constexpr int kMaxCollectivePhases = 2 * kMaxNetworkDims - 1;

namespace collective_detail
{

//! Hops between two NPUs `distance` apart in a dimension of `p` NPUs.
KOKKOS_INLINE_FUNCTION double hops( Topology topology, int p, int distance )
{
    switch ( topology )
    {
    case Topology::Ring:
    {
        const int d = distance % p;
        return d < p - d ? d : p - d;
    }
    case Topology::FullyConnected:
        return 1.0;
    case Topology::Switch:
        return 2.0;
    }
    return 1.0;
}

//! Bytes per ns of `GBps` with ASTRA-sim's network GB = 2^30 B.
KOKKOS_INLINE_FUNCTION double linkBytesPerNs( double GBps )
{
    return GBps * 1073741824.0 / 1e9;
}

//! One message: ⌊h·L + m/B⌋ (ASTRA-sim truncates each delay to whole ns).
KOKKOS_INLINE_FUNCTION double message( const NetworkDim& dim, double bytes, double h )
{
    return math::floor( h * dim.latency_ns + bytes / linkBytesPerNs( dim.bandwidth_GBps ) );
}

//! Reduction of m bytes: one write and two reads at local-mem-bw (GB = 10^9 B, i.e. B/ns).
KOKKOS_INLINE_FUNCTION double reduction( const SystemConfig& sys, double bytes )
{
    return 3.0 * math::floor( bytes / sys.local_mem_bw_GBps );
}

KOKKOS_INLINE_FUNCTION bool isPowerOfTwo( int p )
{
    return p > 0 && ( p & ( p - 1 ) ) == 0;
}

KOKKOS_INLINE_FUNCTION int log2Int( int p )
{
    int k = 0;
    while ( ( 1 << ( k + 1 ) ) <= p )
        ++k;
    return k;
}

//! One phase of collective `c` on one dimension with input D bytes per NPU.
KOKKOS_INLINE_FUNCTION double phaseTime( const NetworkDim& dim, const SystemConfig& sys,
                                         Collective c, CollectiveAlgorithm algorithm, double D )
{
    const int p = dim.npus_count;
    if ( p <= 1 )
        return 0.0;
    const double delta = sys.endpoint_delay_ns;
    const double pm1 = p - 1.0;
    // Halving-doubling needs a power of two and has no all-to-all; double binary tree is for
    // all-reduce only. ASTRA-sim rejects those combinations; shardsweep prices them as ring.
    if ( ( algorithm == CollectiveAlgorithm::halving_doubling &&
           ( !isPowerOfTwo( p ) || c == Collective::all_to_all ) ) ||
         ( algorithm == CollectiveAlgorithm::double_binary_tree && c != Collective::all_reduce ) )
        algorithm = CollectiveAlgorithm::ring;

    switch ( algorithm )
    {
    case CollectiveAlgorithm::ring:
    {
        const double h = hops( dim.topology, p, 1 );
        switch ( c )
        {
        case Collective::reduce_scatter:
            return delta + pm1 * ( message( dim, D / p, h ) + delta + reduction( sys, D / p ) );
        case Collective::all_gather:
            return delta + pm1 * ( message( dim, D, h ) + delta );
        case Collective::all_reduce:
            return delta +
                   pm1 * ( 2.0 * message( dim, D / p, h ) + 2.0 * delta + reduction( sys, D / p ) );
        case Collective::all_to_all:
            return delta + p * pm1 / 2.0 * ( message( dim, D / p, h ) + delta );
        }
        return 0.0;
    }
    case CollectiveAlgorithm::direct:
    {
        const double h = hops( dim.topology, p, p / 2 );
        switch ( c )
        {
        case Collective::reduce_scatter:
            return 2.0 * delta + message( dim, D / p, h ) + reduction( sys, D / p );
        case Collective::all_gather:
            return 2.0 * delta + message( dim, D, h );
        case Collective::all_reduce:
            return 3.0 * delta + 2.0 * message( dim, D / p, h ) + reduction( sys, D / p );
        case Collective::all_to_all:
            return 2.0 * delta + message( dim, D / p, h );
        }
        return 0.0;
    }
    case CollectiveAlgorithm::halving_doubling:
    {
        const int k = log2Int( p );
        double rs = delta;
        for ( int i = 1; i <= k; ++i )
            rs += message( dim, D / ( 1 << i ), hops( dim.topology, p, 1 << ( i - 1 ) ) ) + delta;
        for ( int i = 1; i <= k - 1; ++i )
            rs += reduction( sys, D / ( 1 << ( i + 1 ) ) );
        if ( c == Collective::reduce_scatter )
            return rs;
        if ( c == Collective::all_gather )
        {
            double ag = delta;
            for ( int i = 1; i <= k; ++i )
                ag +=
                    message( dim, ( 1 << ( i - 1 ) ) * D, hops( dim.topology, p, p >> i ) ) + delta;
            return ag;
        }
        double ar = rs; // all-reduce: the reduce-scatter, then the gather of the D/p shards
        for ( int j = 1; j <= k; ++j )
            ar +=
                message( dim, ( 1 << ( j - 1 ) ) * D / p, hops( dim.topology, p, p >> j ) ) + delta;
        return ar;
    }
    case CollectiveAlgorithm::double_binary_tree:
    {
        // Reduce up and broadcast down a tree of depth ⌈log2 p⌉ with the full chunk per step
        // (astraccl/native_collectives/collective_algorithm/; not among the cases checked against
        // the binary).
        const double depth = log2Int( p ) + ( isPowerOfTwo( p ) ? 0 : 1 );
        return delta + 2.0 * depth * ( message( dim, D, hops( dim.topology, p, 1 ) ) + delta ) +
               depth * reduction( sys, D );
    }
    }
    return 0.0;
}

//! NPUs of the whole system (ASTRA-sim's Sys::total_nodes).
KOKKOS_INLINE_FUNCTION double systemNpus( const Network& net )
{
    double npus = 1.0;
    for ( int d = 0; d < net.num_dims; ++d )
        npus *= math::max( 1, net.dims[d].npus_count );
    return npus;
}

//! Largest mean of v[0..n) over the contiguous blocks of `block` entries (block divides n).
//! Summed as deviations from v[0], so that equal entries give exactly v[0].
KOKKOS_INLINE_FUNCTION double maxBlockMean( const double* v, int n, int block )
{
    const double ref = v[0];
    double best = 0.0;
    for ( int start = 0; start < n; start += block )
    {
        double dev = 0.0;
        for ( int g = start; g < start + block; ++g )
            dev += v[g] - ref;
        best = start == 0 ? dev : math::fmax( best, dev );
    }
    return ref + best / block;
}

//! Largest mean of v[0..n) over the residue classes modulo `stride` (stride divides n).
KOKKOS_INLINE_FUNCTION double maxResidueMean( const double* v, int n, int stride )
{
    const double ref = v[0];
    double best = 0.0;
    for ( int r = 0; r < stride; ++r )
    {
        double dev = 0.0;
        for ( int g = r; g < n; g += stride )
            dev += v[g] - ref;
        best = r == 0 ? dev : math::fmax( best, dev );
    }
    return ref + best / ( n / stride );
}

} // namespace collective_detail

//! What one collective call costs outside ASTRA-sim's network steps, ns: a fixed time (the
//! kernel launch, the ranks' first hand-shake, the pipeline's fill) and one pass over its
//! comm_size `bytes` (GB = 10^9 B). NCCL's all-reduces of 2 to 8 A100s show both: their time at
//! 1 MiB-1 GiB is 40 µs + 1.9 µs/MiB plus a ring's steps (docs/model/calibration.md).
KOKKOS_INLINE_FUNCTION double callOverheadNs( const SystemConfig& sys, double bytes )
{
    return sys.call_latency_ns + ( sys.call_bw_GBps > 0.0 ? bytes / sys.call_bw_GBps : 0.0 );
}

//! The bytes the call terms' pass goes over, for collective `c` of comm_size `bytes` in a group of
//! `group_npus`: an all-reduce's buffer and an all-to-all's send buffer; half of a
//! reduce-scatter's input and half of an all-gather's output (P·S). NCCL's ring all-reduce is a
//! reduce-scatter followed by an all-gather of the same buffer, and the three run at the same bus
//! bandwidth (nccl-tests' busbw, github.com/NVIDIA/nccl-tests doc/PERFORMANCE.md, is defined so
//! that they compare), so the per-byte cost fitted on all-reduces splits between its two halves.
//! Not measured: the development data has all-reduces only (docs/model/calibration.md).
KOKKOS_INLINE_FUNCTION double callPassBytes( Collective c, double bytes, double group_npus )
{
    if ( c == Collective::reduce_scatter )
        return 0.5 * bytes;
    if ( c == Collective::all_gather )
        return 0.5 * group_npus * bytes;
    return bytes;
}

//! `sys` as ASTRA-sim sees it: without the call terms, which it has no key for. The Chakra
//! export sizes each collective so that ASTRA-sim's time is the model's, call terms included,
//! and the replay prices those sizes as ASTRA-sim does.
KOKKOS_INLINE_FUNCTION SystemConfig astraSystem( SystemConfig sys )
{
    sys.call_latency_ns = 0.0;
    sys.call_bw_GBps = 0.0;
    return sys;
}

//! Time (ns) of collective `c` with ASTRA-sim comm_size `bytes` on dims
//! [first_dim, first_dim + num_dims) of `net` (a group spanning only those dimensions).
KOKKOS_INLINE_FUNCTION double collectiveTimeNsOnDims( const Network& net, const SystemConfig& sys,
                                                      Collective c, double bytes, int first_dim,
                                                      int num_dims )
{
    namespace cd = collective_detail;
    if ( bytes <= 0.0 )
        return 0.0;
    // The dimensions that actually have peers.
    int dims[kMaxNetworkDims];
    int n = 0;
    for ( int d = first_dim; d < first_dim + num_dims && d < net.num_dims; ++d )
        if ( net.dims[d].npus_count > 1 )
            dims[n++] = d;
    if ( n == 0 )
        return 0.0;
    double group_npus = 1.0;
    for ( int i = 0; i < n; ++i )
        group_npus *= net.dims[dims[i]].npus_count;

    // ASTRA-sim's determine_chunk_size: a non-all-gather chunk has at least one byte per NPU of
    // the whole system (Sys::total_nodes, all dimensions, also for a group on fewer dims).
    const double system_npus = cd::systemNpus( net );
    const int splits = math::max( 1, sys.preferred_dataset_splits );
    double chunk = bytes / splits;
    if ( c != Collective::all_gather )
        chunk = math::fmax( chunk, system_npus );

    // The phases one chunk runs through, with their durations.
    double phase[kMaxCollectivePhases] = {};
    int queue[kMaxCollectivePhases] = {}; // the dimension whose queue each phase waits in
    int num_phases = 0;
    const int ci = static_cast<int>( c );
    auto add = [&]( int d, Collective pc, double D )
    {
        queue[num_phases] = d;
        phase[num_phases++] = cd::phaseTime( net.dims[d], sys, pc, sys.algorithm[ci][d], D );
    };
    double D = chunk;
    if ( c == Collective::all_reduce && sys.optimization == CollectiveOptimization::local_bw_aware )
    {
        // Reduce-scatter up, all-reduce on the last dimension, all-gather back down; the
        // all-gather of dimension d starts from the shard the reduce-scatter left.
        double shard[kMaxNetworkDims];
        for ( int i = 0; i < n - 1; ++i )
        {
            add( dims[i], Collective::reduce_scatter, D );
            D /= net.dims[dims[i]].npus_count;
            shard[i] = D;
        }
        add( dims[n - 1], Collective::all_reduce, D );
        for ( int i = n - 2; i >= 0; --i )
            add( dims[i], Collective::all_gather, shard[i] );
    }
    else if ( c == Collective::all_gather )
    {
        for ( int i = n - 1; i >= 0; --i )
        {
            add( dims[i], c, D );
            D *= net.dims[dims[i]].npus_count;
        }
    }
    else
    {
        for ( int i = 0; i < n; ++i )
        {
            add( dims[i], c, D );
            if ( c == Collective::reduce_scatter )
                D /= net.dims[dims[i]].npus_count;
        }
    }

    return cd::pipelineNs( sys, phase, queue, num_phases ) +
           callOverheadNs( sys, callPassBytes( c, bytes, group_npus ) );
}

//! One point-to-point message of `bytes` between neighbours in every dimension of `net` (a pair
//! that spans those dimensions): ASTRA-sim's message time on the slowest of them, plus the
//! endpoint delay at both ends, ns.
KOKKOS_INLINE_FUNCTION double pointToPointNs( const Network& net, const SystemConfig& sys,
                                              double bytes )
{
    if ( net.num_dims == 0 || bytes <= 0.0 )
        return 0.0;
    double worst = 0.0;
    for ( int d = 0; d < net.num_dims; ++d )
    {
        const NetworkDim& dim = net.dims[d];
        const double h = collective_detail::hops( dim.topology, dim.npus_count, 1 );
        worst = math::fmax( worst, collective_detail::message( dim, bytes, h ) );
    }
    return worst + 2.0 * sys.endpoint_delay_ns + callOverheadNs( sys, bytes );
}

//! Time (ns) of collective `c` with ASTRA-sim comm_size `bytes` over the whole network.
KOKKOS_INLINE_FUNCTION double collectiveTimeNs( const Network& net, const SystemConfig& sys,
                                                Collective c, double bytes )
{
    return collectiveTimeNsOnDims( net, sys, c, bytes, 0, net.num_dims );
}

//! All-to-all with per-GPU volumes over the whole network (the embedding all-to-alls).
//! send_bytes[g] / recv_bytes[g]: the bytes GPU g sends to / receives from the other GPUs (its
//! own share excluded); GPUs numbered as the network's NPUs (dim 0 fastest).
//!
//! ASTRA-sim's all-to-all runs dimension by dimension: phase d moves every datum along dim d, so
//! before phase d a GPU x holds the data from the sources that differ from x only in dims < d
//! (x's contiguous block of b_d = Π_{i<d} p_i GPUs) to the destinations that agree with x in
//! dims < d (x's residue class mod b_d), and after it the same with b_{d+1}. Without the traffic
//! matrix, the data from s to t is taken as send_s·recv_t / total (exact when every sender
//! spreads its data evenly over the receivers, or every receiver draws evenly from the senders,
//! as the embedding all-to-alls do), so a GPU's buffer around phase d is
//! F(b) = (max block mean of send) · (max residue mean of recv) / (mean recv) at b = b_d and
//! b_{d+1}, and phase d is priced as the balanced phase of the busiest GPU's buffer,
//! D_d = max(F(b_d), F(b_{d+1})) · P/(P-1) (the factor adds the GPU's own share back: a balanced
//! all-to-all of comm_size S sends (P-1)/P·S to the others). With one dimension this is
//! max_g max(send, recv) · P/(P-1); with equal volumes v every D_d is v·P/(P-1) and the time is
//! exactly collectiveTimeNs(all_to_all, v·P/(P-1)). A send skew is felt in full on dim 0 and
//! averaged over the dim-0 groups on the next dims (a receive skew the other way round).
//! If num_gpus is not the network's NPU count, the busiest GPU's volume is priced on every dim.
KOKKOS_INLINE_FUNCTION double allToAllvTimeNs( const Network& net, const SystemConfig& sys,
                                               const double* send_bytes, const double* recv_bytes,
                                               int num_gpus )
{
    namespace cd = collective_detail;
    if ( num_gpus <= 1 )
        return 0.0;
    const double system_npus = cd::systemNpus( net );
    if ( system_npus != num_gpus )
    {
        double busiest = 0.0;
        for ( int g = 0; g < num_gpus; ++g )
            busiest = math::fmax( busiest, math::fmax( send_bytes[g], recv_bytes[g] ) );
        return collectiveTimeNs( net, sys, Collective::all_to_all,
                                 busiest * num_gpus / ( num_gpus - 1.0 ) );
    }
    // The outer boundaries in one pass: b = 1 (blocks of one GPU, one residue class) gives the
    // largest send and the mean receive, b = P the mean send and the largest receive. Means are
    // summed as deviations from entry 0, as in maxBlockMean / maxResidueMean.
    double max_send = send_bytes[0], max_recv = recv_bytes[0], dev_send = 0.0, dev_recv = 0.0;
    for ( int g = 0; g < num_gpus; ++g )
    {
        max_send = math::fmax( max_send, send_bytes[g] );
        max_recv = math::fmax( max_recv, recv_bytes[g] );
        dev_send += send_bytes[g] - send_bytes[0];
        dev_recv += recv_bytes[g] - recv_bytes[0];
    }
    const double mean_send = send_bytes[0] + dev_send / num_gpus;
    const double mean_recv = recv_bytes[0] + dev_recv / num_gpus;
    // Buffer of the busiest GPU at the boundary b (between dims with Π p = b on the fast side).
    auto buffer = [&]( int b )
    {
        const double send = b == 1          ? max_send
                            : b == num_gpus ? mean_send
                                            : cd::maxBlockMean( send_bytes, num_gpus, b );
        const double recv = b == 1          ? mean_recv
                            : b == num_gpus ? max_recv
                                            : cd::maxResidueMean( recv_bytes, num_gpus, b );
        return mean_recv > 0.0 ? send * ( recv / mean_recv ) : send;
    };
    const int splits = math::max( 1, sys.preferred_dataset_splits );
    const int a2a = static_cast<int>( Collective::all_to_all );
    double phase[kMaxNetworkDims] = {};
    int queue[kMaxNetworkDims] = {};
    int num_phases = 0;
    double busiest = 0.0;
    int b = 1;
    double before = buffer( 1 );
    for ( int d = 0; d < net.num_dims; ++d )
    {
        const int p = net.dims[d].npus_count;
        if ( p <= 1 )
            continue;
        b *= p;
        const double after = buffer( b );
        const double v = math::fmax( before, after );
        busiest = math::fmax( busiest, v );
        const double chunk = math::fmax( v * num_gpus / ( num_gpus - 1.0 ) / splits, system_npus );
        queue[num_phases] = d;
        phase[num_phases++] =
            cd::phaseTime( net.dims[d], sys, Collective::all_to_all, sys.algorithm[a2a][d], chunk );
        before = after;
    }
    if ( busiest <= 0.0 )
        return 0.0;
    return cd::pipelineNs( sys, phase, queue, num_phases ) +
           callOverheadNs( sys, busiest * num_gpus / ( num_gpus - 1.0 ) );
}

} // namespace shardsweep
