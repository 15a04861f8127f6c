#!/bin/sh
# Golden ABI comparison of our public PMIx headers with the installed
# OpenPMIx headers (Debian 12: 4.2.2, Debian 13: 5.0.7; libpmix-dev).  Our
# headers and library must pass against both.
#
#  1. every PMIX_* constant (macro or enumerator) defined by both must have the
#     same value (numbers and key strings);
#  2. every public struct must have the same size, and every member the same
#     offset and size; every scalar typedef the same size and signedness;
#  3. every exported function and callback typedef we declare must be
#     type-compatible with OpenPMIx's declaration of the same name (checked by
#     redeclaring ours after OpenPMIx's headers: C rejects conflicting types);
#  4. every function OpenPMIx's headers declare must be exported by our
#     libpmix.so.2 (PMIXCPP_LIBPMIX, default: the one of this build tree), so
#     binaries built against those headers find all their symbols.
# The version numbers (PMIX_VERSION_*, PMIX_NUMERIC_VERSION) are not compared,
# and a struct OpenPMIx has grown at its end (pmix_server_module_t in 5.0) only
# has to agree on the members both have.
#
# Exit 0: no mismatch.  Exit 1: mismatches (printed).  Exit 77: skipped
# (no OpenPMIx headers).  Set OPENPMIX_INCDIR to use another installation,
# ABI_KEEP=1 to keep the work directory.
set -u

top=$(cd "${srcdir:-$(dirname "$0")/../..}" && pwd)
theirs=${OPENPMIX_INCDIR:-/usr/lib/x86_64-linux-gnu/pmix2/include}
CC=${CC:-cc}
if [ ! -f "$theirs/pmix_common.h" ]; then
    echo "SKIP: OpenPMIx headers not found in $theirs (apt-get install libpmix-dev)"
    exit 77
fi
ours="-I$top/shared/pmix -I$top/client/include"
our_headers="$top/shared/pmix/pmix_common.h $top/client/include/pmix.h \
$top/client/include/pmix_server.h $top/client/include/pmix_tool.h $top/shared/pmix/pmix_version.h"

work=$(mktemp -d "${TMPDIR:-/tmp}/abi-compare.XXXXXX") || exit 99
if [ "${ABI_KEEP:-0}" = 1 ]; then echo "work directory: $work"; else trap 'rm -rf "$work"' EXIT; fi
cd "$work" || exit 99

printf '#include <pmix.h>\n#include <pmix_server.h>\n#include <pmix_tool.h>\n' > all.h

# ---------------------------------------------------------------- names
# Object-like PMIX_* macros with a value (not initializer lists), plus enumerators.
names() {  # $1: include flags
    $CC -std=c11 $1 -E -dM all.h |
        sed -n 's/^#define \(PMIX_[A-Z0-9_]*\) \(.*\)$/\1 \2/p' |
        awk '$2 !~ /^\{/ && $2 != "" && $1 != "PMIX_EXPORT" {print $1}'
    $CC -std=c11 $1 -E -P all.h | tr '\n' ' ' | grep -o 'enum *[A-Za-z0-9_]* *{[^}]*}' |
        grep -o 'PMIX_[A-Z0-9_]*'
}
names "$ours" | sort -u > ours.names || exit 99
names "-I$theirs" | sort -u > theirs.names || exit 99
comm -12 ours.names theirs.names | grep -v -E '^PMIX_(VERSION_(MAJOR|MINOR|RELEASE)|NUMERIC_VERSION)$' > common.names
comm -23 ours.names theirs.names > ours-only.names
comm -13 ours.names theirs.names > theirs-only.names

