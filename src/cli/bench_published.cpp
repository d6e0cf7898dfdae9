// `bench transformer --table published` (bench_published.hpp).
#include "bench_published.hpp"

#include <array>
#include <cmath>
#include <map>
#include <set>
#include <shardsweep/calibration/published_runs.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/io/calibration_csv.hpp>
#include <shardsweep/io/csv.hpp>
#include <shardsweep/model/transformer/throughput.hpp>
#include <vector>

namespace shardsweep
{

namespace
{

//! The rows of `measured` whose shape (B, M, N, K, dtype, op) is a row of `shapes`: the GEMMs of
//! the published runs (scripts/published_shapes.py wrote `shapes`).
std::vector<GemmSample> publishedShapeMeasurements( const std::string& measured,
                                                    const std::string& shapes, const GpuSpec& gpu )
{
    const CsvTable t = CsvTable::read( shapes );
    t.checkColumns( { "B", "M", "N", "K", "dtype", "op" }, {} );
    std::set<std::array<double, 6>> wanted;
    for ( std::size_t r = 0; r < t.numRows(); ++r )
        wanted.insert( { t.getDouble( r, "B" ), t.getDouble( r, "M" ), t.getDouble( r, "N" ),
                         t.getDouble( r, "K" ), double( dtypeCell( t, r ) ),
                         double( gemmOpCell( t, r ) ) } );
    std::vector<GemmSample> out;
    for ( const GemmSample& s : readGemmMeasurements( measured, gpu ).rows )
        if ( wanted.count( { s.B, s.M, s.N, s.K, double( s.dtype ), double( s.op ) } ) )
            out.push_back( s );
    return out;
}

//! Mean APE (%) of the fp8 rows of `rows` (all when `only` < 0, else row `only`) with `c`.
double fp8Mape( const TransformerConstants& c, const std::vector<TransformerMeasurement>& rows,
                long only = -1 )
{
    double sum = 0.0;
    int n = 0;
    for ( std::size_t i = 0; i < rows.size(); ++i )
        if ( rows[i].model.dtype == DataType::fp8 && ( only < 0 || long( i ) == only ) )
        {
            sum += std::fabs( predictMeasurement( c, rows[i] ) / rows[i].measured_ms - 1.0 );
            ++n;
        }
    return n > 0 ? 100.0 * sum / n : 0.0;
}

//! fp8_gemm_eff: shipped, fitted on every fp8 row, and leave-one-row-out (each row predicted with
//! the value fitted on the others).
void printFp8Fit( const CommandContext& ctx, OutputFormat format,
                  const std::vector<TransformerMeasurement>& rows, const GpuSpec& h100,
                  const std::vector<GemmSample>& h100_gemms )
{
    const TransformerConstants shipped = shippedTransformerConstants();
    TransformerConstants all = shipped;
    all.fp8_gemm_eff = fitFp8GemmEfficiency( shipped, rows );
    double loo = 0.0;
    int n = 0;
    for ( std::size_t i = 0; i < rows.size(); ++i )
    {
        if ( rows[i].model.dtype != DataType::fp8 )
            continue;
        std::vector<TransformerMeasurement> others = rows;
        others.erase( others.begin() + long( i ) );
        TransformerConstants c = shipped;
        c.fp8_gemm_eff = fitFp8GemmEfficiency( shipped, others );
        loo += fp8Mape( c, rows, long( i ) );
        ++n;
    }
    ResultTable t( { "constant", "shipped", "fitted_on_all", "mape_shipped_pct", "mape_fitted_pct",
                     "mape_leave_one_out_pct" } );
    t.addRow( { "fp8_gemm_eff", shipped.fp8_gemm_eff, all.fp8_gemm_eff, fp8Mape( shipped, rows ),
                fp8Mape( all, rows ), n > 0 ? loo / n : 0.0 } );
    // The same constant from the H100's measured fp8 GEMMs alone: no run is fitted on, so every
    // run is held out and the last two columns agree.
    TransformerConstants gemms = shipped;
    gemms.fp8_gemm_eff = fp8GemmEfficiencyFromGemms( shipped, h100, h100_gemms );
    const double from_gemms = fp8Mape( gemms, rows );
    t.addRow( { "fp8_gemm_eff from H100 GEMMs", shipped.fp8_gemm_eff, gemms.fp8_gemm_eff,
                fp8Mape( shipped, rows ), from_gemms, from_gemms } );
    ctx.print() << "\n";
    t.print( ctx.print(), format );
}

} // namespace

void printPublishedTable( const CommandContext& ctx, OutputFormat format,
                          const std::string& data_dir, const Platform& h100,
                          const std::string& h100_gemms_dir )
{
    const std::vector<TransformerMeasurement> rows =
        readPublishedMeasurements( data_dir + "/published_h100_dev.csv", h100 );
    ResultTable t( { "set", "line", "case", "measured_tflops_per_gpu", "predicted_tflops_per_gpu",
                     "measured_ms", "predicted_ms", "error_pct", "peak_memory_GiB", "feasible" } );
    std::map<std::string, std::vector<double>> ape;
    for ( const TransformerMeasurement& m : rows )
    {
        const TransformerOperatorCost ops =
            transformerOperatorCost( transformerOperatorCase( m.platform.gpu, m.model, m.config ) );
        const TransformerStepSummary s =
            predictTransformerStep( m.platform, m.model, m.config, ops );
        const int gpus = m.config.numGpus();
        TransformerStepSummary measured = s;
        measured.iteration_ms = m.measured_ms;
        const double error = 100.0 * ( s.iteration_ms - m.measured_ms ) / m.measured_ms;
        ape[m.set].push_back( std::fabs( error ) );
        t.addRow(
            { m.set, static_cast<long long>( m.line ), m.label,
              transformerThroughput( measured, m.platform.gpu, gpus, m.model.dtype, 0.0 )
                  .tflops_per_gpu,
              transformerThroughput( s, m.platform.gpu, gpus, m.model.dtype, 0.0 ).tflops_per_gpu,
              m.measured_ms, s.iteration_ms, error, s.peak_memory_GiB,
              static_cast<long long>( s.feasible ) } );
    }
    t.print( ctx.print(), format );
    ResultTable summary( { "set", "rows", "mape_pct", "max_ape_pct" } );
    for ( const auto& [set, errors] : ape )
    {
        double sum = 0.0, worst = 0.0;
        for ( double e : errors )
        {
            sum += e;
            worst = std::fmax( worst, e );
        }
        summary.addRow(
            { set, static_cast<long long>( errors.size() ), sum / errors.size(), worst } );
    }
    ctx.print() << "\n";
    summary.print( ctx.print(), format );
    printFp8Fit( ctx, format, rows, h100.gpu,
                 publishedShapeMeasurements( h100_gemms_dir + "/gemm_aligned_a.csv",
                                             h100_gemms_dir + "/published_shapes.csv", h100.gpu ) );
}

} // namespace shardsweep
