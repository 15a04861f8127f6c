// pmixcpp_info: what this installation of pmixcpp is and can do (like OpenPMIx's pmix_info),
// plus the scheduler-side views: the fabric cost matrix and the hwloc inventory.
//
//   pmixcpp_info                         version, configuration, mpi.conf keys, capabilities
//   pmixcpp_info --fabric [--plane P]    cost matrix of Slurm's switch topology (scheduler mode)
//        [--watch SECONDS] [--until-update]   print fabric events and the updated matrix
//        [--check]                       API checks (round trips, error statuses)
//   pmixcpp_info --fabric --step         the matrix as an application process of a
//                                        `srun --mpi=pmixcpp` step sees it (PMIx_Fabric_register)
//   pmixcpp_info --inventory [--json]    this node's inventory
//   pmixcpp_info --inventory --node NAME [--json]
//                                        node NAME's inventory (srun -w NAME, one task)
//   pmixcpp_info --inventory --cluster [--json] [--fabric]
//                                        every node's inventory, gathered with
//                                        srun -N<nodes> --ntasks-per-node=1 pmixcpp_info --inventory --packed
#include <pmix.h>
#include <hwloc.h>
#include <pmix_server.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "api_list.h"
#include "plugin_config.h"
#include "client/sched/inventory.h"
#include "client/sched/sched.h"
#include "pmixcpp_config.h"
#include "wire/codec.h"

using namespace pmixcpp;

