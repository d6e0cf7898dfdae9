#pragma once
//! \file stop_signal.hpp
//! \brief SIGTERM/SIGINT/SIGUSR1 as a request to stop a sweep resumably (Slurm sends them before a
//! job's time limit). The handlers only record the signal; the sweep engine polls it between
//! batches.
//!
//! `shardsweep run` installs the handlers first thing in main, so that a signal that arrives
//! while MPI starts or the sweep loads is kept until the engine sees it (exit 3, resumable)
//! instead of killing the process or being forgotten.

namespace shardsweep
{

//! Installs the recording handlers for SIGTERM, SIGINT (once: a second SIGINT ends the process)
//! and SIGUSR1 (idempotent; a signal already recorded stays recorded), ignores SIGPIPE and notes
//! the MPI launcher (the parent process when one started this process).
void installStopSignalHandlers();

//! True once the MPI launcher that started this process has died (the process was re-parented):
//! e.g. `kill -9` of mpirun's process group leaves its ranks running as orphans. The sweep engine
//! stops resumably then, as for a signal, instead of going on unwatched.
bool launcherGone();

//! True when Open MPI's mpirun/orted started this process (and still runs it). Its mpirun forwards
//! SIGUSR1/SIGUSR2 to the ranks but answers SIGTERM/SIGINT itself, by terminating the ranks and
//! exiting 1 (jobs/README.md), whatever status the ranks stopped with.
bool underOpenMpiLauncher();

//! "SIGTERM", "SIGINT" or "SIGUSR1"; "a signal" for 0 or any other number.
const char* stopSignalName( int signal );

//! The last stop signal received and not yet cleared (0: none). Async-signal-safe to read.
int pendingStopSignal();

//! Forgets a recorded signal (after a sweep has acted on it).
void clearStopSignal();

} // namespace shardsweep
