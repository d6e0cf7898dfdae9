#!/usr/bin/env bash
# mpirun for a `shardsweep run` started by hand: Ctrl-C (SIGINT) and SIGTERM stop the sweep
# resumably and the exit status is 3, as with SIGUSR1.
#
#   jobs/mpirun_signals.sh [mpirun options] build/src/shardsweep run SWEEP.yaml -o OUT.h5
#   MPIEXEC="mpirun --oversubscribe" jobs/mpirun_signals.sh ...   (the launcher and options of
#                                                                  its own; default mpirun)
#
# Why: Open MPI 4.1's mpirun forwards SIGUSR1 and SIGUSR2 to the ranks, but answers SIGINT and
# SIGTERM itself: it terminates the ranks (they stop resumably) and exits 1 (jobs/README.md,
# "Stopping a run started with mpirun by hand"). This script runs mpirun in a session of its own,
# so that the terminal's Ctrl-C reaches only the script, and turns the first SIGINT or SIGTERM
# into a SIGUSR1 to mpirun; a second one is passed on as SIGTERM (mpirun's own abort). Its exit
# status is mpirun's.
set -u
mpiexec=${MPIEXEC:-mpirun}
if [ $# -eq 0 ] || [ "$1" = "-h" ] || [ "$1" = "--help" ]; then
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
    [ $# -eq 0 ] && exit 2
    exit 0
fi
command -v setsid >/dev/null || { echo "mpirun_signals.sh: setsid (util-linux) not found" >&2; exit 2; }

# In a script, a background job is not a process-group leader, so setsid starts the new session
# in this very process and execs the launcher: $! is the launcher itself. ($mpiexec unquoted: it
# may carry options.)
# shellcheck disable=SC2086
setsid $mpiexec "$@" &
launcher=$!
signals=0
on_signal() {
    signals=$((signals + 1))
    if [ $signals -eq 1 ]; then
        echo "mpirun_signals.sh: stopping after the current batches (SIGUSR1 to $mpiexec);" \
            "signal again to abort" >&2
        kill -USR1 "$launcher" 2>/dev/null
    else
        kill -TERM "$launcher" 2>/dev/null
    fi
}
trap on_signal INT TERM
# `wait` returns early (status > 128) when a trapped signal arrives: wait again while it runs.
while :; do
    wait "$launcher"
    status=$?
    kill -0 "$launcher" 2>/dev/null || break
done
exit "$status"