namespace {

struct options {
    bool fabric = false, inventory = false, json = false, packed = false, cluster = false, check = false;
    bool until_update = false, step = false;
    int watch = 0;
    std::string plane, node;
};

void usage() {
    fprintf(stderr,
            "usage: pmixcpp_info [--fabric [--plane P] [--watch S] [--until-update] [--check] | --fabric --step]\n"
            "                    [--inventory [--json] [--cluster | --node NAME] [--packed]]\n");
}

// ---------------------------------------------------------------- JSON
std::string json_string(const std::string &s) {
    std::string o = "\"";
    for (unsigned char c : s) {
        if (c == '"' || c == '\\') o += '\\', o += char(c);
        else if (c < 0x20) { char b[8]; snprintf(b, sizeof b, "\\u%04x", c); o += b; }
        else o += char(c);
    }
    return o + "\"";
}

std::string json_infos(const pmix_info_t *info, size_t n);

std::string json_value(const pmix_value_t &v) {
    char b[64];
    switch (v.type) {
    case PMIX_STRING: return json_string(v.data.string ? v.data.string : "");
    case PMIX_BOOL: return v.data.flag ? "true" : "false";
    case PMIX_UINT8: snprintf(b, sizeof b, "%u", v.data.uint8); return b;
    case PMIX_UINT16: snprintf(b, sizeof b, "%u", v.data.uint16); return b;
    case PMIX_UINT32: snprintf(b, sizeof b, "%u", v.data.uint32); return b;
    case PMIX_UINT64: snprintf(b, sizeof b, "%llu", (unsigned long long)v.data.uint64); return b;
    case PMIX_SIZE: snprintf(b, sizeof b, "%zu", v.data.size); return b;
    case PMIX_INT: snprintf(b, sizeof b, "%d", v.data.integer); return b;
    case PMIX_INT32: snprintf(b, sizeof b, "%d", v.data.int32); return b;
    case PMIX_DATA_ARRAY:
        if (v.data.darray && v.data.darray->type == PMIX_INFO)
            return json_infos(static_cast<const pmix_info_t *>(v.data.darray->array), v.data.darray->size);
        return "null";
    default: return "null";
    }
}

// Distinct keys -> object; one repeated key (a list of like items) -> array.
std::string json_infos(const pmix_info_t *info, size_t n) {
    bool list = n > 1;
    for (size_t i = 1; i < n && list; ++i) list = strncmp(info[i].key, info[0].key, PMIX_MAX_KEYLEN) == 0;
    if (n == 1 && (strcmp(info[0].key, PMIXCPP_INV_NODE) == 0 || strcmp(info[0].key, PMIX_FABRIC_DEVICE) == 0 ||
                   strcmp(info[0].key, PMIXCPP_INV_NUMANODE) == 0 || strcmp(info[0].key, PMIXCPP_INV_CACHE) == 0 ||
                   strcmp(info[0].key, PMIXCPP_INV_GPU) == 0))
        list = true;
    if (n == 0) return "[]";
    std::string o = list ? "[" : "{";
    for (size_t i = 0; i < n; ++i) {
        if (i) o += ", ";
        if (!list) o += json_string(info[i].key) + ": ";
        o += json_value(info[i].value);
    }
    return o + (list ? "]" : "}");
}

void print_text(const pmix_info_t *info, size_t n, int indent) {
    for (size_t i = 0; i < n; ++i) {
        const pmix_value_t &v = info[i].value;
        if (v.type == PMIX_DATA_ARRAY && v.data.darray && v.data.darray->type == PMIX_INFO) {
            printf("%*s%s:\n", indent, "", info[i].key);
            print_text(static_cast<const pmix_info_t *>(v.data.darray->array), v.data.darray->size, indent + 2);
        } else {
            printf("%*s%s: %s\n", indent, "", info[i].key, json_value(v).c_str());
        }
    }
}

// ---------------------------------------------------------------- inventory
struct collected {
    std::mutex lock;
    std::condition_variable cv;
    bool done = false;
    pmix_status_t status = PMIX_SUCCESS;
    InfoArray infos;
};

void collect_cb(pmix_status_t status, pmix_info_t *info, size_t ninfo, void *cbdata, pmix_release_cbfunc_t release,
                void *release_data) {
    auto *c = static_cast<collected *>(cbdata);
    std::lock_guard<std::mutex> g(c->lock);
    c->status = status;
    if (status == PMIX_SUCCESS && ninfo > 0) {
        auto *copy = static_cast<pmix_info_t *>(calloc(ninfo, sizeof(pmix_info_t)));
        if (copy == nullptr) c->status = PMIX_ERR_NOMEM;
        for (size_t i = 0; copy != nullptr && i < ninfo; ++i)
            if (!info_xfer(&copy[i], &info[i]).ok()) c->status = PMIX_ERR_NOMEM;
        if (copy != nullptr) c->infos = InfoArray(copy, ninfo);
    }
    if (release) release(release_data);
    c->done = true;
    c->cv.notify_all();
}

int collect(pmix_info_t *dirs, size_t ndirs, InfoArray *out) {
    collected c;
    pmix_status_t rc = PMIx_server_collect_inventory(dirs, ndirs, collect_cb, &c);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmixcpp_info: PMIx_server_collect_inventory: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    std::unique_lock<std::mutex> g(c.lock);
    c.cv.wait(g, [&] { return c.done; });
    if (c.status != PMIX_SUCCESS) {
        fprintf(stderr, "pmixcpp_info: inventory: %s\n", PMIx_Error_string(c.status));
        return 1;
    }
    *out = std::move(c.infos);
    return 0;
}

std::string inventory_host(const pmix_info_t *info, size_t n) {
    for (size_t i = 0; i < n; ++i)
        if (strcmp(info[i].key, PMIX_HOSTNAME) == 0 && info[i].value.type == PMIX_STRING && info[i].value.data.string)
            return info[i].value.data.string;
    return "unknown";
}

std::string hex(const std::vector<uint8_t> &b) {
    static const char *d = "0123456789abcdef";
    std::string s;
    for (uint8_t x : b) s += d[x >> 4], s += d[x & 15];
    return s;
}

bool unhex(const std::string &s, std::vector<uint8_t> *out) {
    if (s.size() % 2) return false;
    for (size_t i = 0; i < s.size(); i += 2) {
        auto v = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
        int h = v(s[i]), l = v(s[i + 1]);
        if (h < 0 || l < 0) return false;
        out->push_back(uint8_t(h << 4 | l));
    }
    return true;
}

// srun one copy of ourselves per node (or on `one` node only); deliver each node's inventory to
// the scheduler context.
int gather_cluster(const std::string &one = "") {
    FILE *p = nullptr;
    int nodes = 0;
    if (!one.empty()) {
        if (one.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
            std::string::npos) {
            fprintf(stderr, "pmixcpp_info: bad node name '%s'\n", one.c_str());
            return 1;
        }
        nodes = 1;
    } else {
        p = popen("sinfo -h -o %D 2>/dev/null", "r");
        if (p) {
            int n;
            while (fscanf(p, "%d", &n) == 1) nodes += n;
            pclose(p);
        }
    }
    if (nodes <= 0) {
        fprintf(stderr, "pmixcpp_info: sinfo reports no nodes\n");
        return 1;
    }
    char self[4096] = {0};
    if (readlink("/proc/self/exe", self, sizeof self - 1) <= 0) return 1;
    std::string where = one.empty() ? "-N" + std::to_string(nodes) + " --ntasks-per-node=1" : "-N1 -n1 -w " + one;
    std::string cmd = "srun " + where + " --mpi=none '" + self + "' --inventory --packed";
    p = popen(cmd.c_str(), "r");
    if (!p) return 1;
    // Lines "pmixcpp-inventory <node> <i> <n> <hex>": srun may split long lines of concurrent
    // tasks, so each node's blob comes in short numbered chunks.
    char *line = nullptr;
    size_t cap = 0;
    int got = 0;
    std::map<std::string, std::vector<std::string>> parts;
    while (getline(&line, &cap, p) > 0) {
        char node[256], chunk[1100];
        unsigned i = 0, n = 0;
        if (sscanf(line, "pmixcpp-inventory %255s %u %u %1099s", node, &i, &n, chunk) != 4 || n == 0 || i >= n ||
            n > 100000)
            continue;
        auto &v = parts[node];
        if (v.size() != n) v.assign(n, "");
        v[i] = chunk;
    }
    for (const auto &[node, v] : parts) {
        std::string all;
        bool complete = true;
        for (const auto &c : v) complete = complete && !c.empty(), all += c;
        std::vector<uint8_t> bytes;
        InfoArray infos;
        if (!complete || !unhex(all, &bytes) || !wire::decode_info_array_exact(bytes, &infos).ok()) {
            fprintf(stderr, "pmixcpp_info: incomplete inventory from %s\n", node.c_str());
            continue;
        }
        pmix_status_t rc = PMIx_server_deliver_inventory(infos.data(), infos.size(), nullptr, 0, nullptr, nullptr);
        if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED)
            fprintf(stderr, "pmixcpp_info: deliver_inventory: %s\n", PMIx_Error_string(rc));
        else
            ++got;
    }
    free(line);
    int st = pclose(p);
    if (got != nodes) fprintf(stderr, "pmixcpp_info: %d of %d nodes answered (srun status %d)\n", got, nodes, st);
    return got == nodes ? 0 : 1;
}

