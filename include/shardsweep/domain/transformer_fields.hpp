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

using ModelField = Field<TransformerSpec>;

//! The model's fields in file order. A fallback outside [min, max] (ffn_hidden 0) means "derived
//! from the others" (docs/model/transformer.md).
inline constexpr ModelField kModelFields[] = {
    { "arch", ModelField::choice, 0, 0, int( TransformerArch::gpt ), false, "code", "",
      "layer family: GPT (decoder, GELU), BERT (encoder, GELU), OPT (decoder, ReLU)",
      []( const TransformerSpec& m ) { return int( m.arch ); },
      []( TransformerSpec& m, int v ) { m.arch = TransformerArch( v ); },
      []() { return enumNameList<TransformerArch>(); } },
    { "hidden", ModelField::integer, 1, 1000000, 0, true, "1", "", "hidden size h",
      []( const TransformerSpec& m ) { return m.hidden; },
      []( TransformerSpec& m, int v ) { m.hidden = v; }, nullptr },
    { "heads", ModelField::integer, 1, 100000, 0, true, "1", "",
      "attention heads a (dividing hidden)", []( const TransformerSpec& m ) { return m.heads; },
      []( TransformerSpec& m, int v ) { m.heads = v; }, nullptr },
    { "kv_heads", ModelField::integer, 1, 100000, 0, false, "1", "",
      "key/value heads g of grouped-query attention, dividing heads (default heads: MHA)",
      []( const TransformerSpec& m ) { return m.kv_heads; },
      []( TransformerSpec& m, int v ) { m.kv_heads = v; }, nullptr },
    { "layers", ModelField::integer, 1, 100000, 0, true, "1", "", "transformer layers L",
      []( const TransformerSpec& m ) { return m.layers; },
      []( TransformerSpec& m, int v ) { m.layers = v; }, nullptr },
    { "seq_len", ModelField::integer, 1, 10000000, 0, true, "tokens", "", "sequence length s",
      []( const TransformerSpec& m ) { return m.seq_len; },
      []( TransformerSpec& m, int v ) { m.seq_len = v; }, nullptr },
    { "vocab", ModelField::integer, 1, 100000000, 50257, false, "tokens", "",
      "vocabulary V (padded to a multiple of 128*tp as Megatron does)",
      []( const TransformerSpec& m ) { return m.vocab; },
      []( TransformerSpec& m, int v ) { m.vocab = v; }, nullptr },
    { "ffn_hidden", ModelField::integer, 1, 10000000, 0, false, "1", "",
      "MLP inner size f (default 4*hidden)",
      []( const TransformerSpec& m ) { return m.ffn_hidden; },
      []( TransformerSpec& m, int v ) { m.ffn_hidden = v; }, nullptr },
    { "dtype", ModelField::choice, 0, 0, int( DataType::bf16 ), false, "code", "dtypes",
      "element type of weights and activations",
      []( const TransformerSpec& m ) { return int( m.dtype ); },
      []( TransformerSpec& m, int v ) { m.dtype = DataType( v ); }, computeDataTypeList },
    { "ffn_type", ModelField::choice, 0, 0, int( FfnType::arch ), false, "code", "ffn_types",
      "FFN activation (default: the arch's)",
      []( const TransformerSpec& m ) { return int( m.ffn_type ); },
      []( TransformerSpec& m, int v ) { m.ffn_type = FfnType( v ); },
      []() { return enumNameList<FfnType>(); } },
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
