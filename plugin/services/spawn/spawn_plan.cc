#include "spawn_plan.h"

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

#include "hostlist.h"
#include "mpmd.h"
#include "log.h"
#include "sys.h"
#include "value.h"

#ifndef PMIXCPP_MPMD_EXEC
#define PMIXCPP_MPMD_EXEC "pmixcpp-mpmd"
#endif

namespace pmixcpp::spawn {

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

}  // namespace pmixcpp::spawn
