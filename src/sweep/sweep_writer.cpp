// Lays the journals out into OUT.h5: every rank writes its own rows, independently, at offsets
// that depend only on scenario ids and row counts (docs/HDF5_LAYOUT.md, "Determinism").
#include "column_scatter.hpp"
#include "sweep_internal.hpp"
#include "window_layout.hpp"
#include "window_prefetcher.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <memory>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/domain/names.hpp>
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

constexpr std::uint64_t kChunkElements =
    1 << 17; // ~1 MiB of doubles (HDF5 1.10 chunk-cache advice: docs/HDF5_LAYOUT.md)

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

//! The /names group: what the code columns' values mean (and the catalogue's table names when
//! /tables is written).
void writeNames( const h5::Group& root, const SweepProblem& problem, bool with_tables )
{
    auto names = root.createGroup( "names" );
    names.createStringDataset( "workloads", problem.workload_names );
    names.createStringDataset( "platforms", problem.platform_names );
    names.createStringDataset( "generators", problem.generator_names );
    names.createStringDataset( "planners", problem.planner_names );
    names.createStringDataset( "cost_models", problem.cost_model_names );
    names.createStringDataset( "task_protocols", problem.protocol_names );
    names.createStringDataset( "phases", enumNameList<Phase>() );
    names.createStringDataset( "sharding_types", enumNameList<ShardingType>() );
    names.createStringDataset( "compute_kernels", enumNameList<ComputeKernel>() );
    names.createStringDataset( "workload_kinds", enumNameList<WorkloadKind>() );
    names.createStringDataset( "dtypes", enumNameList<DataType>() );
    names.createStringDataset( "distributions", enumNameList<AccessDistribution>() );
    for ( const ParallelField& f : kParallelFields )
        if ( f.kind == ParallelField::choice )
            names.createStringDataset( f.table, f.names() );
    if ( with_tables )
        names.createStringDataset( "tables", problem.table_names );
}

//! The /tables group (created by every rank): the catalogue's rows (hundreds), written by rank 0
//! alone.
void writeTableCatalog( const h5::Group& root, MPI_Comm comm, const SweepProblem& problem )
{
    auto sets = createColumns<TableRow>( root.createGroup( "tables" ), tableColumns(),
                                         problem.tables.size() );
    if ( mpi::rank( comm ) != 0 )
        return;
    ColumnBuffers buffers;
    buffers.resize( tableColumns(), problem.tables.size() );
    scatterRows( problem.tables.data(), problem.tables.size(), 0, tableColumns(), buffers );
    std::vector<h5::Run> runs;
    addRun( runs, 0, problem.tables.size() );
    writeColumns( sets, tableColumns(), runs, buffers );
}

//! The root's attributes, `complete` last: it says the datasets are whole.
void writeRootAttributes( h5::Id id, MPI_Comm comm, const SweepProblem& problem,
                          const SweepOptions& options, std::uint64_t num_scenarios,
                          const SliceRange& slice )
{
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
    h5::writeAttribute( id, "kokkos_backend", executionSpaceName( options.backend ) );
    h5::writeAttribute( id, "detail", std::string( nameOf( options.detail ) ) );
    h5::writeAttribute( id, "command_line", options.command_line );
    h5::writeAttribute( id, "units",
                        std::string( "times in ms, memory in GiB (2^30 B), batch in samples" ) );
    h5::writeAttribute( id, "complete", std::int64_t( 1 ) );
}

