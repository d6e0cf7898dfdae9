#include <shardsweep/parallel/mpi_environment.hpp>

namespace shardsweep
{

MpiEnvironment::MpiEnvironment( int& argc, char**& argv )
{
    int initialized = 0;
    MPI_Initialized( &initialized );
    if ( !initialized )
    {
        // FUNNELED: the program has threads besides the main one (OpenMP, the journal's
        // write-behind, the results writer's read-ahead), and only the main thread calls MPI.
        int provided = MPI_THREAD_SINGLE;
        MPI_Init_thread( &argc, &argv, MPI_THREAD_FUNNELED, &provided );
        _owns = true;
    }
    MPI_Comm_rank( MPI_COMM_WORLD, &_rank );
    MPI_Comm_size( MPI_COMM_WORLD, &_size );
}

MpiEnvironment::~MpiEnvironment()
{
    int finalized = 0;
    MPI_Finalized( &finalized );
    if ( _owns && !finalized )
        MPI_Finalize();
}

std::string MpiEnvironment::libraryVersion()
{
    char buffer[MPI_MAX_LIBRARY_VERSION_STRING];
    int length = 0;
    MPI_Get_library_version( buffer, &length );
    std::string text( buffer, static_cast<std::size_t>( length ) );
    auto end = text.find_first_of( ",\n" );
    return end == std::string::npos ? text : text.substr( 0, end );
}

void MpiEnvironment::abort( int code )
{
    MPI_Abort( MPI_COMM_WORLD, code );
    throw; // unreachable: MPI_Abort does not return
}

bool MpiEnvironment::anyRank( bool flag, MPI_Comm comm )
{
    int local = flag ? 1 : 0;
    int global = 0;
    MPI_Allreduce( &local, &global, 1, MPI_INT, MPI_MAX, comm );
    return global != 0;
}

} // namespace shardsweep
