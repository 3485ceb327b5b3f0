#!/usr/bin/env bash
# Stop exactly the daemons slurm-up.sh started, by the PIDs it recorded in $PIDDIR (never by name).
PIDDIR=${PIDDIR:-/tmp/slurm-ci}
for d in slurmd slurmctld slurmdbd mariadbd munged; do
  f="$PIDDIR/$d.pid"
  [ -s "$f" ] || continue
  pid=$(cat "$f")
  if kill "$pid" 2>/dev/null; then
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      kill -9 "$pid" 2>/dev/null || true
      echo "killed $d ($pid) after 10 s"
    else
      echo "stopped $d ($pid)"
    fi
  fi
  rm -f "$f"
done