int do_inventory(const options &o) {
    InfoArray inv;
    if (o.cluster || !o.node.empty()) {
        if (gather_cluster(o.node) != 0) return 1;
        pmix_info_t dir{};
        strncpy(dir.key, PMIXCPP_INV_ALL, PMIX_MAX_KEYLEN);
        dir.value.type = PMIX_BOOL;
        dir.value.data.flag = true;
        if (collect(&dir, 1, &inv) != 0) return 1;
    } else if (collect(nullptr, 0, &inv) != 0) {
        return 1;
    }
    if (o.packed) {
        wire::Writer w;
        if (!wire::encode_info_array(w, inv.data(), inv.size()).ok()) return 1;
        std::string h = hex(w.data()), node = inventory_host(inv.data(), inv.size());
        size_t n = (h.size() + 511) / 512;
        for (size_t i = 0; i < n; ++i)
            printf("pmixcpp-inventory %s %zu %zu %s\n", node.c_str(), i, n, h.substr(i * 512, 512).c_str());
    } else if (o.json) {
        printf("%s\n", json_infos(inv.data(), inv.size()).c_str());
    } else {
        print_text(inv.data(), inv.size(), 0);
    }
    return 0;
}

// ---------------------------------------------------------------- fabric
std::mutex g_ev_lock;
std::atomic<int> g_updates{0};

size_t nverts(const pmix_fabric_t &f);
const pmix_fabric_t *g_watched = nullptr;

