# Shared helpers for the integration tests: sourced by run.sh and each t-*.sh.
# The tests run real srun against the real local cluster of contrib/cluster.sh.

: "${PMIXCPP_CLUSTER_DIR:=/tmp/pmixcpp-cluster}"
export PMIXCPP_CLUSTER_DIR
# OpenMPI's ranks waiting in MPI yield the CPU instead of spinning: the test bed is
# oversubscribed (up to 128 ranks, and the other stack's tests, on 2 CPUs), where OpenMPI
# advises it
export OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1}

t_failures=0

fail() { echo "  FAIL: $*"; t_failures=$((t_failures + 1)); }
pass() { echo "  ok: $*"; }

# expect_eq WHAT EXPECTED ACTUAL
expect_eq() {
    if [ "$2" = "$3" ]; then pass "$1"; else fail "$1: expected '$2', got '$3'"; fi
}

# expect_match WHAT REGEX TEXT
expect_match() {
    if printf '%s\n' "$3" | grep -Eq -- "$2"; then pass "$1"; else fail "$1: no line matches /$2/ in: $(printf '%s' "$3" | head -c 2000)"; fi
}

expect_no_match() {
    if printf '%s\n' "$3" | grep -Eq -- "$2"; then fail "$1: unexpected /$2/ in: $(printf '%s' "$3" | head -c 2000)"; else pass "$1"; fi
}

# run_srun SECONDS ARGS... : srun with a hard time limit; output in $out, status in $rc
run_srun() {
    local limit=$1; shift
    local t0=$SECONDS
    out=$(timeout -k 5 "$limit" srun "$@" 2>&1)
    rc=$?
    # 137 is also how srun reports a task killed by SIGKILL: a timeout only if the limit passed
    if [ $rc -eq 124 ] || { [ $rc -eq 137 ] && [ $((SECONDS - t0)) -ge "$limit" ]; }; then
        echo "  srun $* timed out after ${limit}s"
    fi
    return 0
}

# steps_left SECONDS: the steps still listed (batch and extern steps aside) once SECONDS have
# passed or none is left. Ending a step is asynchronous (srun returns, then slurmctld tells each
# slurmd to end what is left), so a step that is being ended is waited for, not reported.
steps_left() {
    local left="" _
    for _ in $(seq $(($1 * 5))); do
        left=$(squeue -h -s 2>/dev/null | grep -v '\.extern' | grep -v batch)
        [ -z "$left" ] && break
        sleep 0.2
    done
    printf '%s' "$left"
}

# The per-node slurmd log files of the cluster.
slurmd_logs() { cat "$PMIXCPP_CLUSTER_DIR"/log/slurmd.*.log 2>/dev/null; }

# log_mark: each slurmd log file with its length now; logs_since MARK: the lines each of them got
# after MARK. (An offset into all the files at once would be wrong as soon as two of them grow.)
log_mark() {
    local f
    for f in "$PMIXCPP_CLUSTER_DIR"/log/slurmd.*.log; do [ -f "$f" ] && echo "$f $(wc -l < "$f")"; done
}
logs_since() {
    local f n
    while read -r f n; do [ -n "$f" ] && tail -n +$((n + 1)) "$f"; done <<< "$1"
}

# Restart the cluster with a given mpi.conf content (or none) and MpiDefault.
# usage: cluster_restart_with MPI_CONF_TEXT [MPI_DEFAULT]
cluster_restart_with() {
    local conf="$PMIXCPP_CLUSTER_DIR.mpi.conf"
    printf '%s\n' "$1" > "$conf"
    PMIXCPP_MPI_CONF="$conf" PMIXCPP_MPI_DEFAULT="${2:-}" "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart >/dev/null 2>&1
}

# wait_gone PATH SECONDS: true once PATH no longer exists
wait_gone() {
    local i=0
    while [ -e "$1" ]; do
        [ $i -ge $(($2 * 10)) ] && return 1
        sleep 0.1; i=$((i + 1))
    done
    return 0
}

