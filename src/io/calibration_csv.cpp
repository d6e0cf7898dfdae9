// The measurement files of `calibrate gpu` (calibration_csv.hpp).
#include <optional>
#include <shardsweep/io/calibration_csv.hpp>
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

double latencyCell( const CsvTable& t, std::size_t row )
{
    const double x = t.getDouble( row, "latency_ms" );
    if ( !( x > 0.0 ) )
        t.fail( row, "latency_ms", "a latency > 0 (ms)" );
    return x;
}

bool isFp8( const CsvTable& t, std::size_t row )
{
    return t.hasColumn( "dtype" ) && !t.isEmpty( row, "dtype" ) &&
           t.text( row, "dtype" ).rfind( "fp8", 0 ) == 0;
}

} // namespace

GemmOp gemmOpCell( const CsvTable& t, std::size_t row )
{
    if ( !t.hasColumn( "op" ) || t.isEmpty( row, "op" ) )
        return GemmOp::bmm;
    const std::string& s = t.text( row, "op" );
    if ( s == "mm" )
        return GemmOp::bmm;
    if ( const std::optional<GemmOp> op = enumFromName<GemmOp>( s ) )
        return *op;
    std::vector<std::string> names = enumNameList<GemmOp>();
    names.insert( names.begin() + 1, "mm" );
    t.fail( row, "op", "one of " + joinChoices( names, ", ", ", " ) );
}

OperatorKind operatorKindCell( const CsvTable& t, std::size_t row, const std::string& column )
{
    const std::optional<OperatorKind> kind = enumFromName<OperatorKind>( t.text( row, column ) );
    if ( !kind )
        t.fail( row, column, "one of " + enumChoices<OperatorKind>( ", " ) );
    return *kind;
}

std::vector<GemmSample> readGemmMeasurements( const std::string& path, const GpuSpec& gpu )
{
    const CsvTable t = CsvTable::read( path );
    t.checkColumns( { "B", "M", "N", "K", "dtype", "latency_ms" }, { "op" } );
    std::vector<GemmSample> m;
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        GemmSample s;
        s.B = positiveWhole( t, r, "B" );
        s.M = positiveWhole( t, r, "M" );
        s.N = positiveWhole( t, r, "N" );
        s.K = positiveWhole( t, r, "K" );
        s.dtype = t.getEnumOr( r, "dtype", computeDataTypeNames(), DataType::fp32 );
        if ( const std::string error = gpuDataTypeError( gpu, s.dtype ); !error.empty() )
            t.fail( r, "dtype", "a type the GPU computes in (" + error + ")" );
        s.op = gemmOpCell( t, r );
        s.latency_ms = latencyCell( t, r );
        m.push_back( s );
    }
    return m;
}

OperatorMeasurements readOperatorMeasurements( const std::string& path )
{
    const CsvTable t = CsvTable::read( path );
    t.checkColumns( { "op", "B", "H", "dtype", "latency_ms" }, {} );
    OperatorMeasurements m;
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        if ( isFp8( t, r ) )
        {
            ++m.skipped_fp8;
            continue;
        }
        OperatorMeasurement s;
        s.kind = operatorKindCell( t, r, "op" );
        s.B = positiveWhole( t, r, "B" );
        s.H = positiveWhole( t, r, "H" );
        s.dtype = t.getEnumOr( r, "dtype", computeDataTypeNames(), DataType::fp32 );
        s.latency_ms = latencyCell( t, r );
        m.rows.push_back( s );
    }
    return m;
}

} // namespace shardsweep
