#!/usr/bin/env bash
# A one-machine Slurm for trying deploy/slurm/ for real: munge, slurmctld and slurmd on this
# host, one partition `local` with this machine's CPUs and memory (Debian's slurm-wlm 22.05 and
# munge: `apt-get install slurm-wlm munge`; run as root). `scripts/slurm_local.sh stop` stops it.
# Everything it writes lives under /var/tmp/uqformer-slurm and /etc/slurm/slurm.conf.
set -euo pipefail

state=/var/tmp/uqformer-slurm
if [ "${1:-start}" = stop ]; then
  pkill -x slurmd || true
  pkill -x slurmctld || true
  pkill -x munged || true
  exit 0
fi
for tool in munged slurmctld slurmd sbatch; do
  command -v "$tool" >/dev/null || { echo "missing $tool: apt-get install slurm-wlm munge" >&2; exit 1; }
done

host=$(hostname -s)
# `slurmd -C` prints this node's line as slurm.conf wants it (CPUs, sockets, memory).
node=$(slurmd -C | head -1)
mkdir -p "$state"/{ctld,spool,log} /etc/slurm /run/munge /var/log/munge /var/lib/munge /etc/munge
[ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1k count=1 status=none
chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
chmod 0400 /etc/munge/munge.key
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=uqformer
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldLogFile=$state/log/slurmctld.log
SlurmdLogFile=$state/log/slurmd.log
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
MpiDefault=none
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
$node State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
pgrep -x munged >/dev/null || runuser -u munge -- munged
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 30); do
  sinfo -h -o '%T' 2>/dev/null | grep -qE 'idle|mixed' && { sinfo; exit 0; }
  sleep 1
done
echo "slurm did not come up; see $state/log/" >&2
exit 1
