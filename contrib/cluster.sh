#!/bin/bash
# A private, real Slurm 22.05 cluster on one host: one munged, one slurmctld and
# N slurmd ("virtual nodes" n1..nN, Debian's multiple-slurmd build), all state
# under one directory.  See contrib/cluster.README.md.
#
# usage: contrib/cluster.sh start [N] | stop | restart [N] | reconfigure | status | env | conf-dir
#
#   start [N]   start (default N = $PMIXCPP_NODES or 4); waits until all N nodes
#               are idle.  Does nothing if it already runs with the same N and
#               the same configuration; restarts it otherwise.
#   stop        cancel the jobs, stop exactly the daemons started here (by their
#               recorded pids) and any slurmstepd of this cluster left behind.
#   restart [N] stop + start (e.g. after changing the mpi.conf or the plugin).
#   reconfigure slurmctld rereads its files (e.g. topology.conf); jobs and steps keep running
#   status      what runs (exit 0 if the whole cluster runs, 3 if nothing, 1 if partly)
#   env         print "export SLURM_CONF=..." for eval
#   conf-dir    print the configuration directory
#
# Environment:
#   PMIXCPP_CLUSTER_DIR       state directory            [/tmp/pmixcpp-cluster]
#   PMIXCPP_NODES             number of nodes            [4]
#   PMIXCPP_NODE_CPUS         CPUs announced per node    [64]
#   PMIXCPP_SLURMCTLD_PORT    slurmctld port             [16817]
#   PMIXCPP_SLURMD_PORT_BASE  node nK listens on base+K  [16900]
#   PMIXCPP_PLUGIN_DIR        directory searched first for plugins (our mpi_pmixcpp.so)
#   PMIXCPP_SLURM_PLUGIN_DIR  Debian's plugin directory  [from dpkg, /usr/lib/<arch>/slurm-wlm]
#   PMIXCPP_MPI_DEFAULT       MpiDefault                 [none]
#   PMIXCPP_MPI_CONF          file copied to <conf-dir>/mpi.conf [empty mpi.conf]
#   PMIXCPP_FIRST_JOB_ID      FirstJobId: two clusters on one host apart in job ids too [1]
#   PMIXCPP_SLURM_CONF_EXTRA  lines appended to slurm.conf (e.g. TopologyPlugin=topology/tree) [none]
#   PMIXCPP_NODE_ADDRS        "distinct": node nK at NodeAddr=127.0.1.K (all of 127/8 is local), so
#                             that one port per node cannot collide (MpiParams=ports=) [127.0.0.1]
#   PMIXCPP_TOPOLOGY_CONF     file copied to <conf-dir>/topology.conf [no topology.conf]
#   PMIXCPP_SLURM_DEBUG       SlurmctldDebug/SlurmdDebug [info]
#   PMIXCPP_START_TIMEOUT     seconds to wait for idle nodes [60]
#   PMIXCPP_ACCOUNTING        slurmdbd (slurmdbd + a private MariaDB, enforced limits) or none [slurmdbd]
#   PMIXCPP_SLURMDBD_PORT     slurmdbd port              [slurmctld port + 2]
#   PMIXCPP_DB_PORT           MariaDB port (127.0.0.1)   [slurmctld port + 3]
#   PMIXCPP_CHROOT            run the cluster inside this root (contrib/debian13-root.sh builds
#                             one: Debian 13, Slurm 24.11); "debian13" means that cached root.
#                             The script mounts proc/sys/dev there, runs itself inside, and on
#                             stop unmounts again once nothing runs inside.  Run Slurm's
#                             commands inside too: contrib/debian13-root.sh run srun ...
#   PMIXCPP_NETNS             1: each slurmd (and its slurmstepds and tasks) in a network
#                             namespace of its own, a veth pair to a bridge of the host, so
#                             node-to-node traffic takes the kernel's network path [0]
#   PMIXCPP_NETNS_NET         the /16 of the namespaces: bridge <net>.0.1, node nK <net>.0.(K+1) [10.77]
#   PMIXCPP_NETNS_DELAY       tc netem delay on each node's egress (one per hop), where the
#                             kernel has netem; 0 for none [10us]
set -eu

PROG=cluster.sh
CONTRIB_DIR=$(cd "$(dirname "$0")" && pwd)

