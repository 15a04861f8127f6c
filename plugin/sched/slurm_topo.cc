#include "slurm_topo.h"

#include <dlfcn.h>
#include <glob.h>

#include <cstdlib>
#include <fstream>
#include <mutex>
#include <sstream>

#include "log.h"

namespace pmixcpp::sched {

namespace {

// Mirror of slurm.h (Slurm 22.05): topo_info_t and topo_info_response_msg_t.
struct slurm_topo_info {
    uint16_t level;
    uint32_t link_speed;
    char *name;
    char *nodes;
    char *switches;
};
struct slurm_topo_response {
    uint32_t record_count;
    slurm_topo_info *topo_array;
};

using load_topo_fn = int (*)(slurm_topo_response **);
using free_topo_fn = void (*)(slurm_topo_response *);
using slurm_init_fn = void (*)(const char *);
using slurm_strerror_fn = char *(*)(int);
using get_errno_fn = int (*)();

struct libslurm {
    void *handle = nullptr;
    load_topo_fn load = nullptr;
    free_topo_fn free_msg = nullptr;
    slurm_strerror_fn strerror = nullptr;
    get_errno_fn get_errno = nullptr;
    std::string error;
};

void *open_first(std::string *tried) {
    std::vector<std::string> names;
    if (const char *p = getenv("PMIXCPP_LIBSLURM"); p != nullptr && *p != '\0') names.push_back(p);
    names.push_back("libslurm.so.38");
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
        if (lib.load == nullptr || lib.free_msg == nullptr) {
            lib.error = "libslurm has no slurm_load_topo/slurm_free_topo_info_msg";
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
    if (!lib.error.empty()) return Status(PMIX_ERR_NOT_AVAILABLE, lib.error);
    slurm_topo_response *msg = nullptr;
    if (lib.load(&msg) != 0) {
        int err = lib.get_errno ? lib.get_errno() : 0;
        return Status(PMIX_ERR_NOT_AVAILABLE,
                      std::string("slurm_load_topo failed: ") + (lib.strerror ? str(lib.strerror(err)) : "error"));
    }
    std::vector<switch_record> out;
    if (msg != nullptr) {
        for (uint32_t i = 0; i < msg->record_count; ++i) {
            const slurm_topo_info &t = msg->topo_array[i];
            out.push_back({str(t.name), t.level, t.link_speed, str(t.nodes), str(t.switches)});
        }
        lib.free_msg(msg);
    }
    return out;
}

}  // namespace pmixcpp::sched
