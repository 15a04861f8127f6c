# Static wire-up: where slurm.conf reserves ports for steps (MpiParams=ports=), every slurmstepd
# computes every node's address (NodeAddr + the step's first reserved port) and no address
# rendezvous through srun happens. The cluster gets one loopback address per node (127.0.1.K) so
# that one port per node cannot collide. OpenMPI (hello, allreduce) and pmix_multinode (fences,
# direct modex) across 4 nodes on that route, the slurmd logs saying so and srun's agent sending
# no table; UCX keeps the rendezvous. Attacks as nobody: a forged SLURM_STEP_RESV_PORTS (srun
# --resv-ports=0 leaves the user's own value in the step's environment) that is privileged,
# outside the range or garbage falls back to the rendezvous with a log line; a fake listener on a
# node's address and every reserved port, answering with a record nobody signed, is refused by
# the record check, and the step fails cleanly instead of hanging.
# Requires: make install; root; python3, munge; user nobody; mpicc for the OpenMPI part.
. "$(dirname "$0")/lib.sh"
prog="${PMIXCPP_PREFIX:?set PMIXCPP_PREFIX}/libexec/pmixcpp/tests/pmix_multinode"
[ -x "$prog" ] || { fail "$prog not installed"; t_done; exit; }

# Slurm 24.11's slurmstepd does not show the plugin the step's reserved ports and MpiParams where
# 22.05's does (the step environment, slurm_conf.mpi_params): there every step takes the rendezvous.
case $(srun --version 2>/dev/null | awk '{print $2}') in
    2[3-9].*) echo "  SKIP: Slurm $(srun --version | awk '{print $2}'): the static route is not taken yet (slurmstepd shows the plugin neither the reserved ports nor MpiParams); steps use the rendezvous"
              t_done; exit 0 ;;
esac
lo=$((${PMIXCPP_SLURMCTLD_PORT:-16817} + 500)); hi=$((lo + 39))
PMIXCPP_SLURM_DEBUG=debug PMIXCPP_NODE_ADDRS=distinct PMIXCPP_SLURM_CONF_EXTRA="MpiParams=ports=$lo-$hi" \
    "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart 4 >/dev/null 2>&1 || fail "cluster restart with reserved ports"
eval "$("$PMIXCPP_SRCDIR/contrib/cluster.sh" env)"
logs="$PMIXCPP_CLUSTER_DIR/log"
# Slurm 22.05 reserves ports for every step once MpiParams sets them; 24.11 only for a step that
# asks (srun --resv-ports, or SLURM_RESV_PORTS in its environment).
export SLURM_RESV_PORTS=1
# Where the static route does not apply this test expects srun's rendezvous (PMIxCppWireup=srun),
# not the directory route auto takes for large steps.
export SLURM_PMIXCPP_WIREUP=srun
restore() {
    unset SLURM_RESV_PORTS
    "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart >/dev/null 2>&1 || fail "cluster restart without reserved ports"
}

# per-node: how many slurmd logs (of the 4) since MARK say REGEX
nodes_saying() { logs_since "$1" | grep -c -- "$2"; }

run_case() {  # label rounds env...
    local label=$1 rounds=$2; shift 2
    mark=$(log_mark)
    out=$(env SLURM_PMIXCPP_DEBUG=4 "$@" timeout -k 5 90 srun --mpi=pmixcpp -N4 --ntasks-per-node=4 "$prog" "$rounds" 2>&1)
    rc=$?
    expect_eq "$label: exit status" 0 "$rc"
    expect_eq "$label: all 16 ranks passed" 16 "$(echo "$out" | grep -c '^RESULT-PASS rank')"
    echo "$out" | grep -E '^FAIL' | head -5 | sed 's/^/    /'
}

run_case "static, TCP" 1 SLURM_PMIXCPP_TRANSPORT=tcp
expect_eq "static: every node took the static route" 4 "$(nodes_saying "$mark" "static wire-up: 4 nodes at port ")"
expect_eq "static: no node got an address table" 0 "$(nodes_saying "$mark" 'signed records of .* nodes verified')"
expect_no_match "static: srun's agent sent no table" 'address table of' "$out"
expect_eq "static: the peers' records checked in the handshakes" 0 "$(nodes_saying "$mark" "record refused")"

run_case "UCX keeps the rendezvous" 1
expect_eq "ucx: no static route" 0 "$(nodes_saying "$mark" "static wire-up: 4 nodes")"
expect_eq "ucx: every node got the table" 4 "$(nodes_saying "$mark" 'signed records of 4 nodes verified')"

if mpi_build mpi_hello mpi_allreduce; then
    for p in mpi_hello:MPI-HELLO-OK mpi_allreduce:MPI-ALLREDUCE-OK; do
        mark=$(log_mark)
        SLURM_PMIXCPP_TRANSPORT=tcp SLURM_PMIXCPP_DEBUG=4 OMPI_MCA_btl=self,tcp \
            run_srun 90 --mpi=pmixcpp -N4 --ntasks-per-node=4 "$work/${p%%:*}"
        expect_eq "${p%%:*} -N4 x4 static: exit status" 0 "$rc"
        expect_match "${p%%:*} -N4 x4 static" "^${p#*:} 16\$" "$out"
        expect_eq "${p%%:*}: static route on every node" 4 "$(nodes_saying "$mark" "static wire-up: 4 nodes at port ")"
        expect_no_match "${p%%:*}: srun's agent sent no table" 'address table of' "$out"
        [ "$rc" -eq 0 ] || echo "$out" | head -20 | sed 's/^/    /'
    done
