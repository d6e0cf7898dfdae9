#pragma once
//! \file parallel_fields.hpp
//! \brief The one field table of a transformer's parallel configuration: for every knob of
//! ParallelConfig its key (YAML key, CSV column, HDF5 column), kind, valid range, default, HDF5
//! unit and /names table, the member it sets and one help line. The plan and scenario YAML
//! readers and writer (io/plan_yaml), the sweep grid's `parallel:` section (io/sweep_yaml,
//! scenario/sweep_config), `predict transformer`'s CSV columns and help, and the results file's
//! /scenarios columns (sweep/rows) read it: a new knob is one row here plus the model code that
//! uses it (docs/ARCHITECTURE.md).
//!
//! tp, pp, dp and global_batch are not rows: each is derived from the others and the GPU count,
//! and sweeps enumerate (tp, pp) as layouts of the GPU count.

#include <cstddef>
#include <iterator>
#include <shardsweep/domain/field_table.hpp>
#include <shardsweep/domain/names.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! One knob of ParallelConfig (domain/field_table.hpp).
using ParallelField = Field<ParallelConfig>;

//! The knobs in file order (also the HDF5 columns' order). A sweep grid enumerates them
//! last-fastest (mode varies fastest).
inline constexpr ParallelField kParallelFields[] = {
    { "micro_batch", ParallelField::integer, 1, 10000000, 1, false, "sequences", "",
      "sequences per micro-batch and data-parallel replica",
      []( const ParallelConfig& c ) { return c.micro_batch; },
      []( ParallelConfig& c, int v ) { c.micro_batch = v; }, nullptr },
    { "schedule", ParallelField::choice, 0, 0, 0, false, "code", "schedules", "pipeline schedule",
      []( const ParallelConfig& c ) { return int( c.schedule ); },
      []( ParallelConfig& c, int v ) { c.schedule = PipelineSchedule( v ); },
      []() { return enumNameList<PipelineSchedule>(); } },
    { "recompute", ParallelField::choice, 0, 0, 0, false, "code", "recomputes",
      "activation recomputation", []( const ParallelConfig& c ) { return int( c.recompute ); },
      []( ParallelConfig& c, int v ) { c.recompute = Recompute( v ); },
      []() { return enumNameList<Recompute>(); } },
    { "zero", ParallelField::integer, 0, 3, 0, false, "stage", "",
      "ZeRO stage over the data-parallel group (0: none)",
      []( const ParallelConfig& c ) { return c.zero; },
      []( ParallelConfig& c, int v ) { c.zero = v; }, nullptr },
    { "sequence_parallel", ParallelField::flag, 0, 1, 0, false, "1", "",
      "Megatron sequence parallelism of LayerNorm and dropout (with tp > 1)",
      []( const ParallelConfig& c ) { return int( c.sequence_parallel ); },
      []( ParallelConfig& c, int v ) { c.sequence_parallel = v != 0; }, nullptr },
    { "fused", ParallelField::flag, 0, 1, 1, false, "1", "",
      "fused attention (flash) and fused softmax / bias-GELU kernels",
      []( const ParallelConfig& c ) { return int( c.fused ); },
      []( ParallelConfig& c, int v ) { c.fused = v != 0; }, nullptr },
    { "mode", ParallelField::choice, 0, 0, 0, false, "code", "modes",
      "train (forward, backward, optimizer) or infer",
      []( const ParallelConfig& c ) { return int( c.mode ); },
      []( ParallelConfig& c, int v ) { c.mode = RunMode( v ); },
      []() { return enumNameList<RunMode>(); } },
    { "virtual_stages", ParallelField::integer, 1, 1000, 1, false, "1", "",
      "model chunks per pipeline rank; > 1: interleaved 1F1B (pp > 1, layers divisible by "
      "pp*virtual_stages, micro-batches by pp)",
      []( const ParallelConfig& c ) { return c.virtual_stages; },
      []( ParallelConfig& c, int v ) { c.virtual_stages = v; }, nullptr },
    { "distributed_optimizer", ParallelField::flag, 0, 1, 0, false, "1", "",
      "Megatron's distributed optimizer: master weights and Adam states sharded over dp "
      "(ZeRO-1; not with zero > 0)",
      []( const ParallelConfig& c ) { return int( c.distributed_optimizer ); },
      []( ParallelConfig& c, int v ) { c.distributed_optimizer = v != 0; }, nullptr },
    { "overlap", ParallelField::flag, 0, 1, 0, false, "1", "",
      "DP gradient reduce / weight gather overlapped with backward / forward; TP collectives "
      "with the GEMMs when sequence_parallel; MoE all-to-alls with another micro-batch",
      []( const ParallelConfig& c ) { return int( c.overlap ); },
      []( ParallelConfig& c, int v ) { c.overlap = v != 0; }, nullptr },
    { "first_stage_layers", ParallelField::integer, 1, 100000, 0, false, "1", "",
      "layers of the first pipeline stage (default: even); the middle stages share the rest",
      []( const ParallelConfig& c ) { return c.first_stage_layers; },
      []( ParallelConfig& c, int v ) { c.first_stage_layers = v; }, nullptr },
    { "last_stage_layers", ParallelField::integer, 1, 100000, 0, false, "1", "",
      "layers of the last pipeline stage (default: even); the middle stages share the rest",
      []( const ParallelConfig& c ) { return c.last_stage_layers; },
      []( ParallelConfig& c, int v ) { c.last_stage_layers = v; }, nullptr },
    { "cp", ParallelField::integer, 1, 65536, 1, false, "1", "",
      "context-parallel size: each sequence split over cp GPUs (ring attention); GPUs = "
      "tp*cp*pp*dp, seq_len divisible by 2*cp",
      []( const ParallelConfig& c ) { return c.cp; }, []( ParallelConfig& c, int v ) { c.cp = v; },
      nullptr },
    { "ep", ParallelField::integer, 1, 65536, 1, false, "1", "",
      "expert-parallel size (MoE): the experts split over ep GPUs, ep dividing experts and "
      "ep*etp dividing tp*cp*dp",
      []( const ParallelConfig& c ) { return c.ep; }, []( ParallelConfig& c, int v ) { c.ep = v; },
      nullptr },
    { "etp", ParallelField::integer, 1, 65536, 0, false, "1", "",
      "tensor parallelism inside each expert (MoE; default tp), dividing moe_ffn_hidden",
      []( const ParallelConfig& c ) { return c.etp; },
      []( ParallelConfig& c, int v ) { c.etp = v; }, nullptr },
};
constexpr int kNumParallelFields = int( std::size( kParallelFields ) );

//! The knobs (the table itself: range-for, std::size and indexing work on it).
constexpr const auto& parallelFields()
{
    return kParallelFields;
}

//! The field whose key is `key`, or null.
inline const ParallelField* findParallelField( const std::string& key )
{
    return findField( kParallelFields, key );
}

//! The value of `field` in `config` as files write it: "true"/"false" for a flag, the name for a
//! choice, the number otherwise.
inline std::string parallelFieldText( const ParallelField& field, const ParallelConfig& config )
{
    return fieldValueText( field, field.get( config ) );
}

//! A ParallelConfig with every field at its table default (and tp = pp = dp = 1).
inline ParallelConfig defaultParallelConfig()
{
    ParallelConfig c;
    for ( const ParallelField& f : parallelFields() )
        f.set( c, f.fallback );
    return c;
}

} // namespace shardsweep
