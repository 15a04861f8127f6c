#!/bin/bash
# Set up everything on a fresh machine and run the whole test suite. Run as root.
#
# Two lanes run side by side, each with its own local Slurm cluster (own state directory and
# ports), since they share nothing but the machine:
#   Debian 12 (this host): build; make check (unit tests, ABI checks, fuzzing); the unit tests
#     again under ASan + UBSan (contrib/sanitize-check.sh, own build directory); the integration
#     tests on a real Slurm 22.05 cluster (among them t-debs: the Debian packages); the programs
#     written by others (tests/conformance: OpenPMIx's examples, MPICH's tests, mpi4py); then the
#     README's first command, contrib/demo.sh.
#   Debian 13 (contrib/test-debian13.sh, inside contrib/debian13-root.sh's root: Slurm 24.11,
#     OpenMPI 5, OpenPMIx 5): its build and make check (the ABI comparison against OpenPMIx 5's
#     headers), a compile check against the newest Slurm whose source the archive has, the
#     integration tests that depend on the Slurm or OpenMPI release and the conformance suites.
#     Its root and the sources of the public suites are fetched while Debian 12 builds; its own
#     build waits until Debian 12's make check and sanitizer run are done (both lanes compiling
#     at once on a small machine only slows both), then runs beside Debian 12's integration tests.
#     Its output is kept in _build/test-debian13.log and printed at the end.
# PMIXCPP_SKIP_DEBIAN13=1 leaves the second lane out. Nothing built outside the checkout is
# used: build outputs are in _build*, _install*, _deps; only checked downloads (source packages,
# the Debian 13 root) are cached in /var/cache/pmixcpp.
# Prints a line per part and "test-all: N passed, N failed" (parts); exits non-zero if any failed.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
export PMIXCPP_BUILD_DIR=${PMIXCPP_BUILD_DIR:-$src/_build}
export PMIXCPP_PREFIX=${PMIXCPP_PREFIX:-$src/_install}
t0=$(date +%s)
mkdir -p "$PMIXCPP_BUILD_DIR"
deb13_log=$PMIXCPP_BUILD_DIR/test-debian13.log
gate=$PMIXCPP_BUILD_DIR/.test-all-cpu-free
rm -f "$gate" "$deb13_log"

"$src/contrib/install-deps.sh" || { echo "test-all: installing the Debian packages failed"; exit 1; }

# ---- the Debian 13 lane, in the background
deb13_pid=""
if [ "${PMIXCPP_SKIP_DEBIAN13:-0}" != 1 ]; then
    (
        exec >"$deb13_log" 2>&1
        # its cluster apart from Debian 12's (contrib/cluster.sh)
        export PMIXCPP_CLUSTER_DIR=${PMIXCPP_CLUSTER13_DIR:-/tmp/pmixcpp-cluster-deb13}
        export PMIXCPP_SLURMCTLD_PORT=${PMIXCPP_SLURMCTLD13_PORT:-18817}
        export PMIXCPP_SLURMD_PORT_BASE=${PMIXCPP_SLURMD13_PORT_BASE:-18900}
        # job ids apart too: tests find a step's slurmstepd by "slurmstepd: [<job>.0]"
        export PMIXCPP_FIRST_JOB_ID=${PMIXCPP_FIRST_JOB13_ID:-500000}
        unset PMIXCPP_BUILD_DIR PMIXCPP_PREFIX
        t=$(date +%s)
        echo "=== Debian 13: the root and the suites' sources"
        "$src/contrib/debian13-root.sh" build >/dev/null || { echo "test-debian13: cannot build the Debian 13 root"; exit 1; }
        PMIXCPP_SUITES_DIR=$src/_deps/suites "$src/contrib/fetch-suites.sh" || true
        echo "test-debian13: root and sources $(( $(date +%s) - t )) s"
        while [ ! -e "$gate" ]; do sleep 2; done
        exec "$src/contrib/test-debian13.sh" --root-checked
    ) &
    deb13_pid=$!
fi

# ---- the Debian 12 lane
"$src/contrib/build.sh" || { touch "$gate"; echo "test-all: build failed"; [ -n "$deb13_pid" ] && kill "$deb13_pid"; exit 1; }
t1=$(date +%s)

echo "=== make check (unit, ABI, fuzz)"
make -C "$PMIXCPP_BUILD_DIR" -j"$(nproc)" check
unit_rc=$?
if [ $unit_rc -ne 0 ]; then
    find "$PMIXCPP_BUILD_DIR" -name '*.log' -path '*tests*' -newer "$PMIXCPP_BUILD_DIR/Makefile" -exec grep -l -E 'FAIL|ERROR' {} \; | while read -r f; do
        echo "--- $f"; tail -n 40 "$f"; done
fi
t2=$(date +%s)

echo "=== unit tests under ASan + UBSan (own build directory)"
"$src/contrib/sanitize-check.sh"
asan_rc=$?
t2b=$(date +%s)
touch "$gate"

echo "=== integration tests on a real Slurm cluster"
PMIXCPP_PLUGIN_DIR="$PMIXCPP_PREFIX/lib/slurm" "$src/tests/integration/run.sh"
int_rc=$?
t3=$(date +%s)

echo "=== conformance: programs written by others (OpenPMIx examples, MPICH's tests, mpi4py) under srun --mpi=pmixcpp"
PMIXCPP_PLUGIN_DIR="$PMIXCPP_PREFIX/lib/slurm" "$src/tests/conformance/run.sh" --mpi=pmixcpp
conf_rc=$?
t3b=$(date +%s)

echo "=== the README's first command: contrib/demo.sh"
"$src/contrib/demo.sh" </dev/null
demo_rc=$?
t4=$(date +%s)

deb13_rc=0
if [ -n "$deb13_pid" ]; then
    echo "=== the Debian 13 stack (ran beside the above; its output follows)"
    wait "$deb13_pid"
    deb13_rc=$?
    cat "$deb13_log"
fi
t5=$(date +%s)

passed=0 failed=0 names=""
part() {  # name rc
    if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); names="$names $1"; fi
}
part "make-check" $unit_rc; part sanitizers $asan_rc; part integration $int_rc
part conformance $conf_rc; part demo $demo_rc
[ -n "$deb13_pid" ] && part debian13 $deb13_rc
echo "test-all: build $((t1 - t0)) s, make check $((t2 - t1)) s (rc $unit_rc), sanitizers $((t2b - t2)) s (rc $asan_rc), integration $((t3 - t2b)) s (rc $int_rc), conformance $((t3b - t3)) s (rc $conf_rc), demo $((t4 - t3b)) s (rc $demo_rc), Debian 13 waited for $((t5 - t4)) s after (rc $deb13_rc); $((t5 - t0)) s in all"
[ -n "$names" ] && echo "test-all: failed:$names"
echo "test-all: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