STATE=${PMIXCPP_CLUSTER_DIR:-/tmp/pmixcpp-cluster}
case $STATE in /*) ;; *) STATE=$(pwd)/$STATE ;; esac
STATE=${STATE%/}
ETC=$STATE/etc
CONF=$ETC/slurm.conf
LOGDIR=$STATE/log
SPOOL=$STATE/spool
RUNDIR=$STATE/run          # pid files written by the daemons themselves
PIDDIR=$STATE/pids         # pids recorded by this script (the truth for stop)
MUNGEDIR=$STATE/munge
MUNGE_SOCKET=$MUNGEDIR/munge.socket
TMPROOT=$STATE/tmp

CTLD_PORT=${PMIXCPP_SLURMCTLD_PORT:-16817}
SLURMD_BASE=${PMIXCPP_SLURMD_PORT_BASE:-16900}
NODE_CPUS=${PMIXCPP_NODE_CPUS:-64}
DEBUG_LEVEL=${PMIXCPP_SLURM_DEBUG:-info}
START_TIMEOUT=${PMIXCPP_START_TIMEOUT:-60}
STOP_TIMEOUT=10
# Without slurmdbd installed (the Debian 13 root has none) the cluster runs without accounting.
ACCOUNTING=${PMIXCPP_ACCOUNTING:-$(command -v slurmdbd >/dev/null 2>&1 || [ -x /usr/sbin/slurmdbd ] && echo slurmdbd || echo none)}
case $ACCOUNTING in slurmdbd|none) ;; *) echo "$PROG: error: PMIXCPP_ACCOUNTING must be slurmdbd or none" >&2; exit 1 ;; esac
DBD_PORT=${PMIXCPP_SLURMDBD_PORT:-$((CTLD_PORT + 2))}
DB_PORT=${PMIXCPP_DB_PORT:-$((CTLD_PORT + 3))}
DBDIR=$STATE/db            # MariaDB data directory, socket (owned by the mysql user)
NETNS=${PMIXCPP_NETNS:-0}
case $NETNS in 0|1) ;; *) echo "$PROG: error: PMIXCPP_NETNS must be 0 or 1" >&2; exit 1 ;; esac
NETNS_NET=${PMIXCPP_NETNS_NET:-10.77}
NETNS_DELAY=${PMIXCPP_NETNS_DELAY:-10us}
NETNS_RECORD=$STATE/netns.list   # what netns_up made: "bridge|ns|veth NAME" lines

MUNGED=/usr/sbin/munged
SLURMCTLD=/usr/sbin/slurmctld
SLURMD=/usr/sbin/slurmd
SLURMSTEPD=/usr/sbin/slurmstepd
SLURMDBD=/usr/sbin/slurmdbd
MARIADBD=/usr/sbin/mariadbd

say() { echo "$PROG: $*"; }
warn() { echo "$PROG: $*" >&2; }
die() { echo "$PROG: error: $*" >&2; exit 1; }

is_uint() { case $1 in ''|*[!0-9]*) return 1 ;; *) return 0 ;; esac; }

# ---------------------------------------------------------------- dependencies
ensure_deps() {
    local b missing=
    for b in "$MUNGED" "$SLURMCTLD" "$SLURMD" "$SLURMSTEPD" /usr/bin/srun /usr/bin/sinfo \
             /usr/bin/scontrol /usr/bin/squeue /usr/bin/scancel /usr/bin/ps; do
        [ -x "$b" ] || missing="$missing $b"
    done
    if [ "$ACCOUNTING" = slurmdbd ]; then
        for b in "$SLURMDBD" "$MARIADBD" /usr/bin/mariadb-install-db /usr/bin/mariadb /usr/bin/sacctmgr; do
            [ -x "$b" ] || missing="$missing $b"
        done
    fi
    [ -z "$missing" ] && return 0
    say "missing:$missing; running install-deps.sh"
    "$CONTRIB_DIR/install-deps.sh" || die "install-deps.sh failed"
}

slurm_plugin_dir() {
    if [ -n "${PMIXCPP_SLURM_PLUGIN_DIR:-}" ]; then
        echo "$PMIXCPP_SLURM_PLUGIN_DIR"; return
    fi
    local f
    f=$(dpkg -L slurm-wlm-basic-plugins 2>/dev/null | grep '/auth_munge\.so$' | head -n1 || true)
    if [ -n "$f" ]; then
        dirname "$f"
    else
        echo "/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)/slurm-wlm"
    fi
}

# ---------------------------------------------------------------- pid records
# A recorded pid counts as ours only if it is alive, runs the expected binary
# and was started with our state directory on its command line (guards against
# pid reuse after a reboot or a crash).
pid_is_ours() { # pid binary
    local pid=$1 exe cmd want
    [ -n "$pid" ] && [ -d "/proc/$pid" ] || return 1
    exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
    want=$(readlink -f "$2")     # Debian: /usr/sbin/slurmd -> alternatives -> slurmd-wlm
    [ "$exe" = "$want" ] || [ "$exe" = "$want (deleted)" ] || return 1
    cmd=$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null) || return 1
    case $cmd in *"$STATE/"*) return 0 ;; esac
    # slurmdbd takes no path argument: start_daemon's PMIXCPP_CLUSTER_DIR marks it
    tr '\0' '\n' 2>/dev/null < "/proc/$pid/environ" | grep -qxF "PMIXCPP_CLUSTER_DIR=$STATE"
}

recorded_pid() { # name
    if [ -r "$PIDDIR/$1.pid" ]; then tr -cd '0-9' < "$PIDDIR/$1.pid"; fi
}

daemon_binary() { # name
    case $1 in
        munged) echo "$MUNGED" ;;
        slurmctld) echo "$SLURMCTLD" ;;
        slurmdbd) echo "$SLURMDBD" ;;
        mysqld) echo "$MARIADBD" ;;
        slurmd.*) echo "$SLURMD" ;;
    esac
}

# names of the recorded daemons, slurmds first, munged last (stop order)
recorded_names() {
    local f n
    [ -d "$PIDDIR" ] || return 0
    for f in "$PIDDIR"/slurmd.*.pid; do
        [ -e "$f" ] || continue
        n=${f##*/}; echo "${n%.pid}"
    done | sort -t n -k 2 -n
    [ -e "$PIDDIR/slurmctld.pid" ] && echo slurmctld
    [ -e "$PIDDIR/slurmdbd.pid" ] && echo slurmdbd
    [ -e "$PIDDIR/mysqld.pid" ] && echo mysqld
    [ -e "$PIDDIR/munged.pid" ] && echo munged
    return 0
}

running_nodes() { # count of live recorded slurmd
    local n c=0
    for n in $(recorded_names); do
        case $n in slurmd.*) pid_is_ours "$(recorded_pid "$n")" "$SLURMD" && c=$((c + 1)) ;; esac
    done
    echo $c
}

# 0: all recorded daemons alive (and there are some); 1: some dead; 3: none recorded
cluster_state() {
    local n any=0 dead=0
    for n in $(recorded_names); do
        any=1
        pid_is_ours "$(recorded_pid "$n")" "$(daemon_binary "$n")" || dead=1
    done
    [ $any = 1 ] || return 3
    [ $dead = 0 ] || return 1
    [ -e "$PIDDIR/munged.pid" ] && [ -e "$PIDDIR/slurmctld.pid" ] || return 1
    return 0
}

# ---------------------------------------------------------------- ports
port_in_use() { # port
    local hex
    hex=$(printf '%04X' "$1")
    # state 0A = LISTEN
    awk -v p=":$hex" 'NR > 1 && $4 == "0A" && substr($2, length($2) - 4) == p { f = 1 } END { exit !f }' \
        /proc/net/tcp /proc/net/tcp6 2>/dev/null
}

check_ports() { # N
    local k p busy=
    port_in_use "$CTLD_PORT" && busy="$busy $CTLD_PORT(slurmctld)"
    if [ "$ACCOUNTING" = slurmdbd ]; then
        port_in_use "$DBD_PORT" && busy="$busy $DBD_PORT(slurmdbd)"
        port_in_use "$DB_PORT" && busy="$busy $DB_PORT(mariadb)"
    fi
    for k in $(seq 1 "$1"); do
        p=$((SLURMD_BASE + k))
        port_in_use "$p" && busy="$busy $p(n$k)"
    done
    [ -z "$busy" ] || die "port(s) in use:$busy; choose others with PMIXCPP_SLURMCTLD_PORT / PMIXCPP_SLURMD_PORT_BASE"
}

