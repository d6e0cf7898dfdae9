#pragma once
//! \file names.hpp
//! \brief The one descriptor table of every enum of the vocabulary: the name that files (YAML,
//! CSV, HDF5 /names tables), printers and `--help` use for each value, and one help line.
//!
//! Each table lists its values in code order (entry i has code i), so that an HDF5 /names table
//! is the list of names as it stands: tests/unit/tstDomainNames.hpp checks the order. Readers
//! that take only part of an enum (a transformer's dtype excludes int8) filter the table; a reader
//! that must still accept names of an older file format keeps those itself, with a deprecation
//! note (predict embedding's hbm, uvm, uvm_caching).
//!
//! Adding an enum value: the enumerator, then its row here. Every parser, printer, HDF5 /names
//! table and help text follows.

#include <cstddef>
#include <optional>
#include <shardsweep/domain/scenario.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shardsweep
{

//! One value of an enum: its name in every file format and printout, one help line.
template <class E>
struct EnumEntry
{
    E value;
    const char* name;
    const char* help;
};

//! Specialised once per enum: `what` names the enum in messages, `entries` its values. The
//! vocabulary's enums have their tables below; an enum declared above the vocabulary layer
//! (TaskProtocol, SweepDetail, GemmOp, OutputFormat, ...) declares its table right after itself
//! with the same macro, in namespace shardsweep (its header includes this one).
template <class E>
struct EnumNames;

#define SHARDSWEEP_ENUM_NAMES( E, WHAT, ... )                                                      \
    template <>                                                                                    \
    struct EnumNames<E>                                                                            \
    {                                                                                              \
        static constexpr const char* what = WHAT;                                                  \
        static constexpr EnumEntry<E> entries[] = { __VA_ARGS__ };                                 \
    }

SHARDSWEEP_ENUM_NAMES( WorkloadKind, "workload kind",
                       { WorkloadKind::dlrm, "dlrm", "embedding tables and dense MLPs (DLRM)" },
                       { WorkloadKind::transformer, "transformer",
                         "GPT / BERT / OPT under Megatron-LM parallelism" } );

SHARDSWEEP_ENUM_NAMES( DataType, "data type", { DataType::fp32, "fp32", "32-bit float" },
                       { DataType::tf32, "tf32", "fp32 storage, TF32 tensor-core math" },
                       { DataType::fp16, "fp16", "16-bit float" },
                       { DataType::bf16, "bf16", "bfloat16" },
                       { DataType::fp8, "fp8",
                         "FP8 GEMMs (Transformer Engine; bf16 activations and master weights)" },
                       { DataType::int8, "int8", "8-bit integer (quantised tables)" } );

SHARDSWEEP_ENUM_NAMES( Optimizer, "optimizer", { Optimizer::sgd, "sgd", "no optimizer state" },
                       { Optimizer::rowwise_adagrad, "rowwise_adagrad", "one fp32 state per row" },
                       { Optimizer::adam, "adam", "two states per element" } );

SHARDSWEEP_ENUM_NAMES( AccessDistribution, "access distribution",
                       { AccessDistribution::uniform, "uniform", "every row equally likely" },
                       { AccessDistribution::zipf, "zipf", "p_i proportional to i^-alpha" },
                       { AccessDistribution::histogram, "histogram",
                         "a measured 17-bin reuse histogram" } );

SHARDSWEEP_ENUM_NAMES( Interaction, "interaction",
                       { Interaction::dot, "dot", "pairwise dot products (DLRM default)" },
                       { Interaction::cat, "cat", "concatenation" } );

SHARDSWEEP_ENUM_NAMES(
    ShardingType, "sharding type",
    { ShardingType::table_wise, "table_wise", "whole table on one GPU" },
    { ShardingType::column_wise, "column_wise", "column blocks on several GPUs" },
    { ShardingType::row_wise, "row_wise", "row blocks over all GPUs" },
    { ShardingType::table_row_wise, "table_row_wise", "row blocks over the GPUs of one node" },
    { ShardingType::data_parallel, "data_parallel", "replicated on every GPU" },
    { ShardingType::table_column_wise, "table_column_wise", "column blocks, each table-wise" },
    { ShardingType::grid_shard, "grid_shard", "column blocks, each table-row-wise" } );

SHARDSWEEP_ENUM_NAMES( ComputeKernel, "compute kernel",
                       { ComputeKernel::hbm, "fused", "rows in HBM (TorchRec's fused kernel)" },
                       { ComputeKernel::uvm, "fused_uvm", "rows in host memory, read over PCIe" },
                       { ComputeKernel::uvm_caching, "fused_uvm_caching",
                         "host rows with an HBM cache of cache_fraction of them" },
                       { ComputeKernel::dense, "dense", "unfused lookups, rows in HBM" } );

SHARDSWEEP_ENUM_NAMES(
    PlannerKind, "planner",
    { PlannerKind::round_robin, "round_robin", "tables dealt to the GPUs in turn" },
    { PlannerKind::random, "random", "each table on a random GPU" },
    { PlannerKind::dim_greedy, "dim_greedy", "largest dim first, onto the least-loaded GPU" },
    { PlannerKind::size_greedy, "size_greedy", "largest table first, onto the least-loaded GPU" },
    { PlannerKind::lookup_greedy, "lookup_greedy",
      "most lookup bytes first, onto the least-loaded GPU" },
    { PlannerKind::size_lookup_greedy, "size_lookup_greedy",
      "dim x pooling x log10(rows) first, onto the least-loaded GPU" },
    { PlannerKind::torchrec, "torchrec",
      "TorchRec's enumerator, proposers and greedy-perf partitioner" },
    { PlannerKind::shardsweep, "shardsweep",
      "DLRM: cost-guided greedy and improvement search; transformer: branch and bound, "
      "exhaustive's optimum with few configurations priced" },
    { PlannerKind::megatron, "megatron",
      "Megatron-LM's rule: TP = GPUs per node, smallest PP that fits, largest micro-batch that "
      "fits with >= PP micro-batches, full recompute" },
    { PlannerKind::exhaustive, "exhaustive", "every configuration through the batched kernel" },
    { PlannerKind::none, "none", "no planner: the configuration is given explicitly" } );

SHARDSWEEP_ENUM_NAMES( CostModel, "cost model",
                       { CostModel::native, "native",
                         "shardsweep's critical path, distribution-aware lookups, ASTRA-sim "
                         "collectives" },
                       { CostModel::torchrec, "torchrec", "TorchRec's planner estimator" },
                       { CostModel::learned, "learned",
                         "native, with each shard's compute time from a learned MLP" } );

SHARDSWEEP_ENUM_NAMES( Phase, "DLRM phase",
                       { Phase::input_dist, "input_dist", "sparse-index all-to-all" },
                       { Phase::embedding_fwd, "embedding_fwd", "embedding lookups" },
                       { Phase::bottom_mlp_fwd, "bottom_mlp_fwd", "bottom MLP forward" },
                       { Phase::embedding_comm_fwd, "embedding_comm_fwd",
                         "pooled-embedding all-to-all / reduce-scatter / all-gather" },
                       { Phase::top_fwd, "top_fwd", "interaction and top MLP forward" },
                       { Phase::top_bwd, "top_bwd", "interaction and top MLP backward" },
                       { Phase::embedding_comm_bwd, "embedding_comm_bwd",
                         "gradient all-to-all back to the shard owners" },
                       { Phase::bottom_mlp_bwd, "bottom_mlp_bwd", "bottom MLP backward" },
                       { Phase::embedding_bwd, "embedding_bwd",
                         "embedding backward and optimizer update" },
                       { Phase::dense_allreduce, "dense_allreduce",
                         "dense-gradient all-reduce, overlapped with backward compute" } );

SHARDSWEEP_ENUM_NAMES( TransformerArch, "architecture",
                       { TransformerArch::gpt, "gpt", "decoder with GELU" },
                       { TransformerArch::bert, "bert", "encoder with GELU" },
                       { TransformerArch::opt, "opt", "decoder with ReLU" } );

SHARDSWEEP_ENUM_NAMES( FfnType, "FFN type",
                       { FfnType::arch, "arch", "the arch's: GELU for gpt and bert, ReLU for opt" },
                       { FfnType::gelu, "gelu", "GELU between FC1 and FC2" },
                       { FfnType::relu, "relu", "ReLU between FC1 and FC2" },
                       { FfnType::swiglu, "swiglu",
                         "SiLU-gated: FC1 2*ffn_hidden wide (gate, up), SiLU(gate)*up into FC2" } );

SHARDSWEEP_ENUM_NAMES( PipelineSchedule, "pipeline schedule",
                       { PipelineSchedule::one_f_one_b, "1f1b",
                         "PipeDream-Flush (Megatron's default)" },
                       { PipelineSchedule::gpipe, "gpipe", "all forwards, then all backwards" } );

SHARDSWEEP_ENUM_NAMES( Recompute, "recompute", { Recompute::none, "none", "keep every activation" },
                       { Recompute::selective, "selective",
                         "recompute the attention core in the backward" },
                       { Recompute::full, "full",
                         "repeat every layer's forward in the backward" } );

SHARDSWEEP_ENUM_NAMES( RunMode, "mode", { RunMode::train, "train", "forward, backward, optimizer" },
                       { RunMode::infer, "infer", "forward only" } );

SHARDSWEEP_ENUM_NAMES( TransformerPhase, "transformer phase",
                       { TransformerPhase::compute, "compute",
                         "forward, backward and recompute of the slowest stage" },
                       { TransformerPhase::tp_comm, "tp_comm",
                         "exposed tensor-parallel collectives" },
                       { TransformerPhase::pp_comm, "pp_comm", "exposed pipeline send/recv" },
                       { TransformerPhase::dp_comm, "dp_comm",
                         "exposed data-parallel gradient (ZeRO) collectives" },
                       { TransformerPhase::bubble, "bubble", "pipeline fill and drain" },
                       { TransformerPhase::optimizer, "optimizer", "the optimizer step" },
                       { TransformerPhase::ep_comm, "ep_comm",
                         "exposed expert-parallel all-to-alls and expert-TP collectives" } );

SHARDSWEEP_ENUM_NAMES(
    Collective, "collective", { Collective::all_reduce, "all_reduce", "every GPU gets the sum" },
    { Collective::all_gather, "all_gather", "every GPU gets every part" },
    { Collective::reduce_scatter, "reduce_scatter", "every GPU gets its part of the sum" },
    { Collective::all_to_all, "all_to_all", "every GPU sends a part to every other" } );

// The network's names are ASTRA-sim's own, as its network YAML and system JSON spell them.
SHARDSWEEP_ENUM_NAMES( Topology, "topology", { Topology::Ring, "Ring", "a ring of NPUs" },
                       { Topology::FullyConnected, "FullyConnected", "a link between every pair" },
                       { Topology::Switch, "Switch", "every NPU on one switch" } );

SHARDSWEEP_ENUM_NAMES( CollectiveAlgorithm, "collective algorithm",
                       { CollectiveAlgorithm::ring, "ring", "ring phases" },
                       { CollectiveAlgorithm::direct, "direct", "direct sends to every peer" },
                       { CollectiveAlgorithm::halving_doubling, "halvingDoubling",
                         "recursive halving and doubling" },
                       { CollectiveAlgorithm::double_binary_tree, "doubleBinaryTree",
                         "two binary trees" } );

SHARDSWEEP_ENUM_NAMES( CollectiveOptimization, "collective optimization",
                       { CollectiveOptimization::baseline, "baseline", "every dimension in turn" },
                       { CollectiveOptimization::local_bw_aware, "localBWAware",
                         "the local dimension's bandwidth first" } );

//! Number of values of E.
template <class E>
constexpr std::size_t enumCount()
{
    return std::size( EnumNames<E>::entries );
}

//! The name of `value` ("?" for a code outside the table).
template <class E>
constexpr const char* nameOf( E value )
{
    for ( const EnumEntry<E>& e : EnumNames<E>::entries )
        if ( e.value == value )
            return e.name;
    return "?";
}

//! The help line of `value` ("" for a code outside the table).
template <class E>
constexpr const char* helpOf( E value )
{
    for ( const EnumEntry<E>& e : EnumNames<E>::entries )
        if ( e.value == value )
            return e.help;
    return "";
}

//! The value named `name`, if any.
template <class E>
std::optional<E> enumFromName( std::string_view name )
{
    for ( const EnumEntry<E>& e : EnumNames<E>::entries )
        if ( name == e.name )
            return e.value;
    return std::nullopt;
}

//! Every name, in code order (an HDF5 /names table; index = code).
template <class E>
std::vector<std::string> enumNameList()
{
    std::vector<std::string> names;
    for ( const EnumEntry<E>& e : EnumNames<E>::entries )
        names.emplace_back( e.name );
    return names;
}

//! `names` joined by `separator`, the last two by `last_separator` ("a, b or c"), for messages
//! that list part of a table.
inline std::string joinChoices( const std::vector<std::string>& names, const char* separator = ", ",
                                const char* last_separator = " or " )
{
    std::string s;
    for ( std::size_t i = 0; i < names.size(); ++i )
        s += ( i == 0 ? "" : i + 1 == names.size() ? last_separator : separator ) + names[i];
    return s;
}

//! The names joined by `separator` ("none | selective | full"), for help texts and messages;
//! with `last_separator`, the last two by that ("none, selective or full").
template <class E>
std::string enumChoices( const char* separator = " | ", const char* last_separator = nullptr )
{
    return joinChoices( enumNameList<E>(), separator, last_separator ? last_separator : separator );
}

//! (name, value) pairs in code order: what the YAML and CSV readers match cells against.
template <class E>
using NamePairs = std::vector<std::pair<std::string, E>>;

template <class E>
const NamePairs<E>& enumPairs()
{
    static const NamePairs<E> pairs = []
    {
        NamePairs<E> p;
        for ( const EnumEntry<E>& e : EnumNames<E>::entries )
            p.emplace_back( e.name, e.value );
        return p;
    }();
    return pairs;
}

//! The element types a model computes in (every DataType but int8): transformer and dense dtypes.
inline const NamePairs<DataType>& computeDataTypeNames()
{
    static const NamePairs<DataType> pairs = []
    {
        NamePairs<DataType> p;
        for ( const auto& n : enumPairs<DataType>() )
            if ( n.second != DataType::int8 )
                p.push_back( n );
        return p;
    }();
    return pairs;
}

//! PyTorch's names of the compute types (torch.float32, half, float8_e4m3fn, ...) and Transformer
//! Engine's FP8 formats, which measurement files written by other tools use; readers match them
//! after computeDataTypeNames() and without the "torch." prefix. TF32 has no dtype of its own in
//! PyTorch.
inline const NamePairs<DataType>& pytorchDataTypeNames()
{
    static const NamePairs<DataType> pairs = {
        { "float32", DataType::fp32 },        { "float", DataType::fp32 },
        { "float16", DataType::fp16 },        { "half", DataType::fp16 },
        { "bfloat16", DataType::bf16 },       { "float8_e4m3fn", DataType::fp8 },
        { "float8_e5m2", DataType::fp8 },     { "float8_e4m3fnuz", DataType::fp8 },
        { "float8_e5m2fnuz", DataType::fp8 }, { "fp8_e4m3", DataType::fp8 },
        { "fp8_e5m2", DataType::fp8 } };
    return pairs;
}

//! ASTRA-sim's system-JSON key of a collective's per-dimension algorithms:
//! "all-reduce-implementation", ...
inline std::string astraImplementationKey( Collective c )
{
    std::string key = nameOf( c );
    for ( char& ch : key )
        if ( ch == '_' )
            ch = '-';
    return key + "-implementation";
}

//! Names of values that end in a suffix, e.g. the transformer phases as CSV columns
//! ("compute_ms", ...).
template <class E>
std::vector<std::string> enumNameList( const char* suffix )
{
    std::vector<std::string> names;
    for ( const EnumEntry<E>& e : EnumNames<E>::entries )
        names.push_back( std::string( e.name ) + suffix );
    return names;
}

} // namespace shardsweep
