#pragma once
//! \file task_generator.hpp
//! \brief Random sharding tasks as the learned-sharding papers generate them (NeuroShard MLSys'23,
//! DreamShard NeurIPS'22, AutoShard KDD'22; docs/SWEEPS.md).
//!
//! | protocol        | GPUs | tables                                   | dims            | cap,
//! dtype |
//! |-----------------|------|------------------------------------------|-----------------|------------|
//! | neuroshard      | 4    | T = U{10..59}, with replacement; resample | {4,...,128}     | 4 GiB
//! fp32 | |                 |      | until Σ fp32 size <= 4·4−1 = 15 GiB      |                 | |
//! | dreamshard      | 4    | 50 (option: 80), without replacement     | 16              | 5 GiB
//! fp16 | |                 |      | from one half of a seeded 50/50 split    |                 | |
//! | autoshard       | 8    | 80, without replacement                  | {16, 32}        | 7 GiB
//! fp16 | | surco           | 4    | T = 10·(1 + i mod 6), DreamShard's pools  | 16              |
//! 5 GiB fp16 | | large-856x128   | 128  | the whole pool (856), in pool order      | {4,...,128}
//! | none, fp32 |
//!
//! A task is a pure function of (protocol, pool, seed, task index): the random streams are keyed by
//! (seed, task index) through model/rng.hpp, so task i is the same whichever scenario, rank or
//! order asks for it. The global batch is 65536 (the papers' B) unless the caller overrides it.

#include <cstdint>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/scenario/table_pool.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

enum class TaskProtocol : std::uint8_t
{
    none = 0, //!< not a generated task (grid scenarios)
    neuroshard = 1,
    dreamshard = 2,
    autoshard = 3,
    surco = 4,
    large_856x128 = 5,
};
constexpr int kNumTaskProtocols = 6;

// Index = code: /names/task_protocols is enumNameList<TaskProtocol>().
SHARDSWEEP_ENUM_NAMES(
    TaskProtocol, "task protocol",
    { TaskProtocol::none, "none", "not a generated task (grid scenarios)" },
    { TaskProtocol::neuroshard, "neuroshard",
      "NeuroShard: 4 GPUs, 10..59 tables with replacement, 4 GiB fp32" },
    { TaskProtocol::dreamshard, "dreamshard",
      "DreamShard: 4 GPUs, 50 (or 80) tables from one half of a 50/50 split, 5 GiB fp16" },
    { TaskProtocol::autoshard, "autoshard",
      "AutoShard: 8 GPUs, 80 tables without replacement, dims 16 or 32, 7 GiB fp16" },
    { TaskProtocol::surco, "surco",
      "SurCo: 4 GPUs, 10 x (1 + i mod 6) tables, DreamShard's pools" },
    { TaskProtocol::large_856x128, "large-856x128",
      "128 GPUs, the whole pool (856 tables) in pool order, fp32" } );

//! The protocol named `name`, "none" excluded (it generates no tasks); throws UsageError on
//! other names.
TaskProtocol parseTaskProtocol( const std::string& name );
//! Every protocol name except "none", for error messages.
std::vector<std::string> taskProtocolNames();

//! Which half of DreamShard's 50/50 pool split a dreamshard/surco task draws from.
enum class PoolSplit : std::uint8_t
{
    test = 0, //!< the second half of the shuffled ids (the papers' evaluation tasks)
    train = 1,
};

SHARDSWEEP_ENUM_NAMES( PoolSplit, "pool split",
                       { PoolSplit::test, "test",
                         "the second half of the shuffled ids (the papers' evaluation tasks)" },
                       { PoolSplit::train, "train", "the first half of the shuffled ids" } );

//! Protocol knobs a sweep may override (0 / defaults: the paper's values).
struct TaskOptions
{
    int num_tables = 0; //!< dreamshard: 50 (default) or 80; others: fixed by the protocol
    PoolSplit split = PoolSplit::test;
    std::int64_t global_batch = 65536;
};

//! The fixed parameters of a protocol.
struct ProtocolSpec
{
    int num_gpus = 0;
    int gpus_per_node = 0;       //!< large-856x128: 8 (16 nodes × 8); others: all on one node
    double memory_cap_GiB = 0.0; //!< table bytes allowed per GPU; 0: the GPU's own memory
    DataType dtype = DataType::fp32;
    int min_tables = 0, max_tables = 0;
};
ProtocolSpec protocolSpec( TaskProtocol protocol, const TaskOptions& options = {} );

//! One generated task.
struct GeneratedTask
{
    Workload workload;         //!< tables copied from the pool with the task's dims and dtype
    std::vector<int> pool_ids; //!< pool index of each table (repeats possible for neuroshard)
    int num_gpus = 0;
    int gpus_per_node = 0;
    double memory_cap_GiB = 0.0; //!< 0: no cap beyond the GPU's memory
    int resamples = 0;           //!< neuroshard: rejected draws before this one
};

//! Task `task_index` of `protocol` for `seed`, drawn from `pool`. The workload's dense part is
//! `dense` (default: none, as in the papers, which time embeddings and their all-to-alls only).
//! `split` may pass dreamshardSplit( pool.size(), seed ) computed once (dreamshard/surco: saves
//! the per-task shuffle of the pool). Throws std::invalid_argument when the pool is too small.
GeneratedTask generateTask( TaskProtocol protocol, const TablePool& pool, std::uint64_t seed,
                            std::uint64_t task_index, const TaskOptions& options = {},
                            const DenseModel& dense = DenseModel{},
                            const std::vector<int>* split = nullptr );

//! DreamShard's train/test split of `pool_size` ids for `seed`: the shuffled ids, the first half
//! training, the second test.
std::vector<int> dreamshardSplit( int pool_size, std::uint64_t seed );

} // namespace shardsweep
