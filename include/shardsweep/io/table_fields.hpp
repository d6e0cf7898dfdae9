#pragma once
//! \file table_fields.hpp
//! \brief Reading a DLRM table (TableSpec) from a CSV row or a YAML mapping through its field
//! table (domain/dlrm_fields.hpp), with the reuse histogram next to it. The workload reader
//! (inline tables, table_defaults, table CSV files), the table-pool reader and `predict
//! embedding` share these, so a table field means the same range and default in every file.

#include <cstddef>
#include <shardsweep/domain/dlrm_fields.hpp>
#include <string>
#include <vector>

namespace shardsweep
{

class CsvTable;
class YamlView;

//! The CSV columns of a reuse histogram: bin_0 .. bin_16.
const std::vector<std::string>& reuseBinColumns();

//! Checks a table CSV's header: the `required` columns must be there; `name`, every other table
//! field and bin_0..bin_16 may be. Throws InputError for any other column, or for some of the
//! bins without the others. Returns whether the file has the bins.
bool checkTableCsvColumns( const CsvTable& csv, const std::vector<std::string>& required );

//! One field's cell of row r: an integer or number within the field's range, a 0/1 or
//! true/false flag, or one of a choice's names (its code). Throws InputError naming the cell.
double tableFieldCell( const CsvTable& csv, std::size_t r, const TableField& field );

//! Reads the table fields that row r gives onto `t` (an empty cell keeps t's value), then the
//! reuse histogram when the file has bins and the row fills them. A field still outside its
//! range afterwards (a dim that neither the row nor the defaults give) is an error on its cell.
void readTableCsvRow( const CsvTable& csv, std::size_t r, bool has_bins, TableSpec& t );

//! The YAML keys of a table mapping: `name`, every field and `reuse_histogram`; for
//! table_defaults (`defaults`) every field but `rows`, without name and histogram.
std::vector<std::string> tableYamlKeys( bool defaults );

//! Reads the table fields and the reuse histogram that a YAML mapping gives onto `t`.
void readTableYaml( const YamlView& node, TableSpec& t );

} // namespace shardsweep
