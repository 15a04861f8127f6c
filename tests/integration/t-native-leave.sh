# PMIx_Group_leave from OpenPMIx's own client library (tests/programs/native_group_leave.c, built
# against the system's OpenPMIx): the leaver gets success, the other members PMIX_GROUP_LEFT naming
# it, and their destruct completes without it; leaving a group one is not in fails. The leaver on
# another node (-N2 -n4) and on the same node (-N1 -n3). OpenPMIx's own server has no handler for
# the leave command; the anchor has no groups at all (its row is printed, not asserted).
. "$(dirname "$0")/lib.sh"
pkg-config --exists pmix 2>/dev/null || { echo "  SKIP: no system OpenPMIx (pkg-config pmix: libpmix-dev)"; t_done; exit 0; }
work=$(mktemp -d /tmp/pmixcpp-native-leave.XXXXXX)
chmod 755 "$work"
trap 'rm -rf "$work"' EXIT
progs="$PMIXCPP_PREFIX/libexec/pmixcpp/tests"
[ -f "$progs/native_group_leave.c" ] || progs="$PMIXCPP_SRCDIR/tests/programs"
# shellcheck disable=SC2046
if cc -O1 -o "$work/native_group_leave" "$progs/native_group_leave.c" $(pkg-config --cflags --libs pmix) 2>"$work/cc.err"; then
    pass "cc native_group_leave (the system's OpenPMIx $(pkg-config --modversion pmix))"
else
    fail "cc native_group_leave: $(cat "$work/cc.err")"; t_done; exit 0
fi
# OpenPMIx 5.0 to 6.1's own PMIx_Group_leave crashes in the client whenever it is in any group,
# whatever the server answers: PMIx_Group_leave_nb never sets the tracker's group name, and the
# reply's callback (destruct_cbfunc) compares that NULL name with each group's. 4.2's and 7.0's
# clients do not. There only our library's row runs.
case $(pkg-config --modversion pmix) in
    5.* | 6.*) native_rows="" ;;
    *) native_rows="2 4,1 3" ;;
esac
[ -n "$native_rows" ] || echo "  SKIP: OpenPMIx $(pkg-config --modversion pmix)'s PMIx_Group_leave crashes in its own client (a NULL group name in its reply callback): its rows are not run"
export SLURM_PMIXCPP_CLIENTLIB=native
IFS=, read -r -a shapes <<< "$native_rows"
for shape in "${shapes[@]}"; do
    set -- $shape
    run_srun 90 --mpi=pmixcpp -N"$1" -n"$2" "$work/native_group_leave"
    expect_eq "-N$1 -n$2: exit status" 0 "$rc"
    expect_eq "-N$1 -n$2: every rank passed (the leaver and the members that destructed without it)" "$2" \
        "$(echo "$out" | grep -c '^LEAVE-OK rank')"
    expect_eq "-N$1 -n$2: leaving a group one is not in fails at every rank" "$2" \
        "$(echo "$out" | grep -Ec 'leaving a group it is not in: (NOT-FOUND|PMIX_ERR_NOT_FOUND)')"
    echo "$out" | grep 'LEAVE-FAIL' | head -3 | sed 's/^/    /'
done
# The same program on pmixcpp's own library: its members drop the leaver the same way.
if cc -O1 -o "$work/leave_ours" "$progs/native_group_leave.c" -I"$PMIXCPP_PREFIX/include" -L"$PMIXCPP_PREFIX/lib" -lpmix \
        2>"$work/cc.err"; then
    SLURM_PMIXCPP_CLIENTLIB=ours run_srun 90 --mpi=pmixcpp -N2 -n4 "$work/leave_ours"
    expect_eq "pmixcpp's library, -N2 -n4: every rank passed" 4 "$(echo "$out" | grep -c '^LEAVE-OK rank')"
    echo "$out" | grep 'LEAVE-FAIL' | head -3 | sed 's/^/    /'
else
    fail "cc native_group_leave against pmixcpp's headers: $(cat "$work/cc.err")"
fi
if srun --mpi=list 2>&1 | grep -qw pmix_v4; then
    out=$(timeout -k 5 60 srun --mpi=pmix_v4 -N2 -n4 "$work/native_group_leave" 2>&1)
    echo "  anchor (pmix_v4, not asserted): $(echo "$out" | grep -m1 'LEAVE-' || echo "$out" | tail -n 1)"
fi
t_done
