#pragma once
//! \file dlrm_spec.hpp
//! \brief Plain structs describing a DLRM workload (tables + dense model) and a sharding plan.

#include <cstdint>
#include <shardsweep/domain/hardware.hpp>

namespace shardsweep
{

//! Bins of the reuse-factor histogram: fraction of unique rows accessed (2^(j-1), 2^j] times in
//! one batch, j = 0..16, the last bin open (Lin et al., TPDS'24, arXiv 2404.12674; the table
//! features of NeuroShard, MLSys'23).
constexpr int kReuseBins = 17;

enum class AccessDistribution : std::uint8_t
{
    uniform = 0,
    zipf = 1,      //!< p_i ∝ i^-alpha over the table's rows
    histogram = 2, //!< 17-bin reuse histogram measured at the table's own batch size
};

enum class Optimizer : std::uint8_t
{
    sgd = 0,
    rowwise_adagrad = 1, //!< one fp32 state per row
    adam = 2,            //!< two states per element
};

//! One embedding table (EmbeddingBag). Units in names; rows and dim are element counts.
struct TableSpec
{
    std::int64_t rows = 0;
    int dim = 0;
    double pooling_factor = 1.0; //!< mean lookups per sample
    DataType dtype = DataType::fp32;
    AccessDistribution distribution = AccessDistribution::uniform;
    double zipf_alpha = 0.0;
    double reuse_histogram[kReuseBins] = {};
    //! Batch size at which reuse_histogram was measured (0: the scenario's per-GPU batch).
    std::int64_t histogram_batch = 0;
    Optimizer optimizer = Optimizer::sgd;
    bool weighted = false; //!< per-sample weights (feature-weighted EmbeddingBag)
};

enum class Interaction : std::uint8_t
{
    dot = 0, //!< pairwise dot products (DLRM default)
    cat = 1, //!< concatenation
};

constexpr int kMaxMlpLayers = 16;

//! The dense part of DLRM: bottom MLP over dense features, interaction, top MLP.
struct DenseModel
{
    int num_dense_features = 13;
    int bottom_mlp_layers = 0;
    int bottom_mlp[kMaxMlpLayers] = {}; //!< output width of each bottom layer
    int top_mlp_layers = 0;
    int top_mlp[kMaxMlpLayers] = {}; //!< output width of each top layer
    Interaction interaction = Interaction::dot;
    DataType dtype = DataType::fp32;
    Optimizer optimizer = Optimizer::sgd;
};

//! How one table is split (TorchRec names in comments).
enum class ShardingType : std::uint8_t
{
    table_wise = 0,        //!< whole table on one GPU
    column_wise = 1,       //!< column blocks on several GPUs
    row_wise = 2,          //!< row blocks over all GPUs
    table_row_wise = 3,    //!< row blocks over the GPUs of one node
    data_parallel = 4,     //!< replicated on every GPU
    table_column_wise = 5, //!< column blocks, each table-wise
    grid_shard = 6,        //!< column blocks, each table-row-wise
};
constexpr int kNumShardingTypes = 7;

//! Where a table's rows live and how they are looked up.
enum class ComputeKernel : std::uint8_t
{
    hbm = 0,         //!< TorchRec "fused": rows in HBM
    uvm = 1,         //!< TorchRec "fused_uvm": rows in host memory, read over PCIe
    uvm_caching = 2, //!< TorchRec "fused_uvm_caching": host rows, HBM cache of cache_fraction
    dense = 3,       //!< TorchRec "dense": unfused, HBM
};
constexpr int kNumComputeKernels = 4;

//! One shard of one table on one GPU.
struct ShardSpec
{
    int table = 0;
    int gpu = 0;
    std::int64_t row_offset = 0;
    std::int64_t num_rows = 0;
    int col_offset = 0;
    int num_cols = 0;
};

} // namespace shardsweep
