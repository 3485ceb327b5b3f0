#!/usr/bin/env bash
# Bring up a real single-node SLURM cluster on this machine (Debian/Ubuntu, as root, no systemd needed):
# munged, slurmctld and slurmd, started directly; every PID lands in $PIDDIR/<daemon>.pid for slurm-down.sh.
# Recipe verified in ../../../shared/spec/snakemake-slurm.md §2 (the project's SLURM notes).
#
#   PIDDIR=/tmp/slurm-ci  where the PID files go (one directory per cluster)
#   SLURM_INSTALL=0       1: apt-get install the missing Debian packages first (CI does this in .ci/run)
#   WITH_DBD=0            1: also MariaDB + slurmdbd, so `sacct` works (needs slurmdbd mariadb-server)
#
# Without slurmdbd `sacct` fails ("accounting storage is disabled") and the Snakemake SLURM plugin, which
# picks sacct whenever the binary exists, never learns that jobs finished. Hence MinJobAge=3600 below and
# `slurm-status-command: squeue` in profiles/slurm-ci.
#
# Exit status: 0 up; 3 SLURM unavailable here (not root, packages missing, a foreign slurm.conf or a
# cluster already running: nothing was started); anything else: bring-up failed (run slurm-down.sh).
set -euo pipefail
PIDDIR=${PIDDIR:-/tmp/slurm-ci}
WITH_DBD=${WITH_DBD:-0}
SLURM_INSTALL=${SLURM_INSTALL:-0}
MARK="# written by attnexp tests/slurm/slurm-up.sh"
unavailable() { echo "slurm-up: unavailable: $*" >&2; exit 3; }
start_ns=$(date +%s%N)

[ "$(id -u)" = 0 ] || unavailable "must run as root (daemons, /etc/slurm, /run/munge)"
PKGS="slurmctld slurmd slurm-client munge"
[ "$WITH_DBD" = 1 ] && PKGS="$PKGS slurmdbd mariadb-server"
missing=$(for p in $PKGS; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done | xargs)
if [ -n "$missing" ]; then
  [ "$SLURM_INSTALL" = 1 ] || unavailable "packages missing: $missing (apt-get install -y --no-install-recommends $missing, or SLURM_INSTALL=1)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q && apt-get install -y -q --no-install-recommends $missing || unavailable "apt-get install $missing failed"
fi
if [ -s /etc/slurm/slurm.conf ] && ! grep -qF "$MARK" /etc/slurm/slurm.conf; then
  unavailable "/etc/slurm/slurm.conf belongs to a site installation; not overwriting it"
fi
if pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null; then
  unavailable "slurmctld/slurmd already running (another test run? stop it with its slurm-down.sh)"
fi

mkdir -p "$PIDDIR"
HOST=$(hostname -s)
NCPU=$(nproc)
MEM_MB=$(( $(awk '/MemTotal/{print $2}' /proc/meminfo) / 1024 - 512 ))

# ---- munge: key mode 400 owned by munge; socket dir world-traversable ----
if [ ! -s /etc/munge/munge.key ]; then
  mungekey --create --keyfile=/etc/munge/munge.key 2>/dev/null \
    || dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
