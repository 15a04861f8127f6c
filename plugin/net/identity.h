// Who a peer is, from the resource manager's authentication service, never from srun.
//
// srun runs as the job's user, so nothing it made or relays can tell one slurmstepd that a message
// comes from another. Identity comes from credentials of the authentication service Slurm uses
// (munge: plugin/slurm/munge_credentials.h implements credential_service): the service signs a
// payload with the uid of the process that asked, and can restrict who may open it.
//
// Node links. Every slurmstepd of a step draws a random node key K_n (libsodium) and signs its
// node record {job, step, nspace, nnodes, node, transport address, K_n} as a credential that only
// root can open. srun's agent relays the records (the address table) without being able to read
// or change one. A slurmstepd opens each peer's record, checks that its signer is root or
// SlurmUser and that it names this job, step, namespace, node count and the node of its slot,
// and only then uses the address (UCX endpoint, TCP connection). The key of the link from node i
// into node j is derive_key(K_j, "tcp"|"ucx", i): j computes it from its own key, i from j's
// record. The job's user can read none of them.
//
// srun's agent. A slurmstepd opens each call with an agent credential {nspace, node, K_call}
// that only the job's user (and root) may open: srun can, another user cannot; srun checks that
// root or SlurmUser signed it for its own step, and refuses a credential opened before. K_call
// keys that connection's handshake, so the slurmstepd knows the answer comes from a process of
// the job's user that could open it (this step's srun; the user can of course run it, which is
// the trust srun's agent has anyway), and srun knows the call comes from this step's slurmstepd.
//
// No I/O and no Slurm here: unit-tested with a fake service (tests/net/test_identity.cc); the
// record decoders are fuzzed (tests/fuzz/fuzz_handshake.cc).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "handshake.h"
#include "status.h"

namespace pmixcpp::net {

class credential_service {
public:
    // Who may open a credential: root only, or the job's user (and root).
    enum class readers : uint8_t { root, job_user };
    struct opened {
        std::vector<uint8_t> payload;
        uint32_t uid = UINT32_MAX;  // who made it (vouched for by the service)
        bool replayed = false;      // the service saw it opened before
    };
    virtual ~credential_service() = default;
    virtual Result<std::string> make(std::span<const uint8_t> payload, readers who) = 0;
    // Fails for a credential the service refuses (forged, expired, not ours to open).
    virtual Result<opened> open(std::string_view credential) = 0;
};

// What a credential must be bound to.
struct step_binding {
    uint32_t job_id = 0;
    uint32_t step_id = 0;
    std::string nspace;
    uint32_t nnodes = 0;
    std::vector<uint32_t> trusted_uids;  // who may sign for slurmstepd: root and SlurmUser
};

struct node_record {
    uint32_t job_id = 0, step_id = 0;
    std::string nspace;
    uint32_t nnodes = 0, node = 0;
    std::string address;
    auth::key node_key;
};
inline constexpr size_t kMaxRecordAddress = 4096;  // a UCX worker address in hex fits
std::vector<uint8_t> encode_node_record(const node_record &r);
Status decode_node_record(std::span<const uint8_t> payload, node_record *out);

struct agent_credential_body {
    std::string nspace;
    uint32_t node = 0;
    auth::key call_key;
};
std::vector<uint8_t> encode_agent_credential(const agent_credential_body &b);
Status decode_agent_credential(std::span<const uint8_t> payload, agent_credential_body *out);

// One node's identity in a step: its key, its signed record, the check of its peers' records.
class node_identity {
public:
    node_identity(credential_service &creds, step_binding binding, uint32_t self);
    uint32_t self() const { return _self; }
    const auth::key &node_key() const { return _key; }
    // Our record for `address`, as a credential only root can open.
    Result<std::string> sign(const std::string &address);
    // The peers' records of the table srun relayed (index = node id), checked; our own entry must
    // be the credential we made. Fails with one message naming the first bad entry.
    Result<std::vector<node_record>> verify_table(const std::vector<std::string> &table);
    // One record (for tests and the table).
    Result<node_record> verify_record(std::string_view credential, uint32_t expected_node);

private:
    credential_service &_creds;
    step_binding _binding;
    uint32_t _self;
    auth::key _key;
    std::string _own, _own_address;
};

// The key of the link from node `src` into node `dst`, for `kind` "tcp" or "ucx": dst_key is
// K_dst (the receiver has its own; the sender took it from dst's record).
Result<auth::key> link_key(const auth::key &dst_key, std::string_view kind, uint32_t src);

// slurmstepd: a fresh agent credential and its key, for one call to srun's agent.
struct agent_call_credential {
    std::string credential;
    auth::key key;
};
Result<agent_call_credential> make_agent_credential(credential_service &creds, const std::string &nspace, uint32_t node);
// srun: the key of a call whose hello carries `credential`, if root or SlurmUser signed it for
// `binding.nspace` and nobody opened it before.
Result<auth::key> open_agent_credential(credential_service &creds, const step_binding &binding,
                                        std::string_view credential, uint32_t *node = nullptr);

}  // namespace pmixcpp::net
