// The state of PMI-1 and PMI-2 in one process, over the public PMIx API (libpmix.so.2): one
// session, shared by libpmi.so.0 and libpmi2.so.0 (a process uses one of them). Every call returns
// a PMIx status; pmi1.cc and pmi2.cc turn it into their error codes.
//
// The KVS. PMI's key space is one per job: a key put by any rank is got by its name alone (MPICH
// gets "P3-businesscard" without saying that rank 3 put it). PMIx keys belong to a rank. So:
//  - PMI_KVS_Put / PMI2_KVS_Put = PMIx_Put(PMIX_GLOBAL, "pmi:" + key); the session also records
//    the key in its list of this epoch's keys, and keeps the value (a rank's own Gets are local).
//  - PMI_Barrier / PMI2_KVS_Fence = PMIx_Put of the epoch's key directory, "pmixcpp.pmi.dir.<e>"
//    (the keys this rank put since the last fence, one a line; empty when none), PMIx_Commit,
//    PMIx_Fence over the job with PMIX_COLLECT_DATA: every rank's data and directory reach every
//    node, so the Gets that follow are local.
//  - A Get of a key that is not the caller's own looks it up in the key -> rank table; a key not
//    there after a fence makes the session read the directories of the epochs it has not read
//    (one local PMIx_Get per rank and epoch, once), then PMIx_Get of "pmi:" + key from that rank.
//    Of several ranks that put one key, the newest epoch wins, then the lowest rank. A key no rank
//    put is PMIX_ERR_NOT_FOUND at once: the session never asks a rank for a key that rank did not
//    list, so a bad key cannot wait on the server. Before the first fence, only the caller's own
//    keys and PMI_process_mapping are found (PMI makes puts visible at the barrier).
//  - Spawn (PMI_Spawn_multiple, PMI2_Job_Spawn) = PMIx_Spawn; the preput keys, which PMI puts in
//    the children's KVS before they start, travel in the children's environment
//    (PMIXCPP_PMI_PREPUT, hex-encoded pairs) and are read by their session at init: job-level
//    keys of the children's KVS, found by every child, before any fence.
//  - Node attributes (PMI2_Info_PutNodeAttr / GetNodeAttr) are visible on the node at once, with no
//    fence, and their getter does not know who put them: they are PMIx_Publish'ed with
//    PMIX_RANGE_LOCAL (the ranks of the publisher's node) and PMIX_PERSIST_APP, looked up with the
//    same range (PMIX_WAIT when the caller waits for them).
#pragma once

#include <pmix.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>

namespace pmixcpp::pmi {

// Longest key, value and name the libraries accept (PMIx's own bounds, less our prefixes).
inline constexpr size_t kMaxKeyLen = 256;
inline constexpr size_t kMaxValueLen = 1u << 20;
inline constexpr size_t kMaxPortLen = 1024;

class session {
public:
    static session &instance();

    pmix_status_t init();
    pmix_status_t finalize();
    bool initialized();

    const pmix_proc_t &self() const { return _self; }
    uint32_t size() const { return _size; }
    uint32_t universe_size() const { return _universe; }
    uint32_t appnum() const { return _appnum; }
    bool spawned() const { return _spawned; }

    // The ranks on this node, in order.
    pmix_status_t local_ranks(std::vector<uint32_t> *out);
    // PMI_process_mapping of this job (shared/process_mapping.h).
    pmix_status_t process_mapping(std::string *out);

    pmix_status_t put(const char *key, const char *value);
    pmix_status_t commit();
    pmix_status_t fence();
    // nspace NULL or "" = this job.
    pmix_status_t get(const char *nspace, const char *key, std::string *value);

    pmix_status_t put_node_attr(const char *name, const char *value);
    // PMIX_ERR_NOT_FOUND when no rank of this node put it (and `wait` is false).
    pmix_status_t get_node_attr(const char *name, bool wait, std::string *value);
    // A job attribute by its PMI-2 name ("PMI_process_mapping", "universeSize", ...) or PMIx key.
    pmix_status_t job_attr(const char *name, std::string *value);

    pmix_status_t publish(const char *service, const char *port);
    pmix_status_t lookup(const char *service, std::string *port);
    pmix_status_t unpublish(const char *service);

    struct spawn_app {
        std::string cmd;
        std::vector<std::string> args;  // without the command
        int maxprocs = 1;
        std::string cwd;  // info key "wdir"
    };
    // Starts `apps` as one new job whose KVS holds `preput`; its namespace in *nspace.
    pmix_status_t spawn(const std::vector<spawn_app> &apps,
                        const std::vector<std::pair<std::string, std::string>> &preput, std::string *nspace);

    // all = the whole job, else this process only.
    pmix_status_t abort(int code, const char *msg, bool all);

private:
    pmix_status_t read_directories();
    pmix_status_t get_u32(pmix_rank_t rank, const char *key, uint32_t *out);
    pmix_status_t get_string(pmix_rank_t rank, const char *key, std::string *out);

    std::mutex _mu;
    bool _up = false;
    pmix_proc_t _self{};
    uint32_t _size = 0, _universe = 0, _appnum = 0;
    bool _spawned = false;
    // The KVS (see above).
    std::map<std::string, std::string> _own;          // key -> value this rank put
    std::map<std::string, std::string> _preput;       // key -> value the spawning job put for us
    std::vector<std::string> _epoch_keys;             // keys put since the last fence
    uint32_t _epoch = 0;                              // fences completed
    uint32_t _read_epochs = 0;                        // directories read up to this epoch
    struct origin {
        uint32_t epoch, rank;
    };
    std::unordered_map<std::string, origin> _where;  // key -> the rank that put it
};

// Checks shared by both APIs: a key is 1..kMaxKeyLen bytes without a newline.
bool valid_key(const char *key);

// The one C boundary: runs `f`, turning any C++ exception into PMIX_ERROR (bad_alloc: NOMEM).
template <typename F>
pmix_status_t guarded(F &&f) noexcept {
    try {
        return f();
    } catch (const std::bad_alloc &) {
        return PMIX_ERR_NOMEM;
    } catch (...) {
        return PMIX_ERROR;
    }
}

// Copy `s` into buf[len] with its NUL; false if it does not fit.
bool copy_out(const std::string &s, char *buf, int len);

// One line on stderr when PMIXCPP_DEBUG is set: "pmixcpp pmi[rank]: ...".
void debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

}  // namespace pmixcpp::pmi