# ---------------------------------------------------------------- configuration
write_conf() { # N dir  -- writes slurm.conf, mpi.conf and plugstack.conf into dir
    local n=$1 dir=$2 host plugindir k
    host=$(hostname -s)
    plugindir=$(slurm_plugin_dir)
    [ -f "$plugindir/auth_munge.so" ] || die "no Slurm plugins in $plugindir (set PMIXCPP_SLURM_PLUGIN_DIR)"
    if [ -n "${PMIXCPP_PLUGIN_DIR:-}" ]; then
        [ -d "$PMIXCPP_PLUGIN_DIR" ] || die "PMIXCPP_PLUGIN_DIR=$PMIXCPP_PLUGIN_DIR is not a directory"
        plugindir="$(cd "$PMIXCPP_PLUGIN_DIR" && pwd):$plugindir"
    fi
    {
        cat <<EOF
# Generated by contrib/cluster.sh -- do not edit; it is rewritten on start.
ClusterName=pmixcpp
MailProg=/bin/true
SlurmctldHost=$host($(ctld_addr))
SlurmctldPort=$CTLD_PORT
SlurmdPort=$((SLURMD_BASE + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCKET
PluginDir=$plugindir
PlugStackConfig=$ETC/plugstack.conf
MpiDefault=${PMIXCPP_MPI_DEFAULT:-none}

StateSaveLocation=$SPOOL/slurmctld
SlurmctldPidFile=$RUNDIR/slurmctld.pid
SlurmctldLogFile=$LOGDIR/slurmctld.log
SlurmctldDebug=$DEBUG_LEVEL
SlurmdSpoolDir=$SPOOL/%n
SlurmdPidFile=$RUNDIR/slurmd.%n.pid
SlurmdLogFile=$LOGDIR/slurmd.%n.log
SlurmdDebug=$DEBUG_LEVEL
TmpFS=$TMPROOT/%n

ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$(accounting_slurm_conf)
EpilogSlurmctld=$ETC/epilog-slurmctld
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=permit_job_expansion,bf_interval=1

ReturnToService=2
InactiveLimit=0
KillWait=5
MessageTimeout=20
SlurmctldTimeout=30
SlurmdTimeout=300
MinJobAge=60
FirstJobId=${PMIXCPP_FIRST_JOB_ID:-1}

EOF
        for k in $(seq 1 "$n"); do
            echo "NodeName=n$k NodeHostname=$host NodeAddr=$(node_addr "$k") Port=$((SLURMD_BASE + k)) CPUs=$NODE_CPUS State=UNKNOWN"
        done
        echo "PartitionName=debug Nodes=n[1-$n] Default=YES OverSubscribe=YES DefaultTime=30 MaxTime=240 State=UP"
        accounting_partitions "$n"
        [ -z "${PMIXCPP_SLURM_CONF_EXTRA:-}" ] || printf '%s\n' "$PMIXCPP_SLURM_CONF_EXTRA"
    } > "$dir/slurm.conf"
    if [ -n "${PMIXCPP_TOPOLOGY_CONF:-}" ]; then
        [ -r "$PMIXCPP_TOPOLOGY_CONF" ] || die "PMIXCPP_TOPOLOGY_CONF=$PMIXCPP_TOPOLOGY_CONF is not readable"
        cat "$PMIXCPP_TOPOLOGY_CONF" > "$dir/topology.conf"
    fi
    if [ -n "${PMIXCPP_MPI_CONF:-}" ]; then
        [ -r "$PMIXCPP_MPI_CONF" ] || die "PMIXCPP_MPI_CONF=$PMIXCPP_MPI_CONF is not readable"
        cat "$PMIXCPP_MPI_CONF" > "$dir/mpi.conf"
    else
        : > "$dir/mpi.conf"
    fi
    : > "$dir/plugstack.conf"
    write_cgroup_conf "$dir"
    accounting_write_dbd_conf "$dir"
    # the plugin's job-end clean-up of allocation jobs, with this cluster's SLURM_CONF
    printf '#!/bin/sh\nSLURM_CONF=%s exec %s\n' "$CONF" "$CONTRIB_DIR/pmixcpp-epilog-slurmctld" > "$dir/epilog-slurmctld"
}

# ---------------------------------------------------------------- accounting
# PMIXCPP_ACCOUNTING=slurmdbd (the default): a private MariaDB (mariadbd as the mysql user, data,
# socket and log under <state>/db, TCP on 127.0.0.1:$DB_PORT), slurmdbd on $DBD_PORT, and
# slurmctld with AccountingStorageType=accounting_storage/slurmdbd enforcing associations,
# limits and QOS. The Slurm database is created afresh on every start (slurmctld starts with -c,
# so job ids start over). Associations made at start:
#   account pmixcpp: root, nobody, daemon (their default); account ops: root only
#   partition "ops" (same nodes) admits account ops only (AllowAccounts)
#   QOS "small": MaxTRESPerUser=node=2, open to nobody and daemon (not their default)
# PMIXCPP_ACCOUNTING=none: no database, accounting_storage/none, partition "ops" AllowGroups=root.
DB_ACCT=slurm_acct_db
DB_USER=slurm

accounting_slurm_conf() {
    if [ "$ACCOUNTING" = none ]; then
        echo "AccountingStorageType=accounting_storage/none"
        return
    fi
    cat <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$DBD_PORT
AccountingStoragePass=$MUNGE_SOCKET
AccountingStorageEnforce=associations,limits,qos
EOF
}

accounting_partitions() { # N
    if [ "$ACCOUNTING" = none ]; then
        echo "PartitionName=ops Nodes=n[1-$1] AllowGroups=root OverSubscribe=YES DefaultTime=30 MaxTime=240 State=UP"
    else
        echo "PartitionName=ops Nodes=n[1-$1] AllowAccounts=ops OverSubscribe=YES DefaultTime=30 MaxTime=240 State=UP"
    fi
}

accounting_password() { # created once per state directory, mode 600
    local f=$STATE/db.pass
    if [ ! -s "$f" ]; then
        (umask 077 && head -c 18 /dev/urandom | base64 | tr -d '/+=' > "$f")
    fi
    cat "$f"
}

accounting_write_dbd_conf() { # dir
    [ "$ACCOUNTING" = slurmdbd ] || return 0
    (umask 077 && cat > "$1/slurmdbd.conf" <<EOF
# Generated by contrib/cluster.sh -- do not edit; it is rewritten on start.
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
DebugLevel=$DEBUG_LEVEL
LogFile=$LOGDIR/slurmdbd.log
PidFile=$RUNDIR/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$DB_PORT
StorageUser=$DB_USER
StoragePass=$(accounting_password)
StorageLoc=$DB_ACCT
EOF
    )
}

db_sql() { # sql...  -- as MariaDB's root, over the private socket (unix_socket authentication)
    mariadb --no-defaults --socket="$DBDIR/mysqld.sock" -u root -N -B -e "$*"
}

db_ready() {
    daemons_died munged mysqld || return 2
    db_sql "SELECT 1" >/dev/null 2>&1
}

dbd_ready() {
    daemons_died munged mysqld slurmdbd || return 2
    port_in_use "$DBD_PORT"
}

sacctmgr_q() { slurm sacctmgr -i -Q "$@" >/dev/null; }

accounting_associations() { # sacctmgr's flat file (QOS "small" is made before it is loaded)
    cat <<EOF
# qos small: MaxTRESPerUser=node=2
Cluster - 'pmixcpp'
Parent - 'root'
Account - 'pmixcpp':Description='users':Organization='pmixcpp'
Account - 'ops':Description='operators':Organization='pmixcpp'
Parent - 'pmixcpp'
User - 'root':DefaultAccount='pmixcpp':AdminLevel='Administrator'
User - 'nobody':DefaultAccount='pmixcpp':QOS='normal,small'
User - 'daemon':DefaultAccount='pmixcpp':QOS='normal,small'
Parent - 'ops'
User - 'root':DefaultAccount='pmixcpp':AdminLevel='Administrator'
EOF
}

accounting_start() {
    [ "$ACCOUNTING" = slurmdbd ] || return 0
    local t0 pass v
    t0=$(date +%s.%N)
    id mysql >/dev/null 2>&1 || fail_start "no user 'mysql' (install mariadb-server)"
    # data written by another MariaDB release (the host's 10.11 or the Debian 13 root's 11.8)
    # is not for this one: start afresh
    v=$("$MARIADBD" --version 2>/dev/null || true)
    [ "$(cat "$DBDIR/.pmixcpp-mariadb-version" 2>/dev/null)" = "$v" ] || rm -rf "$DBDIR"
    if [ ! -d "$DBDIR/data/mysql" ]; then
        rm -rf "$DBDIR"
        mkdir -p "$DBDIR/data"
        chown -R mysql:mysql "$DBDIR"
        chmod 750 "$DBDIR"
        mariadb-install-db --no-defaults --datadir="$DBDIR/data" --user=mysql \
            --auth-root-authentication-method=socket --skip-test-db >"$LOGDIR/mariadb-install.out" 2>&1 ||
            fail_start "mariadb-install-db failed (see $LOGDIR/mariadb-install.out)"
        echo "$v" > "$DBDIR/.pmixcpp-mariadb-version"
    fi
    rm -f "$DBDIR/mysqld.sock"
    start_daemon mysqld "$LOGDIR/mysqld.out" "$MARIADBD" --no-defaults --user=mysql \
        --datadir="$DBDIR/data" --socket="$DBDIR/mysqld.sock" --port="$DB_PORT" --bind-address=127.0.0.1 \
        --pid-file="$DBDIR/mysqld.pid" --log-error="$DBDIR/mysqld.log" --skip-name-resolve \
        --innodb-buffer-pool-size=128M --innodb-log-file-size=32M --innodb-lock-wait-timeout=900 \
        --innodb-flush-log-at-trx-commit=2 --innodb-fast-shutdown=2 --max-allowed-packet=64M
    wait_until 60 db_ready || fail_start "mariadbd exited or does not answer on $DBDIR/mysqld.sock"
    pass=$(accounting_password)
    accounting_associations > "$ETC/associations.cfg"
    if [ -s "$DBDIR/associations.done" ] && cmp -s "$ETC/associations.cfg" "$DBDIR/associations.done" &&
       db_sql "SELECT 1 FROM $DB_ACCT.pmixcpp_assoc_table LIMIT 1" >/dev/null 2>&1; then
        # same associations as last time: keep them, forget the jobs (job ids start over with -c)
        db_sql "$(db_sql "SELECT CONCAT('TRUNCATE TABLE $DB_ACCT.', table_name, ';') FROM information_schema.tables
                          WHERE table_schema = '$DB_ACCT' AND table_name LIKE 'pmixcpp\_%'
                          AND table_name NOT IN ('pmixcpp_assoc_table', 'pmixcpp_wckey_table')")" ||
            fail_start "cannot clear the job tables of the database"
        start_daemon slurmdbd "$LOGDIR/slurmdbd.out" "$SLURMDBD" -D
        wait_until 60 dbd_ready || fail_start "slurmdbd exited or does not listen on port $DBD_PORT"
    else
        rm -f "$DBDIR/associations.done"
        # a new database gives the cluster a new id: slurmctld would refuse the one in its state
        # directory ("CLUSTER ID MISMATCH")
        rm -f "$SPOOL/slurmctld/clustername"
        # the database exists before slurmdbd's first connection: when it has to create it,
        # slurmdbd connects again on the same handle, which MariaDB's client library 3.4
        # (Debian 13) leaves unable to read any result ("Number of columns in result (=1)
        # set exceeds maximum allowed number of columns (=0)": slurmdbd stops)
        db_sql "DROP DATABASE IF EXISTS $DB_ACCT;
                CREATE DATABASE $DB_ACCT;
                CREATE USER IF NOT EXISTS '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$pass';
                ALTER USER '$DB_USER'@'127.0.0.1' IDENTIFIED BY '$pass';
                GRANT ALL ON $DB_ACCT.* TO '$DB_USER'@'127.0.0.1';" ||
            fail_start "cannot prepare the database"
        start_daemon slurmdbd "$LOGDIR/slurmdbd.out" "$SLURMDBD" -D
        wait_until 60 dbd_ready || fail_start "slurmdbd exited or does not listen on port $DBD_PORT"
        # one load of a flat file (each sacctmgr call costs about a second)
        { sacctmgr_q add qos small MaxTRESPerUser=node=2 &&
          sacctmgr_q load file="$ETC/associations.cfg"; } ||
            fail_start "sacctmgr could not create the associations (see $LOGDIR/slurmdbd.log)"
        cp "$ETC/associations.cfg" "$DBDIR/associations.done"
    fi
    say "accounting: mariadb + slurmdbd ready in $(awk -v s="$t0" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }') s (slurmdbd port $DBD_PORT, db port $DB_PORT)"
}

accounting_stop() { # after slurmctld: slurmdbd, then the database
    local name pid
    for name in slurmdbd mysqld; do
        pid=$(recorded_pid "$name")
        if pid_is_ours "$pid" "$(daemon_binary "$name")"; then
            say "stopping $name: $pid"
            terminate 30 "$pid"
        fi
    done
}

# ---------------------------------------------------------------- network namespaces
# PMIXCPP_NETNS=1: node nK's slurmd runs in the network namespace <prefix>n<K> (so do the
# slurmstepds it forks and their tasks), with <net>.0.(K+1)/16 on the far end of a veth pair
# whose near end is a port of the bridge <prefix>br (<net>.0.1/16) in the host's namespace, where
# munged (its socket is a file: reachable from every namespace), slurmctld and srun stay.
# Node-to-node traffic goes veth -> bridge -> veth through the kernel's IP and bridge code
# instead of loopback. Both ends of node K's pair are named <prefix>v<K>: the processes in the
# namespace see the host's sysfs (start_slurmd), and UCX finds its TCP devices in
# /sys/class/net, where the near end's name stands. Where the kernel has netem, each node's end delays what it
# sends by PMIXCPP_NETNS_DELAY (one delay per node-to-node hop); where it has none, no delay is
# added and start says so. Names carry slurmctld's port, so two clusters' beds do not collide;
# what was made is recorded and stop removes exactly that (and a failed start stops).
NETNS_PREFIX=pxc$CTLD_PORT

ctld_addr() { if [ "$NETNS" = 1 ]; then echo "$NETNS_NET.0.1"; else echo 127.0.0.1; fi; }
node_addr() { # K
    if [ "$NETNS" = 1 ]; then echo "$NETNS_NET.$((($1 + 1) / 256)).$((($1 + 1) % 256))"
    elif [ "${PMIXCPP_NODE_ADDRS:-}" = distinct ]; then echo "127.0.1.$1"
    else echo 127.0.0.1; fi
}
node_netns() { echo "${NETNS_PREFIX}n$1"; }

netns_check() { # N
    local n=$1
    case $NETNS_NET in [0-9]*.[0-9]*) ;; *) die "PMIXCPP_NETNS_NET must be the first two octets of a /16 (e.g. 10.77)" ;; esac
    command -v ip >/dev/null 2>&1 || die "PMIXCPP_NETNS=1 needs iproute2's ip"
    command -v nsenter >/dev/null 2>&1 || die "PMIXCPP_NETNS=1 needs util-linux's nsenter"
    [ "$n" -le 60000 ] || die "PMIXCPP_NETNS=1: at most 60000 nodes"
    if ip -4 route show to match "$NETNS_NET.0.1" 2>/dev/null | grep -v "^default" | grep -qv "dev ${NETNS_PREFIX}br "; then
        die "PMIXCPP_NETNS_NET=$NETNS_NET.0.0/16 overlaps a route of this host: choose another"
    fi
}

