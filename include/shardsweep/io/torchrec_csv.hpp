#pragma once
//! \file torchrec_csv.hpp
//! \brief The shard CSV of `shardsweep predict torchrec` turned into TorchrecTopology +
//! TorchrecShard (sharding types and compute kernels by the names of their descriptor tables).

#include <optional>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/model/torchrec/estimator.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! One CSV row: the topology it runs on and the shard it prices.
struct TorchrecCsvRow
{
    TorchrecTopology topology;
    TorchrecShard shard;
};

//! Columns of the shard CSV (issue 4), required then optional.
const std::vector<std::string>& torchrecCsvRequiredColumns();
const std::vector<std::string>& torchrecCsvOptionalColumns();

//! Validates every row and converts it; throws InputError naming file:line:col and the column
//! (unknown sharding type or kernel, shard larger than the table, zero batch, ...).
std::vector<TorchrecCsvRow> readTorchrecShards( const CsvTable& table );

} // namespace shardsweep
