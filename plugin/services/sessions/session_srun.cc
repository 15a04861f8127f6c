#include "session_srun.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

#include "../../agent/proto/agent_io.h"
#include "../service_ids.h"
#include "log.h"
#include "sys.h"
#include "value.h"

namespace pmixcpp::session {

namespace {

// One key's file: str owner nspace, u32 owner rank, u8 persistence, info.
struct entry {
    std::string owner;
    uint32_t rank = 0;
    uint8_t persistence = PMIX_PERSIST_PROC;
    std::vector<uint8_t> info;  // encoded pmix_info_t
};

std::optional<entry> read_entry(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return std::nullopt;
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    wire::Reader r(bytes.data(), bytes.size());
    entry e;
    if (!r.get_string(&e.owner, PMIX_MAX_NSLEN).ok() || !r.get_u32(&e.rank).ok() || !r.get_u8(&e.persistence).ok())
        return std::nullopt;
    e.info.assign(bytes.begin() + static_cast<long>(r.position()), bytes.end());
    return e;
}

std::optional<int64_t> number_of(const pmix_value_t &v) {
    switch (v.type) {
    case PMIX_DATA_RANGE: return v.data.range;
    case PMIX_PERSIST: return v.data.persist;
    case PMIX_BOOL: return v.data.flag ? 1 : 0;
    case PMIX_UNDEF: return 1;
    default: break;
    }
    auto n = value_to_number<int64_t>(v);
    if (!n.ok()) return std::nullopt;
    return n.value();
}

}  // namespace

Result<std::unique_ptr<job_store>> job_store::open(uint32_t job_id, uid_t uid, const std::string &cluster,
                                                   std::string dir) {
    if (dir.empty()) {
        const char *tmp = getenv("TMPDIR");
        std::string c;
        for (char ch : cluster) c += isalnum(static_cast<unsigned char>(ch)) || ch == '_' ? ch : '_';
        dir = std::string(tmp && *tmp ? tmp : "/tmp") + "/pmixcpp-u" + std::to_string(uid) + "-" + c + "-job" +
              std::to_string(job_id);
    }
    PMIXCPP_RETURN_IF_ERROR(private_dir(dir, uid));
    auto store = std::unique_ptr<job_store>(new job_store(dir));
    store->_uid = uid;
    return store;
}

// Create the directory if it is missing (the last step of the job to end removes it when
// empty, possibly just after another srun of the job opened it) and check it is private.
Status job_store::private_dir(const std::string &dir, uid_t uid) {
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return sys_error("session store " + dir, errno, PMIX_ERR_NO_PERMISSIONS);
    struct stat st{};
    if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077) != 0)
        return Status(PMIX_ERR_NO_PERMISSIONS, "session store " + dir + " is not a private directory of uid " +
                                                   std::to_string(uid));
    return Status::success();
}

job_store::~job_store() {
    _stopping = true;
    _workers.close();
    // a rendezvous that completed while the step ended may have marked itself read just now
    remove_orphaned_rendezvous();
    rmdir(_dir.c_str());
}

void job_store::submit(agent::responder answer, std::vector<uint8_t> body) { start(std::move(answer), std::move(body), false); }

void job_store::submit_rendezvous(agent::responder answer, std::vector<uint8_t> body) { start(std::move(answer), std::move(body), true); }

void job_store::start(agent::responder answer, std::vector<uint8_t> body, bool is_rendezvous) {
    Status started = _workers.start(
        [this, answer, body = std::move(body), is_rendezvous] {
            agent_request req;
            agent_reply rep;
            rendezvous_request rv;
            if (is_rendezvous) {
                if (Status st = decode(body, &rv); !st.ok())
                    rep = agent_reply{PMIX_ERR_UNPACK_FAILURE, "malformed connect rendezvous: " + st.message(), {}};
                else
                    rep = rendezvous(rv);
            } else if (Status st = decode_request(body, &req); !st.ok()) {
                rep.status = PMIX_ERR_UNPACK_FAILURE;
                rep.message = "malformed session request: " + st.message();
            } else {
                rep = handle(req);
            }
            (void)answer.send(rep);
        },
        is_rendezvous ? "connect rendezvous" : "session-store requests");
    if (!started.ok())
        (void)answer.send(agent_reply{started.code(), started.message(), {}});
}