fi

if ! id nobody >/dev/null 2>&1; then
    echo "  skip: no user nobody (attacks)"
    restore; t_done; exit
fi
as_nobody() { runuser -u nobody -- env SLURM_CONF="$SLURM_CONF" "$@"; }

# Forged port lists: the user's own SLURM_STEP_RESV_PORTS reaches slurmstepd when srun reserves none.
for forged in "80:privileged" "$((hi + 100)):outside MpiParams" "12x4:malformed" "$lo-$((lo - 1)):malformed"; do
    value=${forged%%:*}; why=${forged#*:}
    mark=$(log_mark)
    out=$(cd /tmp && as_nobody env SLURM_STEP_RESV_PORTS="$value" SLURM_PMIXCPP_TRANSPORT=tcp SLURM_PMIXCPP_DEBUG=4 \
        timeout -k 5 90 srun --resv-ports=0 --mpi=pmixcpp -N2 --ntasks-per-node=2 "$prog" 1 2>&1)
    rc=$?
    expect_eq "forged '$value': the step still runs (rendezvous)" 0 "$rc"
    expect_eq "forged '$value': every node refused it ($why) and said so" 2 \
        "$(nodes_saying "$mark" "static wire-up refused .*$why.*; using the address rendezvous")"
    expect_eq "forged '$value': the nodes got the table" 2 "$(nodes_saying "$mark" 'signed records of 2 nodes verified')"
done

# A fake listener (nobody) on n2's address and every reserved port: it answers each hello with a
# challenge carrying a munge credential nobody made. n2's slurmstepd cannot listen there; the
# others reach the fake and refuse its record.
fake="$PMIXCPP_CLUSTER_DIR.fake-listener.py"
cat > "$fake" <<'PY'
import os, select, socket, struct, subprocess, sys, time
lo, hi = int(sys.argv[1]), int(sys.argv[2])
cred = subprocess.run(["munge", "-n", "-S", sys.argv[3]], capture_output=True, check=True).stdout.strip()
socks = []
for p in range(lo, hi + 1):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # earlier steps' connections in TIME_WAIT
    s.bind(("127.0.1.2", p)); s.listen(16); socks.append(s)
print("listening", os.getpid(), flush=True)
end = time.time() + 40
while time.time() < end:
    r, _, _ = select.select(socks, [], [], 0.5)
    for s in r:
        c, _ = s.accept()
        c.settimeout(2)
        try:
            c.recv(4096)
            body = bytes([2]) + os.urandom(64) + struct.pack("<I", len(cred)) + cred
            c.sendall(b"PMXC" + bytes([1, 0]) + struct.pack("<HII", 0x1F1, 0, len(body)) + body)
            time.sleep(0.2)
        except OSError:
            pass
        c.close()
PY
chmod 644 "$fake"
sock=$(sed -n 's/^AuthInfo=.*socket=\([^,]*\).*/\1/p' "$SLURM_CONF")
as_nobody python3 "$fake" "$lo" "$hi" "${sock:-/run/munge/munge.socket.2}" > "$fake.out" 2>&1 &
fake_pid=$!
for i in $(seq 50); do grep -q listening "$fake.out" 2>/dev/null && break; sleep 0.1; done
expect_match "fake listener up on 127.0.1.2:$lo-$hi" listening "$(cat "$fake.out")"
mark=$(log_mark)
t0=$SECONDS
out=$(SLURM_PMIXCPP_TRANSPORT=tcp SLURM_PMIXCPP_DEBUG=4 timeout -k 5 90 srun --mpi=pmixcpp -N4 --ntasks-per-node=2 "$prog" 1 2>&1)
rc=$?
expect_eq "fake listener: the step fails" 1 "$([ "$rc" -ne 0 ] && echo 1 || echo 0)"
expect_eq "fake listener: within 60 s, no hang" 1 "$([ $((SECONDS - t0)) -lt 60 ] && echo 1 || echo 0)"
expect_match "fake listener: n2 cannot listen on its reserved port" 'tcp listen on 127.0.1.2:.*Address already in use' \
    "$(logs_since "$mark")"
expect_no_match "fake listener: no rank passed" '^RESULT-PASS' "$out"
flog=$(logs_since "$mark")
expect_eq "fake listener: no node took it for n2" 0 "$(echo "$flog" | grep -c 'tcp transport: node n2 authenticated')"
# (A node that reached the fake before srun ended the step must have refused it; under load the
# step may end before any did.)
if echo "$flog" | grep -q 'tcp transport: connected to node n2'; then
    expect_match "fake listener: the node that reached it refused its record" \
        "node n2: handshake: the listener's node record refused: record signed by uid $(id -u nobody), not by root" "$flog"
else
    echo "  (no node reached the fake listener before the step ended)"
fi
fake_py=$(awk '/^listening/ {print $2}' "$fake.out")
[ -n "$fake_py" ] && kill "$fake_py" 2>/dev/null  # runuser does not pass the signal on
kill "$fake_pid" 2>/dev/null; wait "$fake_pid" 2>/dev/null
rm -f "$fake" "$fake.out"

restore
t_done
