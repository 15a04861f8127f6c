#!/bin/bash
# Set up everything on a fresh machine and run the whole test suite:
# unit tests, ABI checks and fuzzing (make check), the unit tests again under ASan + UBSan
# (contrib/sanitize-check.sh, own build directory), then the integration tests on a real local
# Slurm cluster (among them t-debs: the Debian packages), the programs written by others
# (tests/conformance: OpenPMIx's examples, MPICH's tests), then the README's first command,
# contrib/demo.sh; then the same integration and conformance suites on the Debian 13 stack
# (Slurm 24.11, OpenMPI 5, OpenPMIx 5) inside contrib/debian13-root.sh's root
# (contrib/test-debian13.sh; PMIXCPP_SKIP_DEBIAN13=1 leaves it out). Run as root.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
export PMIXCPP_BUILD_DIR=${PMIXCPP_BUILD_DIR:-$src/_build}
export PMIXCPP_PREFIX=${PMIXCPP_PREFIX:-$src/_install}
t0=$(date +%s)

"$src/contrib/build.sh" || { echo "test-all: build failed"; exit 1; }
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

echo "=== integration tests on a real Slurm cluster"
PMIXCPP_PLUGIN_DIR="$PMIXCPP_PREFIX/lib/slurm" "$src/tests/integration/run.sh"
int_rc=$?
t3=$(date +%s)

echo "=== conformance: programs written by others (OpenPMIx examples, MPICH's tests) under srun --mpi=pmixcpp"
PMIXCPP_PLUGIN_DIR="$PMIXCPP_PREFIX/lib/slurm" "$src/tests/conformance/run.sh" --mpi=pmixcpp
conf_rc=$?
t3b=$(date +%s)

echo "=== the README's first command: contrib/demo.sh"
"$src/contrib/demo.sh" </dev/null
demo_rc=$?
t4=$(date +%s)

deb13_rc=0
if [ "${PMIXCPP_SKIP_DEBIAN13:-0}" != 1 ]; then
    # the unit and ABI tests ran above (the ABI test compares with OpenPMIx 5 there too)
    echo "=== the Debian 13 stack: build, integration and conformance inside contrib/debian13-root.sh's root"
    "$src/contrib/test-debian13.sh" --no-check
    deb13_rc=$?
fi
t5=$(date +%s)

echo "test-all: build $((t1 - t0)) s, make check $((t2 - t1)) s (rc $unit_rc), sanitizers $((t2b - t2)) s (rc $asan_rc), integration $((t3 - t2b)) s (rc $int_rc), conformance $((t3b - t3)) s (rc $conf_rc), demo $((t4 - t3b)) s (rc $demo_rc), Debian 13 $((t5 - t4)) s (rc $deb13_rc)"
[ $unit_rc -eq 0 ] && [ $asan_rc -eq 0 ] && [ $int_rc -eq 0 ] && [ $conf_rc -eq 0 ] && [ $demo_rc -eq 0 ] && [ $deb13_rc -eq 0 ]
