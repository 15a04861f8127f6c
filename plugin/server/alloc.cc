#include "alloc.h"

#include <algorithm>
#include <strings.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

#include "../services/alloc/alloc_codec.h"
#include "proc_table.h"
#include "log.h"
#include "pmix_strings.h"

namespace pmixcpp::server {

namespace {




// pmix.timeout of a request, in seconds (0 = none).
int timeout_of(const InfoArray &infos) {
    const pmix_info_t *t = alloc::find_info(infos, PMIX_TIMEOUT);
    if (t == nullptr) return 0;
    auto v = value_to_number<int64_t>(t->value);
    if (!v.ok() || v.value() <= 0) return 0;
    return static_cast<int>(std::min<int64_t>(v.value(), INT_MAX / 1000));
}

// A data array of pmix_proc_info_t from process-table rows (hostname: the rank's node).
pmix_info_t proc_table_info(const char *key, const std::vector<proc_row> &rows, const step_info &step,
                            const std::vector<uint32_t> &node_of) {
    pmix_data_array_t da{};
    da.type = PMIX_PROC_INFO;
    da.size = rows.size();
    auto *pi = static_cast<pmix_proc_info_t *>(calloc(rows.size() ? rows.size() : 1, sizeof(pmix_proc_info_t)));
    if (pi == nullptr) {
        pmix_info_t none{};
        strncpy(none.key, key, PMIX_MAX_KEYLEN);
        none.value.type = PMIX_UNDEF;
        return none;
    }
    da.array = pi;
    for (size_t k = 0; k < rows.size(); ++k) {
        const proc_row &p = rows[k];
        strncpy(pi[k].proc.nspace, step.nspace.c_str(), PMIX_MAX_NSLEN);
        pi[k].proc.rank = p.rank;
        uint32_t node = p.rank < node_of.size() ? node_of[p.rank] : UINT32_MAX;
        pi[k].hostname = strdup(node < step.node_names.size() ? step.node_names[node].c_str() : "");
        pi[k].executable_name = p.executable.empty() ? nullptr : strdup(p.executable.c_str());
        pi[k].pid = p.pid;
        pi[k].exit_code = p.exit_code;
        pi[k].state = p.state;
    }
    pmix_data_array_t *ptr = &da;
    pmix_info_t out = make_info(key, ptr, PMIX_DATA_ARRAY);
    data_array_destruct(&da);
    return out;
}

// The bytes `info` takes in a reply.
size_t answer_bytes(const pmix_info_t &info) {
    wire::Writer w;
    return wire::encode_info(w, info).ok() ? w.size() : 0;
}

}  // namespace

struct alloc_service::gate {
    std::mutex mutex;
    alloc_service *service = nullptr;  // nullptr once the service is gone
};

// One PMIx_Query_info in flight: the local answers, the bridge's and the other nodes', gathered
// per query (pmix_query_t) of the request.
struct alloc_service::query_state {
    struct entry {
        InfoArray qualifiers;
        std::vector<pmix_info_t> results;
    };
    uint64_t conn = 0;
    uint32_t request_id = 0;
    size_t keys = 0;         // keys asked in all
    size_t outstanding = 0;  // answers not there yet (bridge, process table), + 1 while query() runs
    std::vector<entry> entries;
    std::string message;
    bool incomplete = false;  // a node's part of the process table is missing
    size_t bytes = 0;         // of the answers so far
    ~query_state() {
        for (auto &e : entries)
            for (auto &i : e.results) info_destruct(&i);
    }
};

const std::vector<std::string> &alloc_service::local_keys() {
    static const std::vector<std::string> keys = {
        PMIX_QUERY_NAMESPACES,     PMIX_QUERY_JOB_STATUS,  PMIX_QUERY_PROC_TABLE, PMIX_QUERY_LOCAL_PROC_TABLE,
        PMIX_QUERY_SPAWN_SUPPORT,  PMIX_QUERY_DEBUG_SUPPORT, PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES, PMIX_QUERY_PSET_MEMBERSHIP,
        PMIX_QUERY_NUM_GROUPS, PMIX_QUERY_GROUP_NAMES, PMIX_QUERY_GROUP_MEMBERSHIP,
        PMIX_QUERY_SUPPORTED_KEYS,
    };
    return keys;
}

const std::vector<std::string> &alloc_service::host_keys() {
    static const std::vector<std::string> keys = {PMIX_QUERY_ALLOC_STATUS, PMIX_TIME_REMAINING};
    return keys;
}

alloc_service::alloc_service(const step_info &step, alloc_host *host, alloc_ops ops, uint32_t default_timeout_sec)
    : _step(step), _default_timeout_sec(default_timeout_sec), _host(host), _ops(std::move(ops)),
      _gate(std::make_shared<gate>()) {
    _gate->service = this;
    _node_of.assign(step.ntasks, UINT32_MAX);
    for (uint32_t n = 0; n < step.node_ranks.size(); ++n)
        for (uint32_t r : step.node_ranks[n])
            if (r < step.ntasks) _node_of[r] = n;
}

alloc_service::~alloc_service() {
    std::lock_guard<std::mutex> lock(_gate->mutex);
    _gate->service = nullptr;
}

void alloc_service::allocate(uint64_t conn, uint32_t request_id, uint32_t rank, wire::alloc_request &&m) {
    auto spec = alloc::parse_spec(m.directive, m.infos.data(), m.infos.size());
    if (!spec.ok()) {
        PMIXCPP_LOG_DEBUG("%s: rank %u: allocation request refused: %s", _step.nspace.c_str(), rank,
                          spec.status().message().c_str());
        _ops.reply(conn, request_id, spec.status().code(), spec.status().message(), InfoArray());
        return;
    }
    if (_host == nullptr) {
        _ops.reply(conn, request_id, PMIX_ERR_NOT_SUPPORTED,
                   "allocation requests need srun's agent (the step was not started by srun with mpi/pmixcpp)",
                   InfoArray());
        return;
    }
    // Two phases: accepted now, the outcome as an event.
    bool two_phase = false;
    if (const pmix_info_t *t = alloc::find_info(m.infos, kAllocTwoPhase)) {
        if (t->value.type != PMIX_BOOL && t->value.type != PMIX_UNDEF) {
            _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM, std::string(kAllocTwoPhase) + " must be a PMIX_BOOL",
                       InfoArray());
            return;
        }
        two_phase = t->value.type == PMIX_UNDEF || t->value.data.flag;
        if (two_phase && m.directive == PMIX_ALLOC_REQ_CANCEL) {
            _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM,
                       std::string(kAllocTwoPhase) + ": a CANCEL is always answered at once", InfoArray());
            return;
        }
        if (two_phase && !_ops.notify) {
            _ops.reply(conn, request_id, PMIX_ERR_NOT_SUPPORTED,
                       std::string(kAllocTwoPhase) + ": this server raises no events", InfoArray());
            return;
        }
    }
    PMIXCPP_LOG_VERBOSE("%s: rank %u asks %s%s", _step.nspace.c_str(), rank, alloc::describe(spec.value()).c_str(),
                        two_phase ? " (two phases)" : "");
    std::vector<pmix_info_t> added;
    std::string name = spec->request_id;
    if (two_phase && name.empty()) {
        // the bridge keeps it with the request: status queries and CANCEL can name it
        name = "pmixcpp.req." + std::to_string(rank) + "." + std::to_string(++_two_phase_count);
        added.push_back(make_info(PMIX_ALLOC_REQ_ID, name.c_str(), PMIX_STRING));
    }
    // A request that may pend in Slurm never waits for ever unless asked to (PMIX_TIMEOUT 0):
    // without a PMIX_TIMEOUT it gets the administrator's default.
    uint32_t defaulted_timeout = 0;
    const bool may_pend = m.directive == PMIX_ALLOC_NEW || m.directive == PMIX_ALLOC_EXTEND ||
                          m.directive == PMIX_ALLOC_REAQUIRE;
    if (may_pend && _default_timeout_sec > 0 && alloc::find_info(m.infos, PMIX_TIMEOUT) == nullptr) {
        defaulted_timeout = std::min<uint32_t>(_default_timeout_sec, INT_MAX / 1000);
        int t = static_cast<int>(defaulted_timeout);
        added.push_back(make_info(PMIX_TIMEOUT, &t, PMIX_INT));
    }
    if (!added.empty()) {
        std::vector<pmix_info_t> infos;
        for (size_t k = 0; k < m.infos.size(); ++k) {
            pmix_info_t copy{};
            if (info_xfer(&copy, &m.infos[k]).ok()) infos.push_back(copy);
        }
        infos.insert(infos.end(), added.begin(), added.end());
        m.infos = to_array(infos);
    }
    alloc::agent_request req;
    req.op = alloc::agent_op::allocate;
    req.nspace = _step.nspace;
    req.rank = rank;
    req.node = _step.node_name();
    req.directive = m.directive;
    const int timeout = timeout_of(m.infos);
    req.infos = std::move(m.infos);
    auto bytes = alloc::encode_request(req);
    if (!bytes.ok()) {
        _ops.reply(conn, request_id, bytes.status().code(), bytes.status().message(), InfoArray());
        return;
    }
    if (two_phase) {
        // The first answer: accepted, in progress (a status the wire reply carries as a result).
        std::vector<pmix_info_t> first;
        first.push_back(make_info(PMIX_ALLOC_REQ_ID, name.c_str(), PMIX_STRING));
        pmix_status_t st = PMIX_OPERATION_IN_PROGRESS;
        first.push_back(make_info("pmixcpp.query.status", &st, PMIX_STATUS));
        _ops.reply(conn, request_id, PMIX_SUCCESS, {}, to_array(first));
    }
    uint8_t directive = m.directive;
    std::shared_ptr<gate> g = _gate;
    auto post = _ops.post;
    _host->forward_alloc(std::move(bytes.value()), timeout,
                         [g, post, conn, request_id, rank, directive, name, two_phase,
                          defaulted_timeout](Result<std::vector<uint8_t>> answer) {
                             auto shared = std::make_shared<Result<std::vector<uint8_t>>>(std::move(answer));
                             std::lock_guard<std::mutex> alive(g->mutex);  // the server exists while the service does
                             if (g->service == nullptr) return;
                             post([g, conn, request_id, rank, directive, name, two_phase, defaulted_timeout, shared] {
                                 std::lock_guard<std::mutex> lock(g->mutex);
                                 if (g->service == nullptr) return;
                                 g->service->complete_allocation(conn, request_id, rank, directive, name, two_phase,
                                                                 defaulted_timeout, std::move(*shared));
                             });
                         });
}

