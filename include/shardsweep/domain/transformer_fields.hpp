#pragma once
//! \file transformer_fields.hpp
//! \brief The one field table of a transformer model (TransformerSpec): the workload YAML reader
//! (io/workload_yaml), `predict transformer`'s CSV columns, defaults and help, and the kernel's
//! operator-cache key (kernel/pack_scenarios) read it. A new model field is one row here plus
//! the model code that uses it; a rule that ties fields together (heads divide hidden) goes to
//! transformerSpecProblem (model/transformer/parallel_rules.hpp).

#include <iterator>
#include <shardsweep/domain/field_table.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/domain/transformer_spec.hpp>

namespace shardsweep
{

//! Values are doubles (capacity_factor is real); every other field holds a whole number.
using ModelField = Field<TransformerSpec, double>;

//! The model's fields in file order. A fallback outside [min, max] (ffn_hidden 0) means "derived
//! from the others" (docs/model/transformer.md).
inline constexpr ModelField kModelFields[] = {
    { "arch", ModelField::choice, 0, 0, int( TransformerArch::gpt ), false, "code", "",
      "layer family: GPT (decoder, GELU), BERT (encoder, GELU), OPT (decoder, ReLU)",
      []( const TransformerSpec& m ) { return double( m.arch ); },
      []( TransformerSpec& m, double v ) { m.arch = TransformerArch( int( v ) ); },
      []() { return enumNameList<TransformerArch>(); } },
    { "hidden", ModelField::integer, 1, 1000000, 0, true, "1", "", "hidden size h",
      []( const TransformerSpec& m ) { return double( m.hidden ); },
      []( TransformerSpec& m, double v ) { m.hidden = int( v ); }, nullptr },
    { "heads", ModelField::integer, 1, 100000, 0, true, "1", "",
      "attention heads a (dividing hidden)",
      []( const TransformerSpec& m ) { return double( m.heads ); },
      []( TransformerSpec& m, double v ) { m.heads = int( v ); }, nullptr },
    { "kv_heads", ModelField::integer, 1, 100000, 0, false, "1", "",
      "key/value heads g of grouped-query attention, dividing heads (default heads: MHA)",
      []( const TransformerSpec& m ) { return double( m.kv_heads ); },
      []( TransformerSpec& m, double v ) { m.kv_heads = int( v ); }, nullptr },
    { "layers", ModelField::integer, 1, 100000, 0, true, "1", "", "transformer layers L",
      []( const TransformerSpec& m ) { return double( m.layers ); },
      []( TransformerSpec& m, double v ) { m.layers = int( v ); }, nullptr },
    { "seq_len", ModelField::integer, 1, 10000000, 0, true, "tokens", "", "sequence length s",
      []( const TransformerSpec& m ) { return double( m.seq_len ); },
      []( TransformerSpec& m, double v ) { m.seq_len = int( v ); }, nullptr },
    { "vocab", ModelField::integer, 1, 100000000, 50257, false, "tokens", "",
      "vocabulary V (padded to a multiple of 128*tp as Megatron does)",
      []( const TransformerSpec& m ) { return double( m.vocab ); },
      []( TransformerSpec& m, double v ) { m.vocab = int( v ); }, nullptr },
    { "ffn_hidden", ModelField::integer, 1, 10000000, 0, false, "1", "",
      "MLP inner size f (default 4*hidden)",
      []( const TransformerSpec& m ) { return double( m.ffn_hidden ); },
      []( TransformerSpec& m, double v ) { m.ffn_hidden = int( v ); }, nullptr },
    { "dtype", ModelField::choice, 0, 0, int( DataType::bf16 ), false, "code", "dtypes",
      "element type of weights and activations",
      []( const TransformerSpec& m ) { return double( m.dtype ); },
      []( TransformerSpec& m, double v ) { m.dtype = DataType( int( v ) ); }, computeDataTypeList },
    { "ffn_type", ModelField::choice, 0, 0, int( FfnType::arch ), false, "code", "ffn_types",
      "FFN activation (default: the arch's)",
      []( const TransformerSpec& m ) { return double( m.ffn_type ); },
      []( TransformerSpec& m, double v ) { m.ffn_type = FfnType( int( v ) ); },
      []() { return enumNameList<FfnType>(); } },
    { "experts", ModelField::integer, 0, 100000, 0, false, "1", "",
      "routed experts E of each MoE layer (default 0: a dense model)",
      []( const TransformerSpec& m ) { return double( m.experts ); },
      []( TransformerSpec& m, double v ) { m.experts = int( v ); }, nullptr },
    { "top_k", ModelField::integer, 1, 100000, 2, false, "1", "",
      "routed experts per token (at most experts; Megatron's default 2)",
      []( const TransformerSpec& m ) { return double( m.top_k ); },
      []( TransformerSpec& m, double v ) { m.top_k = int( v ); }, nullptr },
    { "moe_ffn_hidden", ModelField::integer, 1, 10000000, 0, false, "1", "",
      "FFN width f_e of each expert (default ffn_hidden)",
      []( const TransformerSpec& m ) { return double( m.moe_ffn_hidden ); },
      []( TransformerSpec& m, double v ) { m.moe_ffn_hidden = int( v ); }, nullptr },
    { "shared_experts", ModelField::integer, 0, 100000, 0, false, "1", "",
      "shared experts (each moe_ffn_hidden wide) that every token passes",
      []( const TransformerSpec& m ) { return double( m.shared_experts ); },
      []( TransformerSpec& m, double v ) { m.shared_experts = int( v ); }, nullptr },
    { "capacity_factor", ModelField::real, 0, 1000, 0, false, "1", "",
      "expert capacity C: each expert takes at most C*tokens*top_k/experts tokens, buffers "
      "padded to it (default: dropless)",
      []( const TransformerSpec& m ) { return m.capacity_factor; },
      []( TransformerSpec& m, double v ) { m.capacity_factor = v; }, nullptr, true },
    { "first_dense_layers", ModelField::integer, 0, 100000, 0, false, "1", "",
      "leading layers with a dense FFN before the MoE layers (in the first pipeline stage)",
      []( const TransformerSpec& m ) { return double( m.first_dense_layers ); },
      []( TransformerSpec& m, double v ) { m.first_dense_layers = int( v ); }, nullptr },
};
constexpr int kNumModelFields = int( std::size( kModelFields ) );

//! The model's fields (the table itself).
constexpr const auto& modelFields()
{
    return kModelFields;
}

//! The field whose key is `key`, or null.
inline const ModelField* findModelField( const std::string& key )
{
    return findField( kModelFields, key );
}

} // namespace shardsweep
