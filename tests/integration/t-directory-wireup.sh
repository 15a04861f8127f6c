# Directory wire-up (PMIxCppWireup=directory, and auto from PMIxCppDirectoryNodes nodes on): the
# node servers learn each other's addresses
# through slurmd's forwarding (slurm_forward_data to a root-only Unix socket of the step in each
# node's spool directory), with no address table from srun. pmix_multinode (fences, direct modex)
# and OpenMPI (hello, allreduce) across 4 nodes over TCP and over UCX, the slurmd logs saying
# that every node took the route and none got a table. Attacks: nobody connecting to a step's
# socket, and nobody's own slurm_forward_data to it (slurmd connects as nobody), are refused by
# the socket's mode; a message that passes the socket (written by root) with a record nobody
# signed, or one signed for another step, is refused by the record check and logged. A node whose
# record never comes (its socket path taken) is given up by the others and taken for lost: the
# step's fences fail with the reason instead of waiting.
# Requires: make install; root; python3, munge; user nobody; mpicc for the OpenMPI part.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_multinode"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

PMIXCPP_SLURM_DEBUG=debug "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart 4 >/dev/null 2>&1 || fail "cluster restart (debug logs)"
eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"
restore() { "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart >/dev/null 2>&1 || fail "cluster restart"; }
export SLURM_PMIXCPP_WIREUP=directory

nodes_saying() { logs_since "$1" | grep -c -- "$2"; }
check_route() {  # label
    expect_eq "$1: every node took the directory route" 4 "$(nodes_saying "$mark" 'directory wire-up: .* neighbours told')"
    expect_eq "$1: no node got an address table" 0 "$(nodes_saying "$mark" 'signed records of .* nodes verified')"
    expect_no_match "$1: srun's agent sent no table" 'address table of' "$out"
    # A good record judged forged (signer, step, node slot: deterministic checks) fails the test;
    # any other refusal (a message that did not decode, munged not answering under load) is shown.
    expect_eq "$1: no record judged forged" 0 \
        "$(nodes_saying "$mark" 'directory: .* refused: .*\(signed by uid\|record of step\|record of node\)')"
    logs_since "$mark" | grep -- 'directory: .* refused' | head -3 | sed 's/^/    note: /'
}

for tr in tcp ucx; do
    mark=$(log_mark)
    out=$(SLURM_PMIXCPP_TRANSPORT=$tr SLURM_PMIXCPP_DEBUG=4 timeout -k 5 90 srun --mpi=pmixcpp -N4 --ntasks-per-node=4 "$prog" 1 2>&1)
    rc=$?
    expect_eq "pmix_multinode $tr: exit status" 0 "$rc"
    expect_eq "pmix_multinode $tr: all 16 ranks passed" 16 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    echo "$out" | grep -E '^FAIL' | head -5 | sed 's/^/    /'
    check_route "pmix_multinode $tr"
    expect_eq "pmix_multinode $tr: transport" 4 "$(nodes_saying "$mark" "node transport $tr at")"
done

if mpi_build mpi_hello mpi_allreduce; then
    for tr in tcp ucx; do
        for p in mpi_hello:MPI-HELLO-OK mpi_allreduce:MPI-ALLREDUCE-OK; do
            mark=$(log_mark)
            SLURM_PMIXCPP_TRANSPORT=$tr SLURM_PMIXCPP_DEBUG=4 OMPI_MCA_btl=self,tcp \
                run_srun 90 --mpi=pmixcpp -N4 --ntasks-per-node=2 "$work/${p%%:*}"
            expect_eq "${p%%:*} $tr: exit status" 0 "$rc"
            expect_match "${p%%:*} $tr" "^${p#*:} 8\$" "$out"
            check_route "${p%%:*} $tr"
            [ "$rc" -eq 0 ] || echo "$out" | head -20 | sed 's/^/    /'
        done
    done
fi

# PMIxCppWireup=auto (the default) chooses by size: the directory route from PMIxCppDirectoryNodes
# nodes on, srun's rendezvous below (4 here, 64 by default).
for n in 3 4; do
    mark=$(log_mark)
    out=$(SLURM_PMIXCPP_WIREUP=auto SLURM_PMIXCPP_DIRECTORYNODES=4 SLURM_PMIXCPP_TRANSPORT=tcp SLURM_PMIXCPP_DEBUG=4 \
        timeout -k 5 90 srun --mpi=pmixcpp -N$n --ntasks-per-node=2 "$prog" 1 2>&1)
    expect_eq "auto at $n nodes: exit status" 0 "$?"
    expect_eq "auto at $n nodes: all ranks passed" $((2 * n)) "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    if [ "$n" -ge 4 ]; then
        check_route "auto at $n nodes"
    else
        expect_eq "auto at $n nodes: no node took the directory route" 0 \
            "$(nodes_saying "$mark" 'directory wire-up: .* neighbours told')"
        expect_eq "auto at $n nodes: every node got srun's table" "$n" \
            "$(nodes_saying "$mark" 'signed records of .* nodes verified')"
    fi
done

# A node whose record never comes: the step's socket path on n4 is taken (a directory), so n4's
# server cannot listen and every forward to n4 fails. The others try it again with backoff, give
# it up after half of PMIxCppTimeout (20 s here) naming it, and take it for lost: their fences
# fail with PMIX_ERR_NODE_DOWN and the reason within seconds, and srun shows it.
spool=$(sed -n 's/^SlurmdSpoolDir=//p' "$SLURM_CONF")
job=$(salloc -N4 --ntasks-per-node=2 --no-shell 2>&1 | sed -n 's/.*Granted job allocation \([0-9]*\).*/\1/p')
if [ -n "$job" ]; then
    taken=$(echo "$spool" | sed 's/%n/n4/')/pmixcpp.dir.$job.0
    mkdir -p "$taken"
    mark=$(log_mark)
    t0=$(date +%s)
    out=$(SLURM_PMIXCPP_TRANSPORT=tcp SLURM_PMIXCPP_TIMEOUT=20 timeout -k 5 60 \
        srun --jobid="$job" --mpi=pmixcpp -N4 --ntasks-per-node=2 "$prog" 1 2>&1)
    rc=$? took=$(($(date +%s) - t0))
    rmdir "$taken"
    scancel "$job"
    echo "  never-answering node: srun ended with $rc after $took s"
    expect_eq "never answered: srun did not hang (not killed by timeout)" 1 "$([ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] && echo 1 || echo 0)"
    expect_match "never answered: a node gave n4 up, naming it" \
        'directory: node 3 \(n4\) never answered the directory (ask|tell) after [0-9.]+ s' "$(logs_since "$mark")"
    expect_match "never answered: srun's user sees why" \
        'node n4 is lost: .*node 3 \(n4\) never answered the directory' "$out"
    expect_match "never answered: the other nodes' fences failed with node down" \
        '^FAIL rank [0-5]: PMIx_Fence.*PMIX_(ERR|EVENT)_NODE_DOWN' "$out"
    expect_no_match "never answered: no fence timed out instead" 'failed: timed out' "$out"
else
    fail "never answered: no allocation"
fi

if ! id nobody >/dev/null 2>&1; then
    echo "  skip: no user nobody (attacks)"
    restore; t_done; exit
fi
as_nobody() { runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" "$@"; }

# A step that stays up (its servers and sockets) while we attack its sockets.
attack="$PMIXCPP_CLUSTER_DIR.dir-attack.py"
cat > "$attack" <<'PY'
# argv: mode socket-path node-name [record-file]
#   connect: connect to the socket and send a forged tell
#   forward: slurm_forward_data(node, path-with-%n, tell) through libslurmfull (slurmd connects as us)
#   write:   connect and send a well-formed slurmd message (uid 0) carrying the record in record-file
import ctypes, os, socket, struct, sys
mode, path, node = sys.argv[1], sys.argv[2], sys.argv[3]
record = open(sys.argv[4], "rb").read().strip() if len(sys.argv) > 4 else b"MUNGE:forged"
# a tell claiming node 2 (n3)
tell = struct.pack("<IBBII", 0x50584452, 1, 1, 2, 4) + struct.pack("<I", len(record)) + record
if mode in ("connect", "write"):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
    except OSError as e:
        print("connect refused:", e.strerror); sys.exit(0)
    s.sendall(struct.pack(">II", os.getuid(), len(tell)) + tell)
    s.close(); print("connected and sent"); sys.exit(0)
lib = ctypes.CDLL("/usr/lib/x86_64-linux-gnu/slurm-wlm/libslurmfull.so", mode=ctypes.RTLD_GLOBAL)
lib.slurm_init(None)
lib.slurm_xstrdup.restype = ctypes.c_void_p
nl = ctypes.c_void_p(lib.slurm_xstrdup(node.encode()))
rc = lib.slurm_forward_data(ctypes.byref(nl), path.encode(), len(tell), tell)
print("forward rc", rc)
PY
chmod 644 "$attack"
log="$PMIXCPP_CLUSTER_DIR.dir-step.log"
: >"$log"
SLURM_PMIXCPP_TRANSPORT=tcp SLURM_PMIXCPP_DEBUG=4 srun --mpi=pmixcpp -N4 --ntasks-per-node=1 bash -c 'echo READY; sleep 12' >"$log" 2>&1 &
step_pid=$!
wait_lines "$log" '^READY' 4 "$step_pid" 60 || fail "attack step did not start: $(cat "$log")"
job=$(squeue -h -o '%i %j' | awk '$2=="bash" {print $1}' | head -1)
spool=$(sed -n 's/^SlurmdSpoolDir=//p' "$SLURM_CONF")
sock2=$(echo "$spool" | sed 's/%n/n2/')/pmixcpp.dir.$job.0
expect_eq "the step's socket on n2 is a socket" 1 "$([ -S "$sock2" ] && echo 1 || echo 0)"
expect_eq "it is root's, mode 0600" "0 600" "$(stat -c '%u %a' "$sock2" 2>/dev/null)"
mark=$(log_mark)
expect_match "nobody cannot connect to it" 'connect refused: Permission denied' "$(as_nobody python3 "$attack" connect "$sock2" n2 2>&1)"
fwd=$(cd /tmp && as_nobody python3 "$attack" forward "$spool/pmixcpp.dir.$job.0" n2 2>&1)
expect_match "nobody's slurm_forward_data to it fails (slurmd connects as nobody)" 'forward rc -?[1-9]' "$fwd"
# Root (as slurmd would) past the socket: a record nobody signed, and one root signed for nothing.
munge_sock=$(sed -n 's/^AuthInfo=.*socket=\([^,]*\).*/\1/p' "$SLURM_CONF")
as_nobody munge -n -S "${munge_sock:-/run/munge/munge.socket.2}" > "$attack.nobody" 2>/dev/null
munge -n -S "${munge_sock:-/run/munge/munge.socket.2}" > "$attack.root" 2>/dev/null
expect_match "a record nobody signed reaches the socket (root writes it)" 'connected and sent' \
    "$(python3 "$attack" write "$sock2" n2 "$attack.nobody" 2>&1)"
expect_match "a record root signed with no node record in it reaches the socket" 'connected and sent' \
    "$(python3 "$attack" write "$sock2" n2 "$attack.root" 2>&1)"
for i in $(seq 50); do [ "$(nodes_saying "$mark" 'directory: tell claiming n3 refused')" -ge 2 ] && break; sleep 0.2; done
rlog=$(logs_since "$mark")
expect_match "n2 refused the record nobody signed" "directory: tell claiming n3 refused: .*uid $(id -u nobody)" "$rlog"
expect_eq "n2 refused both forged records" 2 "$(echo "$rlog" | grep -c 'directory: tell claiming n3 refused')"
wait "$step_pid"
expect_eq "the attacked step ended normally" 0 "$?"
wait_gone "$sock2" 10 && pass "the step's socket is removed at its end" || fail "socket $sock2 left behind"
rm -f "$attack" "$attack.nobody" "$attack.root" "$log"

restore
t_done