void alloc_service::complete_allocation(uint64_t conn, uint32_t request_id, uint32_t rank, uint8_t directive,
                                        const std::string &request_name, bool two_phase, uint32_t defaulted_timeout,
                                        Result<std::vector<uint8_t>> &&answer) {
    alloc::agent_reply rep;
    if (!answer.ok()) {
        rep.status = answer.status().code() == PMIX_SUCCESS ? PMIX_ERROR : answer.status().code();
        rep.message = answer.status().message();
    } else {
        wire::Reader r(answer.value().data(), answer.value().size());
        Status st = alloc::decode(r, &rep);
        if (st.ok()) st = r.expect_end();
        if (!st.ok()) {
            rep = alloc::agent_reply();
            rep.status = PMIX_ERR_UNPACK_FAILURE;
            rep.message = "malformed answer from the srun agent: " + st.message();
        }
    }
    if (rep.status == PMIX_ERR_TIMEOUT && defaulted_timeout > 0) {
        // The caller named no PMIX_TIMEOUT: say whose limit it was and how to wait longer.
        rep.message += "; the request named no PMIX_TIMEOUT, so PMIxCppAllocTimeout=" +
                       std::to_string(defaulted_timeout) +
                       " s applied (a PMIX_TIMEOUT of the request's own, 0 for no limit, or "
                       "SLURM_PMIXCPP_ALLOCTIMEOUT changes it)";
        PMIXCPP_LOG_INFO("%s: rank %u: allocation request %s not granted within PMIxCppAllocTimeout=%u s: cancelled "
                         "in Slurm, answered PMIX_ERR_TIMEOUT",
                         _step.nspace.c_str(), rank,
                         alloc::info_string(rep.results, PMIX_ALLOC_ID).value_or("(no id)").c_str(), defaulted_timeout);
    }
    PMIXCPP_LOG_VERBOSE("%s: rank %u: allocation request %s: %s %s", _step.nspace.c_str(), rank,
                        alloc::info_string(rep.results, PMIX_ALLOC_ID).value_or("(no id)").c_str(),
                        status_name(rep.status), rep.message.c_str());

    // The completion event for every process that registered for it (not for CANCEL itself).
    if (directive != PMIX_ALLOC_REQ_CANCEL && _ops.notify) {
        std::vector<pmix_info_t> infos;
        for (size_t k = 0; k < rep.results.size(); ++k) {
            pmix_info_t i{};
            if (info_xfer(&i, &rep.results[k]).ok()) infos.push_back(i);
        }
        if (!request_name.empty() && !alloc::find_info(rep.results, PMIX_ALLOC_REQ_ID))
            infos.push_back(make_info(PMIX_ALLOC_REQ_ID, request_name.c_str(), PMIX_STRING));
        pmix_status_t st = rep.status;
        infos.push_back(make_info("pmixcpp.alloc.status", &st, PMIX_STATUS));
        if (rep.status != PMIX_SUCCESS && !rep.message.empty())
            infos.push_back(make_info(PMIX_EVENT_TEXT_MESSAGE, rep.message.c_str(), PMIX_STRING));
        // Only for handlers registered for it: a default handler (OpenMPI's) takes any event
        // it is given as fatal and aborts the job.
        bool non_default = true;
        infos.push_back(make_info(PMIX_EVENT_NON_DEFAULT, &non_default, PMIX_BOOL));
        wire::event_notification ev;
        ev.status = PMIX_NOTIFY_ALLOC_COMPLETE;
        strncpy(ev.source.nspace, _step.nspace.c_str(), PMIX_MAX_NSLEN);
        ev.source.rank = rank;
        ev.range = PMIX_RANGE_NAMESPACE;
        ev.infos = to_array(infos);
        _ops.notify(rank, std::move(ev));
    }
    if (!two_phase) _ops.reply(conn, request_id, rep.status, rep.message, std::move(rep.results));
}

