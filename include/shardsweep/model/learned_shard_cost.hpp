#pragma once
//! \file learned_shard_cost.hpp
//! \brief The learned DLRM shard cost (`cost_model: learned`): a NeuroShard-style MLP trained by
//! postprocess/train_cost_model.py on a sweep's own /shards rows, evaluated inside the kernel.
//!
//! The MLP predicts log(fwd_ms + bwd_ms) of one shard from the features below, which must be
//! exactly the FEATURES list of train_cost_model.py, computed from the same values the HDF5
//! writer stores (sweep/rows.cpp: table spec, plan, shard, scenario). Categorical features are
//! the enum codes the /shards columns hold; `platform` is the code of the scenario's platform
//! in the training file's /names/platforms table, which the exported model lists on its
//! `trained_on` line (the caller maps a platform name to it; platforms the model never saw are
//! priced natively). The native model still gives the fwd/bwd split, the communication, the
//! dense part and the memory: only the shard's total compute time is replaced.
//! Everything here is a pure function callable inside Kokkos kernels.

#include <shardsweep/domain/dlrm_spec.hpp>
#include <shardsweep/model/embedding.hpp>
#include <shardsweep/model/math.hpp>
#include <shardsweep/model/mlp.hpp>

namespace shardsweep
{

//! Feature names, in order (train_cost_model.py FEATURES). A model trained with `--features
//! neuroshard` uses the first kLearnedShardNeuroshardFeatures of them.
constexpr int kLearnedShardFeatures = 31;
constexpr int kLearnedShardNeuroshardFeatures = 20;
constexpr const char* kLearnedShardFeatureNames[kLearnedShardFeatures] = {
    "bin_0",          "bin_1",  "bin_2",        "bin_3",      "bin_4",         "bin_5",
    "bin_6",          "bin_7",  "bin_8",        "bin_9",      "bin_10",        "bin_11",
    "bin_12",         "bin_13", "bin_14",       "bin_15",     "bin_16",        "dim",
    "pooling_factor", "rows",   "num_rows",     "num_cols",   "sharding_type", "compute_kernel",
    "cache_fraction", "dtype",  "distribution", "zipf_alpha", "global_batch",  "gpu_count",
    "platform" };
static_assert( kReuseBins == 17, "the learned shard features list 17 reuse bins" );

//! A learned shard cost model as the kernel sees it: layout by value, parameters borrowed, and
//! the scenario's platform code (< 0: the model does not know the platform, price natively).
struct LearnedShardCost
{
    MlpLayout layout;
    const double* params = nullptr;
    double platform_code = -1.0;
    //! Optional: each shard's total learned cost already priced once per distinct feature vector
    //! (the batched kernel's learned shard cases): case_ms[shard_case[s]] is exp(MLP(x)) of shard
    //! s, bit for bit what the MLP would give here. Null: evaluate the MLP per shard.
    const int* shard_case = nullptr;
    const double* case_ms = nullptr;

    KOKKOS_INLINE_FUNCTION bool active() const
    {
        return params != nullptr && layout.num_layers > 0 && platform_code >= 0.0;
    }
};

//! The raw feature vector of one shard (kLearnedShardFeatures values into x).
KOKKOS_INLINE_FUNCTION void learnedShardFeatures( const TableSpec& table, ShardingType sharding,
                                                  ComputeKernel kernel, double cache_fraction,
                                                  double shard_rows, int shard_cols,
                                                  double global_batch, int num_gpus,
                                                  double platform_code, double* x )
{
    for ( int j = 0; j < kReuseBins; ++j )
        x[j] = table.reuse_histogram[j];
    x[17] = table.dim;
    x[18] = table.pooling_factor;
    x[19] = static_cast<double>( table.rows );
    x[20] = shard_rows;
    x[21] = shard_cols;
    x[22] = static_cast<double>( sharding );
    x[23] = static_cast<double>( kernel );
    x[24] = cache_fraction;
    x[25] = static_cast<double>( table.dtype );
    x[26] = static_cast<double>( table.distribution );
    x[27] = table.zipf_alpha;
    x[28] = global_batch;
    x[29] = num_gpus;
    x[30] = platform_code;
}

//! A shard's learned total cost, fwd_ms + bwd_ms = exp(MLP(x)).
KOKKOS_INLINE_FUNCTION double learnedShardTotalMs( const MlpLayout& layout, const double* params,
                                                   const double* x )
{
    return math::exp( mlpEvaluate( layout, params, x ) );
}

//! `total` split between forward and backward in the native model's proportion (`native`; all
//! forward if the native cost is 0).
KOKKOS_INLINE_FUNCTION EmbeddingCost learnedShardSplit( const EmbeddingCost& native, double total )
{
    const double native_total = native.fwd_ms + native.bwd_ms;
    EmbeddingCost c = native;
    c.fwd_ms = native_total > 0.0 ? total * ( native.fwd_ms / native_total ) : total;
    c.bwd_ms = total - c.fwd_ms;
    return c;
}

//! The learned cost of one shard with features `x`, split as learnedShardSplit does.
KOKKOS_INLINE_FUNCTION EmbeddingCost learnedShardCost( const LearnedShardCost& model,
                                                       const EmbeddingCost& native,
                                                       const double* x )
{
    return learnedShardSplit( native, learnedShardTotalMs( model.layout, model.params, x ) );
}

} // namespace shardsweep
