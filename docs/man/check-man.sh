#!/bin/sh
# make check: the man pages render without a single groff warning (as `man -l` shows them).
command -v groff >/dev/null 2>&1 || { echo "SKIP: groff is not installed"; exit 77; }
status=0
for page in "${srcdir:-.}"/docs/man/pmixcpp_info.1 "${srcdir:-.}"/docs/man/mpi_pmixcpp.5; do
    warnings=$(groff -man -ww -z "$page" 2>&1)
    if [ -n "$warnings" ]; then
        echo "FAIL: $page: $warnings"; status=1
    else
        echo "ok: $page renders without warnings"
    fi
done
exit $status