namespace {
// The process sets every MPI-4 implementation defines, whatever the resource manager: OpenMPI
// matches the part after the scheme without regard to case ("mpi://world" is mpi://WORLD).
enum class builtin_pset { none, world, self, shared };
builtin_pset builtin_of(const std::string &name) {
    auto after = [&](const char *scheme) -> std::optional<std::string> {
        size_t n = strlen(scheme);
        if (name.size() < n || name.compare(0, n, scheme) != 0) return std::nullopt;
        return name.substr(n);
    };
    auto is = [](const std::string &a, const char *b) { return strcasecmp(a.c_str(), b) == 0; };
    if (auto rest = after("mpi://")) {
        if (is(*rest, "WORLD")) return builtin_pset::world;
        if (is(*rest, "SELF")) return builtin_pset::self;
    }
    if (auto rest = after("mpix://"); rest && is(*rest, "SHARED")) return builtin_pset::shared;
    return builtin_pset::none;
}
}  // namespace

bool alloc_service::answer_locally(const std::string &key, const InfoArray &qualifiers, uint32_t rank,
                                   std::vector<pmix_info_t> *out) const {
    // A qualifier naming another namespace: not ours to answer.
    if (auto ns = alloc::info_string(qualifiers, PMIX_NSPACE); ns && *ns != _step.nspace) return false;
    if (key == PMIX_QUERY_NAMESPACES) {
        out->push_back(make_info(key.c_str(), _step.nspace.c_str(), PMIX_STRING));
    } else if (key == PMIX_QUERY_JOB_STATUS) {
        pmix_status_t st = PMIX_SUCCESS;
        out->push_back(make_info(key.c_str(), &st, PMIX_STATUS));
    } else if (key == PMIX_QUERY_PROC_TABLE || key == PMIX_QUERY_LOCAL_PROC_TABLE) {
        // Without the step's other nodes (no gather): what this node knows; the full table of a
        // multi-node step is gathered in query().
        std::vector<proc_row> rows = _ops.local_procs ? _ops.local_procs() : std::vector<proc_row>();
        if (key == PMIX_QUERY_PROC_TABLE) {
            std::vector<proc_row> all(_step.ntasks);
            for (uint32_t r = 0; r < _step.ntasks; ++r) all[r].rank = r;
            for (auto &p : rows)
                if (p.rank < _step.ntasks) all[p.rank] = std::move(p);
            rows = std::move(all);
        }
        out->push_back(proc_table_info(key.c_str(), rows, _step, _node_of));
    } else if (key == PMIX_QUERY_NUM_PSETS || key == PMIX_QUERY_PSET_NAMES || key == PMIX_QUERY_PSET_MEMBERSHIP ||
               key == PMIX_QUERY_NUM_GROUPS || key == PMIX_QUERY_GROUP_NAMES || key == PMIX_QUERY_GROUP_MEMBERSHIP) {
        const bool groups = key == PMIX_QUERY_NUM_GROUPS || key == PMIX_QUERY_GROUP_NAMES || key == PMIX_QUERY_GROUP_MEMBERSHIP;
        auto sets = _ops.psets ? _ops.psets(groups) : std::vector<std::pair<std::string, std::vector<pmix_proc_t>>>();
        if (key == PMIX_QUERY_NUM_PSETS || key == PMIX_QUERY_NUM_GROUPS) {
            size_t n = sets.size();
            out->push_back(make_info(key.c_str(), &n, PMIX_SIZE));
        } else if (key == PMIX_QUERY_PSET_NAMES || key == PMIX_QUERY_GROUP_NAMES) {
            std::string names;
            for (const auto &[name, members] : sets) names += (names.empty() ? "" : ",") + name;
            out->push_back(make_info(key.c_str(), names.c_str(), PMIX_STRING));
        } else {
            // The members of the set named by the PMIX_PSET_NAME (PMIX_GROUP_ID) qualifier.
            auto name = alloc::info_string(qualifiers, groups ? PMIX_GROUP_ID : PMIX_PSET_NAME);
            if (!name) return false;
            const std::vector<pmix_proc_t> *members = nullptr;
            for (const auto &s : sets)
                if (s.first == *name) members = &s.second;
            // mpi://WORLD, mpi://SELF, mpix://SHARED: the step, the asking rank, its node's ranks
            // (not counted in PMIX_QUERY_NUM_PSETS nor named in PMIX_QUERY_PSET_NAMES: OpenMPI
            // adds these three itself).
            std::vector<pmix_proc_t> builtin;
            if (const builtin_pset b = groups ? builtin_pset::none : builtin_of(*name); b != builtin_pset::none) {
                const uint32_t my_node = rank < _node_of.size() ? _node_of[rank] : UINT32_MAX;
                for (uint32_t r = 0; r < _step.ntasks; ++r) {
                    if (b == builtin_pset::self && r != rank) continue;
                    if (b == builtin_pset::shared && (r >= _node_of.size() || _node_of[r] != my_node)) continue;
                    pmix_proc_t p{};
                    memcpy(p.nspace, _step.nspace.c_str(), std::min(_step.nspace.size(), size_t(PMIX_MAX_NSLEN)));
                    p.rank = r;
                    builtin.push_back(p);
                }
                members = &builtin;
            }
            if (members == nullptr) return false;
            pmix_data_array_t da{};
            da.type = PMIX_PROC;
            da.size = members->size();
            da.array = const_cast<pmix_proc_t *>(members->data());
            pmix_data_array_t *p = &da;
            out->push_back(make_info(key.c_str(), p, PMIX_DATA_ARRAY));
        }
    } else if (key == PMIX_QUERY_SPAWN_SUPPORT || key == PMIX_QUERY_DEBUG_SUPPORT) {
        out->push_back(make_info(key.c_str(), "", PMIX_STRING));
    } else if (key == PMIX_QUERY_SUPPORTED_KEYS) {
        std::string all;
        for (const auto &k : local_keys()) all += (all.empty() ? "" : ",") + k;
        if (_host != nullptr)
            for (const auto &k : host_keys()) all += "," + k;
        out->push_back(make_info(key.c_str(), all.c_str(), PMIX_STRING));
    } else {
        return false;
    }
    return true;
}