// Registered with PMIx_Register_event_handler (PMIX_FABRIC_UPDATE_PENDING and PMIX_FABRIC_UPDATED
// separately). The pending handler completes from another thread half a second later and says
// how many vertices the matrix still had then: the library must not touch it before.
void fabric_event(size_t, pmix_status_t status, const pmix_proc_t *, pmix_info_t[], size_t, pmix_info_t *, size_t,
                  pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata) {
    {
        std::lock_guard<std::mutex> g(g_ev_lock);
        printf("event %s\n", PMIx_Error_string(status));
        fflush(stdout);
    }
    if (status == PMIX_FABRIC_UPDATE_PENDING && g_watched != nullptr) {
        std::thread([cbfunc, cbdata] {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            {
                std::lock_guard<std::mutex> g(g_ev_lock);
                printf("pending handler completes: matrix still has %zu vertices\n", nverts(*g_watched));
                fflush(stdout);
            }
            if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
        }).detach();
        return;
    }
    if (status == PMIX_FABRIC_UPDATED) g_updates++;
    if (cbfunc) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

size_t nverts(const pmix_fabric_t &f) {
    for (size_t i = 0; i < f.ninfo; ++i)
        if (strcmp(f.info[i].key, PMIX_FABRIC_NUM_VERTICES) == 0) return f.info[i].value.data.size;
    return 0;
}

uint16_t **costs(const pmix_fabric_t &f) {
    for (size_t i = 0; i < f.ninfo; ++i)
        if (strcmp(f.info[i].key, PMIX_FABRIC_COST_MATRIX) == 0) return static_cast<uint16_t **>(f.info[i].value.data.ptr);
    return nullptr;
}

void print_matrix(pmix_fabric_t &f) {
    std::lock_guard<std::mutex> g(g_ev_lock);
    size_t n = nverts(f);
    uint16_t **m = costs(f);
    printf("fabric plane %s: %zu vertices\n", f.name ? f.name : "?", n);
    for (uint32_t i = 0; i < n; ++i) {
        pmix_value_t v{};
        char *node = nullptr;
        if (PMIx_server_get_vertex_info(&f, i, &v, &node) != PMIX_SUCCESS) continue;
        std::string dev, sw;
        auto *items = static_cast<pmix_info_t *>(v.data.darray->array);
        for (size_t k = 0; k < v.data.darray->size; ++k) {
            if (strcmp(items[k].key, PMIX_FABRIC_DEVICE_NAME) == 0) dev = items[k].value.data.string;
            if (strcmp(items[k].key, PMIX_FABRIC_SWITCH) == 0) sw = items[k].value.data.string;
        }
        printf("vertex %u node %s device %s switch %s\n", i, node, dev.c_str(), sw.c_str());
        free(node);
        value_destruct(&v);
    }
    printf("cost");
    for (size_t j = 0; j < n; ++j) printf(" %5zu", j);
    printf("\n");
    for (size_t i = 0; i < n; ++i) {
        printf("%4zu", i);
        for (size_t j = 0; j < n; ++j) printf(" %5u", m[i][j]);
        printf("\n");
    }
    fflush(stdout);
}

int check(const char *what, pmix_status_t expected, pmix_status_t got) {
    printf("check %s: %s (%s)\n", what, expected == got ? "ok" : "FAIL", PMIx_Error_string(got));
    return expected == got ? 0 : 1;
}

int fabric_checks(pmix_fabric_t &f) {
    int bad = 0;
    size_t n = nverts(f);
    int trip_bad = 0;
    for (uint32_t i = 0; i < n; ++i) {
        pmix_value_t v{};
        char *node = nullptr;
        uint32_t back = UINT32_MAX;
        if (PMIx_server_get_vertex_info(&f, i, &v, &node) != PMIX_SUCCESS ||
            PMIx_server_get_index(&f, &v, &back) != PMIX_SUCCESS || back != i)
            ++trip_bad;
        free(node);
        value_destruct(&v);
    }
    printf("check vertex/index round trip of %zu vertices: %s\n", n, trip_bad ? "FAIL" : "ok");
    bad += trip_bad != 0;
    pmix_value_t v{};
    char *node = nullptr;
    uint32_t idx = 0;
    bad += check("vertex out of range", PMIX_ERR_BAD_PARAM, PMIx_server_get_vertex_info(&f, uint32_t(n), &v, &node));
    bad += check("vertex info of a NULL fabric", PMIX_ERR_BAD_PARAM, PMIx_server_get_vertex_info(nullptr, 0, &v, &node));
    bad += check("index of a NULL fabric", PMIX_ERR_BAD_PARAM, PMIx_server_get_index(nullptr, &v, &idx));
    bad += check("register a NULL fabric", PMIX_ERR_BAD_PARAM, PMIx_server_register_fabric(nullptr, nullptr, 0));
    pmix_value_t unknown{};
    unknown.type = PMIX_STRING;
    unknown.data.string = const_cast<char *>("no-such-node");
    bad += check("index of an unknown vertex", PMIX_ERR_NOT_FOUND, PMIx_server_get_index(&f, &unknown, &idx));
    pmix_fabric_t other;
    PMIX_FABRIC_CONSTRUCT(&other);
    pmix_info_t plane{};
    strncpy(plane.key, PMIX_NETWORK_PLANE, PMIX_MAX_KEYLEN);
    plane.value.type = PMIX_STRING;
    plane.value.data.string = const_cast<char *>("no-such-plane");
    bad += check("unknown network plane", PMIX_ERR_NOT_FOUND, PMIx_server_register_fabric(&other, &plane, 1));
    // Without a client connection the standard client calls reach the scheduler context.
    bad += check("PMIx_Fabric_register in a scheduler process", PMIX_SUCCESS, PMIx_Fabric_register(&other, nullptr, 0));
    bad += check("PMIx_Fabric_update in a scheduler process", PMIX_SUCCESS, PMIx_Fabric_update(&other));
    bad += check("PMIx_Fabric_deregister in a scheduler process", PMIX_SUCCESS, PMIx_Fabric_deregister(&other));
    bad += check("PMIx_Fabric_deregister twice", PMIX_ERR_BAD_PARAM, PMIx_Fabric_deregister(&other));
    pmix_status_t job_end = PMIX_EVENT_JOB_END;
    bad += check("event handler for a non-fabric event in a scheduler process", PMIX_ERR_NOT_SUPPORTED,
                 PMIx_Register_event_handler(&job_end, 1, nullptr, 0, fabric_event, nullptr, nullptr));
    return bad;
}

// As an application process of a step: PMIx_Init, then the standard client call.
int do_step_fabric() {
    pmix_proc_t me;
    pmix_status_t rc = PMIx_Init(&me, nullptr, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmixcpp_info: PMIx_Init: %s (run it under srun --mpi=pmixcpp)\n", PMIx_Error_string(rc));
        return 1;
    }
    pmix_fabric_t f;
    PMIX_FABRIC_CONSTRUCT(&f);
    rc = PMIx_Fabric_register(&f, nullptr, 0);
    if (rc == PMIX_SUCCESS) {
        print_matrix(f);
        PMIx_Fabric_deregister(&f);
    } else {
        fprintf(stderr, "pmixcpp_info: PMIx_Fabric_register: %s\n", PMIx_Error_string(rc));
    }
    PMIx_Finalize(nullptr, 0);
    return rc == PMIX_SUCCESS ? 0 : 1;
}

int do_fabric(const options &o) {
    pmix_fabric_t f;
    PMIX_FABRIC_CONSTRUCT(&f);
    std::vector<pmix_info_t> dirs(2);
    memset(dirs.data(), 0, dirs.size() * sizeof(pmix_info_t));
    size_t nd = 0;
    // Fabric events through the standard registration (blocking form: returns the reference).
    pmix_status_t pending = PMIX_FABRIC_UPDATE_PENDING, updated = PMIX_FABRIC_UPDATED;
    pmix_status_t ref1 = PMIx_Register_event_handler(&pending, 1, nullptr, 0, fabric_event, nullptr, nullptr);
    pmix_status_t ref2 = PMIx_Register_event_handler(&updated, 1, nullptr, 0, fabric_event, nullptr, nullptr);
    if (ref1 < 0 || ref2 < 0) {
        fprintf(stderr, "pmixcpp_info: PMIx_Register_event_handler: %s\n", PMIx_Error_string(ref1 < 0 ? ref1 : ref2));
        return 1;
    }
    g_watched = &f;
    if (!o.plane.empty()) {
        strncpy(dirs[nd].key, PMIX_NETWORK_PLANE, PMIX_MAX_KEYLEN);
        dirs[nd].value.type = PMIX_STRING;
        dirs[nd++].value.data.string = const_cast<char *>(o.plane.c_str());
    }
    pmix_status_t rc = PMIx_server_register_fabric(&f, dirs.data(), nd);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmixcpp_info: PMIx_server_register_fabric: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    print_matrix(f);
    int bad = o.check ? fabric_checks(f) : 0;
    if (o.watch > 0) {
        auto end = std::chrono::steady_clock::now() + std::chrono::seconds(o.watch);
        int seen = 0;
        while (std::chrono::steady_clock::now() < end) {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
            if (g_updates > seen) {
                seen = g_updates;
                print_matrix(f);
                if (o.until_update) break;
            }
        }
    }
    PMIx_Deregister_event_handler(size_t(ref1), nullptr, nullptr);
    PMIx_Deregister_event_handler(size_t(ref2), nullptr, nullptr);
    g_watched = nullptr;
    PMIx_server_deregister_fabric(&f);
    return bad ? 1 : 0;
}

// ---------------------------------------------------------------- the default report
void print_info() {
    printf("pmixcpp %s\n", PACKAGE_VERSION);
    printf("  library:        %s\n", PMIx_Get_version());
    printf("  plugin:         mpi/pmixcpp (%s/mpi_pmixcpp.so)%s\n", PMIXCPP_PLUGINDIR,
           access(PMIXCPP_PLUGINDIR "/mpi_pmixcpp.so", R_OK) == 0 ? "" : " [not installed]");
    printf("  Slurm:          %s\n", PMIXCPP_SLURM_VERSION);
    printf("configuration\n");
    printf("  prefix:         %s\n", PMIXCPP_PREFIX);
    printf("  plugindir:      %s\n", PMIXCPP_PLUGINDIR);
    printf("  client libdir:  %s\n", PMIXCPP_CLIENT_LIBDIR);
    printf("  compiler:       %s %s\n", PMIXCPP_CXX, PMIXCPP_BUILD_CXXFLAGS);
    printf("  hwloc:          %s (inventory, scheduler mode)\n", HWLOC_VERSION);
    printf("  libslurm:       dlopen at run time, scheduler mode only (PMIXCPP_LIBSLURM)\n");
    printf("mpi.conf keys (default)\n");
    for (const auto &[k, v] : plugin_config{}.printable())
        printf("  %-22s %s   (%s%s)\n", k.c_str(), v.empty() ? "(unset)" : v.c_str(),
               admin_only_key(k) ? "mpi.conf only, not " : "override: ", env_override_name(k).c_str());
    size_t nimpl = 0, nnot = 0;
    std::string impl, notsup;
    for (const char *fn : kApiDeclared) {
        bool no = false;
        for (const char *u : kApiUnsupported) no = no || strcmp(u, fn) == 0;
        (no ? notsup : impl) += std::string("  ") + fn + "\n";
        (no ? nnot : nimpl)++;
    }
    printf("capabilities: %zu PMIx API functions implemented\n%s", nimpl, impl.c_str());
    printf("not supported (PMIX_ERR_NOT_SUPPORTED): %zu\n%s", nnot, notsup.c_str());
}

}  // namespace

