#pragma once
//! \file dlrm_fields.hpp
//! \brief The field tables of a DLRM workload: one embedding table (TableSpec) and the dense
//! model (DenseModel). The workload YAML reader (inline tables, table_defaults, table CSV files),
//! the table-pool CSV reader, `predict embedding` and the `--help` texts read them
//! (io/table_fields); a new table field is one row here plus the model code that uses it.
//!
//! Not scalar fields, and so read by hand next to the tables: a table's 17-bin reuse histogram
//! (YAML `reuse_histogram`, CSV `bin_0..bin_16`), which with `zipf_alpha` decides the access
//! distribution, and the dense model's layer-width lists `bottom_mlp` and `top_mlp`.

#include <iterator>
#include <shardsweep/domain/dlrm_spec.hpp>
#include <shardsweep/domain/field_table.hpp>
#include <shardsweep/domain/names.hpp>

namespace shardsweep
{

//! A table's fields carry doubles: pooling factors and Zipf exponents are real, and row counts
//! (up to 1e13) are exact in a double.
using TableField = Field<TableSpec, double>;

//! One embedding table's fields, in file order. `rows` is the only one every table must give;
//! `dim` has no default of its own (0): a table gives it or the workload's table_defaults do.
inline constexpr TableField kTableFields[] = {
    { "rows", TableField::integer, 1.0, 1.0e13, 0.0, true, "rows", "", "rows of the table",
      []( const TableSpec& t ) { return double( t.rows ); },
      []( TableSpec& t, double v ) { t.rows = std::int64_t( v ); }, nullptr },
    { "dim", TableField::integer, 1.0, 65536.0, 0.0, false, "elements", "",
      "embedding dimension (elements per row)",
      []( const TableSpec& t ) { return double( t.dim ); },
      []( TableSpec& t, double v ) { t.dim = int( v ); }, nullptr },
    { "pooling_factor", TableField::real, 0.0, 1.0e5, 1.0, false, "lookups", "",
      "mean lookups per sample", []( const TableSpec& t ) { return t.pooling_factor; },
      []( TableSpec& t, double v ) { t.pooling_factor = v; }, nullptr },
    // Giving an exponent makes the table Zipf-distributed (p_i ~ i^-alpha over its rows).
    { "zipf_alpha", TableField::real, 0.0, 10.0, 0.0, false, "1", "",
      "Zipf exponent of the row accesses (p_i ~ i^-alpha)",
      []( const TableSpec& t ) { return t.zipf_alpha; },
      []( TableSpec& t, double v )
      {
          t.zipf_alpha = v;
          t.distribution = AccessDistribution::zipf;
      },
      nullptr },
    { "histogram_batch", TableField::integer, 0.0, 1.0e9, 0.0, false, "samples", "",
      "batch at which the reuse histogram was measured (0: the scenario's per-GPU batch)",
      []( const TableSpec& t ) { return double( t.histogram_batch ); },
      []( TableSpec& t, double v ) { t.histogram_batch = std::int64_t( v ); }, nullptr },
    { "dtype", TableField::choice, 0.0, 0.0, double( DataType::fp32 ), false, "code", "dtypes",
      "element type of the rows", []( const TableSpec& t ) { return double( t.dtype ); },
      []( TableSpec& t, double v ) { t.dtype = DataType( int( v ) ); },
      []() { return enumNameList<DataType>(); } },
    { "optimizer", TableField::choice, 0.0, 0.0, double( Optimizer::sgd ), false, "code", "",
      "optimizer of the rows (its state per row or element)",
      []( const TableSpec& t ) { return double( t.optimizer ); },
      []( TableSpec& t, double v ) { t.optimizer = Optimizer( int( v ) ); },
      []() { return enumNameList<Optimizer>(); } },
    { "weighted", TableField::flag, 0.0, 1.0, 0.0, false, "1", "",
      "per-sample weights (feature-weighted EmbeddingBag)",
      []( const TableSpec& t ) { return double( t.weighted ); },
      []( TableSpec& t, double v ) { t.weighted = v != 0.0; }, nullptr },
};

//! The field whose key is `key`, or null.
inline const TableField* findTableField( const std::string& key )
{
    return findField( kTableFields, key );
}

using DenseField = Field<DenseModel>;

//! The dense model's scalar fields, in file order (the MLP widths are lists: see above).
inline constexpr DenseField kDenseFields[] = {
    { "num_dense_features", DenseField::integer, 0, 1000000, 13, false, "1", "",
      "dense input features (0: no bottom MLP)",
      []( const DenseModel& d ) { return d.num_dense_features; },
      []( DenseModel& d, int v ) { d.num_dense_features = v; }, nullptr },
    { "interaction", DenseField::choice, 0, 0, int( Interaction::dot ), false, "code", "",
      "feature interaction between the bottom MLP and the top MLP",
      []( const DenseModel& d ) { return int( d.interaction ); },
      []( DenseModel& d, int v ) { d.interaction = Interaction( v ); },
      []() { return enumNameList<Interaction>(); } },
    { "dtype", DenseField::choice, 0, 0, int( DataType::fp32 ), false, "code", "dtypes",
      "element type of the MLPs' weights and activations",
      []( const DenseModel& d ) { return int( d.dtype ); },
      []( DenseModel& d, int v ) { d.dtype = DataType( v ); }, computeDataTypeList },
    { "optimizer", DenseField::choice, 0, 0, int( Optimizer::sgd ), false, "code", "",
      "optimizer of the MLPs' weights", []( const DenseModel& d ) { return int( d.optimizer ); },
      []( DenseModel& d, int v ) { d.optimizer = Optimizer( v ); },
      []() { return enumNameList<Optimizer>(); } },
};

} // namespace shardsweep