{
    cat <<'HDR'
#include "all.h"
#include <stdio.h>
static void ps(const char *n, const char *v) { printf("%s \"%s\"\n", n, v); }
static void pi(const char *n, long long v) { printf("%s %lld\n", n, v); }
#define P(x) _Generic((x), char *: ps, const char *: ps, default: pi)(#x, (x))
int main(void)
{
HDR
    sed 's/.*/    P(&);/' common.names
    echo '    return 0;'
    echo '}'
} > values.c

# ---------------------------------------------------------------- layouts
# struct type, then its members (union members as data.x).  Every struct
# typedef of our headers must be listed here (checked below).
cat > structs.txt <<'LIST'
pmix_proc_t nspace rank
pmix_value_t type data data.flag data.byte data.string data.size data.pid data.integer data.int8 data.int16 data.int32 data.int64 data.uint data.uint8 data.uint16 data.uint32 data.uint64 data.fval data.dval data.tv data.time data.status data.rank data.nspace data.proc data.bo data.persist data.scope data.range data.state data.pinfo data.darray data.ptr data.adir data.envar data.coord data.linkstate data.jstate data.topo data.cpuset data.locality data.geometry data.devtype data.devdist data.endpoint data.dbuf data.pstats data.dkstats data.netstats data.ndstats
pmix_info_t key flags value
pmix_pdata_t proc key value
pmix_app_t cmd argv env cwd maxprocs info ninfo
pmix_query_t keys qualifiers nqual
pmix_data_array_t type size array
pmix_byte_object_t bytes size
pmix_proc_info_t proc hostname executable_name pid exit_code state
pmix_data_buffer_t base_ptr pack_ptr unpack_ptr bytes_allocated bytes_used
pmix_coord_t view coord dims
pmix_cpuset_t source bitmap
pmix_topology_t source topology
pmix_geometry_t fabric uuid osname coordinates ncoords
pmix_device_distance_t uuid osname type mindist maxdist
pmix_endpoint_t uuid osname endpt
pmix_envar_t envar value separator
pmix_regattr_t name string type description
pmix_fabric_t name index info ninfo module
pmix_proc_stats_t node proc pid cmd state time percent_cpu priority num_threads pss vsize rss peak_vsize processor sample_time
pmix_disk_stats_t disk num_reads_completed num_reads_merged num_sectors_read milliseconds_reading num_writes_completed num_writes_merged num_sectors_written milliseconds_writing num_ios_in_progress milliseconds_io weighted_milliseconds_io
pmix_net_stats_t net_interface num_bytes_recvd num_packets_recvd num_recv_errs num_bytes_sent num_packets_sent num_send_errs
pmix_node_stats_t node la la5 la15 total_mem free_mem buffers cached swap_cached swap_total swap_free mapped sample_time diskstats ndiskstats netstats nnetstats
pmix_server_module_t client_connected client_finalized abort fence_nb direct_modex publish lookup unpublish spawn connect disconnect register_events deregister_events listener notify_event query tool_connected log allocate job_control monitor get_credential validate_credential iof_pull push_stdin group fabric client_connected2
LIST
cat > scalars.txt <<'LIST'
pmix_nspace_t pmix_key_t pmix_rank_t pmix_status_t pmix_data_type_t pmix_proc_state_t
pmix_job_state_t pmix_scope_t pmix_data_range_t pmix_persistence_t pmix_info_directives_t
pmix_alloc_directive_t pmix_iof_channel_t pmix_storage_medium_t pmix_storage_accessibility_t
pmix_storage_persistence_t pmix_storage_access_type_t pmix_coord_view_t pmix_link_state_t
pmix_bind_envelope_t pmix_locality_t pmix_device_type_t pmix_value_cmp_t pmix_group_opt_t
pmix_group_operation_t pmix_fabric_operation_t pmix_boolean_t
LIST
# Which typedef'd aggregates do our headers define?  All must be covered.
cat $our_headers | tr '\n' ' ' | grep -o '} *pmix_[a-z0-9_]*_t *;' | sed 's/[} ;]//g' | sort -u > declared.types
{ awk '{print $1}' structs.txt; tr ' ' '\n' < scalars.txt; } | grep . | sort -u > listed.types
missing=$(comm -23 declared.types listed.types)
{
    echo '#include "all.h"'
    echo '#include <stdio.h>'
    echo '#include <stddef.h>'
    echo 'int main(void)'
    echo '{'
    while read -r type members; do
        printf '%s\n' "    printf(\"sizeof($type) %zu\\n\", sizeof($type));"
        for m in $members; do
            printf '%s\n' "    printf(\"$type.$m offset %zu size %zu\\n\", offsetof($type, $m), sizeof((($type *)0)->$m));"
        done
    done < structs.txt
    for t in $(cat scalars.txt); do
        printf '%s\n' "    printf(\"sizeof($t) %zu\\n\", sizeof($t));"
    done
    for t in $(cat scalars.txt); do
        case $t in pmix_nspace_t|pmix_key_t) continue ;; esac
        printf '%s\n' "    printf(\"signed($t) %d\\n\", (int)(($t)-1 < ($t)0));"
    done
    echo '    return 0;'
    echo '}'
} > layout.c

status=0
run() {  # $1 tag, $2 include flags
    for prog in values layout; do
        if ! $CC -std=c11 -w $2 -I. $prog.c -o $prog-$1 2> $prog-$1.err; then
            echo "FAIL: cannot compile $prog.c against $1 headers:"; head -20 $prog-$1.err
            return 1
        fi
        ./$prog-$1 > $prog-$1.out || return 1
    done
}
run ours "$ours" || exit 1
run theirs "-I$theirs" || exit 1

