// Client-local key/value data and the PMIx_Get lookup order. No I/O: unit-tested on its own.
//
// Lookup order (first hit wins):
//   1. values stored with PMIx_Store_internal (any proc);
//   2. this process's own Puts (only when the target is this process);
//   3. job data of this namespace, looked up in place in the server's mapped job-data file
//      (JobData): the rank's own entry, then the job-level (PMIX_RANK_WILDCARD) entry;
//   4. the cache of data fetched from the server (unless the caller asks for a refresh);
//   5. a peer of this namespace: the modex snapshot of the last fence, looked up in
//      place in the mapped file (unless the caller asks for a refresh). The cache is emptied
//      at every fence, so what it holds was fetched after the snapshot was written.
// A target rank of PMIX_RANK_UNDEF searches the job level first, then this process.
//
// Threading: the job data is installed once during PMIx_Init (before other threads can see the
// store) and guards its own cache of decoded values; the other tables are guarded by a shared mutex.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <functional>
#include <shared_mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "status.h"
#include "value.h"
#include "wire/frame.h"
#include "wire/job_layout.h"
#include "wire/jobdata.h"
#include "wire/messages.h"

#include <atomic>
#include <memory>
#include <mutex>

namespace pmixcpp::client {

// A pmix_value_t that owns its content and can be moved (shallowly) between tables.
struct OwnedValue {
    pmix_value_t v{};
    OwnedValue() { v.type = PMIX_UNDEF; }
    ~OwnedValue() { value_destruct(&v); }
    OwnedValue(OwnedValue &&o) noexcept : v(o.v) {
        o.v = pmix_value_t{};
        o.v.type = PMIX_UNDEF;
    }
    OwnedValue &operator=(OwnedValue &&o) noexcept;
    OwnedValue(const OwnedValue &) = delete;
    OwnedValue &operator=(const OwnedValue &) = delete;
    // Take over what `src` owns, leaving it PMIX_UNDEF.
    static OwnedValue adopt(pmix_value_t *src);
};

struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
using KeyMap = std::unordered_map<std::string, OwnedValue, StringHash, std::equal_to<>>;

// (namespace, rank, key) -> value.
class ProcStore {
public:
    // Deep copy of `value` under (nspace, rank, key), replacing an older value.
    Status store(std::string_view nspace, pmix_rank_t rank, std::string_view key, const pmix_value_t *value);
    // Same, taking over `value`'s content (left PMIX_UNDEF).
    void adopt(std::string_view nspace, pmix_rank_t rank, std::string_view key, pmix_value_t *value);
    const pmix_value_t *find(std::string_view nspace, pmix_rank_t rank, std::string_view key) const;
    // Every key of one proc (nullptr if none).
    const KeyMap *proc(std::string_view nspace, pmix_rank_t rank) const;
    void erase_proc(std::string_view nspace, pmix_rank_t rank);
    void clear() { _ns.clear(); }
    bool empty() const { return _ns.empty(); }
    // Ranks (of nspace) that have at least one key, unsorted.
    std::vector<pmix_rank_t> ranks(std::string_view nspace) const;

private:
    using RankMap = std::unordered_map<pmix_rank_t, KeyMap>;
    std::unordered_map<std::string, RankMap, StringHash, std::equal_to<>> _ns;
};

// The job-data file (shared/wire/jobdata.h) mapped read-only. A value is decoded from the file the
// first time it is asked for and kept (its address stays valid while the JobData lives); nothing
// else of the file is read, so mapping it costs the same for 2 ranks and for 100000.
// A whole file mapped read-only (the job data; the modex snapshot's memory file, shared by its
// segments).
class FileMapping {
public:
    static Result<std::shared_ptr<const FileMapping>> map(int fd, const std::string &name);
    ~FileMapping();
    FileMapping(const FileMapping &) = delete;
    FileMapping &operator=(const FileMapping &) = delete;
    std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t *>(_addr), _len}; }

private:
    FileMapping() = default;
    void *_addr = nullptr;
    size_t _len = 0;
};

class JobData {
public:
    static Result<std::unique_ptr<JobData>> map(const std::string &path);
    // Map the file open at `fd` (the caller keeps and closes fd); `name` ("job data <path>",
    // "modex snapshot <id>") is for messages.
    static Result<std::unique_ptr<JobData>> map(int fd, const std::string &name);
    // From bytes in memory (tests; a client that received the data otherwise).
    static Result<std::unique_ptr<JobData>> from_bytes(std::vector<uint8_t> bytes);
    // The `length` bytes at `offset` of a mapped file (a segment of the modex snapshot; map() is the
    // whole file), which it keeps mapped.
    static Result<std::unique_ptr<JobData>> segment(std::shared_ptr<const FileMapping> file, uint64_t offset,
                                                    uint64_t length, const std::string &name);
    ~JobData();
    JobData(const JobData &) = delete;
    JobData &operator=(const JobData &) = delete;

