#include "identity.h"

#include <algorithm>
#include <cstring>

#include "wire/codec.h"

namespace pmixcpp::net {

namespace {

constexpr std::string_view kRecordMagic = "pmixcpp node record v2";
constexpr std::string_view kAgentMagic = "pmixcpp agent call v2";

Status refused(const std::string &what) { return Status(PMIX_ERR_NO_PERMISSIONS, what); }

Status expect_magic(wire::Reader &r, std::string_view magic) {
    std::string m;
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&m, 64));
    if (m != magic) return Status(PMIX_ERR_BAD_PARAM, "not a " + std::string(magic));
    return Status::success();
}

Status get_key(wire::Reader &r, auth::key *k) {
    const uint8_t *p = nullptr;
    PMIXCPP_RETURN_IF_ERROR(r.get_raw(k->bytes.size(), &p));
    memcpy(k->bytes.data(), p, k->bytes.size());
    return Status::success();
}

bool trusted(const step_binding &b, uint32_t uid) {
    return std::find(b.trusted_uids.begin(), b.trusted_uids.end(), uid) != b.trusted_uids.end();
}

}  // namespace

std::vector<uint8_t> encode_node_record(const node_record &r) {
    wire::Writer w;
    (void)w.put_string(std::string(kRecordMagic));
    w.put_u32(r.job_id);
    w.put_u32(r.step_id);
    (void)w.put_string(r.nspace.substr(0, 255));
    w.put_u32(r.nnodes);
    w.put_u32(r.node);
    (void)w.put_string(r.address.substr(0, kMaxRecordAddress));
    w.put_raw(r.node_key.bytes.data(), r.node_key.bytes.size());
    return w.data();
}

Status decode_node_record(std::span<const uint8_t> payload, node_record *out) {
    wire::Reader r(payload);
    node_record rec;
    PMIXCPP_RETURN_IF_ERROR(expect_magic(r, kRecordMagic));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&rec.job_id));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&rec.step_id));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&rec.nspace, 255));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&rec.nnodes));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&rec.node));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&rec.address, kMaxRecordAddress));
    PMIXCPP_RETURN_IF_ERROR(get_key(r, &rec.node_key));
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    *out = std::move(rec);
    return Status::success();
}

std::vector<uint8_t> encode_agent_credential(const agent_credential_body &b) {
    wire::Writer w;
    (void)w.put_string(std::string(kAgentMagic));
    (void)w.put_string(b.nspace.substr(0, 255));
    w.put_u32(b.node);
    w.put_raw(b.call_key.bytes.data(), b.call_key.bytes.size());
    return w.data();
}

Status decode_agent_credential(std::span<const uint8_t> payload, agent_credential_body *out) {
    wire::Reader r(payload);
    agent_credential_body b;
    PMIXCPP_RETURN_IF_ERROR(expect_magic(r, kAgentMagic));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&b.nspace, 255));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&b.node));
    PMIXCPP_RETURN_IF_ERROR(get_key(r, &b.call_key));
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    *out = std::move(b);
    return Status::success();
}

node_identity::node_identity(credential_service &creds, step_binding binding, uint32_t self)
    : _creds(creds), _binding(std::move(binding)), _self(self), _key(auth::random_key()) {}

Result<std::string> node_identity::sign(const std::string &address) {
    node_record r;
    r.job_id = _binding.job_id;
    r.step_id = _binding.step_id;
    r.nspace = _binding.nspace;
    r.nnodes = _binding.nnodes;
    r.node = _self;
    r.address = address;
    r.node_key = _key;
    if (address.size() > kMaxRecordAddress) return Status(PMIX_ERR_BAD_PARAM, "node address too long to sign");
    auto c = _creds.make(encode_node_record(r), credential_service::readers::root);
    PMIXCPP_RETURN_IF_ERROR(c, "signing the node record");
    _own = c.value();
    _own_address = address;
    return c;
}