agent_reply job_store::handle(const agent_request &r) {
    switch (static_cast<wire::msg_type>(r.type)) {
    case wire::msg_type::publish: return publish(r);
    case wire::msg_type::lookup: return lookup(r);
    case wire::msg_type::unpublish: return unpublish(r);
    default: break;
    }
    if (r.type == 0) {  // a rank left
        remove_owned(r.nspace, r.rank, true, {});
        return {};
    }
    return agent_reply{PMIX_ERR_BAD_PARAM, "unknown session request", {}};
}

agent_reply job_store::publish(const agent_request &r) {
    if (Status st = private_dir(_dir, _uid); !st.ok()) return agent_reply{st.code(), st.message(), {}};
    wire::publish_request m;
    if (Status st = wire::decode_payload(r.payload, &m); !st.ok())
        return agent_reply{PMIX_ERR_UNPACK_FAILURE, "malformed publish: " + st.message(), {}};
    if (m.data.empty()) return agent_reply{PMIX_ERR_BAD_PARAM, "nothing to publish", {}};
    uint8_t persistence = PMIX_PERSIST_PROC;
    if (const pmix_info_t *p = find_info(m.directives, PMIX_PERSISTENCE)) {
        auto n = number_of(p->value);
        if (!n || *n < 0 || *n > PMIX_PERSIST_SESSION) return agent_reply{PMIX_ERR_BAD_PARAM, "invalid PMIX_PERSISTENCE", {}};
        persistence = static_cast<uint8_t>(*n);
    }
    std::vector<std::string> linked;
    for (size_t i = 0; i < m.data.size(); ++i) {
        std::string key(m.data[i].key, strnlen(m.data[i].key, PMIX_MAX_KEYLEN + 1));
        wire::Writer w;
        if (!w.put_string(r.nspace).ok()) return agent_reply{PMIX_ERROR, "encode", {}};
        w.put_u32(r.rank);
        w.put_u8(persistence);
        if (Status st = wire::encode_info(w, m.data[i]); !st.ok()) return agent_reply{st.code(), st.message(), {}};
        std::string tmp = _dir + "/.tmp." + std::to_string(getpid()) + "." + std::to_string(gettid()) + "." +
                          std::to_string(i);
        std::string final_path = _dir + "/" + hex_name(key);
        int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        bool ok = fd >= 0 && write(fd, w.data().data(), w.data().size()) == static_cast<ssize_t>(w.data().size());
        if (fd >= 0) close(fd);
        int link_rc = ok ? link(tmp.c_str(), final_path.c_str()) : -1;
        int err = errno;
        unlink(tmp.c_str());
        if (link_rc != 0) {
            for (const auto &p : linked) unlink(p.c_str());  // all or nothing
            if (ok && err == EEXIST) {
                auto e = read_entry(final_path);
                return agent_reply{PMIX_ERR_DUPLICATE_KEY,
                                   "key " + key + " is already published" +
                                       (e ? " by " + e->owner + ":" + std::to_string(e->rank) : std::string()),
                                   {}};
            }
            return agent_reply{PMIX_ERROR, "session store " + _dir + ": " + strerror(err), {}};
        }
        linked.push_back(final_path);
    }
    return {};
}

