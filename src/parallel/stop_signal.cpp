// Recording handlers for SIGTERM/SIGUSR1 (see stop_signal.hpp).
#include <csignal>
#include <shardsweep/parallel/stop_signal.hpp>

namespace shardsweep
{

namespace
{
volatile std::sig_atomic_t g_stop_signal = 0;

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
