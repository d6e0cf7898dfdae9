#pragma once
//! \file torchrec_csv.hpp
//! \brief TorchRec names (sharding types, compute kernels) and the shard CSV of
//! `shardsweep predict torchrec` turned into TorchrecTopology + TorchrecShard.

#include <optional>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/model/torchrec/estimator.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

//! TorchRec's EmbeddingComputeKernel value: "dense", "fused", "fused_uvm", ...
const char* torchrecKernelName( TorchrecKernel kernel );
std::optional<TorchrecKernel> parseTorchrecKernel( const std::string& name );

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
