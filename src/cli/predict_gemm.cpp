// shardsweep predict gemm: the GEMM model (model/gemm.hpp) for the shapes of a CSV file.
#include <shardsweep/cli/predict_cli.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/io/table_output.hpp>
#include <shardsweep/model/gemm.hpp>

namespace shardsweep
{

namespace
{
DataType parseGemmDtype( const CsvTable& t, std::size_t row )
{
    if ( t.isEmpty( row, "dtype" ) )
        return DataType::fp32;
    const std::string& s = t.text( row, "dtype" );
    if ( s == "fp32" )
        return DataType::fp32;
    if ( s == "tf32" )
        return DataType::tf32;
    if ( s == "fp16" )
        return DataType::fp16;
    if ( s == "bf16" )
        return DataType::bf16;
    t.fail( row, "dtype", "one of fp32, tf32, fp16, bf16" );
}

GemmOp parseGemmOp( const CsvTable& t, std::size_t row )
{
    if ( !t.hasColumn( "op" ) || t.isEmpty( row, "op" ) )
        return GemmOp::bmm;
    const std::string& s = t.text( row, "op" );
    if ( s == "bmm" || s == "mm" )
        return GemmOp::bmm;
    if ( s == "linear" )
        return GemmOp::linear;
    t.fail( row, "op", "one of bmm, mm, linear" );
}

double positiveDim( const CsvTable& t, std::size_t row, const char* column )
{
    const double x = t.getDouble( row, column );
    if ( !( x >= 1.0 ) || x != static_cast<double>( static_cast<long long>( x ) ) )
        t.fail( row, column, "an integer >= 1" );
    return x;
}
} // namespace

int predictGemm( const CommandContext& ctx, const Arguments& args )
{
    PredictCli cli(
        "predict gemm",
        "Usage: shardsweep predict gemm --gpu NAME --input shapes.csv [--output pred.csv]\n\n"
        "Predicts the latency of C[B,M,N] = A[B,M,K]·W[B,K,N] (K is the reduction) for every row "
        "of\n"
        "a CSV file with the columns B,M,N,K and optionally dtype (fp32 default, tf32, fp16, "
        "bf16)\n"
        "and op (bmm default: a plain (batched) matmul, also 'mm'; linear: addmm with a bias, "
        "whose\n"
        "call costs more host time),\n"
        "using the tile/wave model of model/gemm.hpp (docs/model/gemm.md). The output repeats the\n"
        "input columns and adds latency_ms, tile (rows x columns of C per thread block), waves "
        "and\n"
        "bound (compute | memory). --input: CSV with columns B,M,N,K[,dtype][,op].\n",
        PredictCli::kGpu | PredictCli::kInput | PredictCli::kOutput );
    if ( !cli.parse( ctx, args ) )
        return 0;
    const GpuSpec& gpu = cli.gpu();

    const CsvTable t = cli.readInput( { "B", "M", "N", "K" }, { "dtype", "op" } );
    ResultTable result(
        { "B", "M", "N", "K", "dtype", "op", "latency_ms", "tile", "waves", "bound" } );
    for ( std::size_t r = 0; r < t.numRows(); ++r )
    {
        const double b = positiveDim( t, r, "B" ), m = positiveDim( t, r, "M" ),
                     n = positiveDim( t, r, "N" ), k = positiveDim( t, r, "K" );
        const DataType dtype = parseGemmDtype( t, r );
        const GemmOp op = parseGemmOp( t, r );
        const GemmPrediction p = shardsweep::predictGemm( gpu, b, m, n, k, dtype, op );
        static const char* names[] = { "fp32", "tf32", "fp16", "bf16" };
        result.addRow( { static_cast<long long>( b ), static_cast<long long>( m ),
                         static_cast<long long>( n ), static_cast<long long>( k ),
                         std::string( names[static_cast<int>( dtype )] ),
                         std::string( op == GemmOp::linear ? "linear" : "bmm" ), p.latency_ms,
                         std::to_string( p.tile_m ) + "x" + std::to_string( p.tile_n ), p.waves,
                         std::string( p.memory_bound ? "memory" : "compute" ) } );
    }
    cli.write( ctx, result );
    return 0;
}

} // namespace shardsweep
