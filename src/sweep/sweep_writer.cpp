// Lays the journals out into OUT.h5: every rank writes its own rows, collectively, at offsets
// that depend only on scenario ids and row counts (docs/HDF5_LAYOUT.md, "Determinism").
#include "column_scatter.hpp"
#include "sweep_internal.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <memory>
#include <shardsweep/io/hdf5.hpp>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <shardsweep/version.hpp>
#include <stdexcept>

namespace shardsweep
{
namespace detail
{

namespace
{

constexpr std::uint64_t kChunkElements = 1 << 17; // ~1 MiB of doubles (hpc_stack.md §2.2)

//! The fill value of a column: what a default row holds, NaN for floating point.
template <class Row>
std::vector<char> fillOf( const ColumnSpec& c )
{
    static const Row probe{};
    std::vector<char> bytes( 8 );
    if ( c.type == h5::Type::f64 )
    {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        std::memcpy( bytes.data(), &nan, 8 );
    }
    else
        std::memcpy( bytes.data(), reinterpret_cast<const char*>( &probe ) + c.offset,
                     typeBytes( c.type ) );
    return bytes;
}

template <class Row>
std::vector<h5::Dataset> createColumns( const h5::Group& group,
                                        const std::vector<ColumnSpec>& columns, std::uint64_t size )
{
    std::vector<h5::Dataset> sets;
    for ( const auto& c : columns )
    {
        auto fill = fillOf<Row>( c );
        sets.push_back(
            group.createDatasetOfType( c.name, c.type, size, kChunkElements, fill.data(), 0 ) );
        h5::writeAttribute( sets.back().id(), "units", c.units );
        if ( !c.codes.empty() )
            h5::writeAttribute( sets.back().id(), "codes", "/names/" + c.codes );
    }
    return sets;
}

//! Where the shard rows of one held scenario go: rows [source, source + count) of its journal
//! batch, to row `dest` of this rank's shard columns in the window.
struct ShardSegment
{
    std::size_t batch, source, count, dest;
};

//! Streams the shard rows of every loaded batch from its journal record into the columns (one
//! read of the rows, scattered block by block while in cache; the checksum checked as they go).
void scatterShards( const std::vector<RecordRef>& records,
                    const std::vector<std::size_t>& record_of,
                    const std::vector<JournalBatch>& loaded, std::vector<ShardSegment>& segments,
                    ColumnBuffers& out, std::vector<ShardRow>& block )
{
    std::sort( segments.begin(), segments.end(),
               []( const ShardSegment& x, const ShardSegment& y )
               { return x.batch != y.batch ? x.batch < y.batch : x.source < y.source; } );
    constexpr std::size_t kBlockRows = 512; // 120 KiB: stays in L2 while scattered
    auto seg = segments.begin();
    for ( std::size_t b = 0; b < record_of.size(); ++b )
    {
        const RecordRef& record = records[record_of[b]];
        while ( seg != segments.end() && seg->batch < b )
            ++seg; // none left: every row of a batch is in its record
        readJournalShards( record.path, record.info, loaded[b], block, kBlockRows,
                           [&]( std::size_t first, std::size_t count )
                           {
                               const std::size_t end = first + count;
                               for ( ; seg != segments.end() && seg->batch == b; ++seg )
                               {
                                   // The part of this segment inside the block; the rest waits for
                                   // the next.
                                   const std::size_t lo = std::max( seg->source, first );
                                   const std::size_t hi = std::min( seg->source + seg->count, end );
                                   if ( lo < hi )
                                       scatterRows( block.data() + ( lo - first ), hi - lo,
                                                    seg->dest + ( lo - seg->source ),
                                                    shardColumns(), out );
                                   if ( seg->source + seg->count > end )
                                       break;
                               }
                           } );
    }
}

void addRun( std::vector<h5::Run>& runs, std::uint64_t offset, std::uint64_t count )
{
    if ( count == 0 )
        return;
    if ( !runs.empty() && runs.back().offset + runs.back().count == offset )
        runs.back().count += count;
    else
        runs.push_back( { offset, count } );
}

std::vector<std::string> enumNames( std::initializer_list<const char*> names )
{
    return std::vector<std::string>( names.begin(), names.end() );
}

//! One scenario held by this rank during a window, with where its rows are.
//! The row of a scenario outside the run's slice (not computed): the columns' fill values.
ScenarioRow notComputedRow()
{
    ScenarioRow row;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for ( const auto& c : scenarioColumns() )
        if ( c.type == h5::Type::f64 )
            std::memcpy( reinterpret_cast<char*>( &row ) + c.offset, &nan, sizeof( nan ) );
    return row;
}

//! Rank 0 writes the rows of the ids in [from, to) (outside the slice) as not computed.
void addNotComputed( std::uint64_t from, std::uint64_t to, std::vector<ScenarioRow>& rows,
                     std::vector<h5::Run>& runs )
{
    static const ScenarioRow fill = notComputedRow();
    for ( std::uint64_t id = from; id < to; ++id )
    {
        rows.push_back( fill );
        rows.back().id = id;
        addRun( runs, id, 1 );
    }
}

struct Held
{
    ScenarioRow row;
    std::size_t batch = 0; //!< index into the loaded batches
    std::size_t gpu_begin = 0, shard_begin = 0;
};

} // namespace

double writeResultsFile( MPI_Comm comm, const SweepProblem& problem, const SweepOptions& options,
                         std::uint64_t num_scenarios, std::vector<RecordRef> records )
{
    const double t0 = mpi::wtime();
    const bool with_gpus = options.detail >= SweepDetail::gpus;
    const bool with_shards = options.detail >= SweepDetail::all;
    std::sort( records.begin(), records.end(),
               []( const RecordRef& a, const RecordRef& b )
               { return a.info.first_id < b.info.first_id; } );
    std::int64_t local_gpu_rows = 0, local_shard_rows = 0;
    for ( const auto& r : records )
    {
        local_gpu_rows += r.info.num_gpus;
        local_shard_rows += r.info.num_shards;
    }
    const std::uint64_t gpu_rows = std::uint64_t( mpi::allreduceSum( local_gpu_rows, comm ) );
    const std::uint64_t shard_rows = std::uint64_t( mpi::allreduceSum( local_shard_rows, comm ) );

    auto file = h5::File::createParallel( options.output, comm );
    {
        auto root = file.root();
        auto scen_group = root.createGroup( "scenarios" );
        auto scen_sets = createColumns<ScenarioRow>( scen_group, scenarioColumns(), num_scenarios );
        std::vector<h5::Dataset> gpu_sets, shard_sets;
        if ( with_gpus )
            gpu_sets = createColumns<GpuRow>( root.createGroup( "gpus" ), gpuColumns(), gpu_rows );
        if ( with_shards )
            shard_sets =
                createColumns<ShardRow>( root.createGroup( "shards" ), shardColumns(), shard_rows );
        {
            auto names = root.createGroup( "names" );
            names.createStringDataset( "workloads", problem.workload_names );
            names.createStringDataset( "platforms", problem.platform_names );
            names.createStringDataset( "generators", problem.generator_names );
            names.createStringDataset( "planners", problem.planner_names );
            names.createStringDataset( "cost_models", problem.cost_model_names );
            names.createStringDataset( "task_protocols", problem.protocol_names );
            names.createStringDataset( "phases", schemaPhaseNames() );
            names.createStringDataset(
                "sharding_types",
                enumNames( { "table_wise", "column_wise", "row_wise", "table_row_wise",
                             "data_parallel", "table_column_wise", "grid_shard" } ) );
            names.createStringDataset( "compute_kernels",
                                       enumNames( { "hbm", "uvm", "uvm_caching", "dense" } ) );
            names.createStringDataset( "workload_kinds", enumNames( { "dlrm", "transformer" } ) );
            names.createStringDataset( "schedules", enumNames( { "1f1b", "gpipe" } ) );
            names.createStringDataset( "recomputes", enumNames( { "none", "selective", "full" } ) );
            names.createStringDataset( "modes", enumNames( { "train", "infer" } ) );
        }

        const std::uint64_t window = std::max<std::uint64_t>( options.finalize_window, 1 );
        const SliceRange slice =
            sliceRange( num_scenarios, options.slice_index, options.slice_count );
        std::uint64_t gpu_base = 0, shard_base = 0;
        // Batches read for a window (their scenario and GPU rows; shard rows are streamed
        // into the columns); kept across windows so that their memory is reused.
        std::vector<JournalBatch> loaded;
        std::size_t num_loaded = 0;
        std::vector<std::size_t> record_of; //!< of each loaded batch
        std::vector<Held> held;
        std::vector<std::int64_t> counts;
        ColumnBuffers scen_columns, gpu_columns, shard_columns;
        std::vector<ShardRow> block;
        std::vector<ScenarioRow> scen_rows;
        std::vector<RowSpan<GpuRow>> gpu_out;
        std::vector<ShardSegment> shard_out;
        for ( std::uint64_t a = 0; a < num_scenarios; a += window )
        {
            const std::uint64_t b = std::min( num_scenarios, a + window );
            // This rank's scenarios in [a, b), from every record that overlaps the window.
            num_loaded = 0;
            record_of.clear();
            held.clear();
            for ( std::size_t k = 0; k < records.size(); ++k )
            {
                const auto& info = records[k].info;
                if ( info.num_scenarios == 0 || info.first_id >= b || info.last_id < a )
                    continue;
                if ( num_loaded == loaded.size() )
                    loaded.emplace_back();
                readJournalRecordHead( records[k].path, info, loaded[num_loaded] );
                record_of.push_back( k );
                const JournalBatch& batch = loaded[num_loaded++];
                std::size_t g = 0, s = 0;
                for ( const auto& row : batch.scenarios )
                {
                    if ( row.id >= a && row.id < b )
                        held.push_back( { row, num_loaded - 1, g, s } );
                    g += std::size_t( row.num_gpus_rows );
                    s += with_shards ? std::size_t( row.num_shards ) : 0;
                }
            }
            std::sort( held.begin(), held.end(),
                       []( const Held& x, const Held& y ) { return x.row.id < y.row.id; } );
            const std::uint64_t n = b - a;
            counts.assign( 3 * n, 0 );
            for ( const auto& h : held )
            {
                const std::uint64_t i = h.row.id - a;
                counts[3 * i] = h.row.num_gpus_rows;
                counts[3 * i + 1] = with_shards ? h.row.num_shards : 0;
                counts[3 * i + 2] += 1;
            }
            mpi::allreduceSum( counts.data(), counts.size(), comm );
            for ( std::uint64_t i = 0; i < n; ++i )
            {
                const bool mine = a + i >= slice.first && a + i < slice.end;
                if ( counts[3 * i + 2] != ( mine ? 1 : 0 ) )
                    throw std::runtime_error( fmt::format(
                        "scenario {} appears {} times in the journals (expected {})", a + i,
                        counts[3 * i + 2], mine ? "once" : "never: outside the slice" ) );
            }
            // Offsets: prefix sums in id order.
            std::vector<std::uint64_t> gpu_offset( n ), shard_offset( n );
            std::uint64_t g = gpu_base, s = shard_base;
            for ( std::uint64_t i = 0; i < n; ++i )
            {
                gpu_offset[i] = g;
                shard_offset[i] = s;
                g += std::uint64_t( counts[3 * i] );
                s += std::uint64_t( counts[3 * i + 1] );
            }
            std::vector<h5::Run> scen_runs, gpu_runs, shard_runs;
            scen_rows.clear();
            gpu_out.clear();
            shard_out.clear();
            std::size_t local_gpus = 0, local_shards = 0;
            // Ids before the slice, then the slice's rows (sorted), then ids after it.
            const bool writes_outside = mpi::rank( comm ) == 0;
            if ( writes_outside )
                addNotComputed( a, std::min( b, slice.first ), scen_rows, scen_runs );
            for ( auto& h : held )
            {
                const std::uint64_t i = h.row.id - a;
                h.row.gpu_row_offset = std::int64_t( gpu_offset[i] );
                h.row.shard_row_offset = std::int64_t( shard_offset[i] );
                scen_rows.push_back( h.row );
                addRun( scen_runs, h.row.id, 1 );
                const JournalBatch& batch = loaded[h.batch];
                if ( with_gpus )
                {
                    addRun( gpu_runs, gpu_offset[i], std::uint64_t( h.row.num_gpus_rows ) );
                    gpu_out.push_back(
                        { batch.gpus.data() + h.gpu_begin, std::size_t( h.row.num_gpus_rows ) } );
                    local_gpus += std::size_t( h.row.num_gpus_rows );
                }
                if ( with_shards )
                {
                    addRun( shard_runs, shard_offset[i], std::uint64_t( h.row.num_shards ) );
                    if ( h.row.num_shards > 0 )
                        shard_out.push_back( { h.batch, h.shard_begin,
                                               std::size_t( h.row.num_shards ), local_shards } );
                    local_shards += std::size_t( h.row.num_shards );
                }
            }
            if ( writes_outside )
                addNotComputed( std::max( a, slice.end ), b, scen_rows, scen_runs );
            // Every record is streamed (its checksum checked) even without shard rows.
            shard_columns.resize( shardColumns(), local_shards );
            scatterShards( records, record_of, loaded, shard_out, shard_columns, block );
            scen_columns.resize( scenarioColumns(), scen_rows.size() );
            scatterRows( scen_rows.data(), scen_rows.size(), 0, scenarioColumns(), scen_columns );
            writeColumns( scen_sets, scenarioColumns(), scen_runs, scen_columns );
            if ( with_gpus )
            {
                gpu_columns.resize( gpuColumns(), local_gpus );
                std::size_t at = 0;
                for ( const RowSpan<GpuRow>& span : gpu_out )
                {
                    scatterRows( span.first, span.count, at, gpuColumns(), gpu_columns );
                    at += span.count;
                }
                writeColumns( gpu_sets, gpuColumns(), gpu_runs, gpu_columns );
            }
            if ( with_shards )
                writeColumns( shard_sets, shardColumns(), shard_runs, shard_columns );
            gpu_base = g;
            shard_base = s;
        }

        // Attributes last: `complete` says the datasets above are whole.
        const auto id = root.id();
        h5::writeAttribute( id, "schema_version", std::int64_t( kSweepSchemaVersion ) );
        h5::writeAttribute( id, "shardsweep_version", std::string( versionString() ) );
        h5::writeAttribute( id, "git_hash", std::string( gitHash() ) );
        h5::writeAttribute( id, "config", problem.config_text );
        h5::writeAttribute( id, "config_file", problem.config_file );
        h5::writeAttribute( id, "config_hash", fmt::format( "{:016x}", problem.config_hash ) );
        h5::writeAttribute( id, "num_scenarios", std::int64_t( num_scenarios ) );
        h5::writeAttribute( id, "num_done", std::int64_t( slice.end - slice.first ) );
        h5::writeAttribute( id, "slice",
                            fmt::format( "{}/{}", options.slice_index, options.slice_count ) );
        h5::writeAttribute( id, "slice_first_id", std::int64_t( slice.first ) );
        h5::writeAttribute( id, "slice_end_id", std::int64_t( slice.end ) );
        h5::writeAttribute( id, "num_ranks", std::int64_t( mpi::size( comm ) ) );
        h5::writeAttribute( id, "kokkos_backend",
                            std::string( Kokkos::DefaultExecutionSpace::name() ) );
        h5::writeAttribute( id, "detail", std::string( sweepDetailName( options.detail ) ) );
        h5::writeAttribute( id, "command_line", options.command_line );
        h5::writeAttribute(
            id, "units", std::string( "times in ms, memory in GiB (2^30 B), batch in samples" ) );
        h5::writeAttribute( id, "complete", std::int64_t( 1 ) );
    }
    file.close();
    if ( mpi::rank( comm ) == 0 )
        h5::syncPath( options.output );
    return mpi::wtime() - t0;
}

//---------------------------------------------------------------------------------------------//
namespace
{

void copyAttributes( h5::Id from, h5::Id to )
{
    for ( const auto& name : h5::attributeNames( from ) )
    {
        try
        {
            h5::writeAttribute( to, name, h5::readStringAttribute( from, name ) );
        }
        catch ( const std::runtime_error& )
        {
            h5::writeAttribute( to, name, h5::readIntAttribute( from, name ) );
        }
    }
}

} // namespace

void compressResultsFile( const std::string& path )
{
    const std::string tmp = path + ".compress.tmp";
    {
        auto in = h5::File::openSerial( path );
        auto out = h5::File::createSerial( tmp );
        {
            auto in_root = in.root();
            auto out_root = out.root();
            copyAttributes( in_root.id(), out_root.id() );
            for ( const auto& group_name : in_root.members() )
            {
                auto src = in_root.openGroup( group_name );
                auto dst = out_root.createGroup( group_name );
                for ( const auto& name : src.members() )
                {
                    if ( group_name == "names" )
                    {
                        dst.createStringDataset( name, src.readStringDataset( name ) );
                        continue;
                    }
                    auto set = src.openDataset( name );
                    const auto type = set.type();
                    const std::uint64_t n = set.size();
                    const std::size_t bytes =
                        type == h5::Type::f64 || type == h5::Type::i64 || type == h5::Type::u64
                            ? 8
                            : ( type == h5::Type::i32 || type == h5::Type::u32 ? 4 : 1 );
                    std::vector<char> fill( 8, 0 );
                    auto copy =
                        dst.createDatasetOfType( name, type, n, kChunkElements, fill.data(), 4 );
                    copyAttributes( set.id(), copy.id() );
                    // Slices keep memory flat whatever the file size.
                    std::vector<char> slice;
                    for ( std::uint64_t at = 0; at < n; at += kChunkElements * 8 )
                    {
                        const std::uint64_t count = std::min( n - at, kChunkElements * 8 );
                        slice.resize( count * bytes );
                        set.readRaw( { { at, count } }, type, slice.data() );
                        copy.writeRaw( { { at, count } }, type, slice.data(), false );
                    }
                }
            }
        }
        out.close();
        in.close();
    }
    h5::syncPath( tmp );
    std::filesystem::rename( tmp, path );
}

} // namespace detail
} // namespace shardsweep