agent_reply job_store::lookup(const agent_request &r) {
    wire::lookup_request m;
    if (Status st = wire::decode_payload(r.payload, &m); !st.ok())
        return agent_reply{PMIX_ERR_UNPACK_FAILURE, "malformed lookup: " + st.message(), {}};
    if (m.keys.empty()) return agent_reply{PMIX_ERR_BAD_PARAM, "no keys to look up", {}};
    size_t wait_for = 0;
    if (const pmix_info_t *w = find_info(m.directives, PMIX_WAIT)) {
        auto n = number_of(w->value);
        if (!n || *n < 0) return agent_reply{PMIX_ERR_BAD_PARAM, "invalid PMIX_WAIT", {}};
        if (w->value.type == PMIX_BOOL || w->value.type == PMIX_UNDEF) wait_for = *n ? m.keys.size() : 0;
        else wait_for = *n == 0 ? m.keys.size() : std::min<size_t>(static_cast<size_t>(*n), m.keys.size());
    }
    int timeout = kMaxWaitSec;
    if (const pmix_info_t *t = find_info(m.directives, PMIX_TIMEOUT)) {
        auto n = number_of(t->value);
        if (n && *n > 0) timeout = static_cast<int>(std::min<int64_t>(*n, kMaxWaitSec));
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
    for (;;) {
        size_t present = 0;
        for (const auto &k : m.keys) {
            struct stat st{};
            if (stat((_dir + "/" + hex_name(k)).c_str(), &st) == 0) ++present;
        }
        if (present >= wait_for) break;
        if (_stopping || std::chrono::steady_clock::now() >= deadline)
            return agent_reply{PMIX_ERR_TIMEOUT, "timed out waiting for " + std::to_string(wait_for) +
                                                     " published key(s)", {}};
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    // Collect; FIRST_READ entries are consumed (renamed away first, so one reader wins).
    wire::Writer w;
    uint32_t n = 0;
    wire::Writer items;
    for (const auto &k : m.keys) {
        std::string path = _dir + "/" + hex_name(k);
        auto e = read_entry(path);
        if (!e) continue;
        if (e->persistence == PMIX_PERSIST_FIRST_READ) {
            std::string taken = _dir + "/.taken." + std::to_string(gettid()) + "." + hex_name(k);
            if (rename(path.c_str(), taken.c_str()) != 0) continue;  // another reader took it
            unlink(taken.c_str());
        }
        pmix_proc_t owner{};
        strncpy(owner.nspace, e->owner.c_str(), PMIX_MAX_NSLEN);
        owner.rank = e->rank;
        if (!wire::encode_proc(items, owner).ok()) continue;
        items.put_raw(e->info.data(), e->info.size());
        ++n;
    }
    if (n == 0) return agent_reply{PMIX_ERR_NOT_FOUND, "no published data for the keys asked", {}};
    w.put_u32(n);
    w.put_raw(items.data().data(), items.data().size());
    return agent_reply{PMIX_SUCCESS, {}, w.data()};
}

agent_reply job_store::unpublish(const agent_request &r) {
    wire::unpublish_request m;
    if (Status st = wire::decode_payload(r.payload, &m); !st.ok())
        return agent_reply{PMIX_ERR_UNPACK_FAILURE, "malformed unpublish: " + st.message(), {}};
    size_t before = 0;
    for (const auto &k : m.keys) {
        auto e = read_entry(_dir + "/" + hex_name(k));
        if (e && e->owner == r.nspace && e->rank == r.rank) ++before;
    }
    remove_owned(r.nspace, r.rank, false, m.keys);
    if (!m.keys.empty() && before == 0)
        return agent_reply{PMIX_ERR_NOT_FOUND, "none of the keys is published by this rank", {}};
    return {};
}

void job_store::remove_owned(const std::string &nspace, uint32_t rank, bool proc_only,
                             const std::vector<std::string> &keys) {
    DIR *d = opendir(_dir.c_str());
    if (d == nullptr) return;
    std::vector<std::string> wanted;
    for (const auto &k : keys) wanted.push_back(hex_name(k));
    while (dirent *de = readdir(d)) {
        std::string name = de->d_name;
        if (name.empty() || name[0] == '.') continue;
        if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), name) == wanted.end()) continue;
        auto e = read_entry(_dir + "/" + name);
        if (!e || e->owner != nspace) continue;
        if (rank != PMIX_RANK_WILDCARD && e->rank != rank) continue;
        if (proc_only && e->persistence != PMIX_PERSIST_PROC &&
            !(rank == PMIX_RANK_WILDCARD && e->persistence == PMIX_PERSIST_APP))
            continue;
        unlink((_dir + "/" + name).c_str());
    }
    closedir(d);
}