netns_record() { echo "$*" >> "$NETNS_RECORD"; }

netns_up() { # N
    local n=$1 k ns veth br=${NETNS_PREFIX}br delay_ok=0 err
    netns_down
    ip link add "$br" type bridge 2>/dev/null || fail_start "cannot create the bridge $br (network namespaces need root and bridge support)"
    netns_record bridge "$br"
    ip addr add "$(ctld_addr)/16" dev "$br" && ip link set "$br" up ||
        fail_start "cannot configure the bridge $br"
    for k in $(seq 1 "$n"); do
        ns=$(node_netns "$k") veth=${NETNS_PREFIX}v$k
        ip netns add "$ns" || fail_start "cannot create the network namespace $ns"
        netns_record ns "$ns"
        ip link add "$veth" type veth peer name "$veth" netns "$ns" && netns_record veth "$veth" &&
            ip link set "$veth" master "$br" up &&
            ip -n "$ns" addr add "$(node_addr "$k")/16" dev "$veth" &&
            ip -n "$ns" link set "$veth" up && ip -n "$ns" link set lo up ||
            fail_start "cannot connect $ns to $br"
        if [ "$NETNS_DELAY" != 0 ]; then
            if [ $k = 1 ]; then
                if err=$(ip netns exec "$ns" tc qdisc add dev "$veth" root netem delay "$NETNS_DELAY" 2>&1); then
                    delay_ok=1
                else
                    say "netns: this kernel has no netem ($err): no per-hop delay added"
                fi
            elif [ $delay_ok = 1 ]; then
                ip netns exec "$ns" tc qdisc add dev "$veth" root netem delay "$NETNS_DELAY" ||
                    fail_start "tc netem on $ns failed"
            fi
        fi
    done
    local what="no added delay"
    [ $delay_ok = 1 ] && what="netem delay $NETNS_DELAY on each node's egress"
    say "netns: $n namespaces ${NETNS_PREFIX}n[1-$n], bridge $br $(ctld_addr)/16, nodes $(node_addr 1)..$(node_addr "$n"), $what"
}

