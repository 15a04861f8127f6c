// The Slurm adapter (slurm_adapter.h): dlopen of libslurmfull/libslurm, slurm_load_topo.
#include "slurm_adapter.h"

#include <dlfcn.h>
#include <glob.h>
#include <pthread.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "log.h"
#include "fabric/slurm_topo_layout.h"

namespace pmixcpp::sched {

namespace {

// The response is read by slurm_topo_layout.h, by release.
using load_topo_fn = int (*)(void **);
using free_topo_fn = void (*)(void *);
using api_version_fn = long (*)();
using slurm_init_fn = void (*)(const char *);
using slurm_strerror_fn = char *(*)(int);
using get_errno_fn = int (*)();

struct libslurm {
    void *handle = nullptr;
    load_topo_fn load = nullptr;
    free_topo_fn free_msg = nullptr;
    slurm_strerror_fn strerror = nullptr;
    get_errno_fn get_errno = nullptr;
    uint32_t version = 0;  // the release, from slurm_api_version()
    bool unknown_release = false;
    std::string error;
};

#ifndef PMIXCPP_SLURM_LIBDIR
#define PMIXCPP_SLURM_LIBDIR "/usr/lib/slurm"
#endif

void add_glob(const char *pattern, std::vector<std::string> *names) {
    glob_t g{};
    if (glob(pattern, GLOB_BRACE, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) names->push_back(g.gl_pathv[i]);
    globfree(&g);
}

// libslurmfull.so first: the library of Slurm's own commands, which the plugins that
// slurm_load_topo loads (auth, and from 23.11 on the topology plugin, which needs Slurm's
// internal symbols such as topo_conf) are built against; libslurm.so.N exports the API only.
void *open_first(std::string *tried) {
    std::vector<std::string> names;
    if (const char *p = getenv("PMIXCPP_LIBSLURM"); p != nullptr && *p != '\0') names.push_back(p);
    names.push_back(PMIXCPP_SLURM_LIBDIR "/libslurmfull.so");  // where pmixcpp was built against it
    add_glob("{/usr/lib/*-linux-gnu/slurm-wlm,/usr/lib/*-linux-gnu/slurm,/usr/lib64/slurm,/usr/lib/slurm,"
             "/usr/local/lib/slurm,/usr/local/lib64/slurm}/libslurmfull.so",
             &names);
    // the sonames of the releases whose records slurm_topo_layout.h knows, newest first
    for (const char *soname : {"libslurm.so.42", "libslurm.so.41", "libslurm.so.40", "libslurm.so.39",
                               "libslurm.so.38"})
        names.push_back(soname);
    names.push_back("libslurm.so");
    add_glob("{/usr/lib/*-linux-gnu,/usr/lib64,/usr/lib,/usr/local/lib}/libslurm.so.[0-9]*", &names);
    for (const auto &n : names) {
        void *h = dlopen(n.c_str(), RTLD_NOW | RTLD_GLOBAL);
        if (h != nullptr) return h;
        *tried += (tried->empty() ? "" : "; ") + std::string(dlerror());
    }
    return nullptr;
}

libslurm &slurm() {
    static libslurm lib;
    static std::once_flag once;
    std::call_once(once, [] {
        std::string tried;
        lib.handle = open_first(&tried);
        if (lib.handle == nullptr) {
            lib.error = "cannot load libslurm: " + tried;
            return;
        }
        lib.load = reinterpret_cast<load_topo_fn>(dlsym(lib.handle, "slurm_load_topo"));
        lib.free_msg = reinterpret_cast<free_topo_fn>(dlsym(lib.handle, "slurm_free_topo_info_msg"));
        lib.strerror = reinterpret_cast<slurm_strerror_fn>(dlsym(lib.handle, "slurm_strerror"));
        lib.get_errno = reinterpret_cast<get_errno_fn>(dlsym(lib.handle, "slurm_get_errno"));
        auto api_version = reinterpret_cast<api_version_fn>(dlsym(lib.handle, "slurm_api_version"));
        if (lib.load == nullptr || lib.free_msg == nullptr || api_version == nullptr) {
            lib.error = "libslurm has no slurm_load_topo/slurm_free_topo_info_msg/slurm_api_version";
            return;
        }
        // The release decides the layout of the response, and whether slurm_load_topo takes
        // one argument: a release not known is never called.
        long api = api_version();
        lib.version = slurm_release_of_api(api);
        if (lib.version == 0 || topo_layout_of(lib.version) == topo_layout::unknown) {
            lib.error = "the switch topology of libslurm interface " + std::to_string(api >> 16) +
                        " is not known to pmixcpp (38 to 42: Slurm 22.05 to 24.11)";
            lib.unknown_release = true;
            return;
        }
        // From 23.11 on slurm_load_topo loads the topology plugin, which needs Slurm's internals.
        if (topo_layout_of(lib.version) == topo_layout::v23_11 && dlsym(lib.handle, "topology_g_init") == nullptr) {
            lib.error = "Slurm " + slurm_version_string(lib.version).substr(0, 5) +
                        "'s topology plugin needs libslurmfull.so (not found; PMIXCPP_LIBSLURM=<path>)";
            return;
        }
        // Slurm >= 20.11 wants slurm_init() before any other call (reads slurm.conf).
        if (auto init = reinterpret_cast<slurm_init_fn>(dlsym(lib.handle, "slurm_init"))) init(nullptr);
    });
    return lib;
}

std::string str(const char *s) { return s == nullptr ? std::string() : std::string(s); }

// libslurm writes to slurmctld's socket without MSG_NOSIGNAL: when slurmctld goes away (a
// restart) the write raises SIGPIPE, which would end the scheduler process. For the duration of
// the call SIGPIPE is blocked on this thread and one it raised is taken back (the write fails
// with EPIPE instead).
class sigpipe_guard {
public:
    sigpipe_guard() {
        sigset_t pipe_only;
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        sigset_t pending;
        sigpending(&pending);
        _was_pending = sigismember(&pending, SIGPIPE) == 1;
        _blocked = pthread_sigmask(SIG_BLOCK, &pipe_only, &_old) == 0;
    }
    ~sigpipe_guard() {
        if (!_blocked) return;
        sigset_t pipe_only;
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        if (!_was_pending) {
            const timespec zero{0, 0};
            while (sigtimedwait(&pipe_only, nullptr, &zero) == SIGPIPE) {
            }
        }
        pthread_sigmask(SIG_SETMASK, &_old, nullptr);
    }
    sigpipe_guard(const sigpipe_guard &) = delete;
    sigpipe_guard &operator=(const sigpipe_guard &) = delete;

private:
    sigset_t _old{};
    bool _blocked = false;
    bool _was_pending = false;
};

}  // namespace

namespace {

// A cluster without a switch topology is flat: one vertex per node of slurm.conf
// ($SLURM_CONF, else Slurm's default /etc/slurm/slurm.conf), uniform cost.
Result<std::vector<switch_record>> flat_cluster() {
    const char *env = getenv("SLURM_CONF");
    std::string path = env != nullptr && *env != '\0' ? env : "/etc/slurm/slurm.conf";
    std::ifstream in(path);
    if (!in)
        return Status(PMIX_ERR_NOT_AVAILABLE, "no switch topology, and the nodes of " + path + " cannot be read");
    std::stringstream ss;
    ss << in.rdbuf();
    auto nodes = parse_slurm_conf_nodes(ss.str());
    PMIXCPP_RETURN_IF_ERROR(nodes, path);
    PMIXCPP_LOG_DEBUG("no switch topology: a flat fabric of the %zu nodes of %s", nodes->size(), path.c_str());
    return flat_topology(nodes.value());
}

}  // namespace

Result<std::vector<switch_record>> load_topology() {
    if (const char *file = getenv("PMIXCPP_TOPOLOGY_FILE"); file != nullptr && *file != '\0') {
        std::ifstream in(file);
        if (!in) return Status(PMIX_ERR_NOT_FOUND, std::string("cannot read PMIXCPP_TOPOLOGY_FILE ") + file);
        std::stringstream ss;
        ss << in.rdbuf();
        auto recs = parse_topology_conf(ss.str());
        if (recs.ok() && recs->empty()) return flat_cluster();
        return recs;
    }
    libslurm &lib = slurm();
    if (!lib.error.empty())
        return Status(lib.unknown_release ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NOT_AVAILABLE, lib.error);
    void *msg = nullptr;
    sigpipe_guard no_sigpipe;
    if (lib.load(&msg) != 0) {
        int err = lib.get_errno ? lib.get_errno() : errno;  // 24.x: errno only
        return Status(PMIX_ERR_NOT_AVAILABLE,
                      std::string("slurm_load_topo failed: ") + (lib.strerror ? str(lib.strerror(err)) : "error"));
    }
    auto out = decode_topo_response(msg, lib.version);
    if (msg != nullptr) lib.free_msg(msg);
    if (out.ok() && out->empty()) return flat_cluster();  // topology/none
    return out;
}

}  // namespace pmixcpp::sched
