#pragma once
//! \file adapter.hpp
//! \brief Prices shardsweep's own shards (TableSpec, ShardSpec, TablePlan, Platform) with
//! TorchRec's estimator, inside Kokkos kernels.
//!
//! The batched cost kernel calls torchrecShardPerf() once per shard (a KOKKOS_INLINE_FUNCTION,
//! no allocation) and sums TorchrecPerf::total() per GPU; the TorchRec objective of a plan is the
//! maximum of those sums. How shardsweep's inputs become TorchRec's (docs/model/torchrec.md):
//!  * batch per rank = global_batch / num_gpus (TorchRec's batch_size is per rank);
//!  * one feature per table: S_in = pooling_factor * batch, S_out = batch, pooled, weighted as
//!    TableSpec::weighted;
//!  * kernels: hbm -> fused, uvm -> fused_uvm, uvm_caching -> fused_uvm_caching (clf =
//!    cache_fraction), dense -> dense; no cache statistics, so prefetch is 0 as in TorchRec
//!    without cache_params.stats;
//!  * bandwidths from the platform the way a TorchRec user sets Topology: HBM = GPU memory
//!    bandwidth, HBM-to-DDR = host_to_gpu_GBps, intra-host = network dim 0, inter-host = the
//!    slowest outer dim; each falls back to TorchRec's default when the platform leaves it 0.

#include <shardsweep/model/torchrec/storage.hpp>

namespace shardsweep
{

using TorchrecShardPerf = TorchrecPerf;

KOKKOS_INLINE_FUNCTION TorchrecKernel torchrecKernelOf( ComputeKernel k )
{
    switch ( k )
    {
    case ComputeKernel::hbm:
        return TorchrecKernel::fused;
    case ComputeKernel::uvm:
        return TorchrecKernel::fused_uvm;
    case ComputeKernel::uvm_caching:
        return TorchrecKernel::fused_uvm_caching;
    case ComputeKernel::dense:
        return TorchrecKernel::dense;
    }
    return TorchrecKernel::fused;
}

//! TorchRec Topology describing `p` (see the file comment for the bandwidth choice).
KOKKOS_INLINE_FUNCTION TorchrecTopology torchrecTopologyFor( const Platform& p )
{
    TorchrecTopology t = torchrecDefaultTopology( p.numGpus(), p.gpus_per_node );
    if ( p.gpu.memory_bandwidth_GBps > 0.0 )
        t.hbm_mem_bw = p.gpu.memory_bandwidth_GBps * 1e9 / 1e3;
    if ( p.host_to_gpu_GBps > 0.0 )
        t.hbm_to_ddr_mem_bw = p.host_to_gpu_GBps * 1e9 / 1e3;
    if ( p.network.num_dims > 0 && p.network.dims[0].bandwidth_GBps > 0.0 )
        t.intra_host_bw = torchrecGiBpsToBytesPerMs( p.network.dims[0].bandwidth_GBps );
    double inter = 0.0;
    for ( int d = 1; d < p.network.num_dims; ++d )
        if ( p.network.dims[d].bandwidth_GBps > 0.0 &&
             ( inter == 0.0 || p.network.dims[d].bandwidth_GBps < inter ) )
            inter = p.network.dims[d].bandwidth_GBps;
    if ( inter > 0.0 )
        t.inter_host_bw = torchrecGiBpsToBytesPerMs( inter );
    if ( p.gpu.memory_GiB > 0.0 )
        t.hbm_cap_bytes = p.gpu.memory_GiB * 1024.0 * 1024.0 * 1024.0;
    if ( p.host_memory_GiB > 0.0 )
        t.ddr_cap_bytes = p.host_memory_GiB * 1024.0 * 1024.0 * 1024.0 / p.gpus_per_node;
    return t;
}

//! The TorchrecShard TorchRec's estimator sees for shardsweep shard `s` of table `t`.
//! `TablePlanT` is domain/scenario.hpp's TablePlan (fields sharding, kernel, cache_fraction); a
//! template so that the model layer does not include the host-side scenario headers.
template <class TablePlanT>
KOKKOS_INLINE_FUNCTION TorchrecShard torchrecShardOf( const TableSpec& t, const ShardSpec& s,
                                                      const TablePlanT& tp, int num_gpus,
                                                      std::int64_t global_batch )
{
    TorchrecShard r;
    r.sharding = tp.sharding;
    r.kernel = torchrecKernelOf( tp.kernel );
    r.rows = t.rows;
    r.dim = t.dim;
    r.shard_rows = s.num_rows;
    r.shard_dim = s.num_cols;
    const double batch = static_cast<double>( global_batch ) / num_gpus;
    r.lookups = t.pooling_factor * batch;
    r.pooled_outputs = batch;
    r.dtype_bytes = dataTypeBytes( t.dtype );
    r.pooled = true;
    r.weighted = t.weighted;
    r.inference = false;
    r.cache_load_factor = tp.kernel == ComputeKernel::uvm_caching ? tp.cache_fraction : -1.0;
    return r;
}

//! TorchRec's Perf of one shardsweep shard on platform `p` at `global_batch`.
template <class TablePlanT>
KOKKOS_INLINE_FUNCTION TorchrecShardPerf torchrecShardPerf( const TableSpec& t, const ShardSpec& s,
                                                            const TablePlanT& tp, const Platform& p,
                                                            std::int64_t global_batch )
{
    return torchrecPerf( torchrecTopologyFor( p ),
                         torchrecShardOf( t, s, tp, p.numGpus(), global_batch ) );
}

//! TorchRec's Storage of one shardsweep shard, with the table's optimizer made explicit
//! (TorchRec itself counts 0 optimizer bytes unless apply-optimizer-in-backward set them).
template <class TablePlanT>
KOKKOS_INLINE_FUNCTION TorchrecStorage torchrecShardStorageOf( const TableSpec& t,
                                                               const ShardSpec& s,
                                                               const TablePlanT& tp,
                                                               const Platform& p,
                                                               std::int64_t global_batch )
{
    TorchrecStorageOptions o;
    o.optimizer_multiplier = torchrecOptimizerMultiplier( t.optimizer, t.dim );
    return torchrecShardStorage( torchrecTopologyFor( p ),
                                 torchrecShardOf( t, s, tp, p.numGpus(), global_batch ), o );
}

} // namespace shardsweep
