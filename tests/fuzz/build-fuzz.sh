#!/bin/sh
# Build every libFuzzer target (and make_corpus) from the sources with clang++ into OUTDIR.
#   build-fuzz.sh SRCDIR OUTDIR
#   CLANGXX      compiler (default clang++)
#   FUZZ_FLAGS   instrumentation (default -fsanitize=fuzzer,address,undefined)
# Exit: 0 built, 77 no usable clang++ / libFuzzer runtime, 1 build failure.
# Targets (the decoders they feed, one selector byte first):
#   fuzz_codec          frame reader, PMIx values, infos, data arrays, procs (shared/wire/codec.h)
#   fuzz_messages       client -> server messages, job data (shared/wire/messages.h, jobdata.h)
#   fuzz_replies        server -> client replies, the modex snapshot reference (shared/wire/messages.h, snapshot.h)
#   fuzz_snapshot       modex snapshot and job data files, the job layout (shared/wire/snapshot.h, jobdata.h, job_layout.h)
#   fuzz_node           node frame envelope, collective messages (plugin/net, plugin/coll)
#   fuzz_node_bodies    node message bodies (shared/wire/node_messages.h)
#   fuzz_agent          cross-step messages, inbox items, MPMD app table (plugin/services/xstep/xstep_codec.h, spawn/mpmd.h)
#   fuzz_agent_replies  allocation, spawn, session-store and fabric messages of srun's agent channel
#   fuzz_fabric         fabric requests and result infos -> cost matrix (shared/fabric/fabric_wire.h)
#   fuzz_group          group requests, replies and node contributions (shared/wire/group_messages.h)
#   fuzz_native         OpenPMIx's buffer encoding, both integer flavours, framing and handshake, the requests served by translation (plugin/native/: also queries, logging and groups)
#   fuzz_directory      directory-route messages (shared/wire/directory_messages.h)
#   fuzz_handshake      the handshake of the node listeners and srun's agent, node frame MACs, signed records (plugin/net/handshake.h, identity.h)
set -u
src=$1
out=$2
cxx=${CLANGXX:-clang++}
san=${FUZZ_FLAGS:--fsanitize=fuzzer,address,undefined}

if ! command -v "$cxx" >/dev/null 2>&1; then
    echo "build-fuzz: $cxx not found"
    exit 77
fi
mkdir -p "$out/obj" || exit 1
includes="-I$src -I$src/shared -I$src/shared/pmix -I$src/client/include"
base="-std=c++20 -g -O1 -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
obj_flags="$base $(echo "$san" | sed 's/fuzzer,//; s/,fuzzer//; s/=fuzzer$/=fuzzer-no-link/') -fsanitize=fuzzer-no-link"

printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char *, unsigned long) { return 0; }\n' >"$out/probe.cc"
# shellcheck disable=SC2086
if ! "$cxx" $base $san "$out/probe.cc" -o "$out/probe" >"$out/probe.log" 2>&1; then
    echo "build-fuzz: $cxx cannot build libFuzzer targets:"
    cat "$out/probe.log"
    exit 77
fi

shared="shared/value.cc shared/sys.cc shared/wire/codec.cc shared/wire/frame.cc shared/wire/messages.cc shared/wire/snapshot.cc shared/wire/jobdata.cc shared/wire/job_layout.cc
        shared/wire/node_messages.cc shared/log.cc shared/hostlist.cc shared/type_traits.cc
        shared/wire/group_messages.cc shared/wire/directory_messages.cc shared/fabric/fabric_wire.cc shared/fabric/fabric_cost.cc"
common="plugin/services/xstep/xstep_codec.cc plugin/services/xstep/xstep_srun.cc plugin/services/xstep/xstep_stepd.cc plugin/services/spawn/mpmd.cc plugin/services/sessions/session_codec.cc plugin/services/sessions/session_srun.cc plugin/agent/proto/agent_io.cc
        plugin/agent/proto/agent_proto.cc plugin/agent/stepd/agent_client.cc plugin/agent/stepd/agent_link.cc plugin/agent/proto/responder.cc plugin/common/workers.cc
        plugin/services/alloc/alloc_codec.cc plugin/services/service_ids.cc
        plugin/services/spawn/spawn_codec.cc plugin/services/spawn/spawn_plan.cc plugin/services/spawn/spawn_srun.cc plugin/services/fabric/fabric_codec.cc plugin/services/fabric/fabric_srun.cc
        plugin/net/envelope.cc plugin/server/node_channels.cc plugin/net/handshake.cc plugin/net/identity.cc plugin/coll/coll_message.cc
        plugin/native/bfrops.cc plugin/native/bfrops_pack.cc plugin/native/connection.cc plugin/native/requests.cc plugin/native/requests_grp.cc"

# Compile each source once, FUZZ_JOBS (default 2) at a time.
jobs=${FUZZ_JOBS:-2}
objs=
pids=
rc=0
for f in $shared $common; do
    o="$out/obj/$(echo "$f" | tr / _).o"
    objs="$objs $o"
    if [ ! -f "$o" ] || [ "$src/$f" -nt "$o" ]; then
        # shellcheck disable=SC2086
        "$cxx" $obj_flags $includes -c "$src/$f" -o "$o" &
        pids="$pids $!"
        if [ "$(echo $pids | wc -w)" -ge "$jobs" ]; then
            for p in $pids; do wait "$p" || rc=1; done
            pids=
        fi
    fi
done
for p in $pids; do wait "$p" || rc=1; done
[ $rc -eq 0 ] || { echo "build-fuzz: compiling the sources failed"; exit 1; }

for t in fuzz_codec fuzz_messages fuzz_snapshot fuzz_node fuzz_node_bodies fuzz_agent fuzz_agent_replies fuzz_fabric fuzz_handshake fuzz_group fuzz_native fuzz_replies fuzz_directory; do
    # shellcheck disable=SC2086
    if ! "$cxx" $base $san $includes "$src/tests/fuzz/$t.cc" $objs -lsodium -lpthread -o "$out/$t"; then
        echo "build-fuzz: build of $t failed"
        exit 1
    fi
done
# shellcheck disable=SC2086
if ! "$cxx" $base -fsanitize=address,undefined $includes "$src/tests/fuzz/make_corpus.cc" \
    $(for o in $objs; do echo "$o"; done) -fsanitize=fuzzer-no-link -lsodium -lpthread -o "$out/make_corpus"; then
    echo "build-fuzz: build of make_corpus failed"
    exit 1
fi
exit 0
