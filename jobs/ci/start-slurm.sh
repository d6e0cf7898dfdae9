#!/bin/bash
# Starts a private one-node Slurm cluster (munged + slurmctld + slurmd, Debian's slurm-wlm and
# munge packages) for the job-script tests, following the Slurm quick-start for one node without systemd: everything lives
# in one scratch directory, nothing is written under /etc, no systemd or cgroups.
#
# Usage: start-slurm.sh DIR        (DIR is created; DIR/env.sh exports SLURM_CONF for clients)
# Env:   SLURM_TEST_CTLD_PORT / SLURM_TEST_D_PORT (default: a pair in 20000-59999 derived from
#        DIR, not the system's 6817/6818)
# Exit:  0 running (node idle), 77 Slurm or munge is not installed (the ctest skip code),
#        1 a daemon failed to start (its log is printed).
# stop-slurm.sh DIR stops the daemons by the pids recorded in DIR.
set -u
dir=${1:?usage: start-slurm.sh DIR}
for prog in munged slurmctld slurmd sbatch sinfo scontrol; do
    if ! command -v "$prog" >/dev/null && [ ! -x "/usr/sbin/$prog" ]; then
        echo "SKIP: '$prog' not found: install Debian's slurm-wlm and munge (scripts/setup.sh)"
        exit 77
    fi
done
export PATH=$PATH:/usr/sbin
fail() {
    echo "FAIL: $*"
    for log in "$dir"/log/*.log; do
        [ -f "$log" ] && { echo "---- $log"; tail -20 "$log"; }
    done
    exit 1
}

# A cluster left over from an interrupted run would hold the ports: stop it first.
[ -d "$dir" ] && bash "$(dirname "$0")/stop-slurm.sh" "$dir" >/dev/null 2>&1
rm -rf "$dir"
mkdir -p "$dir"/{munge,spool/ctld,spool/d,log} || fail "cannot create $dir"
dir=$(cd "$dir" && pwd)
chmod 755 "$dir/munge"
# munged's socket path must fit a sockaddr_un (108 bytes).
[ ${#dir} -le 80 ] || fail "$dir is too long for munge's socket path: use a shorter directory"
host=$(hostname -s)
ncpu=$(nproc)
# Ports derived from the directory: two build trees can run their Slurm tests at the same time.
port=$((20000 + $(printf '%s' "$dir" | cksum | cut -d' ' -f1) % 20000 * 2))
ctld_port=${SLURM_TEST_CTLD_PORT:-$port}
d_port=${SLURM_TEST_D_PORT:-$((port + 1))}

dd if=/dev/urandom of="$dir/munge/munge.key" bs=1 count=1024 status=none
chmod 400 "$dir/munge/munge.key"
munged --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
    --pid-file="$dir/munge/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" || fail "munged did not start"

# cred_expire=10: a requeued job waits this long (plus ~10 s) before it starts again
# (default 120 s), observed on Debian 12's slurm 22.05. MinJobAge keeps finished jobs visible to scontrol (there is
# no accounting, hence no sacct).
cat >"$dir/slurm.conf" <<CONF
ClusterName=shardsweep-test
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket,cred_expire=10
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
StateSaveLocation=$dir/spool/ctld
SlurmdSpoolDir=$dir/spool/d
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=600
KillWait=5
Waittime=0
NodeName=$host CPUs=$ncpu State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
cat >"$dir/env.sh" <<ENV
export SLURM_CONF=$dir/slurm.conf
export PATH=\$PATH:/usr/sbin
ENV
export SLURM_CONF=$dir/slurm.conf
# -i: the first start has no state files to recover.
slurmctld -i -f "$SLURM_CONF" || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" || fail "slurmd did not start"
for _ in $(seq 60); do
    if sinfo -h -o %t 2>/dev/null | grep -q idle; then
        echo "slurm up: node $host ($ncpu CPUs), SLURM_CONF=$SLURM_CONF"
        exit 0
    fi
    sleep 1
done
fail "the node did not become idle within 60 s: $(sinfo 2>&1)"
