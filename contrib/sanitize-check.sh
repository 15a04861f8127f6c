#!/bin/bash
# The unit tests under AddressSanitizer + UndefinedBehaviorSanitizer, in a build directory of
# their own (the main build is not touched):
#   contrib/sanitize-check.sh
#   PMIXCPP_ASAN_BUILD_DIR  build directory (default <src>/_build-asan)
#   SANITIZE_FLAGS          default -fsanitize=address,undefined -fno-omit-frame-pointer
#                           -fno-sanitize-recover=undefined
# Builds only what the unit tests link (shared/, the plugin core without Slurm's hooks, the
# client core) with gcc and the flags in CXXFLAGS/CFLAGS/LDFLAGS, then runs every unit test
# binary (tests/*/Makefile.inc: check_PROGRAMS): the codec, messages and node bodies with their
# decode budgets; the server with real Unix sockets (tests/server: floods, hostile frames, reply
# backlog, waiting Gets); the client library against a fake server; node transports over
# loopback TCP; collectives, events, alloc, dyn, sched. Leak checking is on (known leaks, each with
# its reason, in contrib/lsan.supp). The libFuzzer
# targets are not built here (run-fuzz.sh already builds them with ASan + UBSan).
# Not run here: the integration tests. slurmstepd (root, not built with ASan) loads the plugin,
# and ASan must be the first library of the process: it would take LD_PRELOAD=libasan into slurmd
# and so into every slurmstepd of the node; the attack tests run against the normal build.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${PMIXCPP_ASAN_BUILD_DIR:-$src/_build-asan}
flags=${SANITIZE_FLAGS:--fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined}
t0=$(date +%s)

cd "$src" || exit 1
if [ ! -x configure ] || [ configure.ac -nt configure ]; then ./autogen.sh >/dev/null || exit 1; fi
mkdir -p "$build" && cd "$build" || exit 1
if [ ! -f Makefile ] || [ "$src/configure" -nt Makefile ] || ! grep -q -- "-g1 -O0 -fsanitize=address" Makefile; then
    "$src/configure" --prefix="$build/_install" --with-plugindir="$build/_install/lib/slurm" \
        CXXFLAGS="-g1 -O0 $flags" CFLAGS="-g1 -O0 $flags" LDFLAGS="$flags" >configure.out 2>&1 \
        || { tail -n 30 configure.out; echo "sanitize-check: configure failed"; exit 1; }
    make clean >/dev/null 2>&1  # objects of other flags would be kept otherwise
fi
# the test binaries that make check runs (TESTS), not the tools built beside them (check_PROGRAMS
# also holds the step simulator and its measuring tool, which take arguments and a munged)
progs=$(sed -n 's/^check_PROGRAMS += //p' "$src"/tests/*/Makefile.inc | tr ' ' '\n' | grep .)
tests=$(sed -n 's/^TESTS += //p' "$src"/tests/*/Makefile.inc | tr ' ' '\n' | grep -Fx -- "$progs" | tr '\n' ' ')
# shellcheck disable=SC2086
make -j"$(nproc)" $tests >make.out 2>&1 || { grep -E "error|Error" make.out | head -n 30; echo "sanitize-check: build failed"; exit 1; }
t1=$(date +%s)

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$src/contrib/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# hwloc's PCI plugin (hwloc_pci.so, with libpciaccess) keeps its state in libpciaccess's globals;
# hwloc unloads both when its last topology is destroyed, and LeakSanitizer then sees that state
# (about 1 KB, in frames of an unloaded "<unknown module>", so no suppression can name it) as
# leaked. The node topology's export (plugin/server/topology.cc, with I/O devices) is tested here
# without the PCI plugin; the integration tests run it with.
export HWLOC_COMPONENTS=${HWLOC_COMPONENTS:--pci}
passed=0
failed=0
for t in $tests; do
    (cd "$build" && "./$t" --gtest_brief=1 >"$t.asan.log" 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then
        passed=$((passed + 1))
        echo "PASS: $t (ASan+UBSan)"
    else
        failed=$((failed + 1))
        # a test killed by a signal prints nothing of its own (SIGPIPE, an abort outside ASan)
        how="exit status $rc"
        [ $rc -gt 128 ] && how="killed by signal $((rc - 128)) ($(kill -l $((rc - 128)) 2>/dev/null))"
        echo "FAIL: $t (ASan+UBSan), $how, log $build/$t.asan.log:"
        tail -n 5 "$build/$t.asan.log"
        grep -E -A30 "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error|FAILED" "$build/$t.asan.log" | head -n 60
    fi
done
echo "sanitize-check: build $((t1 - t0)) s, tests $(($(date +%s) - t1)) s"
echo "$passed passed, $failed failed"
[ $failed -eq 0 ]
