// A credential service for unit tests, standing in for munged (which only the integration tests'
// cluster runs): one `authority` signs payloads with its own key (libsodium HMAC), carries the
// maker's uid and the uid allowed to open, and remembers what was opened (replays). The
// production service is plugin/slurm/munge_credentials.h; the policy under test
// (plugin/net/identity.h) is the same for both.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "plugin/agent/proto/agent_io.h"
#include "plugin/net/identity.h"
#include "wire/codec.h"

namespace pmixcpp::testing {

struct authority {
    net::auth::key key = net::auth::random_key();
    std::mutex mutex;
    std::set<std::string> seen;
};

class test_credentials : public net::credential_service {
public:
    test_credentials(std::shared_ptr<authority> a, uint32_t uid, uint32_t job_uid = 1000)
        : _a(std::move(a)), _uid(uid), _job_uid(job_uid) {}
    Result<std::string> make(std::span<const uint8_t> payload, readers who) override {
        wire::Writer w;
        w.put_u32(_uid);
        w.put_u32(who == readers::root ? 0 : _job_uid);
        w.put_raw(payload.data(), payload.size());
        auto m = net::auth::hmac(_a->key, {w.data()});
        std::string out;
        static const char *hex = "0123456789abcdef";
        auto put = [&](uint8_t b) {
            out += hex[b >> 4];
            out += hex[b & 15];
        };
        for (uint8_t b : w.data()) put(b);
        for (uint8_t b : m.value()) put(b);
        return out;
    }
    Result<opened> open(std::string_view credential) override {
        std::vector<uint8_t> raw;
        if (credential.size() % 2) return Status(PMIX_ERR_NO_PERMISSIONS, "not a credential");
        for (size_t i = 0; i < credential.size(); i += 2) {
            auto v = [](char c) { return c >= 'a' ? c - 'a' + 10 : c - '0'; };
            raw.push_back(static_cast<uint8_t>(v(credential[i]) * 16 + v(credential[i + 1])));
        }
        if (raw.size() < 8 + net::auth::kMacSize) return Status(PMIX_ERR_NO_PERMISSIONS, "not a credential");
        std::span<const uint8_t> body(raw.data(), raw.size() - net::auth::kMacSize);
        auto m = net::auth::hmac(_a->key, {body});
        if (!net::auth::equal(m.value(), std::span<const uint8_t>(raw).subspan(body.size())))
            return Status(PMIX_ERR_NO_PERMISSIONS, "credential refused: invalid");
        wire::Reader r(body);
        uint32_t uid = 0, reader = 0;
        (void)r.get_u32(&uid);
        (void)r.get_u32(&reader);
        if (_uid != 0 && _uid != reader) return Status(PMIX_ERR_NO_PERMISSIONS, "credential refused: unauthorized");
        opened o;
        o.uid = uid;
        o.payload.assign(body.begin() + 8, body.end());
        std::lock_guard<std::mutex> lock(_a->mutex);
        o.replayed = !_a->seen.insert(std::string(credential)).second;
        return o;
    }

private:
    std::shared_ptr<authority> _a;
    uint32_t _uid, _job_uid;
};

// Both ends of the agent link of one step: slurmstepd (root) makes, srun (the job's user) opens.
struct agent_auth {
    std::shared_ptr<authority> a = std::make_shared<authority>();
    std::string nspace = "slurm.1.0";
    std::shared_ptr<test_credentials> stepd = std::make_shared<test_credentials>(a, 0);
    std::shared_ptr<test_credentials> srun = std::make_shared<test_credentials>(a, 1000);

    agent_io::call_credential_fn client(uint32_t node = 0) const {
        return [s = stepd, ns = nspace, node] { return net::make_agent_credential(*s, ns, node); };
    }
    net::auth::key_source keys() const {
        net::step_binding b;
        b.nspace = nspace;
        b.trusted_uids = {0};
        return [s = srun, b](const net::auth::hello &h) { return net::open_agent_credential(*s, b, h.credential); };
    }
};

// Node keys for transports of one step in tests (what the verified records would carry).
inline std::vector<net::auth::key> node_keys(size_t n) {
    std::vector<net::auth::key> k(n);
    for (auto &x : k) x = net::auth::random_key();
    return k;
}

}  // namespace pmixcpp::testing
