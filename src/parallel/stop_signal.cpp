// Recording handlers for SIGTERM/SIGINT/SIGUSR1 (see stop_signal.hpp).
#include <csignal>
#include <cstdlib>
#include <shardsweep/parallel/stop_signal.hpp>
#include <unistd.h>

namespace shardsweep
{

namespace
{
volatile std::sig_atomic_t g_stop_signal = 0;
pid_t g_launcher = 0; //!< the parent at start when an MPI launcher started this process

extern "C" void recordStopSignal( int signal )
{
    g_stop_signal = signal;
}
} // namespace

void installStopSignalHandlers()
{
    struct sigaction action = {};
    action.sa_handler = recordStopSignal;
    sigemptyset( &action.sa_mask );
    // SA_RESTART: a signal in the middle of a write or an MPI call does not make it fail.
    action.sa_flags = SA_RESTART;
    sigaction( SIGTERM, &action, nullptr );
    sigaction( SIGUSR1, &action, nullptr );
    // Ctrl-C stops resumably like SIGTERM; a second Ctrl-C has the default action (it ends the
    // process at once), for a user who does not want to wait for the batch.
    action.sa_flags = SA_RESTART | SA_RESETHAND;
    sigaction( SIGINT, &action, nullptr );
    // A rank's stdout is a pipe to its launcher: once that is gone a write must fail, not kill
    // the rank in the middle of a collective phase (the others would wait for it forever).
    signal( SIGPIPE, SIG_IGN );
    // Open MPI's mpirun/orted, Slurm's srun (PMIx, PMI-2) and MPICH's hydra set one of these.
    if ( g_launcher == 0 && ( std::getenv( "OMPI_COMM_WORLD_SIZE" ) || std::getenv( "PMIX_RANK" ) ||
                              std::getenv( "PMI_RANK" ) ) )
        g_launcher = getppid();
}

bool launcherGone()
{
    return g_launcher != 0 && getppid() != g_launcher;
}

bool underOpenMpiLauncher()
{
    return g_launcher != 0 && std::getenv( "OMPI_COMM_WORLD_SIZE" ) != nullptr;
}

const char* stopSignalName( int signal )
{
    switch ( signal )
    {
    case SIGTERM:
        return "SIGTERM";
    case SIGINT:
        return "SIGINT";
    case SIGUSR1:
        return "SIGUSR1";
    default:
        return "a signal";
    }
}

int pendingStopSignal()
{
    return g_stop_signal;
}

void clearStopSignal()
{
    g_stop_signal = 0;
}

} // namespace shardsweep
