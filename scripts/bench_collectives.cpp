// Cost of one collective-time evaluation on the host (scripts/bench_collectives.sh builds and
// runs it), one thread, for a few GPU counts and dimensions: per-GPU all-to-all
// (allToAllvTimeNs) against the balanced all-to-all (collectiveTimeNs), and the localBWAware
// all-reduce, whose chunks are simulated queue by queue on two or more dimensions
// (model/chunk_pipeline.hpp), against the balanced all-to-all, whose phases have a closed form:
// with the shipped 4 splits / 2 active and with 64 splits / 1 active, the most the platform
// parser accepts.
#include <Kokkos_Core.hpp>
#include <chrono>
#include <cstdio>
#include <random>
#include <shardsweep/model/collectives.hpp>
#include <vector>

using namespace shardsweep;

namespace
{
struct Case
{
    const char* name;
    Network net;
};

Network make( int n, const int* npus )
{
    Network net;
    net.num_dims = n;
    for ( int d = 0; d < n; ++d )
        net.dims[d] = { d == 0 ? Topology::Switch : Topology::Ring, npus[d], 400.0 / ( d + 1 ),
                        500.0 * ( d + 1 ) };
    return net;
}

template <class F>
double nsPerCall( int calls, F&& f )
{
    const auto t0 = std::chrono::steady_clock::now();
    for ( int i = 0; i < calls; ++i )
        f( i );
    return std::chrono::duration<double, std::nano>( std::chrono::steady_clock::now() - t0 )
               .count() /
           calls;
}
} // namespace

int main( int argc, char** argv )
{
    Kokkos::ScopeGuard guard( argc, argv );
    const int d8[] = { 8 }, d8x16[] = { 8, 16 }, d8x8x16[] = { 8, 8, 16 }, d8x128[] = { 8, 128 };
    const Case cases[] = { { "8 GPUs [8]", make( 1, d8 ) },
                           { "128 GPUs [8,16]", make( 2, d8x16 ) },
                           { "1024 GPUs [8,8,16]", make( 3, d8x8x16 ) },
                           { "1024 GPUs [8,128]", make( 2, d8x128 ) } };
    SystemConfig sys;
    sys.preferred_dataset_splits = 4;
    sys.active_chunks_per_dimension = 2;
    sys.local_mem_bw_GBps = 3350;
    std::printf( "%-20s %18s %22s %8s %16s %8s %19s %8s\n", "case", "a2av_ns_per_call",
                 "balanced_ns_per_call", "ratio", "ar_4x2_ns_call", "ratio", "ar_64x1_ns_call",
                 "ratio" );
    double sink = 0.0;
    for ( const Case& c : cases )
    {
        int P = 1;
        for ( int d = 0; d < c.net.num_dims; ++d )
            P *= c.net.dims[d].npus_count;
        std::vector<double> send( P ), recv( P );
        std::mt19937 rng( 7 );
        for ( int g = 0; g < P; ++g )
        {
            send[g] = 1e6 * ( 1 + rng() % 100 );
            recv[g] = 1e6 * ( 1 + rng() % 100 );
        }
        const int calls = 20000000 / P;
        const double a2av =
            nsPerCall( calls,
                       [&]( int i )
                       {
                           send[i % P] += 1.0;
                           sink += allToAllvTimeNs( c.net, sys, send.data(), recv.data(), P );
                       } );
        const double balanced = nsPerCall(
            calls, [&]( int i )
            { sink += collectiveTimeNs( c.net, sys, Collective::all_to_all, 1e8 + i ); } );
        const double all_reduce = nsPerCall(
            calls, [&]( int i )
            { sink += collectiveTimeNs( c.net, sys, Collective::all_reduce, 1e8 + i ); } );
        SystemConfig many = sys;
        many.preferred_dataset_splits = kMaxSimulatedChunks;
        many.active_chunks_per_dimension = 1;
        const double all_reduce_many = nsPerCall(
            calls / 16, [&]( int i )
            { sink += collectiveTimeNs( c.net, many, Collective::all_reduce, 1e9 + i ); } );
        std::printf( "%-20s %18.1f %22.1f %8.1f %16.1f %8.1f %19.1f %8.1f\n", c.name, a2av,
                     balanced, a2av / balanced, all_reduce, all_reduce / balanced, all_reduce_many,
                     all_reduce_many / balanced );
    }
    std::fprintf( stderr, "(checksum %g)\n", sink );
    return 0;
}
