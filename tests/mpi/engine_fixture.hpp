#pragma once
// The sweep engine's test fixture (not a test of its own): a synthetic problem whose rows a plain
// serial loop reproduces, the expected file, and options of small batches and windows. Used by
// tstSweepEngine.hpp (the engine's results) and tstSweepFaults.hpp (kills, failures, the lock).
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <gtest/gtest.h>
#include <limits>
#include <memory>
#include <shardsweep/core/errors.hpp>
#include <shardsweep/io/hdf5.hpp>
#include <shardsweep/parallel/mpi_comm.hpp>
#include <shardsweep/sweep/journal.hpp>
#include <shardsweep/sweep/sweep_engine.hpp>
#include <sstream>
#include <unistd.h>

namespace Test
{
using namespace shardsweep;

//! A synthetic problem: 7 workloads of 3..9 tables, 2 or 4 GPUs, three batch sizes; scenario
//! 50k+7 has no plan. Costs come from a closed-form double of the kernel.
struct EngineFixture
{
    std::vector<std::shared_ptr<const Workload>> workloads;
    SweepProblem problem;
    // The engine may evaluate a batch's tiles on several threads at once: counters are atomic.
    std::atomic<std::int64_t> evaluated{ 0 }; // scenarios this rank evaluated (all runs)
    int signal_at_call = -1; // raise SIGUSR1 during this evaluate call of this rank
    // During this evaluate call of this rank, overwrite 8 bytes inside the first record's rows of
    // `damage_path` (this rank's journal: its first record is on disk once the third batch is
    // computed), so that the results writer finds it damaged.
    int damage_at_call = -1;
    std::string damage_path;
    std::atomic<int> calls{ 0 };
    std::atomic<std::size_t> largest_call{ 0 }; // most scenarios in one evaluate call of this rank

    std::vector<std::int32_t> catalog_offset; // first /tables row of each workload's tables
    // Scenarios from this id on name the shardsweep planner (a cost class of their own for the
    // progress lines' ETA; planned alike).
    std::uint64_t planned_from = std::numeric_limits<std::uint64_t>::max();

    explicit EngineFixture( std::uint64_t n, std::uint64_t hash = 42 )
    {
        for ( int w = 0; w < 7; ++w )
        {
            catalog_offset.push_back( std::int32_t( problem.tables.size() ) );
            auto wl = std::make_shared<Workload>();
            wl->name = "w" + std::to_string( w );
            for ( int t = 0; t < 3 + w; ++t )
            {
                TableSpec s;
                s.rows = 1000 * ( t + 1 ) + 17 * w;
                s.dim = 16 << ( t % 3 );
                s.pooling_factor = 1.0 + 0.5 * t;
                s.zipf_alpha = 0.1 * w;
                s.reuse_histogram[t % kReuseBins] = 0.25;
                wl->tables.push_back( s );
                wl->table_names.push_back( "t" + std::to_string( t ) );
            }
            // The catalogue (/tables): the workloads' tables in order, as a ScenarioSpace's.
            for ( int t = 0; t < 3 + w; ++t )
            {
                problem.tables.push_back(
                    tableRow( { &wl->tables[t], wl->table_names[t], w, -1, t } ) );
                problem.table_names.push_back( wl->name + "." + wl->table_names[t] );
            }
            workloads.push_back( wl );
            problem.workload_names.push_back( wl->name );
        }
        problem.num_scenarios = n;
        problem.platform_names = { "p2", "p4" };
        problem.planner_names = { "round_robin" };
        problem.cost_model_names = { "native", "torchrec" };
        problem.protocol_names = { "none" };
        problem.config_text = "kind: sweep\n";
        problem.config_file = "test.yaml";
        problem.config_hash = hash;
        problem.materialize = [this]( std::uint64_t id ) { return spec( id ); };
        problem.lower_bound = []( const ScenarioSpec& s ) { return lowerBound( s.id ); };
    }

    //! runSweepEngine on this problem, its planner and its evaluator.
    SweepReport run( const SweepOptions& options, std::ostream& log )
    {
        return runSweepEngine( MPI_COMM_WORLD, problem, plan, evaluator(), options, log );
    }

    ScenarioSpec spec( std::uint64_t id ) const
    {
        ScenarioSpec s;
        s.id = id;
        s.workload_index = int( id % 7 );
        s.workload = workloads[s.workload_index];
        s.table_catalog_offset = catalog_offset[s.workload_index];
        s.platform_index = int( id / 7 % 2 );
        s.gpu_count = 2 << s.platform_index;
        s.platform.gpus_per_node = s.gpu_count;
        s.platform.num_nodes = 1;
        s.global_batch = 1024 * std::int64_t( 1 + id % 3 );
        s.cost_model = CostModel( id % 2 );
        s.planner_seed = id * 2654435761u;
        s.planner = id >= planned_from ? PlannerKind::shardsweep : PlannerKind::round_robin;
        return s;
    }