std::string hex_name(const std::string &s) {
    static const char *d = "0123456789abcdef";
    std::string out;
    for (unsigned char c : s) {
        out += d[c >> 4];
        out += d[c & 15];
    }
    return out;
}

namespace {
constexpr char kStepPrefix[] = ".ns.";
std::string unhex_name(const char *h) {
    std::string out;
    auto val = [](char c) { return c >= 'a' ? c - 'a' + 10 : c - '0'; };
    for (; h[0] != '\0' && h[1] != '\0'; h += 2) out += static_cast<char>(val(h[0]) << 4 | val(h[1]));
    return out;
}
}  // namespace

bool step_registered(const std::string &dir, const std::string &nspace) {
    struct stat st{};
    return stat((dir + "/" + kStepPrefix + hex_name(nspace)).c_str(), &st) == 0;
}

std::vector<std::string> registered_steps(const std::string &dir) {
    std::vector<std::string> out;
    if (DIR *d = opendir(dir.c_str())) {
        while (dirent *de = readdir(d))
            if (strncmp(de->d_name, kStepPrefix, sizeof(kStepPrefix) - 1) == 0)
                out.push_back(unhex_name(de->d_name + sizeof(kStepPrefix) - 1));
        closedir(d);
    }
    return out;
}

void job_store::step_started(const std::string &nspace) {
    if (!private_dir(_dir, _uid).ok()) return;
    // Whatever this namespace owns here is left from an earlier job of the same id (a job id
    // reused after the controller's state was reset, its srun killed before it could clean up):
    // a stale size record would make a PMIx_Connect with this step wait for ranks that never come.
    remove_owned(nspace, PMIX_RANK_WILDCARD, false, {});
    std::string path = _dir + "/" + kStepPrefix + hex_name(nspace);
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
}

namespace {

std::vector<std::string> names_with_prefix(const std::string &dir, const std::string &prefix) {
    std::vector<std::string> out;
    DIR *d = opendir(dir.c_str());
    if (d == nullptr) return out;
    while (dirent *de = readdir(d))
        if (strncmp(de->d_name, prefix.c_str(), prefix.size()) == 0) out.emplace_back(de->d_name);
    closedir(d);
    return out;
}

std::optional<std::vector<uint8_t>> read_file(const std::string &path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) return std::nullopt;
    return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

}  // namespace