# wait_idle NODES SECONDS: true once every node of NODES (a Slurm hostlist) is idle again. A step
# whose slurmstepd was killed leaves its nodes completing (the epilog, slurmd's clean-up) for a
# while after squeue stopped listing the job, longer on a loaded machine; a step started at once
# would wait in the queue for them.
wait_idle() {
    local want i
    want=$(scontrol show hostnames "$1" 2>/dev/null | wc -l)
    for i in $(seq $(($2 * 5))); do
        [ "$(sinfo -h -N -n "$1" -t idle -o '%N' 2>/dev/null | sort -u | wc -l)" -ge "$want" ] && return 0
        sleep 0.2
    done
    return 1
}

# wait_lines FILE REGEX COUNT PID SECONDS: true once FILE has COUNT lines matching REGEX; gives up
# when PID (the srun that writes FILE) ended or SECONDS passed
wait_lines() {
    local end=$((SECONDS + $5))
    while [ $SECONDS -lt $end ]; do
        [ "$(grep -c -- "$2" "$1")" -ge "$3" ] && return 0
        kill -0 "$4" 2>/dev/null || break
        sleep 0.1
    done
    [ "$(grep -c -- "$2" "$1")" -ge "$3" ]
}

# start_ready LOG COUNT NODES CMD...: start CMD (an srun) in the background with its output in LOG
# (its pid in $srun_pid) and wait until COUNT lines of LOG begin with READY (wait_lines, 150 s).
# An srun that ends before that is said with its status; one that ended having printed nothing at
# all (no allocation error, no rank's line) is started once more when NODES are idle again.
start_ready() {
    local log=$1 count=$2 nodes=$3 try rc
    shift 3
    for try in 1 2; do
        local t0=$SECONDS
        # emptied here, not only by the child's redirection: until the forked child has opened
        # it, the log still holds the previous run's READY lines, and the wait would count them
        : >"$log"
        "$@" >"$log" 2>&1 &
        srun_pid=$!
        wait_lines "$log" '^READY' "$count" "$srun_pid" 150 && return 0
        if kill -0 "$srun_pid" 2>/dev/null; then
            echo "    srun still running after $((SECONDS - t0)) s with $(grep -c '^READY' "$log") of $count ranks ready ($(wc -l < "$log") lines of output)"
            return 1
        fi
        wait "$srun_pid"; rc=$?
        echo "    srun ended with status $rc before $count ranks were ready, after $(wc -l < "$log") lines of output"
        [ -s "$log" ] && return 1
        [ $try = 1 ] && { echo "    (started once more)"; wait_idle "$nodes" 120; }
    done
    return 1
}

# mpi_build PROG...: compile tests/programs/PROG.c with Debian's mpicc into $work, a fresh
# directory removed at exit. Returns false, after a SKIP line, when mpicc is not installed.
mpi_build() {
    command -v mpicc >/dev/null 2>&1 || { echo "  SKIP: mpicc not installed"; return 1; }
    local src="${PMIXCPP_PREFIX:-}/libexec/pmixcpp/tests" p
    [ -f "$src/$1.c" ] || src="$PMIXCPP_SRCDIR/tests/programs"
    work=$(mktemp -d /tmp/pmixcpp-ompi.XXXXXX)
    trap 'rm -rf "$work"' EXIT
    for p in "$@"; do
        # a program that also calls PMIx itself: the system's pmix.h and libpmix (at run time the
        # step's LD_LIBRARY_PATH puts ours first)
        local flags=""
        grep -q '#include <pmix.h>' "$src/$p.c" && flags=$(pkg-config --cflags --libs pmix 2>/dev/null || echo -lpmix)
        # shellcheck disable=SC2086
        if mpicc -O1 -o "$work/$p" "$src/$p.c" $flags 2>"$work/$p.err"; then pass "mpicc $p"; else fail "mpicc $p: $(cat "$work/$p.err")"; fi
    done
    chmod 755 "$work" "$work"/mpi_* 2>/dev/null
    return 0
}

t_done() {
    [ "$t_failures" -eq 0 ]
}
