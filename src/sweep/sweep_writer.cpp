// Lays the journals out into OUT.h5: every rank writes its own rows, independently, at offsets
// that depend only on scenario ids and row counts (docs/HDF5_LAYOUT.md, "Determinism").
#include "column_scatter.hpp"
#include "sweep_internal.hpp"
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

//! One scenario held by this rank during a window: where its rows are in the loaded batches.
//! Small, so that sorting a window's scenarios by id moves 40 bytes each, not the row.
struct Held
{
    std::uint64_t id = 0;
    std::uint32_t batch = 0; //!< index into the loaded batches
    std::uint32_t row = 0;   //!< index into that batch's scenario rows
    std::int32_t gpus = 0, shards = 0;
    std::size_t gpu_begin = 0, shard_begin = 0;
    std::int64_t copy = 0; //!< which copy of the scenario: its journal, then its record's offset
};

//! Runs `step` unless this rank already failed since the last agreement; an exception becomes
//! this rank's `failure`, which the next agreement point reduces over the ranks.
template <class Step>
void guarded( std::string& failure, Step&& step )
{
    if ( !failure.empty() )
        return;
    try
    {
        step();
    }
    catch ( const std::exception& e )
    {
        failure = e.what();
    }
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
    names.createStringDataset( "phases", schemaPhaseNames() );
    names.createStringDataset(
        "sharding_types", enumNames( { "table_wise", "column_wise", "row_wise", "table_row_wise",
                                       "data_parallel", "table_column_wise", "grid_shard" } ) );
    names.createStringDataset( "compute_kernels",
                               enumNames( { "hbm", "uvm", "uvm_caching", "dense" } ) );
    names.createStringDataset( "workload_kinds", enumNames( { "dlrm", "transformer" } ) );
    names.createStringDataset( "schedules", enumNames( { "1f1b", "gpipe" } ) );
    names.createStringDataset( "recomputes", enumNames( { "none", "selective", "full" } ) );
    names.createStringDataset( "modes", enumNames( { "train", "infer" } ) );
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
    h5::writeAttribute( id, "kokkos_backend",
                        std::string( Kokkos::DefaultExecutionSpace::name() ) );
    h5::writeAttribute( id, "detail", std::string( sweepDetailName( options.detail ) ) );
    h5::writeAttribute( id, "command_line", options.command_line );
    h5::writeAttribute( id, "units",
                        std::string( "times in ms, memory in GiB (2^30 B), batch in samples" ) );
    h5::writeAttribute( id, "complete", std::int64_t( 1 ) );
}

//! Where every row of this rank goes, window after window of scenario ids. Windows start at the
//! slice's first id (a fresh run's batches start there: one window per record) and come every
//! `size` ids from there; ids before it are in windows of their own.
class WindowLayout
{
  public:
    WindowLayout( MPI_Comm comm, const std::vector<RecordRef>& records, const SweepOptions& options,
                  std::uint64_t num_scenarios )
        : _comm( comm ), _records( records ), _num_scenarios( num_scenarios ),
          _slice( sliceRange( num_scenarios, options.slice_index, options.slice_count ) ),
          _with_gpus( options.detail >= SweepDetail::gpus ),
          _with_shards( options.detail >= SweepDetail::all ),
          _writes_outside( mpi::rank( comm ) == 0 )
    {
        // A few tens of MB of rows: with shard rows (~5 KB per 50-table scenario) 2048 ids,
        // without them 16384 (every window is a synchronisation and a write of every column: at
        // 2048 ids the rounds, not the bytes, made /scenarios-only files 1.6x slower on 2 ranks).
        const std::uint64_t batch = std::max<std::uint64_t>( options.batch_size, 1 );
        const std::uint64_t min_ids = _with_shards ? 2048 : 16384;
        _size = options.finalize_window > 0 ? options.finalize_window
                                            : ( min_ids + batch - 1 ) / batch * batch;
    }

    const SliceRange& slice() const { return _slice; }

    //! The end of the window that starts at id `a`.
    std::uint64_t end( std::uint64_t a ) const
    {
        return std::min( _num_scenarios,
                         a < _slice.first ? std::min( a + _size, _slice.first ) : a + _size );
    }

    //! Scenarios found in more than one record so far (one copy of each kept).
    std::uint64_t duplicates() const { return _duplicates; }
    //! GPU and shard rows laid out so far.
    std::uint64_t gpuRows() const { return _gpu_base; }
    std::uint64_t shardRows() const { return _shard_base; }

