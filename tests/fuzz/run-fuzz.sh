#!/bin/sh
# make check's short fuzz run: build every libFuzzer target (build-fuzz.sh: libFuzzer + ASan +
# UBSan) and run each from its seed corpus (tests/fuzz/corpus/<target>/) for a bounded time.
# The long campaign is contrib/fuzz-campaign.sh.
#   FUZZ_SECONDS  run time of each target (default 5)
#   CLANGXX       compiler (default clang++)
#   FUZZ_KEEP     if set, keep the build directory
# Exit: 0 no crash, 77 skipped (no clang++ / no libFuzzer runtime), other: build failure or crash.
# Works from the source tree and under automake (srcdir set, VPATH build, make distcheck).
set -u

srcdir=${srcdir:-$(dirname "$0")/../..}
case $srcdir in
    */tests/fuzz) srcdir=$srcdir/../.. ;;
esac
srcdir=$(cd "$srcdir" && pwd)
seconds=${FUZZ_SECONDS:-5}

work=$(mktemp -d "${TMPDIR:-/tmp}/pmixcpp-fuzz.XXXXXX") || exit 1
if [ -z "${FUZZ_KEEP:-}" ]; then
    trap 'rm -rf "$work"' EXIT
fi

"$srcdir/tests/fuzz/build-fuzz.sh" "$srcdir" "$work/bin"
rc=$?
if [ $rc -eq 77 ]; then
    echo "run-fuzz: skipping (no clang++ with libFuzzer)"
    exit 77
fi
[ $rc -eq 0 ] || exit 1

cd "$work" || exit 1
for t in fuzz_codec fuzz_messages fuzz_snapshot fuzz_node fuzz_node_bodies fuzz_agent fuzz_agent_replies fuzz_fabric fuzz_handshake fuzz_group fuzz_native fuzz_replies fuzz_directory; do
    # Copy the seeds: the source tree may be read-only (distcheck) and libFuzzer writes new inputs.
    mkdir -p "corpus/$t"
    cp "$srcdir/tests/fuzz/corpus/$t"/* "corpus/$t/" 2>/dev/null || true
    echo "run-fuzz: $t for ${seconds}s"
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
        "./bin/$t" -max_total_time="$seconds" -max_len=4096 -malloc_limit_mb=64 -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 -artifact_prefix="$work/$t-" "corpus/$t" >"$t.log" 2>&1
    rc=$?
    grep -E '^stat::number_of_executed_units' "$t.log"
    if [ $rc -ne 0 ]; then
        tail -n 40 "$t.log"
        echo "run-fuzz: $t failed (exit $rc); crashing inputs:"
        for f in "$work/$t"-crash-* "$work/$t"-leak-* "$work/$t"-timeout-* "$work/$t"-oom-*; do
            [ -f "$f" ] || continue
            echo "  $f"
            od -A d -t x1 "$f" | head -n 20
        done
        trap - EXIT
        echo "run-fuzz: build directory kept at $work"
        exit 1
    fi
done
exit 0
