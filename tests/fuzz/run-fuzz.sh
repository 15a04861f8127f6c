#!/bin/sh
# Build the codec and message fuzzers with clang++ (libFuzzer + ASan + UBSan) from the shared sources and run
# it for a bounded time.
#   FUZZ_SECONDS  run time of each target (default 15)
#   CLANGXX       compiler (default clang++)
#   FUZZ_KEEP     if set, keep the build directory
# Exit: 0 no crash, 77 skipped (no clang++ / no libFuzzer runtime), other: build failure or crash.
# Works from the source tree and under automake (srcdir set, VPATH build, make distcheck).
set -u

srcdir=${srcdir:-$(dirname "$0")/../..}
case $srcdir in
    */tests/fuzz) srcdir=$srcdir/../.. ;;
esac
seconds=${FUZZ_SECONDS:-15}
cxx=${CLANGXX:-clang++}

if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "run-fuzz: $cxx not found, skipping"
    exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pmixcpp-fuzz.XXXXXX") || exit 1
if [ -z "${FUZZ_KEEP:-}" ]; then
    trap 'rm -rf "$work"' EXIT
fi

# Our own pmix_common.h (shared/pmix) wins; OpenPMIx's identical header is the fallback until it exists.
includes="-I$srcdir/shared -I$srcdir/shared/pmix"
for dir in /usr/lib/x86_64-linux-gnu/pmix2/include; do
    [ -d "$dir" ] && includes="$includes -I$dir"
done
flags="-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined"

printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }\n' >"$work/probe.cc"
if ! "$cxx" $flags "$work/probe.cc" -o "$work/probe" >"$work/probe.log" 2>&1; then
    echo "run-fuzz: $cxx cannot build libFuzzer targets, skipping:"
    cat "$work/probe.log"
    exit 77
fi

common="$srcdir/shared/value.cc $srcdir/shared/wire/codec.cc $srcdir/shared/wire/frame.cc"
# shellcheck disable=SC2086
if ! "$cxx" $flags $includes "$srcdir/tests/fuzz/fuzz_codec.cc" $common -o "$work/fuzz_codec"; then
    echo "run-fuzz: build of fuzz_codec failed"
    exit 1
fi
# The client -> server messages (server input); needs shared/wire/messages.cc.
have_messages=
if [ -f "$srcdir/shared/wire/messages.cc" ]; then
    # shellcheck disable=SC2086
    if ! "$cxx" $flags $includes "$srcdir/tests/fuzz/fuzz_messages.cc" "$srcdir/shared/wire/messages.cc" $common \
        -o "$work/fuzz_messages"; then
        echo "run-fuzz: build of fuzz_messages failed"
        exit 1
    fi
    have_messages=1
fi

# Node-to-node input (plugin/net envelope, plugin/coll messages).
have_node=
if [ -f "$srcdir/plugin/net/envelope.cc" ]; then
    # shellcheck disable=SC2086
    if ! "$cxx" $flags $includes -I"$srcdir" "$srcdir/tests/fuzz/fuzz_node.cc" "$srcdir/plugin/net/envelope.cc" \
        "$srcdir/plugin/coll/coll_message.cc" $common -o "$work/fuzz_node"; then
        echo "run-fuzz: build of fuzz_node failed"
        exit 1
    fi
    have_node=1
fi

# The handshake of the node listeners and srun's agent (plugin/net/handshake.h); needs libcrypto.
have_handshake=
if [ -f "$srcdir/plugin/net/handshake.cc" ]; then
    # shellcheck disable=SC2086
    if ! "$cxx" $flags $includes -I"$srcdir" "$srcdir/tests/fuzz/fuzz_handshake.cc" "$srcdir/plugin/net/handshake.cc" \
        $common -lcrypto -o "$work/fuzz_handshake"; then
        echo "run-fuzz: build of fuzz_handshake failed"
        exit 1
    fi
    have_handshake=1
fi

# The srun-agent channel: cross-step messages and inbox items (plugin/common/xstep.h), the MPMD
# app table of a spawned step (plugin/common/mpmd.h).
have_agent=
if [ -f "$srcdir/plugin/common/xstep.cc" ] && [ -f "$srcdir/plugin/common/mpmd.cc" ]; then
    c="$srcdir/plugin/common"
    # shellcheck disable=SC2086
    if ! "$cxx" $flags $includes -I"$srcdir" "$srcdir/tests/fuzz/fuzz_agent.cc" "$c/xstep.cc" "$c/mpmd.cc" \
        "$c/session_store.cc" "$c/agent_io.cc" "$c/alloc_agent.cc" "$srcdir/plugin/net/handshake.cc" "$srcdir/shared/log.cc" \
        "$srcdir/shared/wire/messages.cc" $common -lpthread -lcrypto -o "$work/fuzz_agent"; then
        echo "run-fuzz: build of fuzz_agent failed"
        exit 1
    fi
    have_agent=1
fi

# Copy the seeds: the source tree may be read-only (distcheck) and libFuzzer writes new inputs.
mkdir -p "$work/corpus"
cp "$srcdir"/tests/fuzz/corpus/* "$work/corpus/" 2>/dev/null || true

cd "$work" || exit 1
run_one() {  # name corpus-dir
    echo "run-fuzz: $1 for ${seconds}s"
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
        "./$1" -max_total_time="$seconds" -max_len=4096 -rss_limit_mb=2048 -timeout=10 \
        -print_final_stats=1 -artifact_prefix="$work/$1-" "$2" >"$1.log" 2>&1
    rc=$?
    tail -n 25 "$1.log"
    if [ $rc -ne 0 ]; then
        echo "run-fuzz: $1 failed (exit $rc); crashing inputs:"
        for f in "$work/$1"-crash-* "$work/$1"-leak-* "$work/$1"-timeout-* "$work/$1"-oom-*; do
            [ -f "$f" ] || continue
            echo "  $f"
            od -A d -t x1 "$f" | head -n 20
        done
        trap - EXIT
        echo "run-fuzz: build directory kept at $work"
        exit 1
    fi
}
run_one fuzz_codec "$work/corpus"
if [ -n "$have_messages" ]; then
    mkdir -p "$work/corpus-messages"
    run_one fuzz_messages "$work/corpus-messages"
fi
if [ -n "$have_node" ]; then
    mkdir -p "$work/corpus-node"
    run_one fuzz_node "$work/corpus-node"
fi
if [ -n "$have_handshake" ]; then
    mkdir -p "$work/corpus-handshake"
    run_one fuzz_handshake "$work/corpus-handshake"
fi
if [ -n "$have_agent" ]; then
    mkdir -p "$work/corpus-agent"
    run_one fuzz_agent "$work/corpus-agent"
fi
exit 0
