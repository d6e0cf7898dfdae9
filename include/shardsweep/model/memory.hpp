#pragma once
//! \file memory.hpp
//! \brief Bytes a shard or a dense replica occupies in GPU memory (HBM) and in host memory.
//!
//! Optimizer state is explicit for every optimizer (never silently zero): SGD keeps none,
//! row-wise Adagrad one fp32 per row, Adam two fp32 per element (first and second moments).
#include <shardsweep/domain/dlrm_spec.hpp>
#include <shardsweep/domain/hardware.hpp>
#include <shardsweep/model/math.hpp>

namespace shardsweep
{

constexpr double kBytesPerGiB = 1073741824.0;

//! Optimizer-state bytes for a block of `rows` × `cols` parameters.
KOKKOS_INLINE_FUNCTION double optimizerStateBytes( Optimizer optimizer, double rows, double cols )
{
    switch ( optimizer )
    {
    case Optimizer::sgd:
        return 0.0;
    case Optimizer::rowwise_adagrad:
        return rows * 4.0;
    case Optimizer::adam:
        return 2.0 * rows * cols * 4.0;
    }
    return 0.0;
}

//! Weights + optimizer state of one shard.
KOKKOS_INLINE_FUNCTION double shardStateBytes( const TableSpec& table, double rows, double cols )
{
    return rows * cols * dataTypeBytes( table.dtype ) +
           optimizerStateBytes( table.optimizer, rows, cols );
}

//! HBM bytes of one shard: all of it for HBM kernels; for UVM only the cache (uvm_caching keeps
//! cache_fraction of the rows in HBM, plain UVM none).
KOKKOS_INLINE_FUNCTION double shardHbmBytes( const TableSpec& table, double rows, double cols,
                                             ComputeKernel kernel, double cache_fraction )
{
    switch ( kernel )
    {
    case ComputeKernel::hbm:
    case ComputeKernel::dense:
        return shardStateBytes( table, rows, cols );
    case ComputeKernel::uvm:
        return 0.0;
    case ComputeKernel::uvm_caching:
        return cache_fraction * rows * cols * dataTypeBytes( table.dtype );
    }
    return 0.0;
}

//! Host-memory bytes of one shard (UVM kernels keep weights and optimizer state on the host).
KOKKOS_INLINE_FUNCTION double shardHostBytes( const TableSpec& table, double rows, double cols,
                                              ComputeKernel kernel )
{
    return kernel == ComputeKernel::uvm || kernel == ComputeKernel::uvm_caching
               ? shardStateBytes( table, rows, cols )
               : 0.0;
}

//! A dense replica: weights, gradients and optimizer state (`parameters` from denseCost).
KOKKOS_INLINE_FUNCTION double denseReplicaBytes( const DenseModel& dense, double parameters )
{
    const double bytes = dataTypeBytes( dense.dtype );
    // Row-wise Adagrad on a dense layer degenerates to one state per output row; count it as
    // one fp32 per parameter row of width 1, i.e. per parameter (the conservative choice).
    const double state = dense.optimizer == Optimizer::sgd    ? 0.0
                         : dense.optimizer == Optimizer::adam ? 8.0
                                                              : 4.0;
    return parameters * ( 2.0 * bytes + state );
}

} // namespace shardsweep