agent_reply job_store::rendezvous(const rendezvous_request &r) {
    for (const auto &ns : r.nspaces)
        if (ns != r.nspace && !step_registered(_dir, ns))
            return agent_reply{PMIX_ERR_NOT_FOUND, "namespace " + ns + " is not a running step of this job", {}};
    if (Status st = private_dir(_dir, _uid); !st.ok()) return agent_reply{st.code(), st.message(), {}};
    // Our contribution: ".xc.<key>.<nspace>.<node>" = u32 nodes of our namespace, the bytes.
    const std::string key = hex_name(r.key);
    const std::string own = _dir + "/.xc." + key + "." + hex_name(r.nspace) + "." + std::to_string(r.node);
    {
        wire::Writer w;
        w.put_u32(r.nodes);
        w.put_raw(r.contribution.data(), r.contribution.size());
        std::string tmp = _dir + "/.tmp.xc." + std::to_string(getpid()) + "." + std::to_string(gettid());
        int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
        bool ok = fd >= 0 && write(fd, w.data().data(), w.data().size()) == static_cast<ssize_t>(w.data().size());
        if (fd >= 0) close(fd);
        if (!ok || rename(tmp.c_str(), own.c_str()) != 0) {
            int err = errno;
            unlink(tmp.c_str());
            return agent_reply{PMIX_ERROR, "connect rendezvous in " + _dir + ": " + strerror(err), {}};
        }
    }
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(r.timeout_ms);
    uint32_t total = 0;
    std::string missing;
    std::vector<rendezvous_piece> pieces;
    for (;;) {
        total = 0;
        missing.clear();
        for (const auto &ns : r.nspaces) {
            auto files = names_with_prefix(_dir, ".xc." + key + "." + hex_name(ns) + ".");
            uint32_t expected = 0;
            if (!files.empty()) {
                auto bytes = read_file(_dir + "/" + files.front());
                wire::Reader rd(bytes ? bytes->data() : nullptr, bytes ? bytes->size() : 0);
                if (!bytes || !rd.get_u32(&expected).ok()) expected = 0;
            }
            if (expected == 0 || files.size() < expected) {
                missing += (missing.empty() ? "" : ", ") + ns + " (" + std::to_string(files.size()) + " of " +
                           (expected ? std::to_string(expected) : std::string("?")) + " nodes)";
                if (ns != r.nspace && !step_registered(_dir, ns)) {
                    unlink(own.c_str());
                    return agent_reply{PMIX_ERR_PROC_ABORTED, "namespace " + ns + " ended before joining " + r.key, {}};
                }
            }
            total += expected;
        }
        if (missing.empty()) {
            // Every contribution is there: read them. A party that gave up at this moment (its
            // timeout, its step ending) removes its own: then this is not complete after all.
            pieces.clear();
            for (const auto &ns : r.nspaces) {
                std::string prefix = ".xc." + key + "." + hex_name(ns) + ".";
                for (const auto &name : names_with_prefix(_dir, prefix)) {
                    auto bytes = read_file(_dir + "/" + name);
                    if (!bytes || bytes->size() < 4) continue;
                    rendezvous_piece p;
                    p.nspace = ns;
                    p.node = static_cast<uint32_t>(strtoul(name.c_str() + prefix.size(), nullptr, 10));
                    p.contribution.assign(bytes->begin() + 4, bytes->end());
                    pieces.push_back(std::move(p));
                }
            }
            if (pieces.size() >= total) break;
            missing = "a contribution withdrawn while it was read";
        }
        if (_stopping || std::chrono::steady_clock::now() >= deadline) {
            unlink(own.c_str());
            return agent_reply{PMIX_ERR_TIMEOUT, r.key + ": timed out after " + std::to_string(r.timeout_ms / 1000) +
                                                     " s waiting for " + missing, {}};
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // Read: the last reader removes the rendezvous' files.
    std::string mark = _dir + "/.xr." + key + "." + hex_name(r.nspace) + "." + std::to_string(r.node);
    int fd = ::open(mark.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
    if (names_with_prefix(_dir, ".xr." + key + ".").size() >= total) {
        for (const auto &n : names_with_prefix(_dir, ".xc." + key + ".")) unlink((_dir + "/" + n).c_str());
        for (const auto &n : names_with_prefix(_dir, ".xr." + key + ".")) unlink((_dir + "/" + n).c_str());
    }
    auto body = encode_pieces(pieces);
    if (!body.ok()) return agent_reply{body.status().code(), body.status().message(), {}};
    return agent_reply{PMIX_SUCCESS, {}, std::move(body.value())};
}

void job_store::step_ended(const std::string &nspace) {
    unlink((_dir + "/" + kStepPrefix + hex_name(nspace)).c_str());
    remove_owned(nspace, PMIX_RANK_WILDCARD, true, {});
    remove_orphaned_rendezvous();
    rmdir(_dir.c_str());  // only if empty: the last step of the job leaves nothing behind
}

// Once no step of the job is left, no rendezvous can still complete: remove what is left of
// them. The last reader of a rendezvous removes its files, but a party whose step ended inside
// it (killed, or its srun stopping) never reads it, so the others' files would stay.
void job_store::remove_orphaned_rendezvous() {
    if (!registered_steps(_dir).empty()) return;
    for (const char *prefix : {".xc.", ".xr."})
        for (const auto &n : names_with_prefix(_dir, prefix)) unlink((_dir + "/" + n).c_str());
}

Status job_store::register_in(agent::service_table &table) {
    PMIXCPP_RETURN_IF_ERROR(table.add(
        services::id_of(services::service::session),
        [this](agent::responder answer, std::vector<uint8_t> body) { submit(std::move(answer), std::move(body)); }));
    return table.add(services::id_of(services::service::connect),
                     [this](agent::responder answer, std::vector<uint8_t> body) { submit_rendezvous(std::move(answer), std::move(body)); });
}

}  // namespace pmixcpp::session
