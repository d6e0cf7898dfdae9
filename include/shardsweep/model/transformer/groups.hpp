#pragma once
//! \file groups.hpp
//! \brief The communication groups of a Megatron-LM rank layout on a platform's network: which
//! network dimensions a group of ranks spans (with the platform's system configuration remapped to
//! them), and the time of a collective or a point-to-point message within it (ASTRA-sim's
//! analytical collectives, model/collectives.hpp). Ranks are numbered as the platform's NPUs
//! (network dimension 0 fastest); the platform's last dimension is taken as large as the
//! configuration needs.
#include <Kokkos_Core.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/model/collectives.hpp>
#include <shardsweep/model/math.hpp>

namespace shardsweep
{

//! The network of one communication group, with the platform's system configuration remapped to
//! the dimensions the group spans.
struct GroupNetwork
{
    Network network;
    SystemConfig system;
    int members = 1;
};

//! The group of `n` ranks at rank stride `stride` (members k·stride, k < n): for every platform
//! dimension d (block B_d = Π_{i<d} p_i NPUs) the members take ⌈min(p_d, n·stride/B_d) /
//! max(1, stride/B_d)⌉ distinct coordinates; dimensions with more than one keep their link
//! parameters with that many NPUs. Exact when the strides and sizes nest (powers of two, or
//! groups that fill whole nodes).
KOKKOS_INLINE_FUNCTION GroupNetwork groupNetwork( const Platform& platform, int n, double stride )
{
    GroupNetwork g;
    g.system = platform.system;
    g.members = n;
    g.network.num_dims = 0;
    if ( n <= 1 )
        return g;
    double block = 1.0;
    const Network& net = platform.network;
    for ( int d = 0; d < net.num_dims; ++d )
    {
        const bool last = d == net.num_dims - 1;
        const double p = last ? 1.0e300 : double( math::max( 1, net.dims[d].npus_count ) );
        const double step = math::fmax( 1.0, stride / block );
        const double extent = math::fmin( p, math::ceil( n * stride / block ) );
        const int members = int( math::fmax( 1.0, math::ceil( extent / step ) ) );
        if ( members > 1 )
        {
            const int k = g.network.num_dims++;
            g.network.dims[k] = net.dims[d];
            g.network.dims[k].npus_count = members;
            for ( int c = 0; c < kNumCollectives; ++c )
                g.system.algorithm[c][k] = platform.system.algorithm[c][d];
        }
        block *= net.dims[d].npus_count;
    }
    return g;
}

//! Time (ms) of collective `c` of ASTRA-sim comm_size `bytes` within a group.
KOKKOS_INLINE_FUNCTION double groupCollectiveMs( const GroupNetwork& g, Collective c, double bytes )
{
    if ( g.members <= 1 || g.network.num_dims == 0 || bytes <= 0.0 )
        return 0.0;
    return collectiveTimeNsOnDims( g.network, g.system, c, bytes, 0, g.network.num_dims ) * 1.0e-6;
}

//! One point-to-point message of `bytes` between two ranks `stride` apart: ASTRA-sim's message
//! time on the slowest dimension the pair spans, plus the endpoint delay at both ends.
KOKKOS_INLINE_FUNCTION double pointToPointMs( const Platform& platform, double stride,
                                              double bytes )
{
    const GroupNetwork g = groupNetwork( platform, 2, stride );
    return pointToPointNs( g.network, g.system, bytes ) * 1.0e-6;
}

} // namespace shardsweep
