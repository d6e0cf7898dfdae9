#pragma once
//! \file workload_yaml.hpp
//! \brief Workload files (inputs/workloads/): `kind: workload` is a DLRM (embedding tables inline
//! or from a CSV file, the dense model and the global batch), `kind: transformer` a GPT / BERT /
//! OPT model (arch, hidden, heads, layers, seq_len, vocab, ffn_hidden, dtype, global_batch).
//! docs/INPUTS.md documents every field.

#include <shardsweep/domain/scenario.hpp>
#include <shardsweep/io/yaml_util.hpp>
#include <string>

namespace shardsweep
{

//! Parses a workload document (either kind). `embedded`: a `workload:` mapping inside another file
//! (scenario), where `kind:` may be left out for a DLRM. CSV paths resolve against the document's
//! file.
Workload parseWorkload( const YamlView& root, bool embedded = false );
Workload readWorkloadFile( const std::string& path );
//! Parses workload text (tests); `name` stands for the file in messages.
Workload parseWorkloadString( const std::string& text, const std::string& name );

//! Reads tables from a CSV file (columns in docs/INPUTS.md; the table-pool CSV columns are a
//! subset), filling absent cells from `defaults`; appends to names/tables.
void readTablesCsv( const std::string& path, const TableSpec& defaults,
                    std::vector<std::string>& names, std::vector<TableSpec>& tables );

} // namespace shardsweep
