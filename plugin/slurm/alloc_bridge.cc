#include "alloc_bridge.h"

#include "slurm_api.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

#include "../agent/proto/agent_io.h"
#include "../services/alloc/alloc_plan.h"
#include "../services/service_ids.h"
#include "hostlist.h"
#include "log.h"
#include "pmix_strings.h"

namespace pmixcpp {

// (declared in alloc_bridge.h for the members that compare jobs)
struct job_snapshot {
    uint32_t job_id = 0;
    uint32_t state = 0;  // JOB_STATE_BASE part
    std::string nodes;
    uint32_t time_limit = 0;  // minutes
    time_t start_time = 0;    // running: when it started
    time_t end_time = 0;      // running: when its time limit ends it
    std::string partition;
    std::string batch_host;
    uint32_t reason_code = 0;
    std::string reason;
    bool reason_described = false;  // Slurm gave a text of its own (state_desc), not just the code's name
    std::string account;
    std::string qos;
    std::string name;
    uint32_t user_id = 0;
};

namespace {

constexpr auto kPollInterval = std::chrono::seconds(1);

std::string slurm_error_text() { return slurm_strerror(slurm_last_error()); }

// A Slurm error number -> the PMIx status the caller sees.
pmix_status_t status_of_slurm_error(int err) {
    switch (err) {
    case ESLURM_ACCESS_DENIED:
    case ESLURM_USER_ID_MISSING:
    case ESLURM_JOB_MISSING_REQUIRED_PARTITION_GROUP:
    case ESLURM_PARTITION_NOT_AVAIL: return PMIX_ERR_NO_PERMISSIONS;
    case ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE:
    case ESLURM_REQUESTED_PART_CONFIG_UNAVAILABLE:
    case ESLURM_INVALID_NODE_COUNT:
    case ESLURM_NODES_BUSY: return PMIX_ERR_OUT_OF_RESOURCE;
    case ESLURM_INVALID_NODE_NAME:
    case ESLURM_INVALID_PARTITION_NAME:
    case ESLURM_INVALID_TIME_LIMIT:
    case ESLURM_INVALID_TIME_VALUE: return PMIX_ERR_BAD_PARAM;
    case ESLURM_NOT_SUPPORTED: return PMIX_ERR_NOT_SUPPORTED;
    case SLURM_COMMUNICATIONS_CONNECTION_ERROR:
    case SLURMCTLD_COMMUNICATIONS_CONNECTION_ERROR:
    case SLURMCTLD_COMMUNICATIONS_SEND_ERROR:
    case SLURMCTLD_COMMUNICATIONS_RECEIVE_ERROR:
    case SLURMCTLD_COMMUNICATIONS_SHUTDOWN_ERROR:
    case SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT: return PMIX_ERR_UNREACH;
    default: return PMIX_ERROR;
    }
}

Status slurm_failure(const std::string &what) {
    int err = slurm_last_error();
    std::string text = what + ": slurmctld: " + slurm_strerror(err);
    if (slurm_error_is_missing_db_index(err))
        text += " (without slurmdbd, Slurm 22.05 refuses every update of a job that was resized once: its "
                "db_index stays unset)";
    return Status(status_of_slurm_error(err), text);
}

// Pending reasons that never clear by themselves: the request can never run as asked.
bool hopeless(uint32_t reason) {
    switch (reason) {
    case WAIT_PART_NODE_LIMIT:
    case WAIT_PART_TIME_LIMIT:
    case WAIT_PART_CONFIG:
    case WAIT_PART_INACTIVE:
    case WAIT_HELD:
    case FAIL_BAD_CONSTRAINTS:
    case FAIL_ACCOUNT:
    case FAIL_QOS:
    case WAIT_QOS_MAX_NODE_PER_JOB:
    case WAIT_ASSOC_MAX_NODE_PER_JOB:
    // Limits that count the requesting job's own nodes, or an account or QOS the partition does
    // not admit: they cannot clear while the requester runs.
    case WAIT_ACCOUNT:
    case WAIT_QOS:
    case WAIT_QOS_MAX_NODE_PER_USER:
    case WAIT_ASSOC_GRP_NODE:
    case WAIT_QOS_GRP_NODE: return true;
    default: return false;
    }
}


Result<job_snapshot> load_job(uint32_t job_id) {
    job_info_msg_t *msg = nullptr;
    if (slurm_load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS)
        return slurm_failure("slurm_load_job(" + std::to_string(job_id) + ")");
    if (msg == nullptr || msg->record_count == 0) {
        if (msg) slurm_free_job_info_msg(msg);
        return Status(PMIX_ERR_NOT_FOUND, "job " + std::to_string(job_id) + " not found");
    }
    const slurm_job_info_t &j = msg->job_array[0];
    job_snapshot s;
    s.job_id = j.job_id;
    s.state = j.job_state & JOB_STATE_BASE;
    s.nodes = j.nodes ? j.nodes : "";
    s.time_limit = j.time_limit;
    s.start_time = j.start_time;
    s.end_time = j.end_time;
    s.partition = j.partition ? j.partition : "";
    s.batch_host = j.batch_host ? j.batch_host : "";
    s.reason_code = j.state_reason;
    s.account = j.account ? j.account : "";
    s.qos = j.qos ? j.qos : "";
    s.name = j.name ? j.name : "";
    s.user_id = j.user_id;
    s.reason_described = j.state_desc && *j.state_desc;
    if (s.reason_described)
        s.reason = j.state_desc;
    else
        s.reason = slurm_job_reason_text(static_cast<enum job_state_reason>(j.state_reason));
    slurm_free_job_info_msg(msg);
    return s;
}

bool in_comma_list(const char *list, const std::string &name) {
    if (list == nullptr || name.empty()) return false;
    std::string l(list);
    size_t from = 0;
    for (;;) {
        size_t comma = l.find(',', from);
        if (l.compare(from, comma == std::string::npos ? std::string::npos : comma - from, name) == 0) return true;
        if (comma == std::string::npos) return false;
        from = comma + 1;
    }
}

// Why a pending job's partition will not take it, when Slurm keeps it pending as PartitionConfig
// without a text (Slurm 23.02 and newer no longer say that the account is the cause): the
// partition's AllowAccounts / DenyAccounts against the job's account. Slurm also admits an
// account whose parent is allowed; the bridge cannot see the account tree, so it names the
// lists it compared and leaves the decision to Slurm's reason code. nullopt: not the account.
std::optional<std::string> account_refusal(const job_snapshot &job) {
    if (job.partition.empty() || job.account.empty()) return std::nullopt;
    partition_info_msg_t *msg = nullptr;
    if (slurm_load_partitions(0, &msg, SHOW_ALL) != SLURM_SUCCESS) return std::nullopt;
    std::optional<std::string> why;
    for (uint32_t i = 0; msg && i < msg->record_count; ++i) {
        const partition_info_t &p = msg->partition_array[i];
        if (p.name == nullptr || job.partition != p.name) continue;
        if (p.allow_accounts && *p.allow_accounts && strcmp(p.allow_accounts, "ALL") != 0 &&
            !in_comma_list(p.allow_accounts, job.account))
            why = "the job's account " + job.account + " not permitted to use this partition (" + job.partition +
                  " allows " + p.allow_accounts + ")";
        else if (in_comma_list(p.deny_accounts, job.account))
            why = "the job's account " + job.account + " not permitted to use this partition (" + job.partition +
                  " denies " + p.deny_accounts + ")";
        break;
    }
    if (msg) slurm_free_partition_info_msg(msg);
    return why;
}

std::vector<std::string> expand(const std::string &list) {
    if (list.empty()) return {};
    auto v = hostlist::expand(list);
    return v.ok() ? v.value() : std::vector<std::string>{};
}

std::string minus(const std::string &after, const std::string &before) {
    auto a = expand(after);
    auto b = expand(before);
    std::set<std::string> bs(b.begin(), b.end());
    std::vector<std::string> out;
    for (auto &n : a)
        if (!bs.count(n)) out.push_back(n);
    return hostlist::compress(out);
}

// A helper or NEW allocation is charged like the job that asked for it: same account and QOS,
// so the site's association and QOS limits see it as that job's.
void inherit_charging(job_desc_msg_t &d, const job_snapshot &job) {
    if (!job.account.empty()) d.account = const_cast<char *>(job.account.c_str());
    if (!job.qos.empty()) d.qos = const_cast<char *>(job.qos.c_str());
}

// Minutes left of the job's time limit (rounded down, at least 1); nullopt when it has none.
std::optional<uint32_t> minutes_left(uint32_t job_id, uint32_t time_limit) {
    if (time_limit == INFINITE || time_limit == NO_VAL) return std::nullopt;
    long left = slurm_get_rem_time(job_id);
    if (left < 0) return time_limit;
    return static_cast<uint32_t>(std::max<long>(1, left / 60));
}

using alloc::kMinGrowSec;

bool has_time_limit(const job_snapshot &job) {
    return job.time_limit != INFINITE && job.time_limit != NO_VAL && job.end_time > 0;
}

// Why a request of `job` that adds resources can no longer start before the job ends; nullopt while
// it can (or the job has no time limit).
std::optional<std::string> too_late_to_grow(const job_snapshot &job) {
    if (!has_time_limit(job)) return std::nullopt;
    const long left = static_cast<long>(job.end_time - time(nullptr));
    if (left >= kMinGrowSec) return std::nullopt;
    return "job " + std::to_string(job.job_id) + " ends in " + std::to_string(std::max(0L, left)) +
           " s (its time limit, " + std::to_string(job.time_limit) +
           " min): nothing can be added that starts before the job's end (a grow needs at least " +
           std::to_string(kMinGrowSec) + " s of it)";
}

// srun's working directory (the allocation job's; Slurm 23.x and newer refuse a job without one)
const char *srun_work_dir() {
    static const std::string dir = [] {
        char buf[4096];
        return std::string(getcwd(buf, sizeof(buf)) ? buf : "/");
    }();
    return dir.c_str();
}

// job_desc for an allocation: the fields a spec sets; strings are owned by the caller's storage.
void fill_desc(job_desc_msg_t &d, const alloc::spec &s, uint64_t nodes, const std::string &node_list) {
    d.user_id = getuid();
    d.group_id = getgid();
    d.work_dir = const_cast<char *>(srun_work_dir());
    d.immediate = 0;
    if (nodes) d.min_nodes = static_cast<uint32_t>(nodes);
    if (!node_list.empty()) {
        d.req_nodes = const_cast<char *>(node_list.c_str());
        if (!nodes) d.min_nodes = static_cast<uint32_t>(expand(node_list).size());
    }
    if (s.num_cpus) {
        d.min_cpus = static_cast<uint32_t>(*s.num_cpus);
        d.num_tasks = static_cast<uint32_t>(*s.num_cpus);
    }
    if (s.mem_mb) d.pn_min_memory = *s.mem_mb;
    if (s.time_sec) d.time_limit = static_cast<uint32_t>((*s.time_sec + 59) / 60);
}

}  // namespace

// ------------------------------------------------------------------------------------------
// alloc_bridge (srun)

alloc_bridge::alloc_bridge(job_context ctx)
    : _ctx(std::move(ctx)), _table(std::to_string(_ctx.job_id) + "." + std::to_string(_ctx.step_id) + ".") {}

Result<std::unique_ptr<alloc_bridge>> alloc_bridge::start(job_context ctx) {
    std::unique_ptr<alloc_bridge> b(new alloc_bridge(std::move(ctx)));
    try {
        b->_thread = std::thread([p = b.get()] { p->run(); });
    } catch (const std::exception &e) {
        return Status(PMIX_ERROR, std::string("cannot start the allocation bridge: ") + e.what());
    }
    return b;
}

alloc_bridge::~alloc_bridge() { stop(); }

void alloc_bridge::stop() {
    {
        std::lock_guard<std::mutex> lock(_mutex);
        _stopping = true;
    }
    _cv.notify_all();
    if (_thread.joinable()) _thread.join();
}

Result<uint32_t> alloc_bridge::allocation_job(const std::string &alloc_id) {
    std::lock_guard<std::mutex> lock(_mutex);
    auto it = _spawn_targets.find(alloc_id);
    if (it == _spawn_targets.end())
        return Status(PMIX_ERR_BAD_PARAM, "allocation " + alloc_id + " was not obtained by step " +
                                              std::to_string(_ctx.job_id) + "." + std::to_string(_ctx.step_id) +
                                              " (or was given back)");
    return it->second;
}

Status alloc_bridge::register_in(agent::service_table &table) {
    return table.add(services::id_of(services::service::alloc),
                     [this](agent::responder answer, std::vector<uint8_t> body) { submit(std::move(answer), std::move(body)); });
}

void alloc_bridge::submit(agent::responder answer, std::vector<uint8_t> body) {
    {
        std::lock_guard<std::mutex> lock(_mutex);
        if (!_stopping) _queue.push_back(incoming{std::move(answer), std::move(body)});
    }
    _cv.notify_all();  // stopping: `answer` goes unanswered here, so its call is failed
}

void alloc_bridge::run() {
    try {
        reap_orphans(_ctx.job_id);
    } catch (const std::exception &e) {
        PMIXCPP_LOG_ERROR("allocation bridge: %s", e.what());
    }
    auto next_poll = alloc::alloc_clock::now() + kPollInterval;
    for (;;) {
        std::deque<incoming> work;
        {
            std::unique_lock<std::mutex> lock(_mutex);
            _cv.wait_until(lock, next_poll, [this] { return _stopping || !_queue.empty(); });
            if (_stopping) break;
            work.swap(_queue);
        }
        for (auto &in : work) {
            try {
                handle(std::move(in));
            } catch (const std::exception &e) {
                PMIXCPP_LOG_ERROR("allocation bridge: %s", e.what());
            }
        }
        if (alloc::alloc_clock::now() >= next_poll) {
            try {
                poll_pending();
            } catch (const std::exception &e) {
                PMIXCPP_LOG_ERROR("allocation bridge: %s", e.what());
            }
            next_poll = alloc::alloc_clock::now() + kPollInterval;
        }
    }
    // Stopping: the step is over. Withdraw what is still waiting in Slurm, answer everyone.
    for (auto *r : _table.open_requests()) {
        if (r->slurm_job) slurm_kill_job(r->slurm_job, SIGKILL, 0);
        fail(*r, PMIX_ERR_JOB_CANCELED, "the step ended before Slurm answered", alloc::req_state::cancelled);
    }
    // NEW allocations belong to the step that asked: they end with it (unless kept, see do_new).
    for (const auto &[id, slurm_job] : _owned) {
        PMIXCPP_LOG_INFO("allocation %s: step %u.%u ended, ending its job %u", id.c_str(), _ctx.job_id,
                         _ctx.step_id, slurm_job);
        if (slurm_kill_job(slurm_job, SIGKILL, 0) != SLURM_SUCCESS && slurm_last_error() != ESLURM_ALREADY_DONE &&
            slurm_last_error() != ESLURM_INVALID_JOB_ID)
            PMIXCPP_LOG_WARNING("allocation %s: end job %u: %s", id.c_str(), slurm_job, slurm_error_text().c_str());
    }
    _owned.clear();
    std::lock_guard<std::mutex> lock(_mutex);
    _queue.clear();    // their calls are failed (agent::responder)
    _waiters.clear();
}

void alloc_bridge::answer(const agent::responder &to, const alloc::agent_reply &rep) {
    if (!to.valid()) return;
    auto bytes = alloc::encode_reply(rep);
    if (!bytes.ok()) {
        alloc::agent_reply small;
        small.status = bytes.status().code();
        small.message = "cannot encode the answer: " + bytes.status().message();
        bytes = alloc::encode_reply(small);
        if (!bytes.ok()) {
            (void)to.send(agent::reply{bytes.status().code(), bytes.status().message(), {}});
            return;
        }
    }
    Status st = to.send(agent::reply{PMIX_SUCCESS, {}, std::move(bytes.value())});
    if (!st.ok()) PMIXCPP_LOG_VERBOSE("allocation bridge: answer lost: %s", st.message().c_str());
}

void alloc_bridge::handle(incoming &&in) {
    alloc::agent_request req;
    wire::Reader r(in.body.data(), in.body.size());
    Status st = alloc::decode(r, &req);
    if (st.ok()) st = r.expect_end();
    if (!st.ok()) {
        PMIXCPP_LOG_ERROR("allocation bridge: malformed request: %s", st.message().c_str());
        alloc::agent_reply rep;
        rep.status = PMIX_ERR_UNPACK_FAILURE;
        rep.message = st.message();
        return answer(in.answer, rep);
    }
    if (req.op == alloc::agent_op::query) return handle_query(std::move(in.answer), std::move(req));
    handle_allocate(std::move(in.answer), std::move(req));
}

InfoArray alloc_bridge::id_infos(const alloc::request_record &r) {
    alloc::info_builder b;
    b.add_string(PMIX_ALLOC_ID, r.id);
    if (!r.what.request_id.empty()) b.add_string(PMIX_ALLOC_REQ_ID, r.what.request_id);
    return b.take();
}

void alloc_bridge::handle_allocate(agent::responder to, alloc::agent_request &&req) {
    auto spec = alloc::parse_spec(req.directive, req.infos.data(), req.infos.size());
    if (!spec.ok()) {
        alloc::agent_reply rep;
        rep.status = spec.status().code();
        rep.message = spec.status().message();
        return answer(to, rep);
    }
    const std::string requester = req.nspace + ":" + std::to_string(req.rank);
    if (spec->dir == alloc::directive::cancel && spec->alloc_id.empty() && !spec->request_id.empty()) {
        // CANCEL with PMIX_ALLOC_REQ_ID names the request to withdraw, not the CANCEL itself.
        spec->alloc_id = std::move(spec->request_id);
        spec->request_id.clear();
    }
    auto rec = _table.add(std::move(spec.value()), requester, alloc::alloc_clock::now());
    if (!rec.ok()) {
        alloc::agent_reply rep;
        rep.status = rec.status().code();
        rep.message = rec.status().message();
        return answer(to, rep);
    }
    alloc::request_record &r = *rec.value();
    if (const pmix_info_t *k = alloc::find_info(req.infos, alloc::kAllocKeep)) {
        if (k->value.type != PMIX_BOOL && k->value.type != PMIX_UNDEF) {
            alloc::agent_reply rep;
            rep.status = PMIX_ERR_BAD_PARAM;
            rep.message = std::string(alloc::kAllocKeep) + " must be a PMIX_BOOL";
            (void)_table.transition(r, alloc::req_state::failed, PMIX_ERR_BAD_PARAM, rep.message);
            return answer(to, rep);
        }
        const bool keep = k->value.type == PMIX_UNDEF || k->value.data.flag;
        if (keep && r.what.dir == alloc::directive::new_allocation) _keep.insert(r.id);
    }
    uint64_t waiter = _next_waiter++;
    _waiters[waiter] = std::move(to);
    r.waiter = waiter;
    if (const pmix_info_t *t = alloc::find_info(req.infos, PMIX_TIMEOUT)) {
        auto v = value_to_number<int64_t>(t->value);
        if (v.ok() && v.value() > 0) _timeouts[r.id] = static_cast<int>(std::min<int64_t>(v.value(), 1 << 30));
    }
    PMIXCPP_LOG_INFO("allocation request %s from %s: %s", r.id.c_str(), requester.c_str(),
                     alloc::describe(r.what).c_str());
    switch (r.what.dir) {
    case alloc::directive::new_allocation: do_new(r); break;
    case alloc::directive::extend: do_extend(r); break;
    case alloc::directive::release: do_release(r); break;
    case alloc::directive::reacquire: do_reacquire(r); break;
    case alloc::directive::cancel: do_cancel(r); break;
    }
}

void alloc_bridge::grant(alloc::request_record &r, InfoArray &&extra) {
    if (!_table.transition(r, alloc::req_state::granted).ok()) return;
    _timeouts.erase(r.id);
    alloc::agent_reply rep;
    alloc::info_builder b;
    b.add_string(PMIX_ALLOC_ID, r.id);
    if (!r.what.request_id.empty()) b.add_string(PMIX_ALLOC_REQ_ID, r.what.request_id);
    for (size_t k = 0; k < extra.size(); ++k) b.add_value(extra[k].key, extra[k].value);
    rep.results = b.take();
    PMIXCPP_LOG_INFO("allocation request %s granted%s%s", r.id.c_str(), r.node_list.empty() ? "" : ": nodes ",
                     r.node_list.c_str());
    if (r.what.dir == alloc::directive::new_allocation ||
        (r.what.wants_resources() &&
         (r.what.dir == alloc::directive::extend || r.what.dir == alloc::directive::reacquire))) {
        std::lock_guard<std::mutex> lock(_mutex);
        _spawn_targets[r.id] = r.what.dir == alloc::directive::new_allocation ? r.slurm_job : _ctx.job_id;
    }
    auto it = _waiters.find(r.waiter);
    if (it != _waiters.end()) {
        answer(it->second, rep);
        _waiters.erase(it);
    }
    r.waiter = 0;
}

void alloc_bridge::fail(alloc::request_record &r, pmix_status_t status, const std::string &message,
                        alloc::req_state to) {
    if (!_table.transition(r, to, status, message).ok()) return;
    _timeouts.erase(r.id);
    alloc::agent_reply rep;
    rep.status = status;
    rep.message = "allocation request " + r.id + ": " + message;
    rep.results = id_infos(r);
    PMIXCPP_LOG_INFO("allocation request %s %s: %s", r.id.c_str(), alloc::to_string(to), message.c_str());
    auto it = _waiters.find(r.waiter);
    if (it != _waiters.end()) {
        answer(it->second, rep);
        _waiters.erase(it);
    }
    r.waiter = 0;
}

// --- job-level clean-up ------------------------------------------------------------------------
// Slurm jobs this plugin creates for a step are named after the request:
//   pmixcpp-alloc.<job>.<step>.<n>   a NEW allocation owned by step <job>.<step>
//   pmixcpp-expand.<job>.<step>.<n>  a helper of an EXTEND / REACQUIRE of job <job>
//   pmixcpp-kept.<job>.<step>.<n>    a NEW allocation asked with pmixcpp.alloc.keep (outlives the step)
// A srun killed with SIGKILL cannot end them; the next step of the job does (this function, from
// its srun, as the user) and the job's end does (contrib/pmixcpp-epilog-slurmctld). Their time
// limits never pass the job's own either way.

namespace {
// "<prefix><job>.<step>.<n>" -> step, if the name has that shape for `job_id`
std::optional<uint32_t> step_of_name(const std::string &name, const std::string &prefix, uint32_t job_id) {
    const std::string head = prefix + std::to_string(job_id) + ".";
    if (name.compare(0, head.size(), head) != 0) return std::nullopt;
    const char *p = name.c_str() + head.size();
    char *end = nullptr;
    errno = 0;
    unsigned long step = std::strtoul(p, &end, 10);
    if (end == p || *end != '.' || errno != 0 || step > UINT32_MAX) return std::nullopt;
    return static_cast<uint32_t>(step);
}

bool step_running(uint32_t job_id, uint32_t step_id) {
    job_step_info_response_msg_t *msg = nullptr;
    if (slurm_get_job_steps(0, job_id, step_id, &msg, SHOW_ALL) != SLURM_SUCCESS) {
        // not found: gone; any other error: assume it runs (never end what might be in use)
        int err = slurm_last_error();
        return !(err == ESLURM_INVALID_JOB_ID || err == ESLURM_ALREADY_DONE);
    }
    bool found = msg != nullptr && msg->job_step_count > 0;
    if (msg) slurm_free_job_step_info_response_msg(msg);
    return found;
}
}  // namespace

void alloc_bridge::reap_orphans(uint32_t job_id) {
    job_info_msg_t *msg = nullptr;
    if (slurm_load_job_user(&msg, getuid(), SHOW_ALL) != SLURM_SUCCESS) {
        PMIXCPP_LOG_VERBOSE("allocation bridge: cannot list the user's jobs: %s", slurm_error_text().c_str());
        return;
    }
    std::vector<std::pair<uint32_t, std::string>> orphans;
    for (uint32_t i = 0; msg && i < msg->record_count; ++i) {
        const slurm_job_info_t &j = msg->job_array[i];
        if (j.name == nullptr || j.user_id != getuid()) continue;
        const uint32_t base = j.job_state & JOB_STATE_BASE;
        if (base != JOB_PENDING && base != JOB_RUNNING && base != JOB_SUSPENDED) continue;
        const std::string name = j.name;
        std::optional<uint32_t> step = step_of_name(name, "pmixcpp-alloc.", job_id);
        if (!step) step = step_of_name(name, "pmixcpp-expand.", job_id);
        if (step && !step_running(job_id, *step)) orphans.emplace_back(j.job_id, name);
    }
    if (msg) slurm_free_job_info_msg(msg);
    for (const auto &[id, name] : orphans) {
        PMIXCPP_LOG_INFO("allocation bridge: job %u (%s) outlived the step that asked for it: ending it", id,
                         name.c_str());
        if (slurm_kill_job(id, SIGKILL, 0) != SLURM_SUCCESS && slurm_last_error() != ESLURM_ALREADY_DONE)
            PMIXCPP_LOG_WARNING("allocation bridge: end job %u: %s", id, slurm_error_text().c_str());
    }
}

// --- NEW ------------------------------------------------------------------------------------

void alloc_bridge::do_new(alloc::request_record &r) {
    auto job = load_job(_ctx.job_id);
    if (!job.ok()) return fail(r, job.status().code(), job.status().message());
    if (auto late = too_late_to_grow(*job)) return fail(r, PMIX_ERR_OUT_OF_RESOURCE, *late);
    const bool keep = _keep.count(r.id) != 0;
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    std::string name = (keep ? "pmixcpp-kept." : "pmixcpp-alloc.") + r.id;
    std::string partition = r.what.queue;
    d.name = const_cast<char *>(name.c_str());
    if (!partition.empty()) d.partition = const_cast<char *>(partition.c_str());
    fill_desc(d, r.what, r.what.num_nodes.value_or(0), r.what.node_list);
    inherit_charging(d, *job);
    // A time limit always: PMIX_ALLOC_TIME, never beyond what is left of the requesting job's.
    std::optional<uint32_t> left = minutes_left(_ctx.job_id, job->time_limit);
    if (left) d.time_limit = d.time_limit == NO_VAL ? *left : std::min(d.time_limit, *left);
    if (d.time_limit != NO_VAL) r.time_limit_min = d.time_limit;
    resource_allocation_response_msg_t *resp = nullptr;
    if (slurm_allocate_resources(&d, &resp) != SLURM_SUCCESS) {
        Status st = slurm_failure("new allocation");
        return fail(r, st.code(), st.message());
    }
    r.slurm_job = resp ? resp->job_id : 0;
    std::string nodes = resp && resp->node_list ? resp->node_list : "";
    if (resp) slurm_free_resource_allocation_response_msg(resp);
    if (r.slurm_job == 0) return fail(r, PMIX_ERROR, "slurmctld answered without a job id");
    if (nodes.empty()) {
        (void)_table.transition(r, alloc::req_state::pending);
        PMIXCPP_LOG_INFO("allocation request %s: job %u pending", r.id.c_str(), r.slurm_job);
        return check_pending(r);
    }
    r.node_list = nodes;
    grant_new(r);
}

void alloc_bridge::grant_new(alloc::request_record &r) {
    alloc::info_builder b;
    b.add_string(PMIX_JOBID, std::to_string(r.slurm_job));
    b.add_string(PMIX_ALLOC_NODE_LIST, r.node_list);
    b.add_u64(PMIX_ALLOC_NUM_NODES, expand(r.node_list).size());
    if (r.time_limit_min) b.add_u32(PMIX_ALLOC_TIME, r.time_limit_min * 60);
    b.add_bool(alloc::kAllocKeep, _keep.count(r.id) != 0);
    if (!_keep.count(r.id)) _owned[r.id] = r.slurm_job;
    grant(r, b.take());
}

// --- EXTEND / REACQUIRE -----------------------------------------------------------------------

void alloc_bridge::do_extend(alloc::request_record &r) {
    if (r.what.time_sec) {
        auto job = load_job(_ctx.job_id);
        if (!job.ok()) return fail(r, job.status().code(), job.status().message());
        if (job->time_limit == INFINITE) return fail(r, PMIX_ERR_BAD_PARAM, "the job has no time limit to extend");
        uint32_t extra_min = (*r.what.time_sec + 59) / 60;
        job_desc_msg_t d;
        slurm_init_job_desc_msg(&d);
        d.job_id = _ctx.job_id;
        d.time_limit = job->time_limit + extra_min;
        if (slurm_update_job(&d) != SLURM_SUCCESS) {
            Status st = slurm_failure("extend the time limit of job " + std::to_string(_ctx.job_id) + " to " +
                                      std::to_string(d.time_limit) + " min");
            return fail(r, st.code(), st.message());
        }
        r.time_limit_min = d.time_limit;
        PMIXCPP_LOG_INFO("allocation request %s: job %u time limit %u -> %u min", r.id.c_str(), _ctx.job_id,
                         job->time_limit, d.time_limit);
        if (!r.what.wants_resources()) {
            alloc::info_builder b;
            b.add_u32(PMIX_ALLOC_TIME, d.time_limit * 60);
            return grant(r, b.take());
        }
    }
    start_expansion(r, r.what.num_nodes.value_or(0), r.what.node_list, r.what.num_cpus);
}

void alloc_bridge::do_reacquire(alloc::request_record &r) {
    auto nodes = _table.take_leases(r.what.alloc_id, alloc::alloc_clock::now());
    if (nodes.empty())
        return fail(r, PMIX_ERR_NOT_FOUND,
                    r.what.alloc_id.empty() ? "no nodes are lent (or their lease expired)"
                                            : "nothing lent under " + r.what.alloc_id + " (or the lease expired)");
    start_expansion(r, nodes.size(), hostlist::compress(nodes), std::nullopt);
}

void alloc_bridge::start_expansion(alloc::request_record &r, uint64_t nodes, const std::string &node_list,
                                   std::optional<uint64_t> cpus) {
    auto job = load_job(_ctx.job_id);
    if (!job.ok()) return fail(r, job.status().code(), job.status().message());
    if (auto late = too_late_to_grow(*job)) return fail(r, PMIX_ERR_OUT_OF_RESOURCE, *late);
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    std::string name = "pmixcpp-expand." + r.id;
    std::string dependency = "expand:" + std::to_string(_ctx.job_id);
    std::string partition = job->partition;
    d.name = const_cast<char *>(name.c_str());
    d.dependency = const_cast<char *>(dependency.c_str());
    if (!partition.empty()) d.partition = const_cast<char *>(partition.c_str());
    alloc::spec s = r.what;
    s.num_cpus = cpus;
    s.time_sec.reset();
    fill_desc(d, s, nodes, node_list);
    inherit_charging(d, *job);
    // Never a node the job holds already (Slurm would grant one, and the merge would add nothing).
    std::string held = hostlist::compress(expand(job->nodes));
    if (!held.empty()) d.exc_nodes = const_cast<char *>(held.c_str());
    std::optional<uint32_t> left = minutes_left(_ctx.job_id, job->time_limit);
    if (left) d.time_limit = *left;
    resource_allocation_response_msg_t *resp = nullptr;
    if (slurm_allocate_resources(&d, &resp) != SLURM_SUCCESS) {
        Status st = slurm_failure("expansion of job " + std::to_string(_ctx.job_id));
        return fail(r, st.code(), st.message());
    }
    r.slurm_job = resp ? resp->job_id : 0;
    std::string granted = resp && resp->node_list ? resp->node_list : "";
    if (resp) slurm_free_resource_allocation_response_msg(resp);
    if (r.slurm_job == 0) return fail(r, PMIX_ERROR, "slurmctld answered without a job id");
    r.node_list = job->nodes;  // the job's nodes before: the merge reports what was added
    if (granted.empty()) {
        (void)_table.transition(r, alloc::req_state::pending);
        PMIXCPP_LOG_INFO("allocation request %s: expansion job %u pending", r.id.c_str(), r.slurm_job);
        return check_pending(r);
    }
    merge_expansion(r);
}

void alloc_bridge::merge_expansion(alloc::request_record &r) {
    const std::string before = r.node_list;
    // The documented merge: the helper gives its nodes to the job ...
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.job_id = r.slurm_job;
    d.min_nodes = 0;
    if (slurm_update_job(&d) != SLURM_SUCCESS) {
        Status st = slurm_failure("merge of expansion job " + std::to_string(r.slurm_job) + " into job " +
                                  std::to_string(_ctx.job_id));
        slurm_kill_job(r.slurm_job, SIGKILL, 0);
        return fail(r, st.code(), st.message());
    }
    auto job = load_job(_ctx.job_id);
    if (!job.ok()) return fail(r, job.status().code(), job.status().message());
    r.node_list = job->nodes;
    std::string added = minus(job->nodes, before);
    if (added.empty())
        return fail(r, PMIX_ERR_OUT_OF_RESOURCE,
                    "Slurm merged expansion job " + std::to_string(r.slurm_job) + " into job " +
                        std::to_string(_ctx.job_id) + " without a new node (the job holds " + job->nodes + ")");
    r.added = added;
    alloc::info_builder b;
    b.add_string(PMIX_ALLOC_NODE_LIST, added);
    b.add_u64(PMIX_ALLOC_NUM_NODES, expand(added).size());
    b.add_string(PMIX_ALLOCATED_NODELIST, job->nodes);
    b.add_string(PMIX_JOBID, std::to_string(_ctx.job_id));
    if (r.time_limit_min) b.add_u32(PMIX_ALLOC_TIME, r.time_limit_min * 60);
    grant(r, b.take());
    // ... and the job takes them all (NumNodes=ALL), after the answer: in 22.05 it changes nothing
    // the caller waits for, and slurmctld may hold it for seconds (see slurm_failure).
    job_desc_msg_t all;
    slurm_init_job_desc_msg(&all);
    all.job_id = _ctx.job_id;
    all.min_nodes = INFINITE;
    if (slurm_update_job(&all) != SLURM_SUCCESS)
        PMIXCPP_LOG_VERBOSE("allocation request %s: update of job %u NumNodes=ALL: %s", r.id.c_str(), _ctx.job_id,
                            slurm_error_text().c_str());
}

// --- RELEASE --------------------------------------------------------------------------------

void alloc_bridge::do_release(alloc::request_record &r) {
    // A NEW allocation given back as a whole.
    if (!r.what.alloc_id.empty() && !r.what.num_nodes && r.what.node_list.empty()) {
        alloc::request_record *target = _table.find(r.what.alloc_id);
        if (target == nullptr || target->what.dir != alloc::directive::new_allocation ||
            target->state != alloc::req_state::granted || target->slurm_job == 0)
            return fail(r, PMIX_ERR_NOT_FOUND, r.what.alloc_id + " is not a granted NEW allocation of this step");
        {
            std::lock_guard<std::mutex> lock(_mutex);
            _spawn_targets.erase(target->id);
        }
        _owned.erase(target->id);
        if (slurm_kill_job(target->slurm_job, SIGKILL, 0) != SLURM_SUCCESS && slurm_last_error() != ESLURM_ALREADY_DONE) {
            Status st = slurm_failure("release of job " + std::to_string(target->slurm_job));
            return fail(r, st.code(), st.message());
        }
        alloc::info_builder b;
        b.add_string(PMIX_JOBID, std::to_string(target->slurm_job));
        b.add_string(PMIX_ALLOC_NODE_LIST, target->node_list);
        return grant(r, b.take());
    }
    auto job = load_job(_ctx.job_id);
    if (!job.ok()) return fail(r, job.status().code(), job.status().message());
    std::vector<std::string> nodes = expand(job->nodes);
    std::set<std::string> protect(_ctx.step_nodes.begin(), _ctx.step_nodes.end());
    if (!job->batch_host.empty()) protect.insert(job->batch_host);
    std::vector<std::string> give;
    if (!r.what.node_list.empty()) {
        std::set<std::string> in_job(nodes.begin(), nodes.end());
        for (const auto &n : expand(r.what.node_list)) {
            if (!in_job.count(n)) return fail(r, PMIX_ERR_BAD_PARAM, n + " is not a node of job " + std::to_string(_ctx.job_id));
            if (protect.count(n))
                return fail(r, PMIX_ERR_BAD_PARAM, n + " runs the requesting step (or the batch script): not released");
            give.push_back(n);
        }
        if (r.what.num_nodes && *r.what.num_nodes != give.size())
            return fail(r, PMIX_ERR_BAD_PARAM, "PMIX_ALLOC_NUM_NODES differs from the node list's length");
    } else {
        uint64_t want = *r.what.num_nodes;
        for (auto it = nodes.rbegin(); it != nodes.rend() && give.size() < want; ++it)
            if (!protect.count(*it)) give.push_back(*it);
        if (give.size() < want)
            return fail(r, PMIX_ERR_OUT_OF_RESOURCE,
                        "only " + std::to_string(give.size()) + " of the job's nodes run no part of the step; " +
                            std::to_string(want) + " asked");
        std::reverse(give.begin(), give.end());
    }
    std::set<std::string> gone(give.begin(), give.end());
    std::vector<std::string> keep;
    for (auto &n : nodes)
        if (!gone.count(n)) keep.push_back(n);
    std::string keep_list = hostlist::compress(keep);
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.job_id = _ctx.job_id;
    d.req_nodes = const_cast<char *>(keep_list.c_str());
    if (slurm_update_job(&d) != SLURM_SUCCESS) {
        Status st = slurm_failure("shrink job " + std::to_string(_ctx.job_id) + " to " + keep_list);
        return fail(r, st.code(), st.message());
    }
    r.released = give;
    r.node_list = keep_list;
    const std::string released = hostlist::compress(give);
    if (r.what.time_sec)
        _table.add_lease(r.id, give, alloc::alloc_clock::now() + std::chrono::seconds(*r.what.time_sec));
    alloc::info_builder b;
    b.add_string(PMIX_ALLOC_NODE_LIST, released);
    b.add_u64(PMIX_ALLOC_NUM_NODES, give.size());
    b.add_string(PMIX_ALLOCATED_NODELIST, keep_list);
    b.add_string(PMIX_JOBID, std::to_string(_ctx.job_id));
    if (r.what.time_sec) b.add_u32(PMIX_ALLOC_TIME, *r.what.time_sec);
    grant(r, b.take());
}

// --- CANCEL ---------------------------------------------------------------------------------

void alloc_bridge::do_cancel(alloc::request_record &r) {
    std::vector<alloc::request_record *> targets;
    const std::string &name = r.what.alloc_id;
    if (!name.empty()) {
        alloc::request_record *t = _table.find(name);
        if (t == nullptr || t == &r) return fail(r, PMIX_ERR_NOT_FOUND, "no request " + name);
        if (alloc::is_final(t->state))
            return fail(r, PMIX_ERR_NOT_FOUND, "request " + t->id + " is already " + alloc::to_string(t->state));
        targets.push_back(t);
    } else {
        for (auto *o : _table.open_requests(r.requester))
            if (o != &r) targets.push_back(o);
    }
    std::vector<std::string> ids;
    for (auto *t : targets) {
        if (t->slurm_job && slurm_kill_job(t->slurm_job, SIGKILL, 0) != SLURM_SUCCESS &&
            slurm_last_error() != ESLURM_ALREADY_DONE)
            PMIXCPP_LOG_WARNING("allocation request %s: cancel job %u: %s", t->id.c_str(), t->slurm_job,
                                slurm_error_text().c_str());
        fail(*t, PMIX_ERR_JOB_CANCELED, "cancelled by " + r.requester + " (" + r.id + ")",
             alloc::req_state::cancelled);
        ids.push_back(t->id);
    }
    alloc::info_builder b;
    std::string list;
    for (auto &i : ids) list += (list.empty() ? "" : ",") + i;
    b.add_string("pmixcpp.alloc.cancelled", list);
    b.add_size("pmixcpp.alloc.ncancelled", ids.size());
    grant(r, b.take());
}

// --- pending requests -------------------------------------------------------------------------

void alloc_bridge::poll_pending() {
    for (auto *r : _table.open_requests())
        if (r->state == alloc::req_state::pending && r->slurm_job != 0) check_pending(*r);
}

void alloc_bridge::check_pending(alloc::request_record &rec) {
    alloc::request_record *r = &rec;
    auto now = alloc::alloc_clock::now();
    auto t = _timeouts.find(r->id);
    if (t != _timeouts.end() && now - r->created > std::chrono::seconds(t->second)) {
        slurm_kill_job(r->slurm_job, SIGKILL, 0);
        fail(*r, PMIX_ERR_TIMEOUT, "still pending in Slurm after " + std::to_string(t->second) + " s (pmix.timeout)");
        return;
    }
    auto job = load_job(r->slurm_job);
    if (!job.ok()) {
        if (job.status().code() == PMIX_ERR_UNREACH) return;  // slurmctld slow or down: try again
        fail(*r, job.status().code(), job.status().message());
        return;
    }
    // The requesting job's time limit: what is still pending when the job has less than a minute
    // left can no longer start before its end.
    auto owner = load_job(_ctx.job_id);
    if (!owner.ok() && owner.status().code() == PMIX_ERR_UNREACH) return;
    if (owner.ok() && job->state == JOB_PENDING) {
        if (auto late = too_late_to_grow(*owner)) {
            slurm_kill_job(r->slurm_job, SIGKILL, 0);
            fail(*r, PMIX_ERR_OUT_OF_RESOURCE,
                 *late + "; the request was still pending (Slurm job " + std::to_string(r->slurm_job) +
                     ", cancelled): " + job->reason);
            return;
        }
        cap_time_limit(*r, *job, *owner);
    }
    if (job->state == JOB_PENDING) {
        if (hopeless(job->reason_code)) {
            slurm_kill_job(r->slurm_job, SIGKILL, 0);
            bool refused = job->reason_code == WAIT_ACCOUNT || job->reason_code == WAIT_QOS ||
                           job->reason_code == FAIL_ACCOUNT || job->reason_code == FAIL_QOS;
            std::string reason = job->reason;
            if (job->reason_code == WAIT_PART_CONFIG || job->reason_code == FAIL_ACCOUNT) {
                if (auto why = account_refusal(*job)) {
                    if (!job->reason_described) reason += ": " + *why;
                    refused = true;
                }
            }
            fail(*r, refused ? PMIX_ERR_NO_PERMISSIONS : PMIX_ERR_OUT_OF_RESOURCE,
                 "slurmctld keeps job " + std::to_string(r->slurm_job) + " pending for good: " + reason);
        }
        return;
    }
    if (job->state == JOB_RUNNING) {
        if (r->what.dir == alloc::directive::new_allocation) {
            r->node_list = job->nodes;
            if (job->time_limit != INFINITE && job->time_limit != NO_VAL) r->time_limit_min = job->time_limit;
            if (owner.ok() && !end_with_owner(*r, *job, *owner)) return;
            grant_new(*r);
        } else {
            merge_expansion(*r);
        }
        return;
    }
    fail(*r, job->state == JOB_CANCELLED ? PMIX_ERR_JOB_CANCELED : PMIX_ERROR,
         "Slurm job " + std::to_string(r->slurm_job) + " ended " + job_state_string(job->state) + ": " + job->reason,
         job->state == JOB_CANCELLED ? alloc::req_state::cancelled : alloc::req_state::failed);
}

// A pending allocation's time limit never runs past the requesting job's end: lowered (a user may
// lower a limit) to the job's whole minutes left as they pass, so that Slurm schedules it as what
// it can be, and a NEW allocation starts with a limit that ends with the job.
void alloc_bridge::cap_time_limit(alloc::request_record &r, const job_snapshot &pending, const job_snapshot &owner) {
    if (!has_time_limit(owner)) return;
    const long left = static_cast<long>(owner.end_time - time(nullptr));
    const uint32_t minutes = static_cast<uint32_t>(std::max(1L, left / 60));
    if (pending.time_limit != INFINITE && pending.time_limit != NO_VAL && pending.time_limit <= minutes) return;
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.job_id = r.slurm_job;
    d.time_limit = minutes;
    if (slurm_update_job(&d) != SLURM_SUCCESS)
        PMIXCPP_LOG_VERBOSE("allocation request %s: lower the time limit of pending job %u to %u min: %s", r.id.c_str(),
                            r.slurm_job, minutes, slurm_error_text().c_str());
    else
        PMIXCPP_LOG_VERBOSE("allocation request %s: pending job %u time limit %u -> %u min (job %u ends in %ld s)",
                            r.id.c_str(), r.slurm_job, pending.time_limit, minutes, owner.job_id, left);
}

// A NEW allocation that Slurm just started: if its time limit would end it after the requesting
// job, it is lowered to end with the job (whole minutes, rounded down); with less than a minute
// left it is given back and the request fails. False: failed (answered).
bool alloc_bridge::end_with_owner(alloc::request_record &r, const job_snapshot &started, const job_snapshot &owner) {
    alloc::started_alloc s;
    s.job_id = r.slurm_job;
    s.start_time = started.start_time;
    s.end_time = has_time_limit(started) ? started.end_time : 0;
    const alloc::end_plan plan = alloc::end_with_owner(s, owner.job_id, has_time_limit(owner) ? owner.end_time : 0);
    if (plan.what == alloc::end_plan::keep) return true;
    if (plan.what == alloc::end_plan::give_back) {
        slurm_kill_job(r.slurm_job, SIGKILL, 0);
        fail(r, PMIX_ERR_OUT_OF_RESOURCE, plan.reason);
        return false;
    }
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.job_id = r.slurm_job;
    d.time_limit = plan.minutes;
    if (slurm_update_job(&d) != SLURM_SUCCESS) {
        Status st = slurm_failure("end job " + std::to_string(r.slurm_job) + " with job " + std::to_string(owner.job_id));
        slurm_kill_job(r.slurm_job, SIGKILL, 0);
        fail(r, st.code(), st.message() + " (given back: it would outlive the job)");
        return false;
    }
    PMIXCPP_LOG_INFO("allocation request %s: job %u time limit %u -> %u min, to end with job %u", r.id.c_str(),
                     r.slurm_job, started.time_limit, d.time_limit, owner.job_id);
    r.time_limit_min = d.time_limit;
    return true;
}

// --- queries ----------------------------------------------------------------------------------

void alloc_bridge::handle_query(agent::responder to, alloc::agent_request &&req) {
    const std::string requester = req.nspace + ":" + std::to_string(req.rank);
    alloc::info_builder b;
    std::string message;
    for (const auto &key : req.keys) {
        if (key == PMIX_QUERY_ALLOC_STATUS) {
            std::string name = alloc::info_string(req.infos, PMIX_ALLOC_ID).value_or(
                alloc::info_string(req.infos, PMIX_ALLOC_REQ_ID).value_or(""));
            std::string text;
            if (!name.empty()) {
                if (const alloc::request_record *r = _table.find(name)) text = alloc::request_table::status_line(*r);
            } else {
                for (const auto *r : _table.of(requester))
                    text += (text.empty() ? "" : "\n") + alloc::request_table::status_line(*r);
            }
            if (text.empty())
                message = name.empty() ? "no allocation requests from " + requester : "no allocation request " + name;
            else
                b.add_string(PMIX_QUERY_ALLOC_STATUS, text);
        } else if (key == PMIX_TIME_REMAINING) {
            long left = slurm_get_rem_time(_ctx.job_id);
            if (left < 0)
                message = "slurm_get_rem_time: " + slurm_error_text();
            else
                b.add_u32(PMIX_TIME_REMAINING, static_cast<uint32_t>(std::min<long>(left, UINT32_MAX)));
        }
    }
    alloc::agent_reply rep;
    rep.message = message;
    rep.results = b.take();
    answer(to, rep);
}

}  // namespace pmixcpp