    //! This rank's scenarios in the window starting at `a`, from every record that overlaps it:
    //! reads their scenario and GPU rows into `w`, checks the ids over all ranks and works out
    //! where every row goes in the file and in the column buffers. Collective, and the window
    //! loop's agreement point: a `failure` of any rank since the last one (this rank's is set
    //! when reading fails) throws CollectiveError on every rank.
    void prepare( std::uint64_t a, WindowRows& w, std::string& failure )
    {
        const std::uint64_t b = end( a );
        guarded( failure, [&] { loadRecords( a, b, w ); } );
        const std::uint64_t n = b - a;
        // Per id: GPU rows, shard rows, copies; then the failure flag.
        _counts.assign( 3 * n + 1, 0 );
        for ( const auto& h : _held )
        {
            const std::uint64_t i = h.id - a;
            _counts[3 * i] = h.gpus;
            _counts[3 * i + 1] = h.shards;
            _counts[3 * i + 2] += 1;
        }
        _counts[3 * n] = failure.empty() ? 0 : 1;
        // The window's one synchronisation (its writes are independent): waited for without
        // spinning, so that on a node with more threads than cores the ranks still writing or
        // reading get the core of a rank that waits.
        mpi::allreduceSumYielding( _counts.data(), _counts.size(), _comm );
        if ( _counts[3 * n] > 0 )
            mpi::throwIfAnyFailed( failure, _comm );
        std::vector<std::uint64_t> repeated; // positions in the window of ids with copies
        for ( std::uint64_t i = 0; i < n; ++i )
        {
            const bool mine = a + i >= _slice.first && a + i < _slice.end;
            const std::int64_t copies = _counts[3 * i + 2];
            if ( mine && copies > 1 )
                repeated.push_back( i );
            else if ( copies != ( mine ? 1 : 0 ) )
                throw CollectiveError( // the same counts on every rank: rank 0 says it
                    fmt::format( "scenario {} appears {} times in the journals (expected {})",
                                 a + i, copies, mine ? "once" : "never: outside the slice" ),
                    mpi::rank( _comm ) == 0 );
        }
        if ( !repeated.empty() )
            keepFirstCopies( a, repeated );
        // Offsets: prefix sums in id order.
        std::vector<std::uint64_t> gpu_offset( n ), shard_offset( n );
        for ( std::uint64_t i = 0; i < n; ++i )
        {
            gpu_offset[i] = _gpu_base;
            shard_offset[i] = _shard_base;
            _gpu_base += std::uint64_t( _counts[3 * i] );
            _shard_base += std::uint64_t( _counts[3 * i + 1] );
        }
        guarded( failure, [&] { placeRows( a, b, gpu_offset, shard_offset, w ); } );
    }

  private:
    //! Ids held more than once over the ranks keep one copy: the first journal's, at its lowest
    //! offset. Copies arise when two runs worked on one output at once (where the output's lock
    //! cannot be taken); rows are deterministic, so every copy holds the same values and only
    //! the choice must be the same on every rank. Collective (two reductions over the repeated
    //! ids), called by every rank for the same `repeated`.
    void keepFirstCopies( std::uint64_t a, const std::vector<std::uint64_t>& repeated )
    {
        const std::size_t m = repeated.size();
        const auto slot = [&]( std::uint64_t id )
        {
            auto it = std::lower_bound( repeated.begin(), repeated.end(), id - a );
            return it != repeated.end() && *it == id - a ? std::size_t( it - repeated.begin() ) : m;
        };
        std::vector<std::int64_t> first( m, std::numeric_limits<std::int64_t>::max() );
        for ( const Held& h : _held )
            if ( const std::size_t j = slot( h.id ); j < m )
                first[j] = std::min( first[j], h.copy );
        mpi::allreduceMin( first.data(), m, _comm );
        _held.erase( std::remove_if( _held.begin(), _held.end(),
                                     [&]( const Held& h )
                                     {
                                         const std::size_t j = slot( h.id );
                                         return j < m && h.copy != first[j];
                                     } ),
                     _held.end() );
        std::vector<std::int64_t> rows( 2 * m, 0 ); // the kept copies' GPU and shard rows
        for ( const Held& h : _held )
            if ( const std::size_t j = slot( h.id ); j < m )
            {
                rows[2 * j] = h.gpus;
                rows[2 * j + 1] = h.shards;
            }
        mpi::allreduceSum( rows.data(), rows.size(), _comm );
        for ( std::size_t j = 0; j < m; ++j )
        {
            _counts[3 * repeated[j]] = rows[2 * j];
            _counts[3 * repeated[j] + 1] = rows[2 * j + 1];
            _counts[3 * repeated[j] + 2] = 1;
        }
        _duplicates += m;
    }

