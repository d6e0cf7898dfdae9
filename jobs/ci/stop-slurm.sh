#!/bin/bash
# Stops the cluster of start-slurm.sh DIR: slurmd, slurmctld, then munged, each by the pid it
# recorded in DIR (never by name: other Slurm or munge daemons on the machine are left alone).
# Usage: stop-slurm.sh DIR
set -u
dir=${1:?usage: stop-slurm.sh DIR}
status=0
for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munge/munged.pid"; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        kill "$pid"
        # Wait until it is gone (slurmctld saves its state first); SIGKILL after 15 s.
        for _ in $(seq 150); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            echo "$pidfile: pid $pid ignored SIGTERM, sending SIGKILL"
            kill -9 "$pid"
            status=1
        fi
    fi
    rm -f "$pidfile"
done
echo "slurm stopped ($dir)"
exit $status
