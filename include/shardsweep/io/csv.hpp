#pragma once
//! \file csv.hpp
//! \brief A small CSV reader whose errors name the file, line and column.
//!
//! Inputs of the predict subcommands and table pools are CSV files with a header line. Empty
//! lines and lines starting with '#' are skipped; fields may be double-quoted. Typed getters throw
//! InputError naming "file:line:col", the column name, what was expected and what was found.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace shardsweep
{

class CsvTable
{
  public:
    //! Reads a file; throws InputError if it cannot be opened or a row has the wrong field count.
    static CsvTable read( const std::string& path );
    //! Parses text (for tests); `name` is used in error messages.
    static CsvTable parse( const std::string& text, const std::string& name );

    const std::string& name() const { return _name; }
    const std::vector<std::string>& header() const { return _header; }
    std::size_t numRows() const { return _rows.size(); }
    bool hasColumn( const std::string& column ) const;
    //! Other tools' names of known columns: each {theirs, ours} whose `theirs` the header has and
    //! `ours` it does not is read as `ours` from here on (NeuSight's OPName for op); a bad cell
    //! is still named by the file's own column name.
    void readColumnsAs( const std::vector<std::pair<std::string, std::string>>& aliases );
    //! Line number (1-based, in the file) of data row `row`.
    int lineOf( std::size_t row ) const { return _lines[row]; }

    //! Raw text of a cell; throws InputError if the column is missing.
    const std::string& text( std::size_t row, const std::string& column ) const;
    //! True if the column is absent or the cell is empty.
    bool isEmpty( std::size_t row, const std::string& column ) const;

    double getDouble( std::size_t row, const std::string& column ) const;
    std::int64_t getInt( std::size_t row, const std::string& column ) const;
    //! Accepts 0/1/true/false (case-insensitive).
    bool getBool( std::size_t row, const std::string& column ) const;
    //! Empty or absent cell: nullopt.
    std::optional<double> getOptionalDouble( std::size_t row, const std::string& column ) const;

    //! The value whose name is in the cell (`names`: e.g. enumPairs<E>() of domain/names.hpp);
    //! an empty or absent cell gives `fallback`, another name fails with the list.
    template <class E>
    E getEnumOr( std::size_t row, const std::string& column,
                 const std::vector<std::pair<std::string, E>>& names, E fallback ) const
    {
        if ( isEmpty( row, column ) )
            return fallback;
        const std::string& s = text( row, column );
        std::string list;
        for ( const auto& [name, value] : names )
        {
            if ( s == name )
                return value;
            list += ( list.empty() ? "" : ", " ) + name;
        }
        fail( row, column, "one of " + list );
    }

    //! Throws InputError (naming the cell) with the given expectation; for range checks by callers.
    [[noreturn]] void fail( std::size_t row, const std::string& column,
                            const std::string& expected ) const;
    //! Throws InputError if the header lacks one of `required` or has a column outside
    //! `required` + `optional` (typos must not be ignored).
    void checkColumns( const std::vector<std::string>& required,
                       const std::vector<std::string>& optional ) const;
    //! For measurement files, which other tools write with columns of their own (NeuSight's
    //! `kernel`, a `device`): as checkColumns, but a column that resembles no known one is
    //! returned, for the caller to say it is not used. One a typo away from a known column still
    //! throws, naming the column it resembles.
    std::vector<std::string>
    checkColumnsIgnoringOthers( const std::vector<std::string>& required,
                                const std::vector<std::string>& optional ) const;

  private:
    int columnIndex( const std::string& column ) const;
    std::vector<std::string> checkColumns( const std::vector<std::string>& required,
                                           const std::vector<std::string>& optional,
                                           bool ignore_unrelated ) const;

    std::string _name;
    std::vector<std::string> _header;
    std::vector<std::string> _written_header; //!< as the file names the columns (readColumnsAs)
    std::vector<std::vector<std::string>> _rows;
    std::vector<int> _lines;
};

} // namespace shardsweep
