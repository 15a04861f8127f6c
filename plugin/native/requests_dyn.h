// The requests of an OpenPMIx client for dynamic processes (MPI_Comm_spawn and what follows it:
// publish / lookup / unpublish, connect / disconnect), decoded into the server's own requests
// (shared/wire/messages.h) that its dyn handlers serve, and the replies in OpenPMIx's format
// (OPENPMIX-WIRE.md §4; layouts checked against OpenPMIx 4.2.2's src/client/pmix_client_spawn.c,
// pmix_client_pub.c, pmix_client_connect.c and bfrops' APP / PDATA packing). No I/O, no server
// state. Decoders as in requests.h: the unpacker after the command byte, every count checked
// against the bytes left and a cap, no trailing bytes, the output untouched on failure.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "plugin/native/bfrops.h"
#include "status.h"
#include "value.h"
#include "wire/messages.h"

namespace pmixcpp::native {

// OpenPMIx's command numbers of these requests (pmix_cmd_t, stable since 3.x).
inline constexpr uint8_t kCmdPublish = 6;
inline constexpr uint8_t kCmdLookup = 7;
inline constexpr uint8_t kCmdUnpublish = 8;
inline constexpr uint8_t kCmdSpawn = 9;
inline constexpr uint8_t kCmdConnect = 10;
inline constexpr uint8_t kCmdDisconnect = 11;

// Caps of what one request may carry (more is refused as malformed).
inline constexpr size_t kMaxSpawnApps = 1024;
inline constexpr size_t kMaxAppStrings = 65536;  // argv or env entries of one app
inline constexpr size_t kMaxAppString = 1 << 20;  // one argv/env entry, cmd or cwd
inline constexpr size_t kMaxLookupKeys = 4096;

// SPAWNNB: [SIZE ninfo][INFO...][SIZE napps][APP...], an APP being [STRING cmd][INT32 argc]
// [STRING argv...][INT32 nenv][STRING env...][STRING cwd][INT maxprocs][SIZE ninfo][INFO...].
// The apps' env (OpenMPI's OMPI_PARENT_PORT among them) is the children's added environment.
Status decode_spawn(unpacker &up, wire::spawn_request *out);

// PUBLISHNB: [UINT32 uid][SIZE ninfo][INFO...]; PMIX_RANGE, PMIX_PERSISTENCE and PMIX_TIMEOUT
// are directives, the rest is the data. The uid the client claims is ignored (the connection's is
// the truth).
Status decode_publish(unpacker &up, wire::publish_request *out);

// LOOKUPNB and UNPUBLISHNB: [UINT32 uid][SIZE nkeys][STRING key]...[SIZE ninfo][INFO...].
Status decode_lookup(unpacker &up, wire::lookup_request *out);

// CONNECTNB / DISCONNECTNB: [SIZE nprocs][PROC...][SIZE ninfo][INFO...] (as FENCENB).
struct connect_data {
    std::vector<pmix_proc_t> procs;
    InfoArray infos;
};
Status decode_connect(unpacker &up, connect_data *out, size_t max_procs);

// The SPAWNNB reply: [STATUS], on success [STRING child nspace].
Result<std::vector<uint8_t>> encode_spawn_reply(int_flavour f, pmix_status_t status, const std::string &nspace);
// A successful SPAWNNB reply with the children's job data, as OpenPMIx's server sends it:
// [STATUS SUCCESS] then the child's job blob ([STRING nspace][KVAL...], session.h pack_job_blob),
// which the client's gds/hash stores for the child namespace.
std::vector<uint8_t> encode_spawn_reply_with_job(int_flavour f, std::span<const uint8_t> job_blob);

// The LOOKUPNB reply: [STATUS][SIZE n] then [PDATA...] ([PROC owner][STRING key][VALUE]).
Result<std::vector<uint8_t>> encode_lookup_reply(int_flavour f, const wire::lookup_reply &r);

// The CONNECTNB reply: [STATUS] then one [BYTE_OBJECT] per other namespace, each holding the
// job-blob of that namespace as REQ carries it ([STRING nspace][KVAL...], session.h
// pack_job_blob).
std::vector<uint8_t> encode_connect_reply(int_flavour f, const std::vector<std::vector<uint8_t>> &blobs);

// A GETNB reply of several procs' data: [STATUS SUCCESS] then one [BYTE_OBJECT] per entry, each
// [PROC][KVAL...].
struct proc_data {
    pmix_proc_t proc{};
    std::vector<pmix_info_t> infos;  // borrowed
};
Result<std::vector<uint8_t>> encode_get_reply_procs(int_flavour f, const std::vector<proc_data> &procs);

}  // namespace pmixcpp::native