fi
chown munge:munge /etc/munge/munge.key; chmod 400 /etc/munge/munge.key
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge; chmod 755 /run/munge
if [ -s /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null; then
  echo "munged already running (pid $(cat /run/munge/munged.pid)); reusing it, not ours to stop"
else
  rm -f /run/munge/munged.pid
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
  for _ in $(seq 50); do [ -s /run/munge/munged.pid ] && break; sleep 0.1; done
  cp /run/munge/munged.pid "$PIDDIR/munged.pid"
fi
munge -n | unmunge >/dev/null

# ---- accounting ----
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
if [ "$WITH_DBD" = 1 ]; then
  ACCT="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
JobAcctGatherType=jobacct_gather/linux"
else
  ACCT="AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none"
fi

# ---- slurm.conf (before slurmdbd: sacctmgr finds slurmdbd through it) ----
cat > /etc/slurm/slurm.conf <<CONF
$MARK
ClusterName=ci
SlurmctldHost=${HOST}
SlurmUser=root
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
# no cgroups: works in unprivileged containers and VMs
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
${ACCT}
JobCompType=jobcomp/none
# keep finished jobs in slurmctld memory for 1 h so 'squeue --states=all' still reports them
MinJobAge=3600
NodeName=${HOST} CPUs=${NCPU} RealMemory=${MEM_MB} State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF

# ---- optional accounting database: MariaDB + slurmdbd ----
if [ "$WITH_DBD" = 1 ]; then
  mkdir -p /run/mysqld; chown mysql:mysql /run/mysqld
  nohup /usr/sbin/mariadbd --user=mysql --bind-address=127.0.0.1 >/var/log/slurm/mariadb.log 2>&1 &
  echo $! > "$PIDDIR/mariadbd.pid"
  for _ in $(seq 100); do mysqladmin ping >/dev/null 2>&1 && break; sleep 0.2; done
  mysql -e "CREATE DATABASE IF NOT EXISTS slurm_acct_db;
            CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurmci';
            GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost'; FLUSH PRIVILEGES;"
  cat > /etc/slurm/slurmdbd.conf <<CONF
$MARK
AuthType=auth/munge
DbdHost=localhost
SlurmUser=root
LogFile=/var/log/slurm/slurmdbd.log
PidFile=/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=slurm
StoragePass=slurmci
StorageLoc=slurm_acct_db
CONF
  chmod 600 /etc/slurm/slurmdbd.conf
  rm -f /run/slurmdbd.pid
  /usr/sbin/slurmdbd
  for _ in $(seq 100); do [ -s /run/slurmdbd.pid ] && break; sleep 0.1; done
  cp /run/slurmdbd.pid "$PIDDIR/slurmdbd.pid"
  for _ in $(seq 300); do sacctmgr -n list cluster >/dev/null 2>&1 && break; sleep 0.2; done
  sacctmgr -i add cluster ci >/dev/null 2>&1 || true
fi

# ---- controller + node ----
rm -f /run/slurmctld.pid /run/slurmd.pid
/usr/sbin/slurmctld -i      # -i: ignore state saved by an earlier run
for _ in $(seq 100); do [ -s /run/slurmctld.pid ] && break; sleep 0.1; done
cp /run/slurmctld.pid "$PIDDIR/slurmctld.pid"
for _ in $(seq 100); do scontrol ping >/dev/null 2>&1 && break; sleep 0.1; done
scontrol ping >/dev/null || { echo "slurmctld does not answer; see /var/log/slurm/slurmctld.log" >&2; exit 1; }
/usr/sbin/slurmd
for _ in $(seq 100); do [ -s /run/slurmd.pid ] && break; sleep 0.1; done
cp /run/slurmd.pid "$PIDDIR/slurmd.pid"
for _ in $(seq 150); do sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|alloc)' && break; sleep 0.1; done
sinfo -h -o %T | grep -qE '^(idle|mixed|alloc)' || { sinfo; echo "node not idle; see /var/log/slurm/slurmd.log" >&2; exit 1; }

# ---- smoke job ----
JID=$(sbatch --parsable -o /dev/null --wrap true)
for _ in $(seq 200); do squeue -h -j "$JID" --states=all -o %T | grep -q COMPLETED && break; sleep 0.1; done
state=$(squeue -h -j "$JID" --states=all -o %T)
[ "$state" = COMPLETED ] || { echo "smoke job $JID ended as '$state'" >&2; exit 1; }
ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
echo "slurm up on $HOST ($NCPU CPUs, $MEM_MB MB) in $((ms / 1000)).$(printf %03d $((ms % 1000))) s; smoke job $JID $state; pids in $PIDDIR"