    //! A closed-form stand-in for iterationLowerBoundMs: NaN for the torchrec scenarios (odd
    //! ids), as the sweep's bound.
    static double lowerBound( std::uint64_t id )
    {
        return id % 2 ? std::numeric_limits<double>::quiet_NaN() : 0.5 + 0.25 * double( id );
    }

    static PlanResult plan( const ScenarioSpec& s )
    {
        PlanResult r;
        r.feasible = s.id % 50 != 7;
        if ( r.feasible )
            r.plan = roundRobinTableWisePlan( *s.workload, s.gpu_count );
        return r;
    }

    static ScenarioResult evaluateOne( const ScenarioInput& in )
    {
        ScenarioResult r;
        r.num_gpus = in.platform->numGpus();
        r.gpu_phase_ms.assign( std::size_t( r.num_gpus ) * kNumPhases, 0.0 );
        r.gpu_memory_GiB.assign( std::size_t( r.num_gpus ), 0.0 );
        for ( const auto& sh : in.plan->shards )
        {
            const TableSpec& t = in.workload->tables[sh.table];
            const double fwd = double( sh.num_rows ) * sh.num_cols * 1e-7 *
                               double( in.global_batch ) / ( 1000.0 + t.pooling_factor );
            r.shard_fwd_ms.push_back( fwd );
            r.shard_bwd_ms.push_back( 2.0 * fwd + 0.1 * double( in.model ) );
            r.gpu_phase_ms[sh.gpu * kNumPhases + 1] += fwd;
            r.gpu_phase_ms[sh.gpu * kNumPhases + 8] += 2.0 * fwd;
            r.gpu_memory_GiB[sh.gpu] += double( sh.num_rows ) * sh.num_cols * 4.0 / 1073741824.0;
        }
        for ( int g = 0; g < r.num_gpus; ++g )
        {
            double sum = 0;
            for ( int p = 0; p < kNumPhases; ++p )
                sum += r.gpu_phase_ms[g * kNumPhases + p];
            r.iteration_ms = std::max( r.iteration_ms, sum );
            r.phase_ms[1] = std::max( r.phase_ms[1], r.gpu_phase_ms[g * kNumPhases + 1] );
        }
        r.exposed_comm_ms = 0.01 * r.iteration_ms;
        r.feasible = r.iteration_ms < 5.0;
        r.overflow_gpu = r.feasible ? -1 : 0;
        return r;
    }

    SweepEvaluateFunction evaluator()
    {
        return [this]( const std::vector<ScenarioInput>& inputs )
        {
            const int call = ++calls;
            if ( call == signal_at_call )
                std::raise( SIGUSR1 );
            if ( call == damage_at_call )
            {
                const std::uint64_t garbage = 0x5eed5eed5eed5eedull;
                std::FILE* f = std::fopen( damage_path.c_str(), "r+b" );
                EXPECT_NE( f, nullptr ) << damage_path;
                if ( f )
                {
                    std::fseek( f, 64 + 8, SEEK_SET ); // past the 64-byte record header
                    std::fwrite( &garbage, sizeof( garbage ), 1, f );
                    std::fclose( f );
                }
            }
            evaluated += std::int64_t( inputs.size() );
            for ( std::size_t seen = largest_call;
                  inputs.size() > seen &&
                  !largest_call.compare_exchange_weak( seen, inputs.size() ); )
                ;
            std::vector<ScenarioResult> out;
            for ( const auto& in : inputs )
                out.push_back( evaluateOne( in ) );
            return out;
        };
    }

