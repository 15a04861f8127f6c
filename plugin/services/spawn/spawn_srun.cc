#include "spawn_srun.h"
#include "../sessions/session_codec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <cerrno>
#include <optional>
#include <chrono>
#include <cstring>

#include "../../agent/proto/agent_io.h"
#include "hostlist.h"
#include "mpmd.h"
#include "log.h"
#include "sys.h"
#include "value.h"

extern char **environ;

#ifndef PMIXCPP_MPMD_EXEC
#define PMIXCPP_MPMD_EXEC "pmixcpp-mpmd"
#endif

namespace pmixcpp::spawn {

// ------------------------------------------------------------------------------------------
// Messages: u32 magic, str parent nspace, u32 parent rank, spawn_request | i32 status, str message, str nspace

Result<std::vector<uint8_t>> encode_request(const agent_spawn_request &r) {
    wire::Writer w;
    w.put_u32(kSpawnMagic);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(r.parent_nspace));
    w.put_u32(r.parent_rank);
    PMIXCPP_RETURN_IF_ERROR(wire::encode(w, r.request));
    return w.data();
}

Result<std::vector<uint8_t>> encode_watch(const std::string &child_nspace) {
    wire::Writer w;
    w.put_u32(kWatchMagic);
    PMIXCPP_RETURN_IF_ERROR(w.put_string(child_nspace));
    return w.data();
}

bool is_watch_body(std::span<const uint8_t> body) {
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0;
    return r.get_u32(&magic).ok() && magic == kWatchMagic;
}

bool is_spawn_body(std::span<const uint8_t> body) {
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0;
    return r.get_u32(&magic).ok() && magic == kSpawnMagic;
}

Status decode_request(std::span<const uint8_t> body, agent_spawn_request *out) {
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&magic));
    if (magic != kSpawnMagic) return Status(PMIX_ERR_UNPACK_FAILURE, "not a spawn request");
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&out->parent_nspace, PMIX_MAX_NSLEN));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&out->parent_rank));
    PMIXCPP_RETURN_IF_ERROR(wire::decode(r, &out->request));
    return r.expect_end();
}

agent::reply to_reply(const agent_spawn_reply &r) {
    return agent::reply{r.status, r.message, std::vector<uint8_t>(r.nspace.begin(), r.nspace.end())};
}

Status from_reply(const agent::reply &in, agent_spawn_reply *out) {
    if (in.body.size() > PMIX_MAX_NSLEN || std::find(in.body.begin(), in.body.end(), 0) != in.body.end())
        return Status(PMIX_ERR_BAD_PARAM, "spawn reply: bad namespace");
    out->status = in.status;
    out->message = in.message;
    out->nspace.assign(in.body.begin(), in.body.end());
    return Status::success();
}

// ------------------------------------------------------------------------------------------
// The plan

