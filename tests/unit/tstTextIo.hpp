// ResultTable output formats and the CSV reader's error positions.
#include <gtest/gtest.h>
#include <input_test_support.hpp>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/calibration_csv.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/table_output.hpp>
#include <sstream>

namespace Test
{

TEST( TEST_CATEGORY, result_table_formats )
{
    shardsweep::ResultTable table( { "name", "time_ms", "count" } );
    table.addRow( { std::string( "a,b" ), 0.1, 3LL } );
    std::ostringstream csv;
    table.print( csv, shardsweep::OutputFormat::csv );
    // The shortest text that reads back as the same double.
    EXPECT_EQ( csv.str(), "name,time_ms,count\n\"a,b\",0.1,3\n" );
    shardsweep::ResultTable thirds( { "x" } );
    thirds.addRow( { 1.0 / 3.0 } );
    std::ostringstream third;
    thirds.print( third, shardsweep::OutputFormat::csv );
    EXPECT_EQ( third.str(), "x\n0.3333333333333333\n" );
    EXPECT_EQ( std::stod( third.str().substr( 2 ) ), 1.0 / 3.0 );
    std::ostringstream json;
    table.print( json, shardsweep::OutputFormat::json );
    EXPECT_EQ( json.str(), "[\n {\"name\": \"a,b\", \"time_ms\": 0.1, \"count\": 3}\n]\n" );
    std::ostringstream text;
    table.print( text, shardsweep::OutputFormat::table );
    EXPECT_EQ( text.str(), "name  time_ms  count\na,b       0.1      3\n" );
    EXPECT_THROW( table.addRow( { 1.0 } ), std::logic_error );
    // A text column empty in every row is left out of the aligned table, kept in CSV.
    shardsweep::ResultTable sparse( { "planner", "reason", "ms" } );
    sparse.addRow( { std::string( "a" ), std::string(), 1.5 } );
    sparse.addRow( { std::string( "bb" ), std::string(), 2.0 } );
    std::ostringstream sparse_text, sparse_csv;
    sparse.print( sparse_text, shardsweep::OutputFormat::table );
    EXPECT_EQ( sparse_text.str(), "planner  ms \n"
                                  "a        1.5\n"
                                  "bb         2\n" );
    sparse.print( sparse_csv, shardsweep::OutputFormat::csv );
    EXPECT_EQ( sparse_csv.str(), "planner,reason,ms\na,,1.5\nbb,,2\n" );
    EXPECT_THROW( shardsweep::parseOutputFormat( "xml" ), shardsweep::UsageError );
}

TEST( TEST_CATEGORY, csv_reader_values_and_errors )
{
    auto csv =
        shardsweep::CsvTable::parse( "# comment\nrows,dim,flag\n100, 16,true\n\n7,x,0\n", "t.csv" );
    ASSERT_EQ( csv.numRows(), 2u );
    EXPECT_EQ( csv.getInt( 0, "rows" ), 100 );
    EXPECT_EQ( csv.getDouble( 0, "dim" ), 16.0 );
    EXPECT_TRUE( csv.getBool( 0, "flag" ) );
    EXPECT_FALSE( csv.getBool( 1, "flag" ) );
    EXPECT_EQ( csv.lineOf( 1 ), 5 );
    try
    {
        csv.getInt( 1, "dim" );
        FAIL() << "no error";
    }
    catch ( const shardsweep::InputError& e )
    {
        EXPECT_STREQ( e.what(), "t.csv:5:2: field 'dim': expected an integer, found 'x'" );
    }
    EXPECT_THROW( csv.checkColumns( { "rows", "dim" }, {} ), shardsweep::InputError );
    EXPECT_NO_THROW( csv.checkColumns( { "rows", "dim" }, { "flag" } ) );
    // A misspelt column is named where it is, with the known name it resembles.
    auto typo = shardsweep::CsvTable::parse( "rows,dmi\n1,2\n", "t.csv" );
    try
    {
        typo.checkColumns( { "rows", "dim" }, { "flag" } );
        ADD_FAILURE() << "no error";
    }
    catch ( const shardsweep::InputError& e )
    {
        EXPECT_EQ( e.column(), 2 );
        EXPECT_NE( std::string( e.what() ).find( "found 'dmi' (did you mean 'dim'?)" ),
                   std::string::npos )
            << e.what();
    }
    // A measurement file's own columns are returned, unused; a near-miss still fails, and so
    // does a missing required column.
    auto measured = shardsweep::CsvTable::parse( "kernel,rows,device,dim\nk,1,d,2\n", "m.csv" );
    EXPECT_EQ( measured.checkColumnsIgnoringOthers( { "rows", "dim" }, { "flag" } ),
               ( std::vector<std::string>{ "kernel", "device" } ) );
    EXPECT_THROW( typo.checkColumnsIgnoringOthers( { "rows", "dim" }, { "flag" } ),
                  shardsweep::InputError );
    EXPECT_THROW( measured.checkColumnsIgnoringOthers( { "rows", "size" }, {} ),
                  shardsweep::InputError );
    EXPECT_THROW( shardsweep::CsvTable::parse( "a,b\n1\n", "x.csv" ), shardsweep::InputError );

    // Another tool's names of known columns read as ours, unless the file has ours already.
    auto neusight = shardsweep::CsvTable::parse( "OPName,Latency,B,H\nadd,0.5,2,3\n", "n.csv" );
    neusight.readColumnsAs( { { "OPName", "op" }, { "Latency", "latency_ms" } } );
    EXPECT_EQ( neusight.header(), ( std::vector<std::string>{ "op", "latency_ms", "B", "H" } ) );
    EXPECT_EQ( neusight.text( 0, "op" ), "add" );
    EXPECT_EQ( neusight.getDouble( 0, "latency_ms" ), 0.5 );
    expectInputError( [&] { neusight.fail( 0, "op", "a known op" ); },
                      "n.csv:2:1: field 'OPName': expected a known op, found 'add'" );
    auto both = shardsweep::CsvTable::parse( "op,OPName\nadd,mul\n", "b.csv" );
    both.readColumnsAs( { { "OPName", "op" } } );
    EXPECT_EQ( both.header(), ( std::vector<std::string>{ "op", "OPName" } ) );
}

// Measurement files name dtypes our way or PyTorch's, in any case; int8 (no compute type) and
// unknown names fail naming the cell.
TEST( TEST_CATEGORY, measurement_dtype_names )
{
    using shardsweep::DataType;
    const auto csv =
        shardsweep::CsvTable::parse( "dtype\nbf16\nFP16\ntorch.bfloat16\nhalf\nfloat\nfloat8_"
                                     "e4m3fn\ntf32\n\"\"\nint8\nfloat64\n",
                                     "d.csv" );
    const DataType expected[] = { DataType::bf16, DataType::fp16, DataType::bf16, DataType::fp16,
                                  DataType::fp32, DataType::fp8,  DataType::tf32, DataType::fp32 };
    for ( std::size_t r = 0; r < std::size( expected ); ++r )
        EXPECT_EQ( shardsweep::dtypeCell( csv, r ), expected[r] ) << "row " << r;
    try
    {
        shardsweep::dtypeCell( csv, 8 );
        ADD_FAILURE() << "int8 accepted";
    }
    catch ( const shardsweep::InputError& e )
    {
        EXPECT_NE( std::string( e.what() ).find( "d.csv:10:1: field 'dtype'" ), std::string::npos )
            << e.what();
    }
    EXPECT_THROW( shardsweep::dtypeCell( csv, 9 ), shardsweep::InputError );
}

} // namespace Test
