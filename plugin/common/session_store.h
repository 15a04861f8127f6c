// Published data of PMIX_RANGE_SESSION (the default range): shared by every step of a job. It
// lives beside the job's srun processes (which, in a batch script or an salloc shell, run on one
// host, as the user): one directory per job, `${TMPDIR:-/tmp}/pmixcpp-u<uid>-<cluster>-job<job>/`, mode
// 0700, one file per key created with link() so a duplicate is refused atomically. Each step's
// node servers reach it through their own srun's agent (services session and connect of
// plugin/agent/proto/agent_proto.h).
// No Slurm here; the file operations run on the agent's side, on threads of their own.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "../agent/proto/agent_proto.h"
#include "../agent/proto/responder.h"
#include "status.h"
#include "../agent/stepd/workers.h"
#include "wire/messages.h"

namespace pmixcpp::session {

inline constexpr uint32_t kSessionMagic = 0x42505850;  // "PXPB"
inline constexpr int kMaxWaitSec = 3600;                 // a PMIX_WAIT lookup without timeout

// Agent request: u32 magic, u8 type (20 publish, 21 lookup, 22 unpublish, 0 rank left), str nspace,
// u32 rank, bytes the client's payload. Reply: the agent's one reply (agent_proto.h).
struct agent_request {
    uint8_t type = 0;
    std::string nspace;
    uint32_t rank = 0;
    std::vector<uint8_t> payload;
};
using agent_reply = agent::reply;
Result<std::vector<uint8_t>> encode_request(const agent_request &r);
bool is_session_body(std::span<const uint8_t> body);
Status decode_request(std::span<const uint8_t> body, agent_request *r);

// The rendezvous of PMIx_Connect / Disconnect between the steps of a job (plugin/server/connect.h):
// node server <-> srun's agent, magic "PXCN". Each node's contribution becomes a file of the
// job's directory; the reply (pieces) is every contribution of every namespace of the set.
inline constexpr uint32_t kConnectMagic = 0x4e435850;
struct rendezvous_request {
    std::string key;                   // "<op>.<set signature>.<sequence>"
    std::string nspace;                // the contributor's namespace
    uint32_t node = 0;                 // its node index in its step
    uint32_t nodes = 0;                // contributions expected from its namespace
    std::vector<std::string> nspaces;  // every namespace of the set
    uint32_t timeout_ms = 0;
    std::vector<uint8_t> contribution;
};
struct rendezvous_piece {
    std::string nspace;
    uint32_t node = 0;
    std::vector<uint8_t> contribution;
};
Result<std::vector<uint8_t>> encode(const rendezvous_request &r);
bool is_rendezvous_body(std::span<const uint8_t> body);
Status decode(std::span<const uint8_t> body, rendezvous_request *r);
Result<std::vector<uint8_t>> encode_pieces(const std::vector<rendezvous_piece> &p);
Status decode_pieces(std::span<const uint8_t> body, std::vector<rendezvous_piece> *p);

// The registry of the job's running steps in the job's directory `dir` (written by
// job_store::step_started / step_ended): for other srun-side readers (xstep.h).
bool step_registered(const std::string &dir, const std::string &nspace);
std::vector<std::string> registered_steps(const std::string &dir);
// Name of a job-directory entry for `s` (namespaces and keys may hold any byte): lower-case hex.
std::string hex_name(const std::string &s);

// The job's store (srun side). Thread safe; lookups that wait poll the directory.
class job_store {
public:
    // `dir` empty = the default directory for (uid, cluster, job):
    // ${TMPDIR:-/tmp}/pmixcpp-u<uid>-<cluster>-job<job>.
    static Result<std::unique_ptr<job_store>> open(uint32_t job_id, uid_t uid, const std::string &cluster,
                                                   std::string dir = {});
    ~job_store();  // joins request threads
    const std::string &dir() const { return _dir; }

    agent_reply handle(const agent_request &r);
    // srun side, taking the agent connection: answer on a thread (agent_io::send_reply_and_close)
    // a request of the store (service session) or a connect rendezvous (service connect).
    void submit(agent::responder answer, std::vector<uint8_t> body);
    void submit_rendezvous(agent::responder answer, std::vector<uint8_t> body);
    // The step `nspace` started / ended (a namespace registry for PMIx_Connect). At the end its
    // data that does not outlive it (PROC, APP) goes.
    void step_started(const std::string &nspace);
    void step_ended(const std::string &nspace);
    // One node's part of a connect/disconnect rendezvous: waits (polling) until every node of
    // every namespace of the set contributed, or the timeout.
    agent_reply rendezvous(const rendezvous_request &r);

private:
    explicit job_store(std::string dir) : _dir(std::move(dir)) {}
    void start(agent::responder answer, std::vector<uint8_t> body, bool is_rendezvous);
    void remove_orphaned_rendezvous();
    agent_reply publish(const agent_request &r);
    agent_reply lookup(const agent_request &r);
    agent_reply unpublish(const agent_request &r);
    void remove_owned(const std::string &nspace, uint32_t rank, bool proc_only, const std::vector<std::string> &keys);

    static Status private_dir(const std::string &dir, uid_t uid);

    std::string _dir;
    uid_t _uid = 0;
    std::atomic<bool> _stopping{false};
    std::mutex _mutex;
    std::atomic<int> _waiting{0};
    bounded_workers _workers{kServiceThreads};  // one per request; closed first at the end
};

}  // namespace pmixcpp::session
