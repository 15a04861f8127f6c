#!/bin/sh
# The golden ABI comparison (compare-openpmix.sh) against OpenPMIx 5.0.7's headers
# from the Debian 13 root of contrib/debian13-root.sh, so that a Debian 12 build is
# checked against both OpenPMIx releases.  Inside that root the installed headers
# already are 5.0.7 (compare-openpmix.sh covers them), and without the root this
# test is skipped (exit 77).
root=${PMIXCPP_DEBIAN13_ROOT:-/var/cache/pmixcpp/debian13-root}
if [ -n "${PMIXCPP_IN_CHROOT:-}" ]; then
    echo "SKIP: inside the Debian 13 root compare-openpmix.sh compares with its OpenPMIx 5 headers"
    exit 77
fi
inc=$root/usr/lib/x86_64-linux-gnu/pmix2/include
if [ ! -f "$inc/pmix_common.h" ]; then
    echo "SKIP: no Debian 13 root with OpenPMIx 5 headers at $root (contrib/debian13-root.sh build)"
    exit 77
fi
OPENPMIX_INCDIR=$inc exec sh "$(dirname "$0")/compare-openpmix.sh"
