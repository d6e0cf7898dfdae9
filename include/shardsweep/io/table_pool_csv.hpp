#pragma once
//! \file table_pool_csv.hpp
//! \brief Reading a table pool from CSV (docs/SWEEPS.md, "Table pools").
//!
//! Required columns: rows, pooling_factor. Optional: name and every other field of a table
//! (domain/dlrm_fields.hpp, read by io/table_fields as in a workload's table file), with two
//! defaults of their own: dim 16, and histogram_batch 65536 (dlrm_datasets' batch) for a row
//! with bins. A row with both zipf_alpha and bin_0..bin_16 is rejected.

#include <shardsweep/scenario/table_pool.hpp>
#include <string>

namespace shardsweep
{

class CsvTable;

//! Throws InputError naming file:line:col for a bad cell.
TablePool readTablePoolCsv( const std::string& path );
TablePool tablePoolFromCsv( const CsvTable& csv );

} // namespace shardsweep
