#pragma once
//! \file table_output.hpp
//! \brief One result table printed as an aligned text table, CSV or JSON (`--format`).
//!
//! Every predict/evaluate/bench subcommand builds a ResultTable and prints it with the user's
//! --format. CSV: one header line, one row per record, units in the column names. JSON: an array
//! of objects. Numbers are printed in the shortest form that reads back exactly in csv/json, and
//! with 6 significant digits in the table.

#include <iosfwd>
#include <shardsweep/domain/names.hpp>
#include <string>
#include <variant>
#include <vector>

namespace shardsweep
{

enum class OutputFormat
{
    table,
    csv,
    json,
};

// The values of --format.
SHARDSWEEP_ENUM_NAMES( OutputFormat, "output format",
                       { OutputFormat::table, "table", "aligned text, 6 significant digits" },
                       { OutputFormat::csv, "csv",
                         "one header line, one row per record, numbers that read back exactly" },
                       { OutputFormat::json, "json",
                         "an array of objects, numbers that read back exactly" } );

//! Parses "table" | "csv" | "json"; throws UsageError otherwise.
OutputFormat parseOutputFormat( const std::string& text );

//! `s` as a JSON string literal: in double quotes, with ", \ and newlines escaped. Also a valid
//! YAML double-quoted scalar (plan files).
std::string jsonQuoted( const std::string& s );

class ResultTable
{
  public:
    using Cell = std::variant<std::string, double, long long>;

    explicit ResultTable( std::vector<std::string> columns );

    //! Appends one row; it must have one cell per column.
    void addRow( std::vector<Cell> row );

    const std::vector<std::string>& columns() const { return _columns; }
    const std::vector<std::vector<Cell>>& rows() const { return _rows; }

    void print( std::ostream& out, OutputFormat format ) const;

  private:
    std::vector<std::string> _columns;
    std::vector<std::vector<Cell>> _rows;
};

} // namespace shardsweep
