#pragma once
//! \file estimator.hpp
//! \brief TorchRec's planner perf estimator (EmbeddingPerfEstimator at torchrec a48cef79),
//! reproduced formula for formula (TorchRec a48cef79, shard_estimators.py and constants.py;
//! docs/model/torchrec.md).
//!
//! Units are TorchRec's: bandwidths in bytes per millisecond, perf in milliseconds, sizes in
//! bytes. Every function is pure and device-callable so the batched cost kernel can price shards
//! with it. Expressions keep TorchRec's operation order so results match its Python to the last
//! bit where the inputs are exactly representable.

#include <Kokkos_Core.hpp>
#include <cstdint>
#include <shardsweep/domain/dlrm_spec.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/model/math.hpp>

namespace shardsweep
{

//! TorchRec's EmbeddingComputeKernel values the estimator distinguishes.
enum class TorchrecKernel : std::uint8_t
{
    dense = 0,
    fused = 1,
    fused_uvm = 2,
    fused_uvm_caching = 3,
    quant = 4,             //!< inference (quantised) counterpart of fused
    quant_uvm = 5,         //!< ... of fused_uvm
    quant_uvm_caching = 6, //!< ... of fused_uvm_caching
    key_value = 7,         //!< SSD/KV-backed table (reads over the host link)
};
constexpr int kNumTorchrecKernels = 8;

// TorchRec's own spellings: predict torchrec's `compute_kernel` column.
SHARDSWEEP_ENUM_NAMES(
    TorchrecKernel, "TorchRec compute kernel",
    { TorchrecKernel::dense, "dense", "unfused lookups, rows in HBM" },
    { TorchrecKernel::fused, "fused", "fused lookups, rows in HBM" },
    { TorchrecKernel::fused_uvm, "fused_uvm", "rows in host memory (UVM)" },
    { TorchrecKernel::fused_uvm_caching, "fused_uvm_caching", "host rows with an HBM cache" },
    { TorchrecKernel::quant, "quant", "inference (quantised) counterpart of fused" },
    { TorchrecKernel::quant_uvm, "quant_uvm", "inference counterpart of fused_uvm" },
    { TorchrecKernel::quant_uvm_caching, "quant_uvm_caching",
      "inference counterpart of fused_uvm_caching" },
    { TorchrecKernel::key_value, "key_value", "SSD/KV-backed table (reads over the host link)" } );

//! Topology.compute_device.
enum class TorchrecDevice : std::uint8_t
{
    cuda = 0,
    cpu = 1,
    mtia = 2,
};

//! X GiB/s in TorchRec's bytes per millisecond (X * 1024^3 / 1000, evaluated in that order).
KOKKOS_INLINE_FUNCTION constexpr double torchrecGiBpsToBytesPerMs( double gibps )
{
    return gibps * 1024.0 * 1024.0 * 1024.0 / 1000.0;
}

//! planner/constants.py at a48cef79.
namespace torchrec_constants
{
constexpr double kHbmMemBwGiBps = 897.0;
constexpr double kDdrMemBwGiBps = 51.0;
constexpr double kHbmToDdrMemBwGiBps = 32.0;
constexpr double kIntraNodeBwGiBps = 600.0;
constexpr double kCrossNodeBwGiBps = 12.5;
constexpr double kHbmCapBytes = 32.0 * 1024.0 * 1024.0 * 1024.0;
constexpr double kDdrCapBytes = 128.0 * 1024.0 * 1024.0 * 1024.0;
constexpr double kBatchSize = 512.0; //!< per rank
constexpr double kBigintDtype = 8.0; //!< index bytes: ids are costed as int64
constexpr int kMinCwDim = 128;
constexpr double kUvmCachingRatio = 0.2;
constexpr double kBatchedCopyPerfFactor = 2.455;
constexpr int kFullBlockEmbDim = 128;
constexpr double kHalfBlockPenalty = 1.15;
constexpr double kQuarterBlockPenalty = 1.75;
constexpr double kBwdComputeMultiplier = 2.0;
constexpr double kWeightedFeatureBwdComputeMultiplier = 1.0;
constexpr double kWeightedKernelMultiplier = 1.1;
constexpr double kDpElementwiseKernelsPerfFactor = 9.22;
} // namespace torchrec_constants

//! TorchRec's Topology: world size, GPUs per host, capacities and bandwidths (bytes/ms).
struct TorchrecTopology
{
    int world_size = 1;
    int local_world_size = 1; //!< GPUs per host; hosts are consecutive blocks of ranks
    TorchrecDevice device = TorchrecDevice::cuda;
    double hbm_cap_bytes = torchrec_constants::kHbmCapBytes; //!< per device
    double ddr_cap_bytes = torchrec_constants::kDdrCapBytes; //!< per rank, not per host
    double hbm_mem_bw = torchrecGiBpsToBytesPerMs( torchrec_constants::kHbmMemBwGiBps );
    double ddr_mem_bw = torchrecGiBpsToBytesPerMs( torchrec_constants::kDdrMemBwGiBps );
    double hbm_to_ddr_mem_bw = torchrecGiBpsToBytesPerMs( torchrec_constants::kHbmToDdrMemBwGiBps );
    double intra_host_bw = torchrecGiBpsToBytesPerMs( torchrec_constants::kIntraNodeBwGiBps );
    double inter_host_bw = torchrecGiBpsToBytesPerMs( torchrec_constants::kCrossNodeBwGiBps );
    double bwd_compute_multiplier = torchrec_constants::kBwdComputeMultiplier;
    double weighted_feature_bwd_compute_multiplier =
        torchrec_constants::kWeightedFeatureBwdComputeMultiplier;
    //! TRAIN_PREFETCH_SPARSE_DIST pipeline: UVM-cached lookups run at full HBM bandwidth.
    bool prefetch_pipeline = false;
};

//! Topology(world_size=W, local_world_size=L) with every other argument at its default.
KOKKOS_INLINE_FUNCTION TorchrecTopology torchrecDefaultTopology( int world_size,
                                                                 int local_world_size )
{
    TorchrecTopology t;
    t.world_size = world_size;
    t.local_world_size = local_world_size;
    return t;
}

//! One shard of one sharding option, as the estimator sees it.
struct TorchrecShard
{
    ShardingType sharding = ShardingType::table_wise;
    TorchrecKernel kernel = TorchrecKernel::fused;
    std::int64_t rows = 0;       //!< table rows
    int dim = 0;                 //!< table columns
    std::int64_t shard_rows = 0; //!< shard.size[0]
    int shard_dim = 0;           //!< shard.size[1]: the D of every formula
    double lookups = 0.0;        //!< S_in = sum_f pf_f * num_poolings_f * batch_f (per rank)
    double pooled_outputs = 0.0; //!< S_out = sum_f num_poolings_f * batch_f (per rank)
    double dtype_bytes = 4.0;    //!< tensor.element_size()
    bool pooled = true;          //!< EmbeddingBag (true) or sequence Embedding (false)
    bool weighted = false;
    bool inference = false;
    double cache_load_factor = -1.0; //!< < 0: not set (the estimator then uses 0.2)
    double expected_fetches = 0.0;   //!< stats.expected_miss_rate(clf) * expected_lookups
    //! Quantised-comms element sizes; <= 0 means tensor.element_size().
    double a2a_fwd_bytes = 0.0;
    double a2a_bwd_bytes = 0.0;
    double rs_fwd_bytes = 0.0;
    double rs_bwd_bytes = 0.0;
};

//! TorchRec's Perf of one shard (ms). total() counts prefetch as blocking, as TorchRec does.
struct TorchrecPerf
{
    double fwd_compute = 0.0;
    double fwd_comms = 0.0;
    double bwd_compute = 0.0;
    double bwd_comms = 0.0;
    double prefetch = 0.0;

