#!/usr/bin/env bash
# Stop the single-node SLURM that deploy/slurm/ci-start.sh started: cancel its jobs, then stop
# slurmd, slurmctld and munged by the pid files it wrote (never by name). Safe to run twice.
set -uo pipefail

base="${XIALPHA_SLURM_DIR:-/var/lib/xialpha-ci-slurm}"
if [ -s "$base/slurmctld.pid" ] && command -v scancel >/dev/null; then
  scancel --full --signal=KILL --partition=debug >/dev/null 2>&1 || true   # no job outlives the cluster
fi
for pidfile in "$base/slurmd.pid" "$base/slurmctld.pid" /run/munge/xialpha-ci-munged.pid; do
  [ -s "$pidfile" ] || continue
  pid="$(cat "$pidfile")"
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  fi
  rm -f "$pidfile"
  echo "slurm-ci: stopped $(basename "$pidfile" .pid) ($pid)"
done
