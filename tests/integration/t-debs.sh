# The Debian packages (contrib/build-debs.sh) instead of make install: build them (lintian without
# errors), install them, run the cluster with Debian's PluginDir only, check that slurmstepd loads
# the packaged plugin and the tasks the packaged libpmix.so.2, run Debian's OpenMPI on 4 nodes and
# a program built with libpmixcpp-dev, then dpkg --purge and check that no file of ours is left.
# Whatever happens, the packages are purged and the cluster is restarted with the tested plugin
# ($PMIXCPP_PLUGIN_DIR) at the end, so they never shadow it for the tests that follow.
# Requires: root, dpkg-buildpackage, debhelper, lintian (contrib/install-deps.sh); >= 4 nodes.
. "$(dirname "$0")/lib.sh"

pkgs="slurm-mpi-pmixcpp libpmixcpp2 libpmixcpp-dev pmixcpp-info"
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
deb_plugin=/usr/lib/$multiarch/slurm-wlm/mpi_pmixcpp.so
deb_libdir=/usr/lib/$multiarch/pmixcpp

[ "$(id -u)" = 0 ] || { echo "  SKIP: needs root (installs packages)"; t_done; exit; }
for t in dpkg-buildpackage dh lintian mpicc; do
    command -v "$t" >/dev/null || { echo "  SKIP: $t not installed (contrib/install-deps.sh)"; t_done; exit; }
done
# Never touch a real installation of ours.
for p in $pkgs; do
    if dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q ' installed$'; then
        echo "  SKIP: $p is installed on this machine; this test would remove it"; t_done; exit
    fi
done

# Another engineer's apt-get may hold the dpkg lock for a while: wait for it.
apt_dpkg() { apt-get -o DPkg::Lock::Timeout=600 -y --no-install-recommends "$@"; }

work=$(mktemp -d /tmp/pmixcpp-t-debs.XXXXXX)
cleanup() {
    local p installed=""
    for p in $pkgs; do
        case $(dpkg-query -W -f='${Status}' "$p" 2>/dev/null) in ''|*not-installed) ;; *) installed="$installed $p" ;; esac
    done
    # shellcheck disable=SC2086
    [ -z "$installed" ] || apt_dpkg purge $installed >/dev/null 2>&1 || echo "  cleanup: purge of$installed failed"
    "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart >/dev/null 2>&1 || echo "  cleanup: cluster restart failed"
    rm -rf "$work"
}
trap cleanup EXIT

t0=$SECONDS
# Debian's flags (dpkg-buildflags: -g -O2 and the hardening flags) with line tables only
# (-g1, the last -g wins): the packaging is what is tested here, at half the compile time.
# At nice 10: the integration tests of the other stack may run beside this one.
if DEB_CFLAGS_APPEND=-g1 DEB_CXXFLAGS_APPEND=-g1 nice -n 10 \
    "$PMIXCPP_SRCDIR/contrib/build-debs.sh" "$work/debs" > "$work/build.log" 2>&1; then
    pass "build-debs.sh: packages built, lintian without errors ($((SECONDS - t0)) s)"
else
    fail "build-debs.sh failed: $(tail -n 40 "$work/build.log")"; t_done; exit
fi
grep -E '^(E|W): ' "$work/build.log" | sed 's/^/    lintian /' | head -20
debs=""
for p in $pkgs; do
    f=$(ls "$work/debs/${p}_"*.deb 2>/dev/null | head -n1)
    [ -n "$f" ] || { fail "no package $p"; t_done; exit; }
    debs="$debs $f"
done
expect_match "the plugin depends on exactly the installed Slurm" \
    "slurm-wlm-basic-plugins \(= $(dpkg-query -W -f='${Version}' slurm-wlm-basic-plugins | sed 's/[.+]/\\&/g')\)" \
    "$(dpkg-deb -f "$work/debs/"slurm-mpi-pmixcpp_*.deb Depends)"

# shellcheck disable=SC2086
if out=$(apt_dpkg install $debs 2>&1); then pass "packages installed"; else fail "install: $out"; t_done; exit; fi
for p in $pkgs; do dpkg -L "$p"; done | grep -vx '/\.' | sort -u > "$work/files"
expect_eq "plugin in Debian's Slurm PluginDir" yes "$([ -f "$deb_plugin" ] && echo yes)"
expect_eq "client library in its private directory" yes "$([ -e "$deb_libdir/libpmix.so.2" ] && echo yes)"
expect_eq "PMI-1 and PMI-2 libraries beside it (libpmixcpp2), headers in libpmixcpp-dev" "yes yes yes yes" \
    "$(for f in "$deb_libdir/libpmi.so.0" "$deb_libdir/libpmi2.so.0" /usr/include/pmixcpp/pmi.h /usr/include/pmixcpp/pmi2.h; do
        [ -e "$f" ] && echo yes || echo "no($f)"; done | paste -sd' ' -)"
expect_eq "OpenPMIx's libpmix.so.2 untouched" "libpmix2" \
    "$(dpkg-query -S "/usr/lib/$multiarch/libpmix.so.2" 2>/dev/null | cut -d: -f1)"