    KOKKOS_INLINE_FUNCTION double total() const
    {
        return fwd_compute + fwd_comms + bwd_compute + bwd_comms + prefetch;
    }
};

KOKKOS_INLINE_FUNCTION bool torchrecKernelIsCached( TorchrecKernel k )
{
    return k == TorchrecKernel::fused_uvm_caching || k == TorchrecKernel::quant_uvm_caching ||
           k == TorchrecKernel::key_value;
}

KOKKOS_INLINE_FUNCTION bool torchrecKernelIsUvm( TorchrecKernel k )
{
    return k == TorchrecKernel::fused_uvm || k == TorchrecKernel::fused_uvm_caching ||
           k == TorchrecKernel::quant_uvm || k == TorchrecKernel::quant_uvm_caching;
}

//! kernel_bw_lookup: the memory bandwidth a kernel's lookups run at (bytes/ms). Returns 0 for
//! a (device, kernel) pair TorchRec rejects with PlannerError; callers validate on the host with
//! torchrecKernelSupported(). `clf` < 0 means "not set" (0.2); clf = 0 stays 0.
KOKKOS_INLINE_FUNCTION double torchrecKernelBw( const TorchrecTopology& t, TorchrecKernel k,
                                                double clf )
{
    const double ratio = clf < 0.0 ? torchrec_constants::kUvmCachingRatio : clf;
    if ( t.device == TorchrecDevice::cpu )
    {
        if ( k == TorchrecKernel::dense )
            return 0.5 * t.ddr_mem_bw;
        if ( k == TorchrecKernel::fused || k == TorchrecKernel::quant )
            return t.ddr_mem_bw;
        return 0.0;
    }
    switch ( k )
    {
    case TorchrecKernel::dense:
        return 0.5 * t.hbm_mem_bw;
    case TorchrecKernel::fused:
    case TorchrecKernel::quant:
        return t.hbm_mem_bw;
    default:
        break;
    }
    if ( t.device == TorchrecDevice::mtia )
        return 0.0;
    switch ( k )
    {
    case TorchrecKernel::fused_uvm:
    case TorchrecKernel::quant_uvm:
        return t.hbm_to_ddr_mem_bw / 10.0;
    case TorchrecKernel::fused_uvm_caching:
    case TorchrecKernel::quant_uvm_caching:
        if ( t.prefetch_pipeline && k == TorchrecKernel::fused_uvm_caching )
            return t.hbm_mem_bw;
        return ( ratio * t.hbm_mem_bw + ( 1.0 - ratio ) * t.hbm_to_ddr_mem_bw ) / 10.0;
    case TorchrecKernel::key_value:
        return t.hbm_to_ddr_mem_bw;
    default:
        return 0.0;
    }
}

//! True if TorchRec's kernel_bw_lookup accepts (device, kernel).
KOKKOS_INLINE_FUNCTION bool torchrecKernelSupported( const TorchrecTopology& t, TorchrecKernel k )
{
    return torchrecKernelBw( t, k, 0.5 ) > 0.0;
}

//! BasicCommsBandwidths.get_bw: all-reduce assumes one NIC per GPU; any other collective uses
//! the intra-host bandwidth when the group fits in one host, the inter-host one otherwise.
KOKKOS_INLINE_FUNCTION double torchrecCommsBw( const TorchrecTopology& t, int local_world_size,
                                               int world_size, Collective c )
{
    if ( c == Collective::all_reduce )
        return t.inter_host_bw * local_world_size;
    if ( world_size <= local_world_size )
        return t.intra_host_bw;
    return t.inter_host_bw;
}

namespace torchrec_detail
{
KOKKOS_INLINE_FUNCTION double orDefault( double bytes, double fallback )
{
    return bytes > 0.0 ? bytes : fallback;
}

//! Table-wise-family block-usage penalty (D < 128 uses a fraction of a TBE block).
KOKKOS_INLINE_FUNCTION double blockPenalty( int d )
{
    if ( d >= torchrec_constants::kFullBlockEmbDim )
        return 1.0;
    if ( d >= torchrec_constants::kFullBlockEmbDim / 2 )
        return torchrec_constants::kHalfBlockPenalty;
    return torchrec_constants::kQuarterBlockPenalty;
}

KOKKOS_INLINE_FUNCTION double bwdCompute( const TorchrecTopology& t, double fwd_compute,
                                          bool weighted )
{
    double bwd = fwd_compute * t.bwd_compute_multiplier;
    if ( weighted )
        bwd = bwd * t.weighted_feature_bwd_compute_multiplier;
    const double indice_weights =
        weighted ? fwd_compute * torchrec_constants::kWeightedKernelMultiplier : 0.0;
    return bwd + indice_weights;
}

KOKKOS_INLINE_FUNCTION double prefetchTime( const TorchrecTopology& t, double fetches, int d,
                                            double tsz )
{
    return fetches * d * tsz / t.hbm_to_ddr_mem_bw;
}
} // namespace torchrec_detail

//! _get_tw_sharding_perf: table-wise, column-wise and table-column-wise (D = column block).
//! The whole all-to-all volume of the global batch is charged to the shard's owner.
KOKKOS_INLINE_FUNCTION TorchrecPerf torchrecTwPerf( const TorchrecTopology& t,
                                                    const TorchrecShard& s, double dev_bw )
{
    using namespace torchrec_detail;
    const double W = t.world_size;
    const double isz = torchrec_constants::kBigintDtype;
    const double tsz = s.dtype_bytes;
    const int D = s.shard_dim;
    const double b_in = s.lookups;
    const double b_out = s.pooled ? s.pooled_outputs : b_in;
    double in = math::ceil( b_in * W * isz );
    if ( s.weighted )
        in *= 2.0;
    const double look = b_in * W * math::max( D, 32 ) * tsz;
    const double out_f = b_out * W * D * orDefault( s.a2a_fwd_bytes, tsz );
    const double out_b = b_out * W * D * orDefault( s.a2a_bwd_bytes, tsz );
    const double bw =
        torchrecCommsBw( t, t.local_world_size, t.world_size, Collective::all_to_all );
    TorchrecPerf p;
    p.fwd_compute = ( in + look + out_f ) * blockPenalty( D ) / dev_bw;
    p.fwd_comms = out_f / bw;
    if ( s.inference )
        return p;
    p.bwd_compute = bwdCompute( t, p.fwd_compute, s.weighted );
    p.bwd_comms = out_b / bw;
    p.prefetch = prefetchTime( t, s.expected_fetches, D, tsz );
    return p;
}

//! _get_rw_sharding_perf: every row-wise shard gets the same Perf, whatever its row count.
KOKKOS_INLINE_FUNCTION TorchrecPerf torchrecRwPerf( const TorchrecTopology& t,
                                                    const TorchrecShard& s, double dev_bw )
{
    using namespace torchrec_detail;
    const double W = t.world_size;
    const double isz = torchrec_constants::kBigintDtype;
    const double tsz = s.dtype_bytes;
    const int D = s.shard_dim;
    const double b_in = s.lookups / W;
    const double b_out = s.pooled ? s.pooled_outputs : b_in;
    double in = math::ceil( b_in * W * isz );
    if ( s.weighted )
        in *= 2.0;
    const double look = b_in * W * D * tsz;
    const double f_elem =
        s.pooled ? orDefault( s.rs_fwd_bytes, tsz ) : orDefault( s.a2a_fwd_bytes, tsz );
    const double b_elem =
        s.pooled ? orDefault( s.rs_bwd_bytes, tsz ) : orDefault( s.a2a_bwd_bytes, tsz );
    const double out_f = b_out * W * D * f_elem;
    const double out_b = b_out * W * D * b_elem;
    TorchrecPerf p;
    p.fwd_compute = ( in + look + out_f ) / dev_bw;
    p.fwd_comms =
        out_f / torchrecCommsBw( t, t.local_world_size, t.world_size, Collective::reduce_scatter );
    if ( s.inference )
        return p;
    p.bwd_compute = bwdCompute( t, p.fwd_compute, s.weighted );
    p.bwd_comms =
        out_b / torchrecCommsBw( t, t.local_world_size, t.world_size, Collective::all_gather ) +
        out_b * torchrec_constants::kBatchedCopyPerfFactor / dev_bw;
    p.prefetch = prefetchTime( t, s.expected_fetches / W, D, tsz );
    return p;
}

//! _get_twrw_sharding_perf: table-row-wise and grid (D = column block). No inference branch.
KOKKOS_INLINE_FUNCTION TorchrecPerf torchrecTwrwPerf( const TorchrecTopology& t,
                                                      const TorchrecShard& s, double dev_bw )
{
    using namespace torchrec_detail;
    const double W = t.world_size;
    const double L = t.local_world_size;
    const double isz = torchrec_constants::kBigintDtype;
    const double tsz = s.dtype_bytes;
    const int D = s.shard_dim;
    const double b_in = s.lookups / L;
    const double b_out = s.pooled ? s.pooled_outputs : b_in;
    double in = math::ceil( b_in * W * isz );
    if ( s.weighted )
        in *= 2.0;
    const double look = b_in * W * D * tsz;
    const double out_f = b_out * W * D * orDefault( s.rs_fwd_bytes, tsz );
    const double out_b = b_out * W * D * orDefault( s.rs_bwd_bytes, tsz );
    const int L_i = t.local_world_size;
    const int hosts = static_cast<int>( W / L );
    TorchrecPerf p;
    p.fwd_comms = out_f / torchrecCommsBw( t, L_i, L_i, Collective::reduce_scatter );
    if ( t.world_size > t.local_world_size )
        p.fwd_comms += b_out * ( W / L ) * D * orDefault( s.a2a_fwd_bytes, tsz ) /
                       torchrecCommsBw( t, 1, hosts, Collective::all_to_all );
    p.fwd_compute = ( in + look + out_f ) / dev_bw;
    p.bwd_comms = out_b / torchrecCommsBw( t, L_i, L_i, Collective::all_gather );
    if ( t.world_size > t.local_world_size )
        p.bwd_comms += b_out * ( W / L ) * D * orDefault( s.a2a_bwd_bytes, tsz ) /
                       torchrecCommsBw( t, 1, hosts, Collective::all_to_all );
    p.bwd_comms += out_b * torchrec_constants::kBatchedCopyPerfFactor / dev_bw;
    p.bwd_compute = bwdCompute( t, p.fwd_compute, s.weighted );
    p.prefetch = prefetchTime( t, s.expected_fetches / L, D, tsz );
    return p;
}

//! _get_dp_sharding_perf: W identical full replicas; backward pays the gradient all-reduce and
//! the optimizer's elementwise kernels. No inference branch, no prefetch.
KOKKOS_INLINE_FUNCTION TorchrecPerf torchrecDpPerf( const TorchrecTopology& t,
                                                    const TorchrecShard& s, double dev_bw )
{
    using namespace torchrec_detail;
    const double isz = torchrec_constants::kBigintDtype;
    const double tsz = s.dtype_bytes;
    const int D = s.shard_dim;
    const double b_in = s.lookups;
    const double b_out = s.pooled ? s.pooled_outputs : b_in;
    double in = math::ceil( b_in * isz );
    if ( s.weighted )
        in *= 2.0;
    const double look = b_in * D * tsz;
    const double out = b_out * D * tsz;
    const double table = static_cast<double>( s.shard_rows ) * D * tsz;
    const int W = t.world_size;
    const int L = t.local_world_size;
    const double nn = math::fmin( static_cast<double>( W ) / L, 2.0 );
    double allreduce =
        table * ( 2.0 * nn - 1.0 ) / nn / torchrecCommsBw( t, L, W, Collective::all_reduce );
    if ( W > 2 * L )
        allreduce *= 2.0;
    const double optim = table * torchrec_constants::kDpElementwiseKernelsPerfFactor / dev_bw;
    TorchrecPerf p;
    p.fwd_compute = ( in + look + out ) / dev_bw;
    p.bwd_compute = bwdCompute( t, p.fwd_compute, s.weighted );
    p.bwd_comms = allreduce + optim;
    return p;
}

//! The Perf TorchRec's estimator assigns to one shard.
KOKKOS_INLINE_FUNCTION TorchrecPerf torchrecPerf( const TorchrecTopology& t,
                                                  const TorchrecShard& s )
{
    const double dev_bw = torchrecKernelBw( t, s.kernel, s.cache_load_factor );
    switch ( s.sharding )
    {
    case ShardingType::data_parallel:
        return torchrecDpPerf( t, s, dev_bw );
    case ShardingType::row_wise:
        return torchrecRwPerf( t, s, dev_bw );
    case ShardingType::table_row_wise:
    case ShardingType::grid_shard:
        return torchrecTwrwPerf( t, s, dev_bw );
    default:
        return torchrecTwPerf( t, s, dev_bw );
    }
}

} // namespace shardsweep
