#!/bin/bash
# A real fuzz campaign over every decoder (tests/fuzz/build-fuzz.sh lists the targets): each
# target in turn, one process at a time (the machine's cores are shared), starting from the seed
# corpus kept in tests/fuzz/corpus/<target>/, until FUZZ_RUNS executions or the time per target.
#   contrib/fuzz-campaign.sh [seconds-per-target] [target...]
#   contrib/fuzz-campaign.sh --make-corpus     regenerate tests/fuzz/corpus/ (make_corpus)
#   FUZZ_RUNS      executions per target (default 10000000)
#   FUZZ_MAX_LEN   largest input (default 65536: far past every length and count field)
#   FUZZ_WORK      work directory (default /tmp/pmixcpp-fuzz-campaign); kept: build, grown
#                  corpora, crashers (<target>-crash-*), logs
# Limits that make a finding of an input that allocates past its decode budget (codec.h):
# -malloc_limit_mb (one allocation) and -rss_limit_mb.
# Ends with one line per target: executions, seconds, new crashers; exit 1 if any target crashed.
# A crasher, once fixed, goes into tests/fuzz/corpus/<target>/ as a regression seed.
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
work=${FUZZ_WORK:-/tmp/pmixcpp-fuzz-campaign}
runs=${FUZZ_RUNS:-10000000}
max_len=${FUZZ_MAX_LEN:-65536}
all="fuzz_codec fuzz_messages fuzz_replies fuzz_snapshot fuzz_node fuzz_node_bodies fuzz_agent fuzz_agent_replies fuzz_fabric fuzz_handshake"

mkdir -p "$work"
"$src/tests/fuzz/build-fuzz.sh" "$src" "$work/bin" || exit 1

if [ "${1:-}" = "--make-corpus" ]; then
    rm -rf "$src/tests/fuzz/corpus.new"
    "$work/bin/make_corpus" "$src/tests/fuzz/corpus.new" || exit 1
    # keep the regression seeds (crash-*) of the old corpus
    for d in "$src"/tests/fuzz/corpus/*/; do
        t=$(basename "$d")
        mkdir -p "$src/tests/fuzz/corpus.new/$t"
        cp "$d"/crash-* "$src/tests/fuzz/corpus.new/$t/" 2>/dev/null || true
    done
    rm -rf "$src/tests/fuzz/corpus" && mv "$src/tests/fuzz/corpus.new" "$src/tests/fuzz/corpus"
    du -sh "$src"/tests/fuzz/corpus/*
    exit 0
fi

seconds=${1:-300}
shift || true
targets=${*:-$all}
summary=()
failed=0
for t in $targets; do
    corpus="$work/corpus/$t"
    mkdir -p "$corpus"
    cp -n "$src/tests/fuzz/corpus/$t"/* "$corpus/" 2>/dev/null || true
    echo "fuzz-campaign: $t for at most ${seconds}s / $runs runs"
    before=$(ls "$work/$t"-crash-* "$work/$t"-leak-* "$work/$t"-oom-* "$work/$t"-timeout-* 2>/dev/null | wc -l)
    start=$(date +%s)
    ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
        "$work/bin/$t" -runs="$runs" -max_total_time="$seconds" -max_len="$max_len" \
        -malloc_limit_mb=64 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$work/$t-" "$corpus" >"$work/$t.log" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/$t.log" | tail -n 1)
    found=$(($(ls "$work/$t"-crash-* "$work/$t"-leak-* "$work/$t"-oom-* "$work/$t"-timeout-* 2>/dev/null | wc -l) - before))
    line="$t: ${execs:-?} executions in ${took}s, exit $rc, $found new crasher(s)"
    echo "fuzz-campaign: $line"
    summary+=("$line")
    if [ $rc -ne 0 ]; then
        failed=1
        tail -n 40 "$work/$t.log"
    fi
done
echo "=== fuzz campaign (max_len $max_len, work dir $work)"
printf '%s\n' "${summary[@]}"
exit $failed