void alloc_service::query(uint64_t conn, uint32_t request_id, uint32_t rank, wire::query_request &&m) {
    auto q = std::make_shared<query_state>();
    q->conn = conn;
    q->request_id = request_id;
    if (m.queries.empty()) {
        _ops.reply(conn, request_id, PMIX_ERR_BAD_PARAM, "no queries", InfoArray());
        return;
    }
    q->outstanding = 1;  // released at the end of this function
    std::vector<std::pair<size_t, alloc::agent_request>> to_host;
    std::vector<std::pair<size_t, int>> gathers;  // entry, timeout (s)
    q->entries.resize(m.queries.size());
    for (size_t e = 0; e < m.queries.size(); ++e) {
        auto &entry = m.queries[e];
        (void)info_array_copy(entry.qualifiers.data(), entry.qualifiers.size(), &q->entries[e].qualifiers);
        alloc::agent_request hr;
        for (const auto &key : entry.keys) {
            ++q->keys;
            bool is_host_key = false;
            for (const auto &h : host_keys()) is_host_key |= key == h;
            if (is_host_key) {
                if (_host != nullptr) hr.keys.push_back(key);
                continue;
            }
            if (key == PMIX_QUERY_PROC_TABLE && _ops.gather_procs) {
                auto ns = alloc::info_string(entry.qualifiers, PMIX_NSPACE);
                if (!ns || *ns == _step.nspace) {
                    int t = timeout_of(entry.qualifiers);
                    gathers.emplace_back(e, t > 0 ? t : kProcTableTimeoutSec);
                    continue;
                }
            }
            std::vector<pmix_info_t> &results = q->entries[e].results;
            const size_t had = results.size();
            answer_locally(key, entry.qualifiers, rank, &results);
            for (size_t i = had; i < results.size(); ++i) q->bytes += answer_bytes(results[i]);
            if (q->bytes > kMaxQueryAnswerBytes) {
                // Nothing went to the bridge or the other nodes yet: the state goes with this.
                _ops.reply(conn, request_id, PMIX_ERR_OUT_OF_RESOURCE, too_big(q->bytes), InfoArray());
                return;
            }
        }
        if (!hr.keys.empty()) {
            hr.op = alloc::agent_op::query;
            hr.nspace = _step.nspace;
            hr.rank = rank;
            hr.node = _step.node_name();
            (void)info_array_copy(entry.qualifiers.data(), entry.qualifiers.size(), &hr.infos);  // none on failure
            to_host.emplace_back(e, std::move(hr));
        }
    }
    q->outstanding += to_host.size() + gathers.size();
    std::shared_ptr<gate> g = _gate;
    auto post = _ops.post;
    for (auto &[e, hr] : to_host) {
        auto bytes = alloc::encode_request(hr);
        if (!bytes.ok()) {
            --q->outstanding;
            continue;
        }
        const size_t idx = e;
        _host->forward_alloc(std::move(bytes.value()), 60, [g, post, q, idx](Result<std::vector<uint8_t>> answer) {
            auto shared = std::make_shared<Result<std::vector<uint8_t>>>(std::move(answer));
            std::lock_guard<std::mutex> alive(g->mutex);  // the server exists while the service does
            if (g->service == nullptr) return;
            post([g, q, shared, idx] {
                std::lock_guard<std::mutex> lock(g->mutex);
                if (g->service == nullptr) return;
                alloc::agent_reply rep;
                if (shared->ok()) {
                    wire::Reader r(shared->value().data(), shared->value().size());
                    Status st = alloc::decode(r, &rep);
                    if (!st.ok()) {
                        rep.status = PMIX_ERR_UNPACK_FAILURE;
                        rep.message = st.message();
                    }
                } else {
                    rep.status = shared->status().code();
                    rep.message = shared->status().message();
                }
                for (size_t k = 0; k < rep.results.size(); ++k) {
                    pmix_info_t i{};
                    if (info_xfer(&i, &rep.results[k]).ok()) q->entries[idx].results.push_back(i);
                }
                if (rep.status != PMIX_SUCCESS && !rep.message.empty()) q->message = rep.message;
                if (--q->outstanding == 0) g->service->finish_query(q);
            });
        });
    }
    for (auto [e, timeout] : gathers) {
        const size_t idx = e;
        // The engine answers on the loop thread, while the service exists (it is the server's).
        _ops.gather_procs(timeout, [this, q, idx](std::vector<proc_row> rows, std::string silent) {
            q->entries[idx].results.push_back(proc_table_info(PMIX_QUERY_PROC_TABLE, rows, _step, _node_of));
            if (!silent.empty()) {
                PMIXCPP_LOG_WARNING("%s: process table: %s", _step.nspace.c_str(), silent.c_str());
                q->message = "process table: " + silent;
                q->incomplete = true;
            }
            if (--q->outstanding == 0) finish_query(q);
        });
    }
    if (--q->outstanding == 0) finish_query(q);
}

