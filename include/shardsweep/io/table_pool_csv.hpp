#pragma once
//! \file table_pool_csv.hpp
//! \brief Reading a table pool from CSV (docs/SWEEPS.md, "Table pools").
//!
//! Required columns: rows, pooling_factor. Optional: name, dim (default 16), dtype
//! (fp32|fp16|bf16|int8|tf32, default fp32), zipf_alpha (access distribution zipf), bin_0..bin_16
//! (all 17 or none: a reuse histogram), histogram_batch (batch the bins were measured at,
//! default 65536), weighted (0/1). A row with both zipf_alpha and bins is rejected.

#include <shardsweep/scenario/table_pool.hpp>
#include <string>

namespace shardsweep
{

class CsvTable;

//! Throws InputError naming file:line:col for a bad cell.
TablePool readTablePoolCsv( const std::string& path );
TablePool tablePoolFromCsv( const CsvTable& csv );

} // namespace shardsweep
