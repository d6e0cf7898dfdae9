#pragma once
//! \file storage.hpp
//! \brief TorchRec's storage estimator (calculate_shard_storages), shard shapes
//! (calculate_shard_sizes_and_offsets) and HBM reservation, at torchrec a48cef79
//! (TorchRec a48cef79, shard_estimators.py: EmbeddingStorageEstimator, calculate_shard_storages).
//!
//! Sizes are integral byte counts held in int64. Table-size products are formed in double, as
//! Python's true division does after an exact integer product: the two agree whenever
//! storage * shard elements < 2^53 (tables up to ~8 PB·elements; see docs/model/torchrec.md).

#include <cstdint>
#include <shardsweep/model/torchrec/estimator.hpp>

namespace shardsweep
{

//! PipelineType of the training loop: decides how many input batches are live in HBM.
enum class TorchrecPipeline : std::uint8_t
{
    none = 0,                       //!< NONE / TRAIN_BASE (the default): in + out
    train_sparse_dist = 1,          //!< 2 * in (+ out at peak)
    train_prefetch_sparse_dist = 2, //!< 3 * in + (1 + 6/passes) * prefetch (+ out at peak)
};

struct TorchrecStorage
{
    std::int64_t hbm = 0;
    std::int64_t ddr = 0;
};

//! Estimator options that are not properties of one shard.
struct TorchrecStorageOptions
{
    //! Optimizer-state bytes per parameter byte; TorchRec uses 0 when the tensor carries no
    //! _optimizer_classes (see torchrecOptimizerMultiplier for the explicit values).
    double optimizer_multiplier = 0.0;
    TorchrecPipeline pipeline = TorchrecPipeline::none;
    bool run_embedding_at_peak_memory = false; //!< count the output buffer as peak memory
    int prefetch_passes = 0;                   //!< multipass prefetch num_passes (0: unset = 1)
    double output_dtype_bytes = 0.0;           //!< <= 0: the table's element size
};

//! _get_optimizer_multipler for the optimizers shardsweep knows (SGD 0, Adam 2,
//! RowWiseAdagrad 1/cols).
KOKKOS_INLINE_FUNCTION double torchrecOptimizerMultiplier( Optimizer opt, int cols )
{
    switch ( opt )
    {
    case Optimizer::sgd:
        return 0.0;
    case Optimizer::adam:
        return 2.0;
    case Optimizer::rowwise_adagrad:
        return 1.0 / cols;
    }
    return 1.0;
}

//! Python's round(): to nearest, ties to even.
KOKKOS_INLINE_FUNCTION std::int64_t torchrecPyRound( double x )
{
    const double f = math::floor( x );
    const double diff = x - f;
    auto r = static_cast<std::int64_t>( f );
    if ( diff > 0.5 || ( diff == 0.5 && ( r % 2 ) != 0 ) )
        ++r;
    return r;
}

//! _calculate_storage_specific_sizes for one shard: its part of `storage` (the whole replica for
//! data-parallel), optimizer state, and UVM-cache metadata when `clf` >= 0 (clf < 0 = None).
KOKKOS_INLINE_FUNCTION std::int64_t
torchrecStorageSpecific( std::int64_t storage, double table_elements, double shard_elements,
                         std::int64_t shard_rows, bool data_parallel, double optimizer_multiplier,
                         bool inference, double clf )
{
    const std::int64_t tensor =
        data_parallel ? storage
                      : static_cast<std::int64_t>( math::ceil( static_cast<double>( storage ) *
                                                               shard_elements / table_elements ) );
    const auto optimizer = static_cast<std::int64_t>( math::ceil( tensor * optimizer_multiplier ) );
    const std::int64_t aux =
        clf < 0.0 ? 0
                  : static_cast<std::int64_t>( math::ceil( shard_rows * ( 4.0 + clf * 16.0 ) ) );
    return inference ? tensor : aux + tensor + optimizer;
}

struct TorchrecIo
{
    std::int64_t input = 0;  //!< index bytes
    std::int64_t output = 0; //!< embedding output bytes
};

//! _calculate_shard_io_sizes for one shard; `output_bytes` is the output element size.
KOKKOS_INLINE_FUNCTION TorchrecIo torchrecShardIo( const TorchrecTopology& t,
                                                   const TorchrecShard& s, double output_bytes )
{
    const double W = t.world_size;
    const double isz = torchrec_constants::kBigintDtype;
    double b_in = s.lookups;
    if ( s.sharding == ShardingType::row_wise )
        b_in = s.lookups / W;
    else if ( s.sharding == ShardingType::table_row_wise || s.sharding == ShardingType::grid_shard )
        b_in = s.lookups / t.local_world_size;
    const double b_out = s.pooled ? s.pooled_outputs : b_in;
    TorchrecIo io;
    switch ( s.sharding )
    {
    case ShardingType::data_parallel:
        io.input = static_cast<std::int64_t>( math::ceil( b_in * isz ) );
        io.output = static_cast<std::int64_t>( math::ceil( b_out * s.dim * output_bytes ) );
        break;
    case ShardingType::table_wise:
        io.input = static_cast<std::int64_t>( math::ceil( b_in * W * isz ) );
        io.output = static_cast<std::int64_t>( math::ceil( b_out * W * s.dim * output_bytes ) );
        break;
    case ShardingType::column_wise:
    case ShardingType::table_column_wise:
        io.input = static_cast<std::int64_t>( math::ceil( b_in * W * isz ) );
        io.output =
            static_cast<std::int64_t>( math::ceil( b_out * W * s.shard_dim * output_bytes ) );
        break;
    default: // row_wise, table_row_wise, grid_shard: empty shards hold no buffers
        if ( s.shard_rows * static_cast<std::int64_t>( s.shard_dim ) != 0 )
        {
            io.input = static_cast<std::int64_t>( math::ceil( b_in * W * isz ) );
            io.output =
                static_cast<std::int64_t>( math::ceil( b_out * W * s.shard_dim * output_bytes ) );
        }
        break;
    }
    return io;
}

//! calculate_pipeline_io_cost: HBM held by input/output buffers under a pipeline type.
KOKKOS_INLINE_FUNCTION std::int64_t torchrecPipelineIoCost( std::int64_t input, std::int64_t output,
                                                            std::int64_t prefetch,
                                                            const TorchrecStorageOptions& o,
                                                            bool inference )
{
    if ( inference )
        return 0;
    const std::int64_t peak_out = o.run_embedding_at_peak_memory ? output : 0;
    if ( o.pipeline == TorchrecPipeline::train_sparse_dist )
        return 2 * input + peak_out;
    if ( o.pipeline == TorchrecPipeline::train_prefetch_sparse_dist )
    {
        const int passes = o.prefetch_passes > 0 ? o.prefetch_passes : 1;
        const double bursty = 1.0 + 6.0 / passes;
        return 3 * input + static_cast<std::int64_t>( bursty * prefetch ) + peak_out;
    }
    return input + output;
}

//! The Storage (HBM, DDR) TorchRec's EmbeddingStorageEstimator assigns to one shard.
KOKKOS_INLINE_FUNCTION TorchrecStorage torchrecShardStorage( const TorchrecTopology& t,
                                                             const TorchrecShard& s,
                                                             const TorchrecStorageOptions& o )
{
    const bool quant = s.kernel == TorchrecKernel::quant || s.kernel == TorchrecKernel::quant_uvm ||
                       s.kernel == TorchrecKernel::quant_uvm_caching;
    const double tsz = s.dtype_bytes;
    // Table bytes as tensor.element_size() * nelement(); the quant sharder adds 4 B/row of
    // scale and bias.
    std::int64_t table_bytes =
        static_cast<std::int64_t>( static_cast<double>( s.rows ) * s.dim * tsz );
    if ( quant )
        table_bytes += s.rows * 4;
    std::int64_t hbm = 0;
    std::int64_t ddr = 0;
    if ( torchrecKernelIsUvm( s.kernel ) || t.device == TorchrecDevice::cpu )
        ddr = table_bytes;
    else
        hbm = table_bytes;
    const bool cached = torchrecKernelIsCached( s.kernel );
    // The storage estimator replaces a missing or zero load factor by 0.2 (Python truthiness).
    const double clf =
        s.cache_load_factor > 0.0 ? s.cache_load_factor : torchrec_constants::kUvmCachingRatio;
    if ( cached )
        hbm = torchrecPyRound( ddr * clf );

    const double table_elements = static_cast<double>( s.rows ) * s.dim;
    const double shard_elements = static_cast<double>( s.shard_rows ) * s.shard_dim;
    const bool dp = s.sharding == ShardingType::data_parallel;
    std::int64_t hbm_specific =
        torchrecStorageSpecific( hbm, table_elements, shard_elements, s.shard_rows, dp,
                                 o.optimizer_multiplier, s.inference, cached ? clf : -1.0 );
    std::int64_t ddr_specific =
        torchrecStorageSpecific( ddr, table_elements, shard_elements, s.shard_rows, dp,
                                 o.optimizer_multiplier, s.inference, -1.0 );
    if ( s.kernel == TorchrecKernel::key_value )
    {
        // max_l1_cache_size defaults to 0: the KV table holds nothing in HBM or DDR.
        hbm_specific = 0;
        ddr_specific = 0;
    }

    const TorchrecIo io =
        torchrecShardIo( t, s, o.output_dtype_bytes > 0.0 ? o.output_dtype_bytes : tsz );
    TorchrecStorage st;
    if ( t.device != TorchrecDevice::cpu )
        st.hbm = hbm_specific + torchrecPipelineIoCost( io.input, io.output, cached ? io.input : 0,
                                                        o, s.inference );
    st.ddr = ( t.device == TorchrecDevice::cpu && !s.inference )
                 ? io.input + io.output + ddr_specific
                 : ddr_specific;
    return st;
}

//! HeuristicalStorageReservation: the HBM (bytes) left for embedding shards on each device.
//! `dense_param_bytes` are the parameters outside shardable modules (+ buffers are the caller's),
//! `kjt_lookups` = sum over features of pf_f * batch_f. Negative: PlannerError
//! INSUFFICIENT_STORAGE. Inference uses multipliers 1 and 1 instead of 6 and 20.
KOKKOS_INLINE_FUNCTION double torchrecReservedHbm( double hbm_cap, double percentage,
                                                   double dense_param_bytes, double kjt_lookups,
                                                   bool inference )
{
    const double dense = ( inference ? 1.0 : 6.0 ) * dense_param_bytes;
    const double kjt =
        math::ceil( kjt_lookups * torchrec_constants::kBigintDtype ) * ( inference ? 1.0 : 20.0 );
    return static_cast<double>( static_cast<std::int64_t>( ( 1.0 - percentage ) * hbm_cap ) ) -
           dense - kjt;
}

// ---- Shard shapes (sharding_plan.calculate_shard_sizes_and_offsets) ---------------------------

//! Row count of block `i` when `rows` are split over `n` ranks: ceil(rows/n) each, then the
//! remainder, then zeros (10 rows on 4 ranks: 3, 3, 3, 1).
KOKKOS_INLINE_FUNCTION std::int64_t torchrecRowBlockRows( std::int64_t rows, int n, int i )
{
    const std::int64_t blk = math::ceilDiv( rows, n );
    const std::int64_t start = blk * i;
    if ( start >= rows )
        return 0;
    return math::min( blk, rows - start );
}

//! First row of block `i` (the end of the table for empty tail blocks).
KOKKOS_INLINE_FUNCTION std::int64_t torchrecRowBlockOffset( std::int64_t rows, int n, int i )
{
    return math::min( math::ceilDiv( rows, n ) * i, rows );
}

//! Column-wise block width: the smallest i in [min_partition (128 if <= 0), cols) that divides
//! cols and is a multiple of 4, else cols. dim <= 128 therefore gives one block by default.
KOKKOS_INLINE_FUNCTION int torchrecColumnBlock( int cols, int min_partition )
{
    const int lo = min_partition > 0 ? min_partition : torchrec_constants::kMinCwDim;
    for ( int i = lo; i < cols; ++i )
        if ( cols % i == 0 && i % 4 == 0 )
            return i;
    return cols;
}

//! Number of shards TorchRec creates for a table of `cols` columns.
KOKKOS_INLINE_FUNCTION int torchrecNumShards( ShardingType type, int cols, int min_partition,
                                              int world_size, int local_world_size )
{
    const int blocks = cols / torchrecColumnBlock( cols, min_partition );
    switch ( type )
    {
    case ShardingType::table_wise:
        return 1;
    case ShardingType::data_parallel:
    case ShardingType::row_wise:
        return world_size;
    case ShardingType::table_row_wise:
        return local_world_size;
    case ShardingType::column_wise:
    case ShardingType::table_column_wise:
        return blocks;
    case ShardingType::grid_shard:
        return local_world_size * blocks;
    }
    return 1;
}

} // namespace shardsweep