    //! The expected rows, computed serially, laid out as docs/HDF5_LAYOUT.md says.
    void reference( std::vector<ScenarioRow>& scen, std::vector<GpuRow>& gpus,
                    std::vector<ShardRow>& shards ) const
    {
        for ( std::uint64_t id = 0; id < problem.num_scenarios; ++id )
        {
            ScenarioSpec s = spec( id );
            ScenarioRow row;
            row.id = id;
            row.workload = s.workload_index;
            row.platform = s.platform_index;
            row.planner = 0;
            row.cost_model = int( s.cost_model );
            row.task_protocol = 0;
            row.generator = -1;
            row.task_index = -1;
            row.planner_seed = s.planner_seed;
            row.global_batch = s.global_batch;
            row.gpu_count = s.gpu_count;
            row.gpu_row_offset = std::int64_t( gpus.size() );
            row.shard_row_offset = std::int64_t( shards.size() );
            // Every scenario's row holds its task's bound, with a plan or without.
            row.lower_bound_ms =
                id % 2 ? std::numeric_limits<double>::quiet_NaN() : 0.5 + 0.25 * double( id );
            PlanResult p = plan( s );
            if ( p.feasible )
            {
                ScenarioInput in{ s.workload.get(), &s.platform, &p.plan, s.global_batch,
                                  s.cost_model };
                ScenarioResult r = evaluateOne( in );
                fillResultRows( row, s, &p.plan, &r, SweepDetail::all, gpus, shards );
            }
            else
            {
                fillResultRows( row, s, nullptr, nullptr, SweepDetail::all, gpus, shards );
                row.status = 1;
            }
            scen.push_back( row );
        }
    }
};

inline std::string outputPath( const std::string& stem )
{
    // One name for all ranks (rank 0's pid), distinct between np1 and np2 runs.
    std::int64_t pid = mpi::rank( MPI_COMM_WORLD ) == 0 ? ::getpid() : 0;
    pid = mpi::allreduceMax( pid, MPI_COMM_WORLD );
    return "tstSweepEngine_" + stem + "_" + std::to_string( pid ) + ".h5";
}

template <class Row>
inline void expectColumns( const h5::Group& group, const std::vector<ColumnSpec>& columns,
                           const std::vector<Row>& rows )
{
    EXPECT_EQ( group.members().size(), columns.size() );
    for ( const auto& c : columns )
    {
        auto set = group.openDataset( c.name );
        ASSERT_EQ( set.size(), rows.size() ) << c.name;
        EXPECT_EQ( set.type(), c.type ) << c.name;
        auto values = set.readAll<double>();
        int mismatches = 0;
        for ( std::size_t i = 0; i < rows.size(); ++i )
        {
            const double want = columnValue( c, &rows[i] );
            const bool same = std::isnan( want ) ? std::isnan( values[i] ) : values[i] == want;
            if ( !same && mismatches++ < 3 )
                ADD_FAILURE() << c.name << "[" << i << "] = " << values[i] << ", expected " << want;
        }
    }
}

//! Rank 0 compares every dataset of `path` with the serial reference.
inline void expectFileMatchesReference( const EngineFixture& fx, const std::string& path )
{
    if ( mpi::rank( MPI_COMM_WORLD ) != 0 )
        return;
    std::vector<ScenarioRow> scen;
    std::vector<GpuRow> gpus;
    std::vector<ShardRow> shards;
    fx.reference( scen, gpus, shards );
    auto file = h5::File::openSerial( path );
    {
        auto root = file.root();
        EXPECT_EQ( h5::readIntAttribute( root.id(), "complete" ), 1 );
        EXPECT_EQ( h5::readIntAttribute( root.id(), "schema_version" ), kSweepSchemaVersion );
        EXPECT_EQ( h5::readStringAttribute( root.id(), "config_hash" ), "000000000000002a" );
        EXPECT_EQ( h5::readIntAttribute( root.id(), "num_ranks" ), mpi::size( MPI_COMM_WORLD ) );
        expectColumns( root.openGroup( "scenarios" ), scenarioColumns(), scen );
        expectColumns( root.openGroup( "gpus" ), gpuColumns(), gpus );
        expectColumns( root.openGroup( "shards" ), shardColumns(), shards );
        expectColumns( root.openGroup( "tables" ), tableColumns(), fx.problem.tables );
        // Workload w3's tables start at /tables row 3 + 4 + 5 = 12; its table 2 (rows
        // 1000·3 + 17·3, pooling 1 + 0.5·2, Zipf 0.1·3, bin_2 0.25) is row 14.
        const TableRow& t14 = fx.problem.tables.at( 14 );
        EXPECT_EQ( t14.rows, 3051 );
        EXPECT_EQ( t14.pooling_factor, 2.0 );
        EXPECT_EQ( t14.zipf_alpha, 0.1 * 3 );
        EXPECT_EQ( t14.bins[2], 0.25 );
        EXPECT_EQ( t14.workload, 3 );
        EXPECT_EQ( t14.index, 2 );
        EXPECT_EQ( root.openGroup( "names" ).readStringDataset( "tables" ).at( 14 ), "w3.t2" );
        for ( const ShardRow& r : shards )
        {
            if ( r.scenario_id % 7 == 3 )
            {
                ASSERT_EQ( r.table_row, 12 + r.table ) << r.scenario_id;
            }
        }
        EXPECT_EQ( root.openGroup( "names" ).readStringDataset( "workloads" )[3], "w3" );
        EXPECT_EQ( root.openGroup( "names" ).readStringDataset( "phases" )[9], "dense_allreduce" );
    }
    file.close();
}

inline SweepOptions smallOptions( const std::string& path )
{
    SweepOptions o;
    o.output = path;
    o.batch_size = 16;
    o.finalize_window = 50;
    o.quiet = true;
    return o;
}

//! smallOptions of a first run: --fresh.
inline SweepOptions freshOptions( const std::string& path )
{
    SweepOptions o = smallOptions( path );
    o.fresh = true;
    return o;
}

//! The ranks' paths of one journal file of `path`'s run (session 0).
inline std::string journalOf( const std::string& path, int rank )
{
    return journalDirectory( path ) + "/s0-r" + std::to_string( rank ) + ".jnl";
}

} // namespace Test
