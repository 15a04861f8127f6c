#!/bin/bash
# Integration tests on a real local Slurm cluster (slurmctld + several slurmd).
#
# usage: tests/integration/run.sh [t-name ...]
#   PMIXCPP_PLUGIN_DIR  directory holding the installed mpi_pmixcpp.so (required)
#   PMIXCPP_PREFIX      prefix pmixcpp was installed into (client library, test programs)
#   PMIXCPP_NODES       cluster size (default 6: t-events-nodedown3 needs 5)
# Starts the cluster, runs every tests/integration/t-*.sh (or the ones named; a test with the
# line "# integration: run only when named" runs only when named),
# checks that no job is left in squeue, stops the cluster, and prints "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
export PMIXCPP_SRCDIR=$(cd "$here/../.." && pwd)
: "${PMIXCPP_PLUGIN_DIR:?set PMIXCPP_PLUGIN_DIR to the directory holding mpi_pmixcpp.so}"
[ -f "$PMIXCPP_PLUGIN_DIR/mpi_pmixcpp.so" ] || { echo "no mpi_pmixcpp.so in $PMIXCPP_PLUGIN_DIR" >&2; exit 2; }
export PMIXCPP_PLUGIN_DIR PMIXCPP_PREFIX="${PMIXCPP_PREFIX:-}"
. "$here/lib.sh"

cluster="$PMIXCPP_SRCDIR/contrib/cluster.sh"
export PMIXCPP_NODES="${PMIXCPP_NODES:-6}"
"$cluster" restart || { echo "cluster did not start" >&2; exit 2; }
eval "$("$cluster" env)"
trap '"$cluster" stop >/dev/null 2>&1' EXIT

if [ $# -gt 0 ]; then tests=("$@"); else
    # a test marked "# integration: run only when named" is left out of the default run
    tests=(); for f in "$here"/t-*.sh; do
        grep -qx '# integration: run only when named' "$f" && continue
        tests+=("$(basename "$f" .sh)")
    done
fi

passed=0; failed=0; failed_names=""
for t in "${tests[@]}"; do
    echo "== $t"
    start=$(date +%s.%N)
    if bash "$here/$t.sh"; then
        passed=$((passed + 1)); verdict=PASS
    else
        failed=$((failed + 1)); verdict=FAIL; failed_names="$failed_names $t"
    fi
    awk -v t="$t" -v v="$verdict" -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "== %s %s (%.1f s)\n", t, v, e - s }'
done
# No test may leave a job behind (an allocation that outlives its requester holds nodes).
echo "== squeue is empty at the end"
left=""
for _ in $(seq 30); do
    left=$(squeue -h -o '%i %j %u %T %M' 2>&1)
    [ -z "$left" ] && break
    sleep 1
done
if [ -n "$left" ]; then
    printf '  FAIL: jobs left behind:\n%s\n' "$left" | sed 's/^/    /'
    failed=$((failed + 1)); failed_names="$failed_names squeue-empty"
else
    passed=$((passed + 1)); echo "  ok: no job left"
fi
[ -n "$failed_names" ] && echo "failed:$failed_names"
echo "integration: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
