#include "spawn_srun.h"
#include "../sessions/session_codec.h"
#include "mpmd.h"

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
#include "../service_ids.h"
#include "log.h"
#include "sys.h"
#include "value.h"

extern char **environ;

namespace pmixcpp::spawn {

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

Status spawn_launcher::register_in(agent::service_table &table) {
    PMIXCPP_RETURN_IF_ERROR(table.add(
        services::id_of(services::service::spawn),
        [this](agent::responder answer, std::vector<uint8_t> body) { submit(std::move(answer), std::move(body)); }));
    return table.add(services::id_of(services::service::spawn_watch),
                     [this](agent::responder answer, std::vector<uint8_t> body) { submit_watch(std::move(answer), std::move(body)); });
}

}  // namespace pmixcpp::spawn