# Remove what netns_up recorded: the veth pairs (deleting the near end deletes both at once;
# a namespace's own devices go only when the kernel gets to freeing it, a moment after its last
# process and its name), the namespaces, the bridge.
netns_down() {
    [ -s "$NETNS_RECORD" ] || { rm -f "$NETNS_RECORD"; return 0; }
    local kind name
    while read -r kind name; do
        [ "$kind" = veth ] || continue
        ! ip link show "$name" >/dev/null 2>&1 || ip link del "$name" 2>/dev/null ||
            warn "could not delete the veth pair $name"
    done < "$NETNS_RECORD"
    while read -r kind name; do
        [ "$kind" = ns ] || continue
        [ -e "/run/netns/$name" ] || continue
        ip netns del "$name" 2>/dev/null || warn "could not delete the network namespace $name"
    done < "$NETNS_RECORD"
    while read -r kind name; do
        [ "$kind" = bridge ] || continue
        ! ip link show "$name" >/dev/null 2>&1 || ip link del "$name" 2>/dev/null ||
            warn "could not delete the bridge $name"
    done < "$NETNS_RECORD"
    rm -f "$NETNS_RECORD"
}

# the slurmd of node K: in its network namespace alone (nsenter execs it: the recorded pid stays
# slurmd's). Not `ip netns exec`: it mounts a sysfs of its own in a new mount namespace, without
# the host's /sys/fs/cgroup, and slurmd's cgroup plugin then fails to start. In the host's sysfs
# /sys/class/net lists the host's interfaces, among them the near end of the node's veth pair,
# whose name its far end in the namespace bears too.
start_slurmd() { # K
    local k=$1
    if [ "$NETNS" = 1 ]; then
        start_daemon "slurmd.n$k" "$LOGDIR/slurmd.n$k.out" nsenter --net="/run/netns/$(node_netns "$k")" \
            "$SLURMD" -D -N "n$k" -f "$CONF"
        wait_until 5 pid_is_ours "$(recorded_pid "slurmd.n$k")" "$SLURMD" ||
            fail_start "slurmd of n$k did not start in $(node_netns "$k")"
    else
        start_daemon "slurmd.n$k" "$LOGDIR/slurmd.n$k.out" "$SLURMD" -D -N "n$k" -f "$CONF"
    fi
}

# ---------------------------------------------------------------- helpers
slurm() { SLURM_CONF=$CONF "$@"; }