    // `key` of `rank` (PMIX_RANK_WILDCARD: job level); nullptr if absent or unreadable (logged).
    const pmix_value_t *find(pmix_rank_t rank, std::string_view key) const;
    // Decode `key` of `rank` straight into *out (empty on entry), keeping nothing: the modex
    // snapshot, whose values are read once each. False if absent or unreadable (logged).
    bool copy(pmix_rank_t rank, std::string_view key, pmix_value_t *out) const;
    // The keys of one rank (views into the file), empty if the rank has no entry.
    std::vector<std::string_view> keys(pmix_rank_t rank) const;
    // Every rank with an entry (PMIX_RANK_WILDCARD excluded), ascending; with a layout, every
    // rank it describes.
    std::vector<pmix_rank_t> ranks() const;
    // Answer the ranks the file does not list from the layout of its job level
    // (wire/job_layout.h; the job-data file of the server's compact form), decoded when first
    // needed. Only for the job data, never for a modex snapshot.
    void use_layout() { _layout_allowed = true; }

private:
    JobData() = default;
    // The layout, decoded on first use (nullptr: none, or it does not decode: logged once).
    const wire::job_layout *layout() const;
    bool _layout_allowed = false;
    mutable std::once_flag _layout_once;
    mutable std::unique_ptr<wire::job_layout> _layout;
    std::vector<uint8_t> _owned;
    std::shared_ptr<const FileMapping> _file;  // mapped: the file it is (a segment of)
    wire::jobdata_view _view;
    mutable std::mutex _lock;
    mutable std::unordered_map<pmix_rank_t, KeyMap> _decoded;
};

enum class lookup_source { none, internal, own, job, cache, snapshot };
const char *to_string(lookup_source s);

class LocalData {
public:
    void set_self(std::string_view nspace, pmix_rank_t rank);
    const std::string &nspace() const { return _nspace; }
    pmix_rank_t rank() const { return _rank; }
    bool is_own_nspace(const char *nspace) const {
        return nspace == nullptr || nspace[0] == '\0' || _nspace == nspace;
    }

    // Install the mapped job data. Call once, before the store is shared between threads.
    void set_jobdata(std::unique_ptr<JobData> job) { _job = std::move(job); }
    // Same, from entries (tests): they are encoded as the server would write them.
    Status load_jobdata(const std::vector<wire::jobdata_entry> &entries);
    // Job data of this namespace (no lock needed: JobData guards itself).
    const pmix_value_t *job_value(pmix_rank_t rank, std::string_view key) const {
        return _job ? _job->find(rank, key) : nullptr;
    }
    std::vector<pmix_rank_t> job_ranks() const { return _job ? _job->ranks() : std::vector<pmix_rank_t>{}; }

    Status store_internal(const pmix_proc_t &proc, std::string_view key, const pmix_value_t *value);
    // PMIx_Put: visible to this process at once; queued for the next commit unless PMIX_INTERNAL.
    Status put(pmix_scope_t scope, std::string_view key, const pmix_value_t *value);
    // Everything put since the last commit (the queue is emptied).
    wire::commit_request take_pending();
    size_t pending_count() const;

    // Replace the cached data of one proc with what a get reply carried (values taken over).
    void cache_proc(const pmix_proc_t &proc, wire::get_reply &reply);
    void clear_cache();

    // The snapshot of the last fence (shared/PROTOCOL.md, "Modex snapshot"): segments
    // (offset, length; oldest first) of the memory file `id` (a sealed file in which each
    // segment has the job-data format). The file's descriptor comes with the first reply that
    // names it. Returns false if it did not and this client has no descriptor of that file:
    // then want_snapshot(). "": none. The file is mapped only when a Get first needs it (a loop
    // of fences maps nothing): map_snapshot() before a lookup. If it cannot be mapped, Gets ask
    // the server as without a snapshot.
    bool set_snapshot(std::string id, wire::FrameDescriptor descriptor,
                      std::vector<std::pair<uint64_t, uint64_t>> segments = {});
    void map_snapshot();
    // A fence left a snapshot to ask the server for: until set_snapshot() the mapped
    // one (older data) is not used.
    void want_snapshot();
    bool snapshot_wanted() const { return _snapshot_wanted.load(); }
    // A snapshot is to be asked for or mapped before it can answer (want_snapshot or set_snapshot).
    bool snapshot_waiting() const { return _snapshot_wanted.load() || _snapshot_pending.load(); }

    // Find `key` for `proc` (nspace "" = this namespace) and deep-copy it into *out (which must
    // be empty). Returns where it was found, lookup_source::none if nowhere.
    Result<lookup_source> lookup(const pmix_proc_t &proc, std::string_view key, bool use_cache,
                                 pmix_value_t *out) const;

    // All keys of a proc visible locally, as a calloc'ed info array (for a Get with a NULL key).
    Result<InfoArray> collect(const pmix_proc_t &proc) const;

private:
    const pmix_value_t *find_locked(std::string_view ns, pmix_rank_t rank, std::string_view key,
                                    bool use_cache, lookup_source *src) const;

    std::string _nspace;
    pmix_rank_t _rank = PMIX_RANK_UNDEF;
    std::unique_ptr<JobData> _job;  // set once by PMIx_Init

    mutable std::shared_mutex _lock;
    ProcStore _internal;
    ProcStore _own;
    ProcStore _cache;
    using segment_list = std::vector<std::pair<uint64_t, uint64_t>>;
    std::vector<std::unique_ptr<const JobData>> _snapshot;  // its segments, mapped, oldest first
    segment_list _mapped_segments;                          // which they are
    std::string _file_id;                                   // the file _file maps
    std::shared_ptr<const FileMapping> _file;
    std::string _next_id;                    // set, not mapped yet: the file
    wire::FrameDescriptor _next_descriptor;  // its descriptor, if not _file's
    segment_list _next_segments;
    std::atomic<bool> _snapshot_pending{false};  // _next_* are set
    std::atomic<bool> _snapshot_wanted{false};   // want_snapshot() was called since the last set
    struct Pending {
        uint8_t scope;
        std::string key;
        OwnedValue value;
    };
    std::vector<Pending> _pending;
};

}  // namespace pmixcpp::client