namespace {


Result<std::string> string_of(const pmix_info_t &i) {
    if (i.value.type != PMIX_STRING || i.value.data.string == nullptr)
        return Status(PMIX_ERR_BAD_PARAM, key_of(i) + " must be a string");
    return std::string(i.value.data.string);
}

bool all_digits(const std::string &s) {
    return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// "N:node" (PMIX_PPR) or "ppr:N:node" (PMIX_MAPBY) -> N
std::optional<std::string> ppr_per_node(std::string s) {
    if (s.rfind("ppr:", 0) == 0) s = s.substr(4);
    auto colon = s.find(':');
    if (colon == std::string::npos) return std::nullopt;
    std::string n = s.substr(0, colon), what = s.substr(colon + 1);
    if (!all_digits(n) || what.rfind("node", 0) != 0) return std::nullopt;
    return n;
}

// What one list of infos asks for: the job's (every app) or one app's.
struct info_scope {
    std::string cwd;
    std::vector<std::string> env;  // KEY=VALUE
    std::string hosts;             // a Slurm host list, "" = anywhere in the allocation
};

Status apply_info(const pmix_info_t &i, spawn_plan *p, info_scope *scope, std::vector<std::string> *opts,
                  std::string *target) {
    const std::string key = key_of(i);
    const bool required = (i.flags & PMIX_INFO_REQD) != 0;
    if (key == PMIX_SPAWN_TARGET || key == PMIX_ALLOC_ID) {
        // one allocation: a string, or an array of one string (one srun cannot span two jobs)
        const pmix_value_t &v = i.value;
        std::string id;
        if (v.type == PMIX_STRING && v.data.string) id = v.data.string;
        else if (v.type == PMIX_DATA_ARRAY && v.data.darray && v.data.darray->type == PMIX_STRING &&
                 v.data.darray->size == 1 && static_cast<char **>(v.data.darray->array)[0])
            id = static_cast<char **>(v.data.darray->array)[0];
        else if (v.type == PMIX_DATA_ARRAY && v.data.darray && v.data.darray->type == PMIX_STRING &&
                 v.data.darray->size > 1)
            return Status(PMIX_ERR_NOT_SUPPORTED, key + ": a spawn runs in one allocation (one Slurm job)");
        else
            return Status(PMIX_ERR_BAD_PARAM, key + " must be a string (an allocation id)");
        if (!target->empty() && *target != id)
            return Status(PMIX_ERR_BAD_PARAM, "two different target allocations: " + *target + " and " + id);
        *target = id;
    } else if (key == PMIX_SPAWN_CHILD_SEP) {
        if (i.value.type != PMIX_BOOL) return Status(PMIX_ERR_BAD_PARAM, key + " must be a bool");
        p->child_sep = i.value.data.flag;
    } else if (key == PMIX_HOST || key == PMIX_ADD_HOST) {
        auto s = string_of(i);
        PMIXCPP_RETURN_IF_ERROR(s);
        scope->hosts += (scope->hosts.empty() ? "" : ",") + s.value();
    } else if (key == PMIX_WDIR) {
        auto s = string_of(i);
        PMIXCPP_RETURN_IF_ERROR(s);
        scope->cwd = s.value();
    } else if (key == PMIX_PPR || key == PMIX_MAPBY) {
        auto s = string_of(i);
        PMIXCPP_RETURN_IF_ERROR(s);
        std::string v = s.value();
        for (auto &ch : v) ch = static_cast<char>(tolower(ch));
        if (auto n = ppr_per_node(v)) opts->push_back("--ntasks-per-node=" + *n);
        else if (v == "node") opts->push_back("--distribution=cyclic");
        else if (v == "slot" || v == "core" || v == "hwthread" || v == "socket" || v == "numa")
            opts->push_back("--distribution=block");
        else if (required) return Status(PMIX_ERR_NOT_SUPPORTED, key + " \"" + s.value() + "\" cannot be given to srun");
    } else if (key == PMIX_PREFIX) {
        auto s = string_of(i);
        PMIXCPP_RETURN_IF_ERROR(s);
        const char *path = getenv("PATH");
        scope->env.push_back("PATH=" + s.value() + "/bin" + (path ? std::string(":") + path : std::string()));
    } else if (key == PMIX_SET_ENVAR) {
        if (i.value.type != PMIX_ENVAR || i.value.data.envar.envar == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, key + " must be a pmix_envar_t");
        scope->env.push_back(std::string(i.value.data.envar.envar) + "=" +
                             (i.value.data.envar.value ? i.value.data.envar.value : ""));
    } else if (key == PMIX_NOTIFY_PROC_TERMINATION) {
        // the children's servers raise PMIX_EVENT_PROC_TERMINATED for normal exits too
        if (i.value.type == PMIX_BOOL && i.value.data.flag) p->env.push_back("SLURM_PMIXCPP_PROCTERMEVENTS=all");
    } else if (key == PMIX_NOTIFY_PROC_ABNORMAL_TERMINATION) {
        // the default
    } else if (key == PMIX_FWD_STDOUT || key == PMIX_FWD_STDERR || key == PMIX_NOTIFY_COMPLETION ||
               key == PMIX_SPAWNED || key == PMIX_TIMEOUT) {
        // srun forwards the children's output to the parent's srun; completion is not notified
    } else if (required) {
        return Status(PMIX_ERR_NOT_SUPPORTED, "required spawn attribute " + key + " is not supported under Slurm");
    }
    return Status::success();
}

// The PATH an app's command is looked up in: the last PATH= of `env`, "" = srun's own.
std::string path_of(const std::vector<std::string> &env) {
    std::string path;
    for (const auto &e : env)
        if (e.rfind("PATH=", 0) == 0) path = e.substr(5);
    return path;
}

// A relative app directory is relative to the step's (srun's --chdir, else srun's own).
std::string join_dir(const std::string &base, const std::string &dir) {
    if (dir.empty()) return base;
    if (dir[0] == '/' || base.empty()) return dir;
    return base + "/" + dir;
}

// One host per rank (srun --distribution=arbitrary): each app's ranks go round the app's hosts;
// an app that names none uses the job's hosts, else every host some app named.
Result<std::vector<std::string>> rank_hosts(const std::vector<info_scope> &apps,
                                            const std::vector<uint32_t> &nprocs, const std::string &job_hosts) {
    std::string all;
    for (const auto &a : apps)
        if (!a.hosts.empty()) all += (all.empty() ? "" : ",") + a.hosts;
    std::vector<std::string> out;
    for (size_t i = 0; i < apps.size(); ++i) {
        const std::string &list = !apps[i].hosts.empty() ? apps[i].hosts : !job_hosts.empty() ? job_hosts : all;
        auto hosts = hostlist::expand(list);
        if (!hosts.ok()) return Status(PMIX_ERR_BAD_PARAM, "app " + std::to_string(i) + ": bad host list \"" + list +
                                                               "\": " + hosts.status().message());
        if (hosts->empty()) return Status(PMIX_ERR_BAD_PARAM, "app " + std::to_string(i) + ": empty host list");
        for (uint32_t k = 0; k < nprocs[i]; ++k) out.push_back((*hosts)[k % hosts->size()]);
    }
    return out;
}

}  // namespace

bool parse_step_nspace(const std::string &nspace, uint32_t *job, uint32_t *step) {
    static const std::string prefix = "slurm.";  // make_namespace()
    if (nspace.rfind(prefix, 0) != 0) return false;
    std::string rest = nspace.substr(prefix.size());
    auto dot = rest.find('.');
    if (dot == std::string::npos) return false;
    std::string j = rest.substr(0, dot), s = rest.substr(dot + 1);
    if (!all_digits(j) || !all_digits(s) || j.size() > 10 || s.size() > 10) return false;
    uint64_t jv = std::stoull(j), sv = std::stoull(s);
    if (jv > UINT32_MAX || sv > UINT32_MAX) return false;
    *job = static_cast<uint32_t>(jv);
    *step = static_cast<uint32_t>(sv);
    return true;
}

Result<spawn_plan> plan_spawn(const agent_spawn_request &r, uint32_t job_id, const alloc_resolver &resolve) {
    const auto &req = r.request;
    if (req.apps.empty()) return Status(PMIX_ERR_BAD_PARAM, "no apps to spawn");
    spawn_plan p;
    std::vector<std::string> opts;
    std::string target;
    info_scope job;
    for (size_t i = 0; i < req.job_info.size(); ++i)
        PMIXCPP_RETURN_IF_ERROR(apply_info(req.job_info[i], &p, &job, &opts, &target));
    std::vector<info_scope> apps(req.apps.size());
    std::vector<uint32_t> nprocs;
    uint64_t ntasks = 0;
    for (size_t a = 0; a < req.apps.size(); ++a) {
        const auto &app = req.apps[a];
        if (app.maxprocs <= 0) return Status(PMIX_ERR_BAD_PARAM, "maxprocs must be > 0");
        nprocs.push_back(static_cast<uint32_t>(app.maxprocs));
        ntasks += static_cast<uint64_t>(app.maxprocs);
        if (ntasks > INT32_MAX) return Status(PMIX_ERR_BAD_PARAM, "too many processes in one spawn");
        apps[a].cwd = app.cwd;
        for (size_t i = 0; i < app.info.size(); ++i)
            PMIXCPP_RETURN_IF_ERROR(apply_info(app.info[i], &p, &apps[a], &opts, &target));
        for (const auto &e : app.env) {
            if (e.find('=') == std::string::npos || e[0] == '=')
                return Status(PMIX_ERR_BAD_PARAM, "app env entry without '='");
            apps[a].env.push_back(e);
        }
    }
    p.job_id = job_id;
    if (!target.empty()) {
        if (!resolve) return Status(PMIX_ERR_BAD_PARAM, "unknown allocation " + target);
        PMIXCPP_ASSIGN_OR_RETURN(auto jid, resolve(target));
        p.job_id = jid;
    }
    p.env.insert(p.env.end(), job.env.begin(), job.env.end());
    p.env.push_back(std::string(kParentEnv) + "=" + r.parent_nspace + ":" + std::to_string(r.parent_rank));
    // The children share the job's CPUs with their parents (--overlap), as mpirun's spawn does.
    p.argv = {"srun", "--jobid=" + std::to_string(p.job_id), "--mpi=pmixcpp", "--overlap",
              "--ntasks=" + std::to_string(ntasks), "--kill-on-bad-exit=0"};

    if (req.apps.size() == 1) {
        // One app: srun runs it directly; its own infos refine the job's.
        const auto &app = req.apps[0];
        const info_scope &mine = apps[0];
        p.env.insert(p.env.end(), mine.env.begin(), mine.env.end());
        std::string hosts = job.hosts;
        if (!mine.hosts.empty()) hosts += (hosts.empty() ? "" : ",") + mine.hosts;
        std::string cwd = mine.cwd.empty() ? job.cwd : mine.cwd;
        if (!hosts.empty()) {
            p.argv.push_back("--nodelist=" + hosts);
            // The node count too: srun would take the parent's (SLURM_NNODES of its environment)
            // as the most it may use and drop the other named nodes (e.g. those a grow added).
            auto named = hostlist::expand(hosts);
            if (!named.ok()) return Status(PMIX_ERR_BAD_PARAM, "bad host list \"" + hosts + "\": " + named.status().message());
            std::set<std::string> distinct(named->begin(), named->end());
            if (!distinct.empty())
                p.argv.push_back("--nodes=" + std::to_string(std::min<uint64_t>(distinct.size(), ntasks)));
        }
        if (!cwd.empty()) p.argv.push_back("--chdir=" + cwd);
        for (auto &o : opts) p.argv.push_back(std::move(o));
        p.argv.push_back(app.cmd);
        for (size_t i = 1; i < app.argv.size(); ++i) p.argv.push_back(app.argv[i]);
        p.exes.push_back({app.cmd, cwd, path_of(p.env)});
        return p;
    }

    // Several apps: one step whose command is pmixcpp-mpmd, which execs each rank's app.
    std::vector<mpmd_app> table;
    uint32_t first = 0;
    bool per_app_hosts = false;
    std::string sizes;
    for (size_t a = 0; a < req.apps.size(); ++a) {
        const auto &app = req.apps[a];
        mpmd_app m;
        m.first_rank = first;
        m.nprocs = nprocs[a];
        m.cmd = app.cmd;
        m.argv = app.argv.empty() ? std::vector<std::string>{app.cmd} : app.argv;
        m.env = apps[a].env;
        m.cwd = apps[a].cwd;
        first += nprocs[a];
        per_app_hosts |= !apps[a].hosts.empty();
        sizes += (a ? "," : "") + std::to_string(nprocs[a]);
        std::vector<std::string> env = p.env;
        env.insert(env.end(), m.env.begin(), m.env.end());
        p.exes.push_back({m.cmd, join_dir(job.cwd, m.cwd), path_of(env)});
        table.push_back(std::move(m));
    }
    PMIXCPP_ASSIGN_OR_RETURN(auto hex, encode_mpmd(table));
    p.env.push_back(std::string(kMpmdAppsEnv) + "=" + hex);
    p.env.push_back(std::string(kAppSizesEnv) + "=" + sizes);
    if (per_app_hosts) {
        PMIXCPP_ASSIGN_OR_RETURN(auto hosts, rank_hosts(apps, nprocs, job.hosts));
        p.rank_hosts = std::move(hosts);
        p.argv.push_back("--distribution=arbitrary");
    } else if (!job.hosts.empty()) {
        p.argv.push_back("--nodelist=" + job.hosts);
    }
    if (!job.cwd.empty()) p.argv.push_back("--chdir=" + job.cwd);
    for (auto &o : opts)
        if (!per_app_hosts || o.rfind("--distribution=", 0) != 0) p.argv.push_back(std::move(o));
    p.argv.push_back(PMIXCPP_MPMD_EXEC);
    return p;
}

Result<std::string> resolve_exe(const std::string &cmd, const std::string &cwd, const std::string &path_env) {
    auto executable = [](const std::string &f) {
        struct stat st{};
        return stat(f.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(f.c_str(), X_OK) == 0;
    };
    if (cmd.find('/') != std::string::npos) {
        std::string f = cmd[0] == '/' || cwd.empty() ? cmd : cwd + "/" + cmd;
        if (executable(f)) return f;
        return Status(PMIX_ERR_JOB_EXE_NOT_FOUND, "no executable " + f);
    }
    size_t start = 0;
    while (start <= path_env.size()) {
        size_t end = path_env.find(':', start);
        if (end == std::string::npos) end = path_env.size();
        std::string dir = path_env.substr(start, end - start);
        if (dir.empty()) dir = ".";
        if (executable(dir + "/" + cmd)) return dir + "/" + cmd;
        start = end + 1;
    }
    // then the working directory, as srun itself does (and mpirun: MPICH's spawn tests name
    // their own binary without "./")
    if (!cwd.empty() && executable(cwd + "/" + cmd)) return cwd + "/" + cmd;
    return Status(PMIX_ERR_JOB_EXE_NOT_FOUND,
                  "no executable " + cmd + " in PATH " + path_env + (cwd.empty() ? "" : " or " + cwd));
}

// ------------------------------------------------------------------------------------------
// srun side

spawn_launcher::~spawn_launcher() {
    _requests.close();  // requests in flight may still start a child srun
    end_children();
    {
        std::lock_guard<std::mutex> g(_mutex);
        if (!_running.empty())
            PMIXCPP_LOG_VERBOSE("srun waits for %zu spawned step(s) to end", _running.size());
    }
    _reapers.close();
    _watchers.close();  // answered now
}

std::vector<std::pair<std::string, spawn_launcher::child>> spawn_launcher::linked_children() {
    std::vector<std::pair<std::string, child>> out;
    for (const auto &[ns, c] : _running)
        if (!c.separate) out.emplace_back(ns, c);
    return out;
}

size_t spawn_launcher::end_children() {
    std::unique_lock<std::mutex> g(_mutex);
    auto none_left = [this] { return linked_children().empty(); };
    if (none_left()) return 0;
    // Children that are finishing anyway (an MPI job's children end with their parents) are
    // given a moment before anything is signalled.
    _ended_cv.wait_for(g, std::chrono::milliseconds(_times.settle_ms), none_left);
    auto kids = linked_children();
    const size_t signalled = kids.size();
    if (kids.empty()) return 0;
    const std::pair<int, int> rounds[] = {{SIGTERM, _times.term_ms}, {SIGKILL, _times.kill_ms}};
    for (const auto &[sig, wait_ms] : rounds) {
        kids = linked_children();
        if (kids.empty()) return signalled;
        g.unlock();
        for (const auto &[ns, c] : kids) {
            PMIXCPP_LOG_VERBOSE("spawned step %s (srun pid %d): signal %d", ns.c_str(), c.pid, sig);
            if (_kill && c.step != UINT32_MAX) _kill(c.job, c.step, sig);
            else kill(-c.pid, sig);
        }
        g.lock();
        _ended_cv.wait_for(g, std::chrono::milliseconds(wait_ms), none_left);
    }
    // The step did not go away: end its srun, so that this srun is not held any longer.
    for (const auto &[ns, c] : linked_children()) {
        PMIXCPP_LOG_ERROR("spawned step %s did not end after SIGKILL: killing its srun (pid %d)", ns.c_str(), c.pid);
        kill(-c.pid, SIGKILL);
    }
    return signalled;
}

void spawn_launcher::submit(agent::responder answer, std::vector<uint8_t> body) { start(std::move(answer), std::move(body), false); }

void spawn_launcher::submit_watch(agent::responder answer, std::vector<uint8_t> body) { start(std::move(answer), std::move(body), true); }

void spawn_launcher::start(agent::responder answer, std::vector<uint8_t> body, bool is_watch) {
    Status st =
        is_watch
            ? _watchers.start([this, answer, body = std::move(body)]() mutable { watch(std::move(answer), std::move(body)); },
                              "spawned-step watches")
            : _requests.start([this, answer, body = std::move(body)]() mutable { handle(std::move(answer), std::move(body)); },
                              "spawn requests");
    if (!st.ok()) {
        agent_spawn_reply r;
        r.status = st.code();
        r.message = "srun: " + st.message();
        (void)answer.send(to_reply(r));
    }
}

void spawn_launcher::handle(agent::responder answer, std::vector<uint8_t> body) {
    agent_spawn_reply reply;
    agent_spawn_request req;
    if (Status st = decode_request(body, &req); !st.ok()) {
        reply.status = PMIX_ERR_UNPACK_FAILURE;
        reply.message = "malformed spawn request: " + st.message();
    } else {
        reply = launch(req);
    }
    (void)answer.send(to_reply(reply));
}

void spawn_launcher::watch(agent::responder answer, std::vector<uint8_t> body) {
    session::agent_reply reply;
    wire::Reader r(body.data(), body.size());
    uint32_t magic = 0;
    std::string ns;
    if (!r.get_u32(&magic).ok() || magic != kWatchMagic || !r.get_string(&ns, PMIX_MAX_NSLEN).ok() ||
        !r.expect_end().ok()) {
        reply.status = PMIX_ERR_UNPACK_FAILURE;
        reply.message = "malformed spawn watch";
    } else {
        std::unique_lock<std::mutex> g(_mutex);
        _ended_cv.wait(g, [&] { return _ended.count(ns) || !_running.count(ns); });
        auto e = _ended.find(ns);
        if (e == _ended.end()) {
            reply.status = PMIX_ERR_NOT_FOUND;
            reply.message = ns + " is not a step this srun spawned";
        } else {
            wire::Writer w;
            w.put_i32(e->second);
            reply.body = w.data();
        }
    }
    (void)answer.send(reply);
}

agent_spawn_reply spawn_launcher::launch(const agent_spawn_request &r) {
    agent_spawn_reply out;
    auto fail = [&](const Status &st) {
        out.status = st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code();
        out.message = st.message();
        return out;
    };
    auto plan = plan_spawn(r, _job_id, _resolve);
    if (!plan.ok()) return fail(plan.status());
    const char *path = getenv("PATH");
    for (const auto &x : plan->exes) {
        auto exe = resolve_exe(x.cmd, x.cwd, !x.path.empty() ? x.path : path ? path : "/usr/bin:/bin");
        if (!exe.ok()) return fail(exe.status());
    }
    // Ranks placed by the apps' hosts: srun reads the host of each rank from SLURM_HOSTFILE.
    std::string hostfile;
    if (!plan->rank_hosts.empty()) {
        const char *tmp = getenv("TMPDIR");
        std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/pmixcpp-spawn-hosts.XXXXXX";
        int fd = mkstemp(templ.data());
        if (fd < 0) return fail(sys_error("cannot create " + templ, errno, PMIX_ERR_OUT_OF_RESOURCE));
        std::string lines;
        for (const auto &h : plan->rank_hosts) lines += h + "\n";
        bool ok = write(fd, lines.data(), lines.size()) == static_cast<ssize_t>(lines.size());
        close(fd);
        if (!ok) {
            unlink(templ.c_str());
            return fail(Status(PMIX_ERR_OUT_OF_RESOURCE, "cannot write " + templ));
        }
        hostfile = templ;
        plan->env.push_back("SLURM_HOSTFILE=" + hostfile);
    }
    // srun has read it once the step exists (or srun is gone)
    struct unlink_at_end {
        std::string path;
        ~unlink_at_end() {
            if (!path.empty()) unlink(path.c_str());
        }
    } remove_hostfile{hostfile};

    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return fail(sys_error("pipe", errno, PMIX_ERR_OUT_OF_RESOURCE));
    // Everything the child needs, built before fork.
    std::vector<std::string> env_strings;
    static const char *drop[] = {"SLURM_NTASKS=", "SLURM_NPROCS=", "SLURM_NNODES=", "SLURM_NTASKS_PER_NODE=",
                                 "SLURM_TASKS_PER_NODE=", "SLURM_STEP_", "SLURM_DISTRIBUTION=", "SLURM_NODELIST=",
                                 "SLURM_JOB_NODELIST=", "SLURM_SRUN_COMM_", "SLURM_STEPID=", "SLURM_MPI_TYPE=",
                                 "SLURM_CPUS_PER_TASK=", "SLURM_OVERLAP=", "SLURM_EXCLUSIVE=", "SLURM_HOSTFILE=",
                                 "SLURM_ARBITRARY_NODELIST=", kReportFdEnv, kMpmdAppsEnv, kAppSizesEnv,
                                 nullptr};
    for (char **e = environ; e && *e; ++e) {
        bool skip = false;
        for (const char **d = drop; *d && !skip; ++d) skip = strncmp(*e, *d, strlen(*d)) == 0;
        if (!skip) env_strings.emplace_back(*e);
    }
    for (const auto &e : plan->env) {
        std::string name = e.substr(0, e.find('=') + 1);
        std::erase_if(env_strings, [&](const std::string &x) { return x.rfind(name, 0) == 0; });
        env_strings.push_back(e);
    }
    env_strings.push_back(std::string(kReportFdEnv) + "=" + std::to_string(report[1]));
    std::vector<char *> envp, argv;
    for (auto &e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::vector<std::string> args = plan->argv;
    for (auto &a : args) argv.push_back(a.data());
    argv.push_back(nullptr);

    auto t0 = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid < 0) {
        close(report[0]);
        close(report[1]);
        return fail(sys_error("fork", errno, PMIX_ERR_OUT_OF_RESOURCE));
    }
    if (pid == 0) {
        // The child: keep the report pipe across exec, own process group (a signal to the
        // parent's srun is not the children's), then srun.
        fcntl(report[1], F_SETFD, 0);
        setpgid(0, 0);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        execvpe("srun", argv.data(), envp.data());
        _exit(127);
    }
    close(report[1]);
    PMIXCPP_LOG_VERBOSE("spawn for %s:%u: srun pid %d: %s ...", r.parent_nspace.c_str(), r.parent_rank,
                        static_cast<int>(pid), plan->argv.size() > 5 ? plan->argv[4].c_str() : "");
    // Wait for the child srun's plugin to name the step (or for srun to end first).
    std::string got;
    auto deadline = t0 + std::chrono::seconds(kStepStartTimeoutSec);
    bool eof = false;
    while (!eof && got.find('\n') == std::string::npos) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{report[0], POLLIN, 0};
        int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
        if (n < 0 && errno != EINTR) break;
        if (n <= 0) continue;
        char buf[256];
        ssize_t k = read(report[0], buf, sizeof(buf));
        if (k <= 0) eof = true;
        else got.append(buf, static_cast<size_t>(k));
    }
    close(report[0]);
    auto nl = got.find('\n');
    if (nl != std::string::npos && got.rfind("slurm.", 0) == 0) {
        out.nspace = got.substr(0, nl);
        double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        PMIXCPP_LOG_VERBOSE("spawn for %s:%u: step %s started in %.1f ms", r.parent_nspace.c_str(), r.parent_rank,
                            out.nspace.c_str(), ms);
        // Reap the child srun when it ends; watches of the step learn its exit code.
        std::lock_guard<std::mutex> g(_mutex);
        child c;
        c.pid = pid;
        c.separate = plan->child_sep;
        if (!parse_step_nspace(out.nspace, &c.job, &c.step)) {
            c.job = plan->job_id;
            c.step = UINT32_MAX;  // not a step we can name: end_children signals its srun
        }
        _running[out.nspace] = c;
        Status reaping = _reapers.start(
            [this, pid, ns = out.nspace] {
                int status = 0;
                while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
                }
                int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                PMIXCPP_LOG_VERBOSE("spawned step %s ended (srun status %d)", ns.c_str(), code);
                std::lock_guard<std::mutex> g2(_mutex);
                _running.erase(ns);
                _ended[ns] = code;
                _ended_cv.notify_all();
            },
            "spawned steps");
        if (!reaping.ok()) {
            // A step nobody would reap or end: ended now, and the spawn fails.
            _running.erase(out.nspace);
            kill(-pid, SIGKILL);
            int status = 0;
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            out.status = reaping.code();
            out.message = "spawned step " + out.nspace + " ended at once: " + reaping.message();
            out.nspace.clear();
        }
        return out;
    }
    int status = 0;
    if (!eof) {
        kill(-pid, SIGTERM);
        waitpid(pid, &status, 0);
        return fail(Status(PMIX_ERR_TIMEOUT, "the spawned step did not start within " +
                                                 std::to_string(kStepStartTimeoutSec) + " s"));
    }
    waitpid(pid, &status, 0);
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return fail(Status(code == 127 ? PMIX_ERR_JOB_EXE_NOT_FOUND : PMIX_ERR_JOB_FAILED_TO_LAUNCH,
                       "srun of the spawned step ended with status " + std::to_string(code) +
                           " before the step started (see srun's messages)"));
}

}  // namespace pmixcpp::spawn