show_logs() {
    local f
    for f in "$LOGDIR"/munged.log "$LOGDIR"/munged.out "$DBDIR"/mysqld.log "$LOGDIR"/slurmdbd.log \
             "$LOGDIR"/slurmdbd.out "$LOGDIR"/slurmctld.log "$LOGDIR"/slurmctld.out \
             "$LOGDIR"/slurmd.n*.log "$LOGDIR"/slurmd.n*.out; do
        [ -s "$f" ] || continue
        # with -D the daemons copy their log to stdout: show the .out only if no .log
        case $f in *.out) [ -s "${f%.out}.log" ] && continue ;; esac
        echo "---- tail $f" >&2
        tail -n 15 "$f" >&2
    done
}

fail_start() {
    warn "error: $*"
    show_logs
    warn "stopping what was started"
    do_stop >/dev/null 2>&1 || true
    exit 1
}

# start_daemon name logfile cmd...  -- new session, background, pid recorded
start_daemon() {
    local name=$1 out=$2; shift 2
    local pidfile=$PIDDIR/$name.pid
    rm -f "$pidfile"
    # setsid forks when the caller leads a process group, so $! is not reliable:
    # the shell records its own pid in the new session, then execs the daemon.
    # shellcheck disable=SC2016
    # cwd: the log directory (core files land there; no user directory stays busy)
    (cd "$LOGDIR" && PMIXCPP_CLUSTER_DIR=$STATE SLURM_CONF=$CONF \
        exec setsid sh -c 'echo $$ > "$0"; exec "$@"' "$pidfile" "$@" </dev/null >>"$out" 2>&1) &
    for _ in $(seq 1 50); do
        [ -s "$pidfile" ] && return 0
        sleep 0.1
    done
    fail_start "$name did not start"
}

wait_until() { # seconds cmd...   -- poll every 0.2 s; cmd returning 2 gives up at once
    local deadline=$(( $(date +%s) + $1 )) rc; shift
    while :; do
        rc=0; "$@" || rc=$?
        [ $rc != 0 ] || return 0
        [ $rc != 2 ] || return 1
        [ "$(date +%s)" -lt "$deadline" ] || return 1
        sleep 0.2
    done
}

# 2 if a recorded daemon of the given names died (start cannot succeed any more)
daemons_died() { # names...
    local name
    for name in "$@"; do
        pid_is_ours "$(recorded_pid "$name")" "$(daemon_binary "$name")" || return 2
    done
    return 0
}

munge_ready() {
    daemons_died munged || return 2
    [ -S "$MUNGE_SOCKET" ]
}

ctld_ready() {
    daemons_died munged slurmctld || return 2
    slurm scontrol ping >/dev/null 2>&1
}

nodes_ready() { # N
    local k names="munged slurmctld"
    for k in $(seq 1 "$1"); do names="$names slurmd.n$k"; done
    # shellcheck disable=SC2086
    daemons_died $names || return 2
    idle_nodes_ok "$1"
}

idle_nodes_ok() { # N  -- all N nodes idle
    local out
    out=$(slurm sinfo -h -N -p debug -o '%N %t' 2>/dev/null) || return 1
    [ "$(printf '%s\n' "$out" | awk '$2 == "idle"' | wc -l)" -eq "$1" ]
}