if ! diff values-theirs.out values-ours.out > values.diff; then
    echo "FAIL: constant values differ (< OpenPMIx, > ours):"; cat values.diff; status=1
fi
# structs OpenPMIx extends at their end between releases: their size may be larger than ours
for grown in pmix_server_module_t; do
    t=$(sed -n "s/^sizeof($grown) //p" layout-theirs.out); o=$(sed -n "s/^sizeof($grown) //p" layout-ours.out)
    if [ -n "$t" ] && [ -n "$o" ] && [ "$t" -ge "$o" ]; then
        sed -i "/^sizeof($grown) /d" layout-theirs.out layout-ours.out
    fi
done
if ! diff layout-theirs.out layout-ours.out > layout.diff; then
    echo "FAIL: struct layouts differ (< OpenPMIx, > ours):"; cat layout.diff; status=1
fi
if [ -n "$missing" ]; then
    echo "FAIL: types in our headers not covered by the layout list in $0:"; echo "$missing"; status=1
fi

# ---------------------------------------------------------------- signatures
# Redeclare each of our PMIX_EXPORT functions and function-pointer typedefs
# after OpenPMIx's headers; C11 accepts identical redeclarations only.
{
    printf '#include <pmix.h>\n#include <pmix_server.h>\n#include <pmix_tool.h>\n'
    cat $our_headers | awk '
        /^[ \t]*#/ { next }
        !collecting && (/^PMIX_EXPORT/ || /^typedef .*\(\*/) { collecting = 1; stmt = "" }
        collecting { sub(/\/\*.*\*\//, ""); stmt = stmt " " $0
                     if ($0 ~ /;/) { print stmt; collecting = 0; n++ } }'
} > signatures.c
nsig=$(grep -c 'PMIX_EXPORT\|typedef' signatures.c)
if ! $CC -std=c11 -fsyntax-only -I"$theirs" signatures.c 2> signatures.err; then
    echo "FAIL: declarations incompatible with OpenPMIx:"; grep -E 'error|note' signatures.err | head -40; status=1
fi
tool_only=$(grep -o 'PMIx_[A-Za-z_]*' signatures.c | sort -u | while read -r f; do
    grep -q "$f" "$theirs"/*.h || echo "$f"; done)

# ---------------------------------------------------------------- exports
lib=${PMIXCPP_LIBPMIX:-}
if [ -z "$lib" ]; then
    for cand in "${abs_top_builddir:-$OLDPWD}/client/.libs/libpmix.so.2" "$OLDPWD/client/.libs/libpmix.so.2"; do
        [ -f "$cand" ] && { lib=$cand; break; }
    done
fi
if [ -n "$lib" ] && [ -f "$lib" ]; then
    cat "$theirs"/pmix.h "$theirs"/pmix_common.h "$theirs"/pmix_server.h "$theirs"/pmix_tool.h \
        $( [ -f "$theirs/pmix_deprecated.h" ] && echo "$theirs/pmix_deprecated.h" ) |
        sed 's://.*$::' | tr '\n' ' ' | grep -o 'PMIX_EXPORT[^;]*;' | grep -o 'PMIx_[A-Za-z0-9_]*(' |
        tr -d '(' | sort -u > theirs.functions
    nm -D --defined-only "$lib" | awk '{print $3}' | sort -u > ours.exports
    unexported=$(comm -23 theirs.functions ours.exports | tr '\n' ' ')
    if [ -n "$unexported" ]; then
        echo "FAIL: functions OpenPMIx declares that $lib does not export: $unexported"; status=1
    fi
    echo "checked $(wc -l < theirs.functions) OpenPMIx functions against the exports of $lib"
else
    echo "note: no built libpmix.so.2 found (set PMIXCPP_LIBPMIX); exports not checked"
fi

echo "compared $(wc -l < common.names) constants defined by both headers"
echo "compared $(wc -l < layout-ours.out) layout facts over $(wc -l < structs.txt) structs and $(wc -w < scalars.txt) scalar types"
echo "checked $nsig function/callback declarations against OpenPMIx"
echo "defined only by us ($(wc -l < ours-only.names)): $(tr '\n' ' ' < ours-only.names)"
echo "defined only by OpenPMIx ($(wc -l < theirs-only.names)): $(tr '\n' ' ' < theirs-only.names)"
[ -n "$tool_only" ] && echo "declared only by us: $tool_only"
[ $status = 0 ] && echo "PASS: no ABI mismatch with $theirs"
exit $status