    //! Reads the scenario and GPU rows of the records overlapping [a, b) into `w` and lists the
    //! scenarios of [a, b) they hold, in id order.
    void loadRecords( std::uint64_t a, std::uint64_t b, WindowRows& w )
    {
        w.num_loaded = 0;
        w.record_of.clear();
        w.with_gpus = _with_gpus;
        w.with_shards = _with_shards;
        _held.clear();
        for ( std::size_t k = 0; k < _records.size(); ++k )
        {
            const auto& info = _records[k].info;
            if ( info.num_scenarios == 0 || info.first_id >= b || info.last_id < a )
                continue;
            if ( w.num_loaded == w.loaded.size() )
                w.loaded.emplace_back();
            readJournalRecordHead( _records[k].path, info, w.loaded[w.num_loaded] );
            w.record_of.push_back( k );
            const JournalBatch& batch = w.loaded[w.num_loaded++];
            const std::int64_t copy =
                std::int64_t( _records[k].journal ) << 40 | std::int64_t( info.offset );
            std::size_t g = 0, s = 0;
            for ( std::size_t r = 0; r < batch.scenarios.size(); ++r )
            {
                const ScenarioRow& row = batch.scenarios[r];
                const std::int32_t shards = _with_shards ? row.num_shards : 0;
                if ( row.id >= a && row.id < b )
                    _held.push_back( { row.id, std::uint32_t( w.num_loaded - 1 ),
                                       std::uint32_t( r ), row.num_gpus_rows, shards, g, s,
                                       copy } );
                g += std::size_t( row.num_gpus_rows );
                s += std::size_t( shards );
            }
        }
        // Records come sorted by first id and a fresh run's hold ascending ids: usually no-op.
        // (Two copies of an id on one rank: the one kept does not depend on their order.)
        const auto by_id = []( const Held& x, const Held& y ) { return x.id < y.id; };
        if ( !std::is_sorted( _held.begin(), _held.end(), by_id ) )
            std::sort( _held.begin(), _held.end(), by_id );
    }

    //! The file runs and the column-buffer destinations of the held rows (and, on rank 0, the
    //! not-computed rows of the ids outside the slice).
    void placeRows( std::uint64_t a, std::uint64_t b, const std::vector<std::uint64_t>& gpu_offset,
                    const std::vector<std::uint64_t>& shard_offset, WindowRows& w ) const
    {
        w.scen_runs.clear();
        w.gpu_runs.clear();
        w.shard_runs.clear();
        w.scen_rows.clear();
        w.gpu_out.clear();
        w.shard_out.clear();
        w.local_gpus = 0;
        w.local_shards = 0;
        // Ids before the slice, then the slice's rows (sorted), then ids after it.
        w.scen_rows.reserve( _writes_outside ? std::size_t( b - a ) : _held.size() );
        if ( _writes_outside )
            addNotComputed( a, std::min( b, _slice.first ), w.scen_rows, w.scen_runs );
        for ( const Held& h : _held )
        {
            const std::uint64_t i = h.id - a;
            const JournalBatch& batch = w.loaded[h.batch];
            w.scen_rows.push_back( batch.scenarios[h.row] );
            w.scen_rows.back().gpu_row_offset = std::int64_t( gpu_offset[i] );
            w.scen_rows.back().shard_row_offset = std::int64_t( shard_offset[i] );
            addRun( w.scen_runs, h.id, 1 );
            if ( _with_gpus )
            {
                addRun( w.gpu_runs, gpu_offset[i], std::uint64_t( h.gpus ) );
                w.gpu_out.push_back( { batch.gpus.data() + h.gpu_begin, std::size_t( h.gpus ) } );
                w.local_gpus += std::size_t( h.gpus );
            }
            if ( _with_shards )
            {
                addRun( w.shard_runs, shard_offset[i], std::uint64_t( h.shards ) );
                if ( h.shards > 0 )
                    w.shard_out.push_back(
                        { h.batch, h.shard_begin, std::size_t( h.shards ), w.local_shards } );
                w.local_shards += std::size_t( h.shards );
            }
        }
        if ( _writes_outside )
            addNotComputed( std::max( a, _slice.end ), b, w.scen_rows, w.scen_runs );
    }

    MPI_Comm _comm;
    const std::vector<RecordRef>& _records;
    std::uint64_t _num_scenarios;
    SliceRange _slice;
    bool _with_gpus, _with_shards, _writes_outside;
    std::uint64_t _size = 0;                      //!< ids per window
    std::uint64_t _gpu_base = 0, _shard_base = 0; //!< file rows laid out so far
    std::vector<Held> _held;                      //!< this rank's scenarios of the window
    std::vector<std::int64_t> _counts;            //!< per id: GPU rows, shard rows, copies
    std::uint64_t _duplicates = 0;
};

} // namespace

namespace
{

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