alive() { [ -d "/proc/$1" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }

# terminate seconds pids...: TERM, wait up to the given seconds, then KILL
terminate() {
    local p left timeout=$1
    shift
    [ $# -gt 0 ] || return 0
    kill -TERM "$@" 2>/dev/null || true
    for _ in $(seq 1 $((timeout * 10))); do
        left=
        for p in "$@"; do alive "$p" && left="$left $p"; done
        [ -n "$left" ] || return 0
        sleep 0.1
    done
    warn "still alive after ${timeout}s, sending KILL:$left"
    # shellcheck disable=SC2086
    kill -KILL $left 2>/dev/null || true
    for _ in $(seq 1 30); do
        left=
        for p in "$@"; do alive "$p" && left="$left $p"; done
        [ -n "$left" ] || return 0
        sleep 0.1
    done
    warn "could not kill:$left"
}

# slurmstepd processes of this cluster: the slurmstepd binary with a file of
# our state directory open (its log file, SlurmdLogFile) or its working
# directory there, or carrying the PMIXCPP_CLUSTER_DIR=<state> that
# start_daemon gives the slurmd it forks from.  Never matched by name.
our_stepds() {
    local d pid exe want
    want=$(readlink -f "$SLURMSTEPD")
    for d in /proc/[0-9]*; do
        pid=${d#/proc/}
        exe=$(readlink "$d/exe" 2>/dev/null) || continue
        [ "$exe" = "$want" ] || [ "$exe" = "$want (deleted)" ] || continue
        if holds_state_file "$d" ||
           tr '\0' '\n' 2>/dev/null < "$d/environ" | grep -qxF "PMIXCPP_CLUSTER_DIR=$STATE"; then
            echo "$pid"
        fi
    done
}

holds_state_file() { # /proc/<pid>: an open file or the cwd under $STATE/
    local f t
    for f in "$1"/cwd "$1"/fd/*; do
        t=$(readlink "$f" 2>/dev/null) || continue
        case $t in "$STATE"/*) return 0 ;; esac
    done
    return 1
}

# all descendants of the given pids (not the pids themselves)
descendants() {
    [ $# -gt 0 ] || return 0
    ps -e -o pid=,ppid= | awk -v roots=" $* " '
        { parent[$1] = $2; pids[NR] = $1 }
        END {
            n = split(roots, r, " "); for (i = 1; i <= n; i++) mark[r[i]] = 1
            changed = 1
            while (changed) {
                changed = 0
                for (i in pids) { p = pids[i]
                    if (!(p in mark) && (parent[p] in mark)) { mark[p] = 2; changed = 1 } }
            }
            for (p in mark) if (mark[p] == 2) print p
        }'
}

# ---------------------------------------------------------------- commands
do_stop() {
    local n pid ids stepds tasks daemons='' ctld st=0
    ensure_deps
    cluster_state || st=$?
    if [ $st = 3 ] && [ -z "$(our_stepds)" ]; then
        say "not running ($STATE)"
        rm -f "$PIDDIR"/*.pid 2>/dev/null || true
        netns_down
        return 0
    fi

    # Cancel the jobs while slurmctld still runs, so steps end in order.
    ctld=$(recorded_pid slurmctld)
    if pid_is_ours "$ctld" "$SLURMCTLD"; then
        ids=$(slurm squeue -h -o '%A' 2>/dev/null | tr '\n' ' ' || true)
        if [ -n "${ids// /}" ]; then
            say "cancelling jobs: $ids"
            # shellcheck disable=SC2086
            slurm scancel $ids 2>/dev/null || true
            # shellcheck disable=SC2016
            wait_until 15 sh -c '[ -z "$(SLURM_CONF='"$CONF"' squeue -h -o %A 2>/dev/null)" ]' ||
                warn "jobs still listed after 15 s; stopping anyway"
        fi
    fi

    # slurmd and slurmctld first (munged last: the daemons talk to it on the way out)
    for n in $(recorded_names); do
        case $n in munged|slurmdbd|mysqld) continue ;; esac
        pid=$(recorded_pid "$n")
        if pid_is_ours "$pid" "$(daemon_binary "$n")"; then
            daemons="$daemons $pid"
        fi
    done
    if [ -n "$daemons" ]; then
        say "stopping slurm daemons:$daemons"
        # shellcheck disable=SC2086
        terminate "$STOP_TIMEOUT" $daemons
    fi

    # slurmstepd processes outlive slurmd by design; end them and their tasks.
    stepds=$(our_stepds | tr '\n' ' ')
    if [ -n "${stepds// /}" ]; then
        # shellcheck disable=SC2086
        tasks=$(descendants $stepds | tr '\n' ' ')
        say "stopping leftover slurmstepd: ${stepds% }${tasks:+ (tasks: ${tasks% })}"
        # tasks first (TERM, then KILL), then the slurmstepds, which ignore TERM
        # shellcheck disable=SC2086
        terminate 3 $tasks
        # shellcheck disable=SC2086
        terminate 1 $stepds
    fi

    accounting_stop
    pid=$(recorded_pid munged)
    if pid_is_ours "$pid" "$MUNGED"; then
        say "stopping munged: $pid"
        terminate "$STOP_TIMEOUT" "$pid"
    fi
    rm -f "$PIDDIR"/*.pid
    netns_down
    say "stopped ($STATE)"
}

do_start() {
    local n=$1 k tmpd same=1 st=0 v f name
    if ! is_uint "$n" || [ "$n" -lt 1 ]; then die "bad node count '$n'"; fi
    for v in "$CTLD_PORT" "$SLURMD_BASE" "$NODE_CPUS" "$START_TIMEOUT"; do
        is_uint "$v" || die "not a number: '$v' (ports, CPUs, timeout)"
    done
    ensure_deps
    [ "$(id -u)" = 0 ] || die "must run as root (SlurmUser=root, private munged)"

    mkdir -p "$STATE"
    tmpd=$(mktemp -d "$STATE/.conf.XXXXXX")
    write_conf "$n" "$tmpd"

    cluster_state || st=$?
    if [ $st = 0 ]; then
        for f in slurm.conf mpi.conf plugstack.conf topology.conf cgroup.conf slurmdbd.conf epilog-slurmctld; do
            [ -e "$tmpd/$f" ] || [ -e "$ETC/$f" ] || continue
            cmp -s "$tmpd/$f" "$ETC/$f" || same=0
        done
        if [ $same = 1 ] && [ "$(running_nodes)" = "$n" ]; then
            rm -rf "$tmpd"
            say "already running with $n nodes ($STATE); nothing to do"
            say "export SLURM_CONF=$CONF"
            return 0
        fi
        if [ "$(running_nodes)" != "$n" ]; then
            say "running with $(running_nodes) nodes, $n wanted: restarting"
        else
            say "configuration changed (slurm.conf/mpi.conf/plugin dir): restarting"
        fi
        do_stop
    elif [ $st = 1 ]; then
        say "partly running (some daemon died): cleaning up first"
        do_stop
    elif [ -n "$(our_stepds)" ]; then
        do_stop
    fi

    check_ports "$n"
    [ "$NETNS" = 0 ] || netns_check "$n"

    # fresh directories; the munge key survives restarts
    mkdir -p "$ETC" "$LOGDIR" "$SPOOL" "$RUNDIR" "$PIDDIR" "$MUNGEDIR" "$TMPROOT"
    chmod 755 "$STATE" "$ETC" "$LOGDIR" "$SPOOL" "$RUNDIR" "$TMPROOT"
    chmod 700 "$PIDDIR"
    chmod 755 "$MUNGEDIR"     # socket must be reachable; munged rejects group/other-writable dirs
    rm -f "$PIDDIR"/*.pid "$RUNDIR"/*.pid
    rm -rf "$SPOOL"/n[0-9]* "$TMPROOT"/n[0-9]*
    for f in "$LOGDIR"/*; do [ -e "$f" ] && mv -f "$f" "$f.old"; done 2>/dev/null || true
    rm -f "$LOGDIR"/*.old.old 2>/dev/null || true
    for f in slurm.conf mpi.conf plugstack.conf; do mv -f "$tmpd/$f" "$ETC/$f"; done
    if [ -e "$tmpd/topology.conf" ]; then mv -f "$tmpd/topology.conf" "$ETC/"; else rm -f "$ETC/topology.conf"; fi
    if [ -e "$tmpd/slurmdbd.conf" ]; then mv -f "$tmpd/slurmdbd.conf" "$ETC/"; else rm -f "$ETC/slurmdbd.conf"; fi
    if [ -e "$tmpd/cgroup.conf" ]; then mv -f "$tmpd/cgroup.conf" "$ETC/"; else rm -f "$ETC/cgroup.conf"; fi
    mv -f "$tmpd/epilog-slurmctld" "$ETC/epilog-slurmctld"
    chmod 755 "$ETC/epilog-slurmctld"
    rmdir "$tmpd"
    chmod 644 "$ETC"/*.conf
    [ ! -e "$ETC/slurmdbd.conf" ] || chmod 600 "$ETC/slurmdbd.conf"
    # a state directory written by another Slurm release (the host's or the Debian 13 root's)
    # is not readable by this one: start it afresh
    v=$("$SLURMCTLD" -V 2>/dev/null || true)
    if [ -d "$SPOOL/slurmctld" ] && [ "$(cat "$SPOOL/slurmctld/.pmixcpp-slurm-version" 2>/dev/null)" != "$v" ]; then
        rm -rf "$SPOOL/slurmctld"
    fi
    mkdir -p "$SPOOL/slurmctld"
    echo "$v" > "$SPOOL/slurmctld/.pmixcpp-slurm-version"
    for k in $(seq 1 "$n"); do
        mkdir -p "$SPOOL/n$k" "$TMPROOT/n$k"
        chmod 1777 "$TMPROOT/n$k"
    done

    # munge: private key, socket, pid, log, seed
    if [ ! -s "$MUNGEDIR/munge.key" ]; then
        (umask 077 && dd if=/dev/urandom of="$MUNGEDIR/munge.key" bs=1024 count=1 2>/dev/null)
    fi
    chmod 600 "$MUNGEDIR/munge.key"
    rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
    start_daemon munged "$LOGDIR/munged.out" "$MUNGED" --foreground --force \
        --socket="$MUNGE_SOCKET" --key-file="$MUNGEDIR/munge.key" \
        --pid-file="$RUNDIR/munged.pid" --log-file="$LOGDIR/munged.log" \
        --seed-file="$MUNGEDIR/munged.seed" --num-threads=4
    wait_until 10 munge_ready || fail_start "munged exited or did not create $MUNGE_SOCKET"
    [ "$NETNS" = 0 ] || netns_up "$n"

    accounting_start

    start_daemon slurmctld "$LOGDIR/slurmctld.out" "$SLURMCTLD" -D -c -f "$CONF"
    wait_until 20 ctld_ready || fail_start "slurmctld exited or does not answer (port $CTLD_PORT)"

    for k in $(seq 1 "$n"); do start_slurmd "$k"; done

    if ! wait_until "$START_TIMEOUT" nodes_ready "$n"; then
        slurm sinfo -N >&2 || true
        # shellcheck disable=SC2046
        daemons_died $(recorded_names) || fail_start "a daemon exited during start"
        fail_start "not all $n nodes idle after ${START_TIMEOUT}s"
    fi
    for name in $(recorded_names); do
        pid_is_ours "$(recorded_pid "$name")" "$(daemon_binary "$name")" ||
            fail_start "$name exited during start"
    done
    say "running: $n nodes n[1-$n], slurmctld port $CTLD_PORT, slurmd ports $((SLURMD_BASE + 1))-$((SLURMD_BASE + n)), state $STATE"
    say "export SLURM_CONF=$CONF"
}

do_status() {
    local n pid st=0 stepds
    cluster_state || st=$?
    echo "state directory: $STATE"
    if [ $st = 3 ]; then
        stepds=$(our_stepds | tr '\n' ' ')
        echo "not running${stepds:+ (leftover slurmstepd: $stepds)}"
        return 3
    fi
    for n in $(recorded_names); do
        pid=$(recorded_pid "$n")
        if pid_is_ours "$pid" "$(daemon_binary "$n")"; then
            printf '  %-12s pid %-8s running\n' "$n" "$pid"
        else
            printf '  %-12s pid %-8s DEAD\n' "$n" "$pid"
        fi
    done
    stepds=$(our_stepds | tr '\n' ' ')
    [ -z "${stepds// /}" ] || echo "  slurmstepd:  ${stepds% }"
    echo "SLURM_CONF=$CONF"
    if pid_is_ours "$(recorded_pid slurmctld)" "$SLURMCTLD"; then
        slurm sinfo -N -o '%10N %10P %6t %5c %O' || true
        slurm squeue || true
    fi
    return $st
}

# ---------------------------------------------------------------- chroot mode
# With PMIXCPP_CHROOT the whole script runs again inside the root (the checkout
# and /tmp are bind-mounted at the same paths, so every path stays the same);
# only mounting and unmounting happen out here.
chroot_root() {
    case ${PMIXCPP_CHROOT:-} in
        '') return 1 ;;
        debian13) "$CONTRIB_DIR/debian13-root.sh" path ||
                      die "the Debian 13 root is not built: contrib/debian13-root.sh build" ;;
        *) echo "${PMIXCPP_CHROOT%/}" ;;
    esac
}

chroot_dispatch() { # cmd args...
    local root rc=0
    root=$(chroot_root)
    [ -x "$root/usr/sbin/slurmd" ] || die "PMIXCPP_CHROOT=$root holds no Slurm (contrib/debian13-root.sh build)"
    export PMIXCPP_DEBIAN13_ROOT=$root
    case $1 in env|conf-dir|help|-h|--help) ;; *) "$CONTRIB_DIR/debian13-root.sh" mount ;; esac
    chroot "$root" /usr/bin/env PMIXCPP_IN_CHROOT="$root" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/bash "$CONTRIB_DIR/cluster.sh" "$@" || rc=$?
    case $1 in stop) "$CONTRIB_DIR/debian13-root.sh" umount ;; esac
    return $rc
}

# Slurm 23.02 and newer want cgroup.conf; without cgroups mounted here they run
# with the cgroup plugin disabled.
write_cgroup_conf() { # dir
    local v
    v=$("$SLURMD" -V 2>/dev/null | sed -n 's/^slurm[^0-9]*\([0-9]*\)\..*/\1/p')
    if [ -n "$v" ] && [ "$v" -ge 23 ]; then
        echo "CgroupPlugin=disabled" > "$1/cgroup.conf"
    fi
}

# slurmctld rereads slurm.conf and topology.conf. Slurm 22.05: `scontrol reconfigure`. Slurm 24.11
# re-executes slurmctld on a reconfigure, and in this test bed it never gets there (seen: it logs
# "Processing Reconfiguration Request" and nothing more, `scontrol reconfigure` times out, SIGHUP
# is not acted on either): from Slurm 24 on slurmctld alone is restarted with the state it saves
# on SIGTERM (started without -c), so running jobs and steps go on.
do_reconfigure() {
    local v ctld
    ensure_deps
    ctld=$(recorded_pid slurmctld)
    pid_is_ours "$ctld" "$SLURMCTLD" || die "slurmctld is not running ($STATE)"
    v=$("$SLURMCTLD" -V 2>/dev/null | sed -n 's/^slurm[^0-9]*\([0-9]*\)\..*/\1/p')
    if [ -z "$v" ] || [ "$v" -lt 24 ]; then
        slurm scontrol reconfigure
        return
    fi
    terminate "$STOP_TIMEOUT" "$ctld"
    start_daemon slurmctld "$LOGDIR/slurmctld.out" "$SLURMCTLD" -D -f "$CONF"
    wait_until 20 ctld_ready || die "slurmctld exited or does not answer after its restart (port $CTLD_PORT)"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
if [ -z "${PMIXCPP_IN_CHROOT:-}" ] && [ -n "${PMIXCPP_CHROOT:-}" ]; then
    chroot_dispatch "$cmd" "$@"
    exit $?
fi
case $cmd in
    start)    do_start "${1:-${PMIXCPP_NODES:-4}}" ;;
    stop)     do_stop ;;
    restart)  do_stop; do_start "${1:-${PMIXCPP_NODES:-4}}" ;;
    reconfigure) do_reconfigure ;;
    status)   do_status ;;
    env)      echo "export SLURM_CONF=$CONF" ;;
    conf-dir) echo "$ETC" ;;
    -h|--help|help) sed -n '2,47p' "$0" | sed 's/^# \{0,1\}//' ;;
    *) sed -n '6,6p' "$0" | sed 's/^# //' >&2; exit 2 ;;
esac
