// The measurement files of `calibrate gpu` (calibration_csv.hpp).
#include <optional>
#include <shardsweep/io/calibration_csv.hpp>
#include <shardsweep/io/input_text.hpp>
#include <shardsweep/model/transformer/parallel_rules.hpp>

namespace shardsweep
{

namespace
{

double positiveWhole( const CsvTable& t, std::size_t row, const char* column )
{
    const double x = t.getDouble( row, column );
    if ( !( x >= 1.0 ) || x != static_cast<double>( static_cast<long long>( x ) ) )
        t.fail( row, column, "an integer >= 1" );
    return x;
}

std::optional<DataType> matchName( const NamePairs<DataType>& names, const std::string& s )
{
    for ( const auto& [name, value] : names )
        if ( s == name )
            return value;
    return std::nullopt;
}

} // namespace

GemmOp gemmOpCell( const CsvTable& t, std::size_t row )
{
    if ( !t.hasColumn( "op" ) || t.isEmpty( row, "op" ) )
        return GemmOp::bmm;
    const std::string& s = t.text( row, "op" );
    if ( s == "mm" || s == "matmul" )
        return GemmOp::bmm;
    if ( s == "addmm" )
        return GemmOp::linear;
    if ( const std::optional<GemmOp> op = enumFromName<GemmOp>( s ) )
        return *op;
    std::vector<std::string> names = enumNameList<GemmOp>();
    names.insert( names.end(), { "mm", "matmul", "addmm" } );
    t.fail( row, "op", "one of " + joinChoices( names, ", ", ", " ) );
}

OperatorKind operatorKindCell( const CsvTable& t, std::size_t row, const std::string& column )
{
    const std::string& s = t.text( row, column );
    if ( s == "layer_norm" || s == "layernorm" )
        return OperatorKind::ln;
    const std::optional<OperatorKind> kind = enumFromName<OperatorKind>( s );
    if ( !kind )
        t.fail( row, column,
                "one of " + enumChoices<OperatorKind>( ", " ) +
                    " (layer_norm and layernorm for ln)" );
    return *kind;
}

DataType dtypeCell( const CsvTable& t, std::size_t row )
{
    if ( t.isEmpty( row, "dtype" ) )
        return DataType::fp32;
    std::string s = lowerCase( t.text( row, "dtype" ) );
    if ( s.rfind( "torch.", 0 ) == 0 )
        s.erase( 0, 6 );
    if ( const std::optional<DataType> d = matchName( computeDataTypeNames(), s ) )
        return *d;
    if ( const std::optional<DataType> d = matchName( pytorchDataTypeNames(), s ) )
        return *d;
    std::vector<std::string> names;
    for ( const auto& n : computeDataTypeNames() )
        names.push_back( n.first );
    t.fail(
        row, "dtype",
        "one of " + joinChoices( names, ", ", ", " ) +
            " or PyTorch's name of one (float32, float16, half, bfloat16, float8_e4m3fn, ...)" );
}

double measuredLatencyCell( const CsvTable& t, std::size_t row )
{
    const double x = t.getDouble( row, "latency_ms" );
    if ( !( x > 0.0 ) )
        t.fail( row, "latency_ms", "a latency > 0 (ms)" );
    return x;
}

std::string unusedColumnsNote( const std::string& path, const std::vector<std::string>& unused )
{
    if ( unused.empty() )
        return {};
    return path + ": not used: the column" + ( unused.size() > 1 ? "s " : " " ) +
           joinChoices( unused, ", ", " and " );
}

GemmMeasurements readGemmMeasurements( const std::string& path, const GpuSpec& gpu )
{
    const CsvTable t = CsvTable::read( path );
    GemmMeasurements m;
    m.unused_columns =
        t.checkColumnsIgnoringOthers( { "B", "M", "N", "K", "latency_ms" }, { "dtype", "op" } );
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        GemmSample s;
        s.B = positiveWhole( t, r, "B" );
        s.M = positiveWhole( t, r, "M" );
        s.N = positiveWhole( t, r, "N" );
        s.K = positiveWhole( t, r, "K" );
        s.dtype = dtypeCell( t, r );
        if ( const std::string error = gpuDataTypeError( gpu, s.dtype ); !error.empty() )
            t.fail( r, "dtype", "a type the GPU computes in (" + error + ")" );
        s.op = gemmOpCell( t, r );
        s.latency_ms = measuredLatencyCell( t, r );
        m.rows.push_back( s );
    }
    return m;
}

const std::vector<std::pair<std::string, std::string>>& neusightOperatorColumns()
{
    static const std::vector<std::pair<std::string, std::string>> names = {
        { "OPName", "op" }, { "Latency", "latency_ms" } };
    return names;
}

OperatorMeasurements readOperatorMeasurements( const std::string& path )
{
    CsvTable t = CsvTable::read( path );
    t.readColumnsAs( neusightOperatorColumns() );
    OperatorMeasurements m;
    m.unused_columns =
        t.checkColumnsIgnoringOthers( { "op", "B", "H", "latency_ms" }, { "dtype" } );
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        OperatorMeasurement s;
        s.dtype = dtypeCell( t, r );
        if ( s.dtype == DataType::fp8 )
        {
            ++m.skipped_fp8;
            continue;
        }
        s.kind = operatorKindCell( t, r, "op" );
        s.B = positiveWhole( t, r, "B" );
        s.H = positiveWhole( t, r, "H" );
        s.latency_ms = measuredLatencyCell( t, r );
        m.rows.push_back( s );
    }
    return m;
}

} // namespace shardsweep
