#!/usr/bin/env bash
# A single-node SLURM on THIS machine, for CI and for trying deploy/slurm/*.sbatch before a real site:
# Debian's slurmctld + slurmd + munge, started as root without systemd, every address 127.0.0.1.
#   deploy/slurm/ci-start.sh            # as root: install (apt-get) if absent, configure, start, wait for an idle node
#   deploy/slurm/ci-stop.sh             # stops exactly the daemons this script started
# It refuses to touch a machine that already has its own /etc/slurm/slurm.conf or running SLURM daemons.
# Prints one line per step with its seconds; exit 0 once `sinfo` shows the node idle, 1 otherwise.
# Environment: XIALPHA_SLURM_DIR (state, logs, pid files; default /var/lib/xialpha-ci-slurm),
#              XIALPHA_SLURM_NO_INSTALL=1 (never run apt-get).
set -euo pipefail

base="${XIALPHA_SLURM_DIR:-/var/lib/xialpha-ci-slurm}"
conf=/etc/slurm/slurm.conf
marker="# written by xialpha deploy/slurm/ci-start.sh"
step_start=$SECONDS

step() {  # step NAME: one line with the seconds since the previous step
  echo "slurm-ci: $1 ($(( SECONDS - step_start )) s)"
  step_start=$SECONDS
}
fail() { echo "slurm-ci: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "must run as root (it starts slurmctld, slurmd and munged)"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sinfo >/dev/null \
    || ! command -v munged >/dev/null; then
  [ -z "${XIALPHA_SLURM_NO_INSTALL:-}" ] && command -v apt-get >/dev/null || fail "SLURM is not installed and apt-get is not available"
  # Recommends pull in dev packages and a mail server: not needed.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
      slurmctld slurmd slurm-client munge >/dev/null 2>&1 \
    || { apt-get update -qq >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
           --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null 2>&1; } \
    || fail "apt-get could not install slurmctld slurmd slurm-client munge"
  step "installed $(slurmctld -V)"
fi
if [ -e "$conf" ] && ! grep -qF "$marker" "$conf"; then
  fail "$conf exists and was not written by this script: not touching a real SLURM configuration"
fi
for daemon in slurmctld slurmd; do
  if pgrep -x "$daemon" >/dev/null && [ ! -s "$base/$daemon.pid" ]; then
    fail "a $daemon not started by this script is running"
  fi
done
"$(dirname "$0")/ci-stop.sh" >/dev/null 2>&1 || true   # a previous run's daemons, if any

mkdir -p "$base/ctld" "$base/d" "$base/log" /run/munge
chown munge:munge /run/munge
# This node as slurmd sees it (CPUs, sockets, cores, threads, memory), addressed as 127.0.0.1.
node="$(slurmd -C | head -1)"
host="$(hostname -s)"
memory="$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<<"$node")"
node="$(sed "s/RealMemory=[0-9]*/RealMemory=$(( memory * 9 / 10 ))/" <<<"$node")"
cat >"$conf" <<EOF
$marker: a single-node cluster on $host.
ClusterName=xialpha-ci
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# No systemd and no cgroup delegation here: track processes by parent id, no CPU binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
KillWait=10
MinJobAge=600
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
StateSaveLocation=$base/ctld
SlurmdSpoolDir=$base/d
SlurmctldPidFile=$base/slurmctld.pid
SlurmdPidFile=$base/slurmd.pid
SlurmctldLogFile=$base/log/slurmctld.log
SlurmdLogFile=$base/log/slurmd.log
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
step "wrote $conf ($node)"

[ -s /etc/munge/munge.key ] || { mungekey --create >/dev/null 2>&1 || /usr/sbin/create-munge-key -f >/dev/null; }
chown munge:munge /etc/munge/munge.key && chmod 600 /etc/munge/munge.key
runuser -u munge -- munged --pid-file=/run/munge/xialpha-ci-munged.pid
munge -n | unmunge >/dev/null || fail "munge does not work"
slurmctld -i         # -i: ignore state from a previous run (a fresh cluster every time)
slurmd
step "started munged, slurmctld, slurmd"

for _ in $(seq 120); do
  state="$(sinfo --noheader --nodes="$host" --format=%T 2>/dev/null || true)"
  [ "$state" = idle ] && break
  sleep 0.5
done
if [ "$state" != idle ]; then
  tail -n 20 "$base/log/slurmctld.log" "$base/log/slurmd.log" >&2 || true
  fail "node $host is '${state:-unknown}', not idle, after 60 s"
fi
step "node $host idle"
