# Sourced by the command-line tests that kill MPI runs (not a test of its own). The caller starts
# each run with `setsid mpirun ... &` and sets job=$! (mpirun's pid: the session's id), and
# defines fail().

# SIGKILL to mpirun and every rank at once (the ranks are in process groups of their own, in
# mpirun's session), like a node that loses power; waits until all are gone.
killall9() {
    local pids
    pids=$(ps -o pid= -s "$job" 2>/dev/null)
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null
    wait "$job" 2>/dev/null
    for _ in $(seq 200); do
        [ -z "$(ps -o pid= -s "$job" 2>/dev/null)" ] && return 0
        sleep 0.05
    done
    fail "processes of session $job survive SIGKILL"
}

# SIGKILL to mpirun's process group alone, as `kill -9 -PGID` of a job does: the ranks (process
# groups of their own, Open MPI's choice) live on as orphans and go on with the sweep until they
# notice that their launcher is gone. A rerun must wait for them, not work on the same journals
# and file at the same time.
killgroup9() {
    kill -9 -- "-$job" 2>/dev/null
    wait "$job" 2>/dev/null
}
