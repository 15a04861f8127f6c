#include "slurm_topo.h"

#include <dlfcn.h>
#include <glob.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "log.h"
#include "slurm_topo_layout.h"

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

void *open_first(std::string *tried) {
    std::vector<std::string> names;
    if (const char *p = getenv("PMIXCPP_LIBSLURM"); p != nullptr && *p != '\0') names.push_back(p);
    // the sonames of the releases whose records slurm_topo_layout.h knows, newest first
    for (const char *soname : {"libslurm.so.42", "libslurm.so.41", "libslurm.so.40", "libslurm.so.39",
                               "libslurm.so.38"})
        names.push_back(soname);
    names.push_back("libslurm.so");
    glob_t g{};
    const char *pattern = "{/usr/lib/*-linux-gnu,/usr/lib64,/usr/lib,/usr/local/lib}/libslurm.so.[0-9]*";
    if (glob(pattern, GLOB_BRACE, nullptr, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; ++i) names.push_back(g.gl_pathv[i]);
    globfree(&g);
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
        // Slurm >= 20.11 wants slurm_init() before any other call (reads slurm.conf).
        if (auto init = reinterpret_cast<slurm_init_fn>(dlsym(lib.handle, "slurm_init"))) init(nullptr);
    });
    return lib;
}

std::string str(const char *s) { return s == nullptr ? std::string() : std::string(s); }

}  // namespace

Result<std::vector<switch_record>> load_topology() {
    if (const char *file = getenv("PMIXCPP_TOPOLOGY_FILE"); file != nullptr && *file != '\0') {
        std::ifstream in(file);
        if (!in) return Status(PMIX_ERR_NOT_FOUND, std::string("cannot read PMIXCPP_TOPOLOGY_FILE ") + file);
        std::stringstream ss;
        ss << in.rdbuf();
        return parse_topology_conf(ss.str());
    }
    libslurm &lib = slurm();
    if (!lib.error.empty())
        return Status(lib.unknown_release ? PMIX_ERR_NOT_SUPPORTED : PMIX_ERR_NOT_AVAILABLE, lib.error);
    void *msg = nullptr;
    if (lib.load(&msg) != 0) {
        int err = lib.get_errno ? lib.get_errno() : errno;  // 24.x: errno only
        return Status(PMIX_ERR_NOT_AVAILABLE,
                      std::string("slurm_load_topo failed: ") + (lib.strerror ? str(lib.strerror(err)) : "error"));
    }
    auto out = decode_topo_response(msg, lib.version);
    if (msg != nullptr) lib.free_msg(msg);
    return out;
}

}  // namespace pmixcpp::sched