std::string alloc_service::too_big(size_t bytes) {
    return "the answers to this query take more than " + std::to_string(kMaxQueryAnswerBytes >> 20) + " MiB (" +
           std::to_string(bytes) + " bytes so far): ask for less at once";
}

void alloc_service::finish_query(const std::shared_ptr<query_state> &q) {
    // The bridge's and the other nodes' answers too.
    size_t bytes = 0;
    for (const auto &e : q->entries)
        for (const auto &r : e.results) bytes += answer_bytes(r);
    if (bytes > kMaxQueryAnswerBytes) {
        _ops.reply(q->conn, q->request_id, PMIX_ERR_OUT_OF_RESOURCE, too_big(bytes), InfoArray());
        return;
    }
    // The v4.1 form: one PMIX_QUERY_RESULTS per query (its qualifiers as PMIX_QUERY_QUALIFIERS
    // first, when it had any, then a (key, value) info per answered key); after them the same
    // answers as a flat list of (key, value) infos, for clients written before v4.1.
    std::vector<pmix_info_t> all;
    size_t answered = 0;
    for (auto &e : q->entries) {
        std::vector<pmix_info_t> inner;
        if (!e.qualifiers.empty()) {
            pmix_data_array_t quals{};
            quals.type = PMIX_INFO;
            quals.size = e.qualifiers.size();
            quals.array = e.qualifiers.data();
            pmix_data_array_t *qp = &quals;
            inner.push_back(make_info(PMIX_QUERY_QUALIFIERS, qp, PMIX_DATA_ARRAY));
        }
        for (const auto &r : e.results) {
            pmix_info_t copy{};
            if (info_xfer(&copy, &r).ok()) inner.push_back(copy);
        }
        answered += e.results.size();
        if (!e.results.empty()) {
            pmix_data_array_t da{};
            da.type = PMIX_INFO;
            da.size = inner.size();
            da.array = inner.data();
            pmix_data_array_t *dp = &da;
            all.push_back(make_info(PMIX_QUERY_RESULTS, dp, PMIX_DATA_ARRAY));
        }
        for (auto &i : inner) info_destruct(&i);
    }
    for (auto &e : q->entries) {
        for (auto &r : e.results) all.push_back(r);  // moved: the state no longer owns them
        e.results.clear();
    }
    pmix_status_t status = answered == 0                          ? PMIX_ERR_NOT_FOUND
                           : answered < q->keys || q->incomplete ? PMIX_QUERY_PARTIAL_SUCCESS
                                                                  : PMIX_SUCCESS;
    std::string message = q->message.empty() && answered == 0 ? "no query could be answered" : q->message;
    // PMIX_QUERY_PARTIAL_SUCCESS carries results: the wire reply only does for PMIX_SUCCESS, so the
    // partial status travels as a result info the client turns back into the status.
    if (status == PMIX_QUERY_PARTIAL_SUCCESS) {
        pmix_status_t st = PMIX_QUERY_PARTIAL_SUCCESS;
        all.push_back(make_info("pmixcpp.query.status", &st, PMIX_STATUS));
        status = PMIX_SUCCESS;
    }
    InfoArray results = to_array(all);
    _ops.reply(q->conn, q->request_id, status, message, std::move(results));
}

}  // namespace pmixcpp::server