int main(int argc, char **argv) {
    options o;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--fabric") o.fabric = true;
        else if (a == "--inventory") o.inventory = true;
        else if (a == "--json") o.json = true;
        else if (a == "--packed") o.packed = true;
        else if (a == "--cluster") o.cluster = true;
        else if (a == "--check") o.check = true;
        else if (a == "--until-update") o.until_update = true;
        else if (a == "--plane" && i + 1 < argc) o.plane = argv[++i];
        else if (a == "--node" && i + 1 < argc) o.node = argv[++i];
        else if (a == "--step") o.step = true;
        else if (a == "--watch" && i + 1 < argc) o.watch = atoi(argv[++i]);
        else if (a == "-h" || a == "--help") { usage(); return 0; }
        else { usage(); return 2; }
    }
    if (!o.fabric && !o.inventory) {
        print_info();
        return 0;
    }
    if (o.fabric && o.step) return do_step_fabric();
    pmix_info_t init{};
    strncpy(init.key, PMIX_SERVER_SCHEDULER, PMIX_MAX_KEYLEN);
    init.value.type = PMIX_BOOL;
    init.value.data.flag = true;
    // A per-node inventory needs no scheduler context.
    bool sched = o.fabric || o.cluster || !o.node.empty();
    pmix_status_t rc = PMIx_server_init(nullptr, sched ? &init : nullptr, sched ? 1 : 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "pmixcpp_info: PMIx_server_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    int ret = 0;
    if (o.inventory) ret = do_inventory(o);
    if (ret == 0 && o.fabric) ret = do_fabric(o);
    PMIx_server_finalize();
    if (o.fabric && o.check) {
        // Without PMIX_SERVER_SCHEDULER the fabric calls are refused.
        pmix_fabric_t f;
        PMIX_FABRIC_CONSTRUCT(&f);
        if (PMIx_server_init(nullptr, nullptr, 0) == PMIX_SUCCESS) {
            ret |= check("register without PMIX_SERVER_SCHEDULER", PMIX_ERR_NOT_SUPPORTED,
                         PMIx_server_register_fabric(&f, nullptr, 0));
            PMIx_server_finalize();
        }
        ret |= check("register before PMIx_server_init", PMIX_ERR_INIT, PMIx_server_register_fabric(&f, nullptr, 0));
    }
    return ret;
}