//! Everything of the results file but its creation and close. Returns the scenarios found twice.
std::uint64_t buildResultsFile( const h5::File& file, MPI_Comm comm, const SweepProblem& problem,
                                const SweepOptions& options, std::uint64_t num_scenarios,
                                const std::vector<RecordRef>& records, std::uint64_t gpu_rows,
                                std::uint64_t shard_rows )
{
    const bool with_gpus = options.detail >= SweepDetail::gpus;
    const bool with_shards = options.detail >= SweepDetail::all;
    auto root = file.root();
    auto scen_group = root.createGroup( "scenarios" );
    auto scen_sets = createColumns<ScenarioRow>( scen_group, scenarioColumns(), num_scenarios );
    std::vector<h5::Dataset> gpu_sets, shard_sets;
    if ( with_gpus )
        gpu_sets = createColumns<GpuRow>( root.createGroup( "gpus" ), gpuColumns(), gpu_rows );
    if ( with_shards )
        shard_sets =
            createColumns<ShardRow>( root.createGroup( "shards" ), shardColumns(), shard_rows );
    writeNames( root, problem, with_shards );
    if ( with_shards )
        writeTableCatalog( root, comm, problem );

    WindowLayout layout( comm, records, options, num_scenarios );
    // Two windows alternate: the prefetcher's thread reads and scatters one while this thread
    // writes the other's columns. Declared before the prefetcher, which must stop first.
    WindowRows windows[2];
    WindowPrefetcher prefetcher( records );
    // The file's pages go to storage while later windows are laid out: the final fsync had all
    // of them (~260 MB, ~0.1 s) left to write.
    h5::Writeback writeback( options.output );
    // What went wrong on this rank since the last agreement point (reading a record, scattering
    // or writing a window): every window's prepare() is one, the end of the loop the last. A
    // failing rank goes on to the next agreement point without reading or writing more, where
    // every rank learns of it and throws: no rank waits in a collective call for one that left.
    std::string failure;
    // Window k + 1 is prepared and its scatter started before window k's writes.
    if ( num_scenarios > 0 )
    {
        layout.prepare( 0, windows[0], failure );
        guarded( failure, [&] { prefetcher.start( windows[0] ); } );
    }
    for ( std::uint64_t a = 0, k = 0; a < num_scenarios; a = layout.end( a ), ++k )
    {
        guarded( failure, [&] { prefetcher.wait(); } ); // window k's columns (or its read error)
        WindowRows& w = windows[k % 2];
        if ( layout.end( a ) < num_scenarios )
        {
            layout.prepare( layout.end( a ), windows[( k + 1 ) % 2], failure );
            guarded( failure, [&] { prefetcher.start( windows[( k + 1 ) % 2] ); } );
        }
        guarded( failure,
                 [&]
                 {
                     writeColumns( scen_sets, scenarioColumns(), w.scen_runs, w.scen_columns );
                     if ( with_gpus )
                         writeColumns( gpu_sets, gpuColumns(), w.gpu_runs, w.gpu_columns );
                     if ( with_shards )
                         writeColumns( shard_sets, shardColumns(), w.shard_runs, w.shard_columns );
                 } );
        writeback.start();
    }
    mpi::throwIfAnyFailed( failure, comm );
    // Copies of a scenario counted their rows twice in the sizes the datasets were created with.
    if ( layout.duplicates() > 0 )
    {
        for ( const auto& set : gpu_sets )
            set.shrink( layout.gpuRows() );
        for ( const auto& set : shard_sets )
            set.shrink( layout.shardRows() );
    }
    writeRootAttributes( root.id(), comm, problem, options, num_scenarios, layout.slice() );
    return layout.duplicates();
}

} // namespace

ResultsFileReport writeResultsFile( MPI_Comm comm, const SweepProblem& problem,
                                    const SweepOptions& options, std::uint64_t num_scenarios,
                                    std::vector<RecordRef> records )
{
    const double t0 = mpi::wtime();
    std::sort( records.begin(), records.end(),
               []( const RecordRef& a, const RecordRef& b )
               { return a.info.first_id < b.info.first_id; } );
    std::int64_t local_gpu_rows = 0, local_shard_rows = 0;
    for ( const auto& r : records )
    {
        local_gpu_rows += r.info.num_gpus;
        local_shard_rows += r.info.num_shards;
    }
    // Upper bounds when scenarios have copies in several records (cut to size at the end).
    const std::uint64_t gpu_rows = std::uint64_t( mpi::allreduceSum( local_gpu_rows, comm ) );
    const std::uint64_t shard_rows = std::uint64_t( mpi::allreduceSum( local_shard_rows, comm ) );

    ResultsFileReport report;
    auto file = h5::File::createParallel( options.output, comm );
    try
    {
        report.duplicates = buildResultsFile( file, comm, problem, options, num_scenarios, records,
                                              gpu_rows, shard_rows );
    }
    catch ( const CollectiveError& )
    {
        // Every rank threw at the same agreement point: all of them reach the collective close.
        file.close();
        throw;
    }
    catch ( const std::exception& e )
    {
        // Only this rank failed (outside the window loop: creating datasets, the catalogue, the
        // attributes). The others are in, or on their way to, a collective call that this rank
        // will never make, and closing the file is one more: end the job instead.
        mpi::abortJob( std::string( e.what() ) + " (while building " + options.output +
                           "; the journals are kept: rerun the same command)",
                       kExitFailure, comm );
    }
    file.close();
    if ( mpi::rank( comm ) == 0 )
        h5::syncPath( options.output );
    report.seconds = mpi::wtime() - t0;
    return report;
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
