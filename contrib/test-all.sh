#!/bin/bash
# Set up everything on a fresh machine and run the whole test suite. Run as root.
#
# What runs (each part's output is kept in _build/test-logs/):
#   Debian 12 (this host): the build; make check's ABI, header, fuzzing, layering and man page
#     checks; the unit tests under ASan + UBSan (contrib/sanitize-check.sh, own build directory);
#     the integration tests on a real Slurm 22.05 cluster (among them t-debs: the Debian
#     packages); the programs written by others (tests/conformance: OpenPMIx's examples, MPICH's
#     tests, mpi4py); then the README's first command, contrib/demo.sh.
#   Debian 13 (contrib/test-debian13.sh, inside contrib/debian13-root.sh's root: Slurm 24.11,
#     OpenMPI 5, OpenPMIx 5): its build, make check (the unit tests built by gcc 14 against that
#     release's libraries, the ABI comparison against OpenPMIx 5's headers), a compile check
#     against the newest Slurm whose source the archive has, the integration tests that depend on
#     the Slurm or OpenMPI release, and the conformance suites.
#
# How it fits in the time of a small machine (2 cores): the integration tests wait on daemons,
# timeouts and process start far more than they compute (about 15% of the CPU), while the builds
# compute. So after Debian 12's build, three things run side by side: Debian 12's integration
# tests, conformance and demo (cluster 1, normal priority); the Debian 13 lane (its build at
# nice 5, then its integration tests and conformance on cluster 2 at normal priority, its make
# check beside them at nice 19); and Debian 12's checks (make check, then the sanitizers, at
# nice 19). The builds take what the tests leave, and never slow a test down much.
# Debian 12's unit tests are built and run under the sanitizers only (not a second time
# without); Debian 13 runs them without.
#
# The test builds use -g1 -O2 (PMIXCPP_CFLAGS, contrib/build.sh): the code and optimisation of
# a release build with line tables only, at about half the compile time of full debug information.
#
# PMIXCPP_SKIP_DEBIAN13=1 leaves the second lane out. Nothing built outside the checkout is
# used: build outputs are in _build*, _install*, _deps; only checked downloads (source packages,
# the Debian 13 root) are cached in /var/cache/pmixcpp.
# Prints a line per part, the failed checks of every part, and "test-all: N passed, N failed"
# (parts); exits non-zero if any failed.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
export PMIXCPP_BUILD_DIR=${PMIXCPP_BUILD_DIR:-$src/_build}
export PMIXCPP_PREFIX=${PMIXCPP_PREFIX:-$src/_install}
export PMIXCPP_CFLAGS=${PMIXCPP_CFLAGS:--g1 -O2}
t0=$(date +%s)
logs=$PMIXCPP_BUILD_DIR/test-logs
rm -rf "$logs"
mkdir -p "$logs"
gate=$logs/.debian12-built

"$src/contrib/install-deps.sh" || { echo "test-all: installing the Debian packages failed"; exit 1; }

# ---- the Debian 13 lane, in the background
deb13_pid=""
if [ "${PMIXCPP_SKIP_DEBIAN13:-0}" != 1 ]; then
    (
        exec >"$logs/debian13.log" 2>&1
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
        # both lanes compiling at once only slows both: wait for Debian 12's build
        while [ ! -e "$gate" ]; do sleep 2; done
        exec "$src/contrib/test-debian13.sh" --root-checked --build-nice=5 --check-beside
    ) &
    deb13_pid=$!
fi

# ---- Debian 12: the build
"$src/contrib/build.sh" > >(tee "$logs/build.log") 2>&1 ||
    { touch "$gate"; echo "test-all: build failed"; [ -n "$deb13_pid" ] && kill "$deb13_pid"; exit 1; }
t1=$(date +%s)
touch "$gate"

