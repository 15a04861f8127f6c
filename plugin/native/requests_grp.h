// The requests of an OpenPMIx client for groups, queries and logging (MPI sessions,
// MPI_Comm_create_from_group, MPI_Session_get_num_psets and the like), job control, process
// monitoring and allocation requests, decoded into the server's
// own requests (shared/wire/messages.h, shared/wire/group_messages.h) and their replies in
// OpenPMIx's format (OPENPMIX-WIRE.md §4; layouts checked against OpenPMIx's
// src/client/pmix_client_group.c, src/common/pmix_query.c and pmix_log.c at 4.2.2, 5.0.7, 6.0.0
// and 6.1.0, and bfrops' QUERY packing). No I/O, no server state. Decoders as in requests.h.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/native/bfrops.h"
#include "status.h"
#include "value.h"
#include "wire/group_messages.h"
#include "wire/messages.h"

namespace pmixcpp::native {

// OpenPMIx's command numbers (pmix_cmd_t, stable since 3.x).
inline constexpr uint8_t kCmdQuery = 15;
inline constexpr uint8_t kCmdLog = 16;
inline constexpr uint8_t kCmdAlloc = 17;
inline constexpr uint8_t kCmdJobControl = 18;
inline constexpr uint8_t kCmdMonitor = 19;
inline constexpr uint8_t kCmdGroupConstruct = 24;
inline constexpr uint8_t kCmdGroupLeave = 27;
inline constexpr uint8_t kCmdGroupDestruct = 28;

inline constexpr size_t kMaxQueries = 256;
inline constexpr size_t kMaxQueryKeys = 256;  // keys of one query

// QUERY: [SIZE nq] then a pack of nq QUERYs, each [INT32 nkeys][STRING...][SIZE nqual][INFO...]
// (keys and qualifiers only when their number is not 0).
Status decode_query(unpacker &up, wire::query_request *out);

// LOG: [TIME stamp] (clients send it to servers of release 3 and later: ours says 5.0.7), then
// [SIZE n][INFO...][SIZE ndirs][INFO...].
Status decode_log(unpacker &up, wire::log_request *out);

// JOB_CONTROL: [SIZE ntargets][PROC...][SIZE ndirs][INFO...] (the PROC pack only when there are
// targets: none means the caller's whole job), as src/common/pmix_control.c packs it in 3.2-5.0.
Status decode_job_control(unpacker &up, size_t max_procs, wire::job_control_request *out);

// MONITOR: [INFO what to monitor][STATUS the code to raise][SIZE ndirs][INFO...].
Status decode_monitor(unpacker &up, wire::monitor_request *out);

// ALLOC: [ALLOC_DIRECTIVE][SIZE n][INFO...] (src/common/pmix_query.c). Their replies, as a query's:
// [STATUS][SIZE n][INFO...].
Status decode_alloc(unpacker &up, wire::alloc_request *out);

// An OpenPMIx release as the handshake names it ("5.0.7", "4.2.2rc1"): major, minor, release.
struct release {
    int major = 0, minor = 0, patch = 0;
};
release parse_release(std::string_view version);
bool at_least(const release &r, int major, int minor, int patch);

// GROUP_CONSTRUCT: [STRING grp][SIZE n][PROC...][SIZE ninfo][INFO...]. The directives are the
// infos; what the member contributes (PMIX_GROUP_INFO, PMIX_GROUP_LOCAL_CID) is taken from them.
// GROUP_DESTRUCT: [STRING grp], from release 4.2.4 the client's record of the members
// [SIZE n][PROC...] (the count also when n is 0), then [SIZE ninfo][INFO...]. The members it sends
// are checked and dropped: the server destructs with its own record of the group (the caller's).
Status decode_group_construct(unpacker &up, wire::group_request *out, size_t max_procs);
Status decode_group_destruct(unpacker &up, const release &client, size_t max_procs, wire::group_request *out);
// GROUP_LEAVE: [STRING grp][SIZE ninfo][INFO...] (3.2 to 7.0 alike). The reply is [STATUS]. OpenPMIx's
// own server has no handler for it (its clients then get an error); ours tells the other members.
Status decode_group_leave(unpacker &up, std::string *name, InfoArray *directives);

// The QUERY reply: [STATUS] then, for PMIX_SUCCESS and PMIX_ERR_PARTIAL_SUCCESS (the only
// statuses OpenPMIx's client reads results with), [SIZE n][INFO...].
Result<std::vector<uint8_t>> encode_query_reply(int_flavour f, pmix_status_t status, const pmix_info_t *results,
                                                size_t n);

// The GROUP_CONSTRUCT reply, in the layout of the client's release:
//   before 4.2.4   [STATUS][SIZE ctxid]
//   4.2.4 to 5.x   [STATUS][SIZE n][PROC...][SIZE ctxid]
//   6.0            [STATUS][SIZE n][PROC...][BOOL has_ctxid][SIZE ctxid]
//   6.1 and later  the 6.0 layout, then [SIZE 0] (no group infos)
// The context id is left out when none was assigned (0); members are those that joined.
Result<std::vector<uint8_t>> encode_group_construct_reply(int_flavour f, const release &client, pmix_status_t status,
                                                          const std::vector<pmix_proc_t> &members, uint64_t ctxid);

}  // namespace pmixcpp::native
