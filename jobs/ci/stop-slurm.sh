#!/bin/bash
# Stops the cluster of start-slurm.sh DIR: slurmd, slurmctld, then munged, each by the pid it
# recorded in DIR (never by name: other Slurm or munge daemons on the machine are left alone).
# Usage: stop-slurm.sh DIR
set -u
dir=${1:?usage: stop-slurm.sh DIR}
status=0
# Gone = no such process, or a zombie: a daemon re-parented to a PID 1 that does not reap
# children (a container's shell) stays <defunct> after it exits, and kill -0 still succeeds.
alive() {
    kill -0 "$1" 2>/dev/null && [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" != Z ]
}
for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    if [ -n "$pid" ] && alive "$pid"; then
        kill "$pid"
        # Wait until it is gone (slurmctld saves its state first); SIGKILL after 15 s.
        for _ in $(seq 150); do
            alive "$pid" || break
            sleep 0.1
        done
        if alive "$pid"; then
            echo "$pidfile: pid $pid ignored SIGTERM, sending SIGKILL"
            kill -9 "$pid"
            status=1
        fi
    fi
    rm -f "$pidfile"
done
echo "slurm stopped ($dir)"
exit $status
