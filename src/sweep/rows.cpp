// Column tables of the results file and the conversion of kernel results into rows.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <limits>
#include <optional>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
#include <shardsweep/sweep/rows.hpp>

namespace shardsweep
{

namespace
{

template <class Row, class Field>
ColumnSpec column( const std::string& name, Field Row::*member, const std::string& units,
                   const std::string& codes = "" )
{
    // offsetof through a member pointer on a value-initialised object (rows are standard layout).
    static const Row probe{};
    const auto* base = reinterpret_cast<const char*>( &probe );
    const auto* field = reinterpret_cast<const char*>( &( probe.*member ) );
    return ColumnSpec{ name, h5::typeOf<Field>(), std::size_t( field - base ), units, codes };
}

template <class Row, std::size_t N>
void arrayColumns( std::vector<ColumnSpec>& out, double ( Row::*member )[N],
                   const std::vector<std::string>& names, const std::string& units )
{
    static const Row probe{};
    const auto* base = reinterpret_cast<const char*>( &probe );
    const auto* field = reinterpret_cast<const char*>( &( probe.*member ) );
    for ( std::size_t k = 0; k < N; ++k )
        out.push_back( ColumnSpec{ names[k], h5::Type::f64,
                                   std::size_t( field - base ) + k * sizeof( double ), units,
                                   "" } );
}

} // namespace

std::size_t typeBytes( h5::Type type )
{
    switch ( type )
    {
    case h5::Type::i8:
    case h5::Type::u8:
        return 1;
    case h5::Type::i32:
    case h5::Type::u32:
        return 4;
    default:
        return 8;
    }
}

double columnValue( const ColumnSpec& c, const void* row )
{
    const char* p = static_cast<const char*>( row ) + c.offset;
    auto load = [p]( auto v )
    {
        std::memcpy( &v, p, sizeof( v ) );
        return double( v );
    };
    switch ( c.type )
    {
    case h5::Type::i8:
        return load( std::int8_t() );
    case h5::Type::u8:
        return load( std::uint8_t() );
    case h5::Type::i32:
        return load( std::int32_t() );
    case h5::Type::u32:
        return load( std::uint32_t() );
    case h5::Type::i64:
        return load( std::int64_t() );
    case h5::Type::u64:
        return load( std::uint64_t() );
    case h5::Type::f64:
        return load( double() );
    }
    return 0.0;
}

const std::vector<ColumnSpec>& scenarioColumns()
{
    static const std::vector<ColumnSpec> columns = []
    {
        using R = ScenarioRow;
        std::vector<ColumnSpec> c = {
            column( "done", &R::done, "1" ),
            column( "status", &R::status, "1" ),
            column( "workload", &R::workload, "code", "workloads" ),
            column( "platform", &R::platform, "code", "platforms" ),
            column( "planner", &R::planner, "code", "planners" ),
            column( "cost_model", &R::cost_model, "code", "cost_models" ),
            column( "task_protocol", &R::task_protocol, "code", "task_protocols" ),
            column( "generator", &R::generator, "code", "generators" ),
            column( "task_index", &R::task_index, "1" ),
            column( "task_seed", &R::task_seed, "1" ),
            column( "planner_seed", &R::planner_seed, "1" ),
            column( "global_batch", &R::global_batch, "samples" ),
            column( "gpu_count", &R::gpu_count, "GPUs" ),
            column( "memory_cap_GiB", &R::memory_cap_GiB, "GiB" ),
            column( "num_tables", &R::num_tables, "tables" ),
            column( "num_shards", &R::num_shards, "shards" ),
            column( "num_gpus_rows", &R::num_gpus_rows, "rows" ),
            column( "gpu_row_offset", &R::gpu_row_offset, "row" ),
            column( "shard_row_offset", &R::shard_row_offset, "row" ),
            column( "feasible", &R::feasible, "1" ),
            column( "overflow_gpu", &R::overflow_gpu, "GPU" ),
            column( "overflow_GiB", &R::overflow_GiB, "GiB" ),
            column( "max_memory_GiB", &R::max_memory_GiB, "GiB" ),
            column( "iteration_ms", &R::iteration_ms, "ms" ),
            column( "lower_bound_ms", &R::lower_bound_ms, "ms" ),
            column( "exposed_comm_ms", &R::exposed_comm_ms, "ms" ),
        };
        arrayColumns( c, &R::phase_ms, enumNameList<Phase>( "_ms" ), "ms" );
        const std::vector<ColumnSpec> transformer = {
            column( "workload_kind", &R::workload_kind, "code", "workload_kinds" ),
            column( "tp", &R::tp, "GPUs" ),
            column( "pp", &R::pp, "stages" ),
            column( "dp", &R::dp, "replicas" ),
        };
        c.insert( c.end(), transformer.begin(), transformer.end() );
        static const R probe{};
        const auto* base = reinterpret_cast<const char*>( &probe );
        for ( int k = 0; k < kNumParallelFields; ++k )
        {
            const ParallelField& f = kParallelFields[k];
            const auto* field = reinterpret_cast<const char*>( &probe.parallel[k] );
            c.push_back(
                ColumnSpec{ f.key, h5::Type::i32, std::size_t( field - base ), f.unit, f.table } );
        }
        c.push_back( column( "peak_memory_stage", &R::peak_memory_stage, "stage" ) );
        arrayColumns( c, &R::transformer_phase_ms, enumNameList<TransformerPhase>( "_ms" ), "ms" );
        c.push_back( column( "model_flops", &R::model_flops, "FLOP" ) );
        return c;
    }();
    return columns;
}

const std::vector<ColumnSpec>& gpuColumns()
{
    static const std::vector<ColumnSpec> columns = []
    {
        using R = GpuRow;
        std::vector<ColumnSpec> c = { column( "scenario_id", &R::scenario_id, "id" ),
                                      column( "gpu", &R::gpu, "GPU" ) };
        arrayColumns( c, &R::phase_ms, enumNameList<Phase>( "_ms" ), "ms" );
        c.push_back( column( "memory_GiB", &R::memory_GiB, "GiB" ) );
        return c;
    }();
    return columns;
}

const std::vector<ColumnSpec>& shardColumns()
{
    static const std::vector<ColumnSpec> columns = []
    {
        using R = ShardRow;
        std::vector<ColumnSpec> c = {
            column( "scenario_id", &R::scenario_id, "id" ),
            column( "shard", &R::shard, "1" ),
            column( "table", &R::table, "1" ),
            column( "table_row", &R::table_row, "row" ),
            column( "dim", &R::dim, "elements" ),
            column( "dtype", &R::dtype, "code", "dtypes" ),
            column( "sharding_type", &R::sharding_type, "code", "sharding_types" ),
            column( "compute_kernel", &R::compute_kernel, "code", "compute_kernels" ),
            column( "cache_fraction", &R::cache_fraction, "1" ),
            column( "gpu", &R::gpu, "GPU" ),
            column( "row_offset", &R::row_offset, "rows" ),
            column( "num_rows", &R::num_rows, "rows" ),
            column( "col_offset", &R::col_offset, "columns" ),
            column( "num_cols", &R::num_cols, "columns" ),
            column( "fwd_ms", &R::fwd_ms, "ms" ),
            column( "bwd_ms", &R::bwd_ms, "ms" ),
        };
        return c;
    }();
    return columns;
}

const std::vector<ColumnSpec>& tableColumns()
{
    static const std::vector<ColumnSpec> columns = []
    {
        using R = TableRow;
        std::vector<ColumnSpec> c = {
            column( "workload", &R::workload, "code", "workloads" ),
            column( "generator", &R::generator, "1" ),
            column( "index", &R::index, "1" ),
            column( "rows", &R::rows, "rows" ),
            column( "pooling_factor", &R::pooling_factor, "lookups/sample" ),
            column( "distribution", &R::distribution, "code", "distributions" ),
            column( "zipf_alpha", &R::zipf_alpha, "1" ),
        };
        std::vector<std::string> bins;
        for ( int j = 0; j < kReuseBins; ++j )
            bins.push_back( "bin_" + std::to_string( j ) );
        arrayColumns( c, &R::bins, bins, "fraction" );
        return c;
    }();
    return columns;
}

TableRow tableRow( const CatalogTable& table )
{
    const TableSpec& t = *table.table;
    TableRow r;
    r.rows = t.rows;
    r.workload = table.workload;
    r.generator = table.generator;
    r.index = table.index;
    r.distribution = static_cast<std::uint8_t>( t.distribution );
    r.pooling_factor = t.pooling_factor;
    r.zipf_alpha = t.zipf_alpha;
    std::copy( t.reuse_histogram, t.reuse_histogram + kReuseBins, r.bins );
    return r;
}

SweepDetail parseSweepDetail( const std::string& text )
{
    if ( const std::optional<SweepDetail> detail = enumFromName<SweepDetail>( text ) )
        return *detail;
    throw UsageError( "--detail: expected " + enumChoices<SweepDetail>( ", ", " or " ) +
                      ", found '" + text + "'" );
}

void setParallelColumns( ScenarioRow& row, const ParallelConfig& config )
{
    row.tp = config.tp;
    row.pp = config.pp;
    row.dp = config.dp;
    for ( int k = 0; k < kNumParallelFields; ++k )
        row.parallel[k] = kParallelFields[k].get( config );
}

void fillResultRows( ScenarioRow& row, const ScenarioSpec& scenario, const Plan* plan,
                     const ScenarioResult* result, SweepDetail detail, std::vector<GpuRow>& gpus,
                     std::vector<ShardRow>& shards )
{
    static const Workload no_workload{};
    const Workload& workload = scenario.workload ? *scenario.workload : no_workload;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    row.done = 1;
    row.workload_kind = static_cast<std::int32_t>( workload.kind );
    std::fill( row.transformer_phase_ms, row.transformer_phase_ms + kNumTransformerPhases, nan );
    row.model_flops = nan;
    row.num_tables = static_cast<std::int32_t>( workload.tables.size() );
    row.num_shards = plan ? static_cast<std::int32_t>( plan->shards.size() ) : 0;
    if ( !result )
    {
        row.feasible = 0;
        row.overflow_gpu = -1;
        row.overflow_GiB = nan;
        row.max_memory_GiB = nan;
        row.iteration_ms = nan;
        row.exposed_comm_ms = nan;
        std::fill( row.phase_ms, row.phase_ms + kNumPhases, nan );
        row.num_shards = 0;
        row.num_gpus_rows = 0;
        return;
    }
    row.status = static_cast<std::int8_t>( ScenarioStatus::evaluated );
    if ( result->kind == WorkloadKind::transformer )
    {
        const ParallelConfig& c = result->parallel;
        const TransformerStepSummary& t = result->transformer;
        row.feasible = result->feasible ? 1 : 0;
        row.overflow_gpu = -1;
        row.overflow_GiB = result->overflow_GiB;
        row.iteration_ms = result->iteration_ms;
        row.exposed_comm_ms = result->exposed_comm_ms;
        std::fill( row.phase_ms, row.phase_ms + kNumPhases, nan );
        row.max_memory_GiB = t.peak_memory_GiB;
        row.num_shards = 0;
        row.num_gpus_rows = 0; // no per-GPU rows: the stages' GPUs are alike (evaluate prints them)
        setParallelColumns( row, c );
        row.peak_memory_stage = t.peak_memory_stage;
        std::copy( t.phase_ms, t.phase_ms + kNumTransformerPhases, row.transformer_phase_ms );
        row.model_flops = t.model_flops;
        return;
    }
    row.feasible = result->feasible ? 1 : 0;
    row.overflow_gpu = result->overflow_gpu;
    row.overflow_GiB = result->overflow_GiB;
    row.iteration_ms = result->iteration_ms;
    row.exposed_comm_ms = result->exposed_comm_ms;
    std::copy( result->phase_ms, result->phase_ms + kNumPhases, row.phase_ms );
    double max_memory = 0.0;
    for ( double m : result->gpu_memory_GiB )
        max_memory = std::max( max_memory, m );
    row.max_memory_GiB = max_memory;
    row.num_gpus_rows = detail >= SweepDetail::gpus ? result->num_gpus : 0;
    if ( detail >= SweepDetail::gpus )
    {
        for ( int g = 0; g < result->num_gpus; ++g )
        {
            GpuRow r;
            r.scenario_id = row.id;
            r.gpu = g;
            for ( int p = 0; p < kNumPhases; ++p )
                r.phase_ms[p] = result->gpu_phase_ms[std::size_t( g ) * kNumPhases + p];
            r.memory_GiB = result->gpu_memory_GiB[g];
            gpus.push_back( r );
        }
    }
    if ( detail >= SweepDetail::all && plan )
    {
        for ( std::size_t s = 0; s < plan->shards.size(); ++s )
        {
            const ShardSpec& spec = plan->shards[s];
            const TableSpec& t = workload.tables[spec.table];
            const TablePlan& tp = plan->tables[spec.table];
            ShardRow r;
            r.scenario_id = row.id;
            r.shard = static_cast<std::int32_t>( s );
            r.table = spec.table;
            r.table_row = scenario.tableCatalogRow( spec.table );
            r.dim = t.dim;
            r.dtype = static_cast<std::uint8_t>( t.dtype );
            r.sharding_type = static_cast<std::uint8_t>( tp.sharding );
            r.compute_kernel = static_cast<std::uint8_t>( tp.kernel );
            r.cache_fraction = tp.cache_fraction;
            r.gpu = spec.gpu;
            r.row_offset = spec.row_offset;
            r.num_rows = spec.num_rows;
            r.col_offset = spec.col_offset;
            r.num_cols = spec.num_cols;
            r.fwd_ms = result->shard_fwd_ms[s];
            r.bwd_ms = result->shard_bwd_ms[s];
            shards.push_back( r );
        }
    }
}

} // namespace shardsweep