# ---- Debian 12's checks, in the background at the lowest priority
(
    exec >"$logs/checks.log" 2>&1
    t=$(date +%s)
    echo "=== make check (ABI, headers, fuzzing, layering, man pages; the unit tests run under ASan below)"
    units=" $(sed -n 's/^check_PROGRAMS += //p' "$src"/tests/*/Makefile.inc | tr '\n' ' ') "
    keep() { local w out=""; for w in $1; do case $units in *" ${w%"$EXEEXT"} "*) ;; *) out="$out $w" ;; esac; done; echo "$out"; }
    EXEEXT=$(sed -n 's/^EXEEXT = //p' "$PMIXCPP_BUILD_DIR/Makefile")
    tests=$(keep "$(make -s -C "$PMIXCPP_BUILD_DIR" print-tests)")
    progs=$(keep "$(make -s -C "$PMIXCPP_BUILD_DIR" print-check-programs)")
    nice -n 19 make -C "$PMIXCPP_BUILD_DIR" -j"$(nproc)" check TESTS="$tests" check_PROGRAMS="$progs"
    unit_rc=$?
    if [ $unit_rc -ne 0 ]; then
        find "$PMIXCPP_BUILD_DIR" -name '*.log' -path '*tests*' -newer "$PMIXCPP_BUILD_DIR/Makefile" -exec grep -l -E 'FAIL|ERROR' {} \; | while read -r f; do
            echo "--- $f"; tail -n 40 "$f"; done
    fi
    t2=$(date +%s)
    echo "=== unit tests under ASan + UBSan (own build directory)"
    nice -n 19 "$src/contrib/sanitize-check.sh"
    asan_rc=$?
    echo "checks: make check $((t2 - t)) s (rc $unit_rc), sanitizers $(($(date +%s) - t2)) s (rc $asan_rc)"
    echo "$unit_rc $asan_rc" > "$logs/checks.rc"
) &
checks_pid=$!

# ---- Debian 12: integration tests, conformance, demo (cluster 1)
echo "=== integration tests on a real Slurm cluster"
PMIXCPP_PLUGIN_DIR="$PMIXCPP_PREFIX/lib/slurm" "$src/tests/integration/run.sh" > >(tee "$logs/integration.log") 2>&1
int_rc=$?
t3=$(date +%s)

echo "=== conformance: programs written by others (OpenPMIx examples, MPICH's tests, mpi4py) under srun --mpi=pmixcpp"
PMIXCPP_PLUGIN_DIR="$PMIXCPP_PREFIX/lib/slurm" "$src/tests/conformance/run.sh" --mpi=pmixcpp > >(tee "$logs/conformance.log") 2>&1
conf_rc=$?
echo "=== conformance: OpenPMIx's examples on OpenPMIx's own client library (Debian's 4.2.2), served on its wire protocol"
PMIXCPP_PLUGIN_DIR="$PMIXCPP_PREFIX/lib/slurm" "$src/tests/conformance/run.sh" --mpi=pmixcpp --client=native --suite=pmix \
    > >(tee -a "$logs/conformance.log") 2>&1 || conf_rc=1
t3b=$(date +%s)

echo "=== the README's first command: contrib/demo.sh"
"$src/contrib/demo.sh" </dev/null > >(tee "$logs/demo.log") 2>&1
demo_rc=$?
t4=$(date +%s)

echo "=== Debian 12's checks (ran beside the above; their output follows)"
wait "$checks_pid"
unit_rc=1 asan_rc=1
[ -f "$logs/checks.rc" ] && read -r unit_rc asan_rc < "$logs/checks.rc"
cat "$logs/checks.log"
t4b=$(date +%s)

deb13_rc=0
if [ -n "$deb13_pid" ]; then
    echo "=== the Debian 13 stack (ran beside the above; its output follows)"
    wait "$deb13_pid"
    deb13_rc=$?
    cat "$logs/debian13.log"
fi
t5=$(date +%s)

passed=0 failed=0 names=""
part() {  # name rc
    if [ "$2" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); names="$names $1"; fi
}
part "make-check" "$unit_rc"; part sanitizers "$asan_rc"; part integration $int_rc
part conformance $conf_rc; part demo $demo_rc
[ -n "$deb13_pid" ] && part debian13 $deb13_rc
echo "test-all: build $((t1 - t0)) s; then side by side: integration $((t3 - t1)) s (rc $int_rc), conformance $((t3b - t3)) s (rc $conf_rc), demo $((t4 - t3b)) s (rc $demo_rc); checks waited for $((t4b - t4)) s after (rc $unit_rc, $asan_rc); Debian 13 waited for $((t5 - t4b)) s after (rc $deb13_rc); $((t5 - t0)) s in all"
if [ -n "$names" ]; then
    echo "test-all: failed:$names"
    echo "test-all: the failed checks (logs in $logs):"
    grep -H -E '^ *FAIL[: ]|^== t-.* FAIL|UNEXPECTED|test-debian13: .*failed' "$logs"/*.log 2>/dev/null | grep -v -E 'XFAIL|# FAIL: +0' | cut -c1-300 | head -n 60 | sed 's/^/  /'
fi
echo "test-all: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