info=$(/usr/bin/pmixcpp_info 2>&1)
expect_match "pmixcpp_info names the packaged plugin" "plugin: .*\($deb_plugin\)" "$info"
expect_match "pmixcpp_info names the packaged client library" "client libdir: +$deb_libdir\$" "$info"
for page in pmixcpp_info.1 mpi_pmixcpp.5; do
    f=$(grep "/$page.gz\$" "$work/files")
    if [ -n "$f" ] && warn=$(zcat "$f" | groff -man -ww -z 2>&1) && [ -z "$warn" ]; then
        pass "man page $page installed, renders without warnings"
    else
        fail "man page $page: ${f:-not installed} $warn"
    fi
done

# The cluster with Debian's PluginDir only: nothing of the build tree is searched.
if PMIXCPP_PLUGIN_DIR= PMIXCPP_NODES=4 "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart >/dev/null 2>&1; then
    pass "cluster restarted with PluginDir=$(dirname "$deb_plugin") only"
else
    fail "cluster restart with Debian's PluginDir"; t_done; exit
fi
expect_match "srun --mpi=list shows pmixcpp" '^[[:space:]]*pmixcpp$' "$(srun --mpi=list 2>&1)"

mkdir -p "$work/bin" && chmod 755 "$work" "$work/bin"
if mpicc -O1 -o "$work/bin/demo_mpi" "$PMIXCPP_SRCDIR/contrib/demo_mpi.c" 2>"$work/mpicc.err"; then
    pass "mpicc demo_mpi"
else
    fail "mpicc: $(cat "$work/mpicc.err")"
fi
run_srun 120 --mpi=pmixcpp -N4 --ntasks-per-node=2 "$work/bin/demo_mpi"
expect_eq "OpenMPI -N4 x2 on the packages: exit status" 0 "$rc"
expect_match "MPI_Allreduce over 8 ranks on 4 nodes is right" '^DEMO-SUM-OK 8 4$' "$out"
expect_eq "every rank runs on the packaged libpmix.so.2" 8 "$(printf '%s\n' "$out" | grep -c " $deb_libdir/libpmix\.so\.2")"
[ "$rc" -eq 0 ] || printf '%s\n' "$out" | head -20 | sed 's/^/    /'

# Which plugin each node's slurmstepd has mapped (the task's parent is its slurmstepd).
run_srun 60 --mpi=pmixcpp -N4 --ntasks-per-node=1 \
    bash -c 'grep -o "/[^ ]*mpi_pmixcpp\.so" /proc/$PPID/maps | sort -u | sed "s/^/$SLURMD_NODENAME /"'
expect_eq "the slurmstepd of each node has mapped $deb_plugin and no other mpi_pmixcpp.so" \
    "$(printf 'n%s '"$deb_plugin"'\n' 1 2 3 4)" "$(printf '%s\n' "$out" | grep '^n[0-9]' | sort)"

# A program built against libpmixcpp-dev (pkg-config pmixcpp), run under srun on 2 nodes.
cat > "$work/dev.c" <<'EOF'
#include <pmix.h>
#include <stdio.h>
int main(void) {
    pmix_proc_t me;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    printf("DEV-OK %s %u %s\n", me.nspace, me.rank, PMIx_Get_version());
    return PMIx_Finalize(NULL, 0) == PMIX_SUCCESS ? 0 : 1;
}
EOF
# shellcheck disable=SC2046
if cc -o "$work/bin/dev" "$work/dev.c" $(pkg-config --cflags --libs pmixcpp) 2>"$work/cc.err"; then
    pass "cc \$(pkg-config --cflags --libs pmixcpp)"
else
    fail "cc with pmixcpp.pc: $(cat "$work/cc.err")"
fi
run_srun 60 --mpi=pmixcpp -N2 --ntasks-per-node=1 "$work/bin/dev"
expect_eq "libpmixcpp-dev program under srun -N2: 2 ranks" 2 "$(printf '%s\n' "$out" | grep -c '^DEV-OK slurm\.')"

# Remove everything; no file of ours may be left.
# shellcheck disable=SC2086
if out=$(apt_dpkg purge $pkgs 2>&1); then pass "dpkg --purge of the packages"; else fail "purge: $out"; fi
left=""
while read -r f; do
    [ -e "$f" ] || [ -L "$f" ] || continue
    # a directory other packages also own (/usr, /usr/share/man/man1, ...) stays
    if [ -d "$f" ] && [ ! -L "$f" ] && dpkg-query -S "$f" >/dev/null 2>&1; then continue; fi
    left="$left $f"
done < "$work/files"
expect_eq "no file of the packages left ($(wc -l < "$work/files") paths checked)" "" "$left"
expect_eq "no dpkg record left" "" "$(for p in $pkgs; do dpkg-query -W -f='${Package} ${Status}\n' "$p" 2>/dev/null | grep -v 'not-installed$'; done)"
if PMIXCPP_PLUGIN_DIR= PMIXCPP_NODES=4 "$PMIXCPP_SRCDIR/contrib/cluster.sh" restart >/dev/null 2>&1; then
    expect_no_match "after the purge, Debian's PluginDir has no pmixcpp" '^[[:space:]]*pmixcpp$' "$(srun --mpi=list 2>&1)"
fi
t_done
