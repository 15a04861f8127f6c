// One OpenPMIx client connection as a protocol engine (no I/O): handshake bytes and messages in,
// bytes to write and a close decision out. The listener around it owns the socket, learns the
// peer's uid from the kernel (the native credential is only what the client asserts) and feeds
// complete messages from message_reader.
//
//   awaiting_handshake --(valid handshake, peer uid = job uid, known nspace/rank)--> connected
//   awaiting_handshake --(anything else)--> closed   (a negative status is sent first when the
//                                                      client can read it, as OpenPMIx does)
//   connected --FINALIZE--> finalized (EOF expected)      connected --bad message--> closed
//
// Commands answered today: REQ (the job-data blob of gds/hash, no status prefix), FINALIZE
// ([STATUS 0]); DEREGEVENTS gets no reply (as OpenPMIx); every other command [STATUS
// PMIX_ERR_NOT_SUPPORTED], so a client never waits forever.
#pragma once

#include <pmix_common.h>

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "plugin/native/bfrops.h"
#include "plugin/native/connection.h"
#include "status.h"
#include "value.h"

namespace pmixcpp::native {

// OpenPMIx's command codes (pmix_cmd_t, uint8; stable since 3.x).
enum class command : uint8_t {
    req = 0,
    abort = 1,
    commit = 2,
    fencenb = 3,
    getnb = 4,
    finalize = 5,
    notify = 12,
    regevents = 13,
    deregevents = 14,
};

// The job data of one namespace, as the REQ reply carries it to a gds/hash client.
struct job_blob_data {
    std::string nspace;
    std::vector<pmix_info_t> job;  // job-level keys (pmix.job.size, pmix.univ.size, ...)
    struct node {
        std::vector<pmix_info_t> infos;  // pmix.hname, pmix.nodeid, pmix.lpeers, pmix.local.size, ...
    };
    std::vector<node> nodes;
    struct rank {
        pmix_rank_t rank;
        std::vector<pmix_info_t> infos;  // pmix.hname, pmix.nodeid, pmix.lrank, pmix.nrank, ...
    };
    std::vector<rank> ranks;
};

// The REQ reply payload: [STRING nspace], the job-level KVALs, one pmix.node.arr per node, one
// pmix.pblob ([PROC_RANK r][KVAL...]) per rank, each a top-level pack of count 1. The infos are
// borrowed (not freed).
Result<std::vector<uint8_t>> pack_job_blob(int_flavour f, const job_blob_data &job);

struct session_policy {
    uid_t uid = 0;  // the job's user: the socket's owner must be this uid
    gid_t gid = 0;
    std::string nspace;
    uint32_t nranks = 0;  // ranks of the namespace that may connect here
    std::function<bool(pmix_rank_t)> rank_is_local;  // null: every rank < nranks
    // The REQ reply for a codec flavour (built once per flavour by the caller, reused).
    std::function<Result<std::vector<uint8_t>>(int_flavour)> job_blob;
};

enum class session_state : uint8_t { awaiting_handshake, connected, finalized, closed };
const char *to_string(session_state s);

class session {
public:
    explicit session(session_policy p) : _p(std::move(p)) {}

    struct action {
        std::vector<uint8_t> out;  // bytes to write (ack, or framed replies)
        bool close = false;
        Status why;  // why it closes (logged by the caller)
    };

    // The handshake payload and the uid of the socket's owner (from the kernel).
    action on_handshake(std::span<const uint8_t> payload, uid_t peer_uid);
    // One complete message after the handshake.
    action on_message(const header &h, std::span<const uint8_t> payload);
    // The peer closed: was that the normal end (after FINALIZE)?
    bool ended_normally() const { return _state == session_state::finalized; }

    session_state state() const { return _state; }
    const hello &peer() const { return _hello; }
    pmix_rank_t rank() const { return _hello.proc ? _hello.proc->rank : PMIX_RANK_UNDEF; }
    int_flavour flavour() const { return _f; }

private:
    action refuse(pmix_status_t st, Status why, bool send_status);
    action reply(uint32_t tag, std::vector<uint8_t> payload);

    session_policy _p;
    session_state _state = session_state::awaiting_handshake;
    hello _hello;
    int_flavour _f = int_flavour::flex128;
};

}  // namespace pmixcpp::native