// A record whose credential the service saw opened before is still taken: every peer opens every
// record once, and peers that share one munged (several slurmd on one host) open the same
// credential there more than once. A replay gains nobody anything: the record is bound to this
// job, step and node, its key is readable by root only, and a record of another step fails the
// binding. What must not pass: a signer other than root/SlurmUser, or another step's record.
Result<node_record> node_identity::verify_record(std::string_view credential, uint32_t expected_node) {
    auto o = _creds.open(credential);
    PMIXCPP_RETURN_IF_ERROR(o);
    if (!trusted(_binding, o->uid))
        return refused("record signed by uid " + std::to_string(o->uid) + ", not by root or SlurmUser");
    node_record r;
    PMIXCPP_RETURN_IF_ERROR(decode_node_record(o->payload, &r));
    if (r.job_id != _binding.job_id || r.step_id != _binding.step_id || r.nspace != _binding.nspace)
        return refused("record of step " + std::to_string(r.job_id) + "." + std::to_string(r.step_id) + " (" +
                       r.nspace + ")");
    if (r.nnodes != _binding.nnodes || r.node != expected_node)
        return refused("record of node " + std::to_string(r.node) + " of " + std::to_string(r.nnodes) +
                       " in the slot of node " + std::to_string(expected_node));
    return r;
}

Result<std::vector<node_record>> node_identity::verify_table(const std::vector<std::string> &table) {
    if (table.size() != _binding.nnodes)
        return refused("address table of " + std::to_string(table.size()) + " entries for " +
                       std::to_string(_binding.nnodes) + " nodes");
    if (_own.empty()) return refused("our own record was never signed");
    std::vector<node_record> out(table.size());
    for (uint32_t i = 0; i < table.size(); ++i) {
        if (i == _self) {
            if (table[i] != _own) return refused("the table does not carry our own record unchanged");
            auto &r = out[i];
            r.job_id = _binding.job_id;
            r.step_id = _binding.step_id;
            r.nspace = _binding.nspace;
            r.nnodes = _binding.nnodes;
            r.node = _self;
            r.address = _own_address;
            r.node_key = _key;
            continue;
        }
        auto r = verify_record(table[i], i);
        PMIXCPP_RETURN_IF_ERROR(r, "node " + std::to_string(i) + "'s record refused");
        out[i] = std::move(r.value());
    }
    return out;
}

Result<auth::key> link_key(const auth::key &dst_key, std::string_view kind, uint32_t src) {
    return auth::derive_key(dst_key, std::string("link ") + std::string(kind), src);
}

Result<agent_call_credential> make_agent_credential(credential_service &creds, const std::string &nspace,
                                                    uint32_t node) {
    agent_credential_body b;
    b.nspace = nspace;
    b.node = node;
    b.call_key = auth::random_key();
    auto c = creds.make(encode_agent_credential(b), credential_service::readers::job_user);
    PMIXCPP_RETURN_IF_ERROR(c, "agent credential");
    return agent_call_credential{std::move(c.value()), b.call_key};
}

// Each agent credential is opened once, by srun: one opened before is a replay and refused.
Result<auth::key> open_agent_credential(credential_service &creds, const step_binding &binding,
                                        std::string_view credential, uint32_t *node) {
    if (credential.empty()) return refused("a call without a slurmstepd credential");
    auto o = creds.open(credential);
    PMIXCPP_RETURN_IF_ERROR(o);
    if (o->replayed) return refused("a replayed slurmstepd credential");
    if (!trusted(binding, o->uid))
        return refused("a call credential of uid " + std::to_string(o->uid) + ", not root or SlurmUser");
    agent_credential_body b;
    PMIXCPP_RETURN_IF_ERROR(decode_agent_credential(o->payload, &b));
    if (b.nspace != binding.nspace) return refused("a call credential of another step (" + b.nspace + ")");
    if (node) *node = b.node;
    return b.call_key;
}

}  // namespace pmixcpp::net
