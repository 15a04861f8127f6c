// The server's key-value store: job data (from the job-data builder) and the data each rank
// committed, with the scope rules of PROTOCOL.md. No I/O; owned by the loop thread.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "status.h"
#include "value.h"
#include "wire/job_layout.h"

namespace pmixcpp::server {

// How the requester relates to the proc whose data it reads.
enum class relation { self, same_node, other_node };
const char *to_string(relation r);

// A deep-copied, owned pmix_value_t (move-only).
class stored_value {
public:
    stored_value() { _v.type = PMIX_UNDEF; }
    ~stored_value() { value_destruct(&_v); }
    stored_value(stored_value &&o) noexcept : _v(o._v) {
        o._v = pmix_value_t{};
        o._v.type = PMIX_UNDEF;
    }
    stored_value &operator=(stored_value &&o) noexcept;
    stored_value(const stored_value &) = delete;
    stored_value &operator=(const stored_value &) = delete;

    static Result<stored_value> copy_of(const pmix_value_t &v);
    // Takes over what `v` owns (no copy); `v` is left empty (PMIX_UNDEF).
    static stored_value adopt(pmix_value_t &v) {
        stored_value out;
        out._v = v;
        v = pmix_value_t{};
        v.type = PMIX_UNDEF;
        return out;
    }
    const pmix_value_t &get() const { return _v; }

private:
    pmix_value_t _v{};
};

class kv_store {
public:
    // Job data of `rank` (PMIX_RANK_WILDCARD = job level): visible to everyone.
    Status add_job_data(uint32_t rank, const pmix_info_t *infos, size_t count);
    // The job data of the ranks add_job_data() did not add, and the job level's pmix.pmap, from
    // the step's layout (the compact job data, plugin/server/jobdata.h): made when first asked
    // for, so the store holds only the ranks someone asked about.
    void set_job_layout(std::shared_ptr<const wire::job_layout> layout);

    // Data committed by `rank`; scopes[i] is the scope of infos[i]. A later commit of a key
    // replaces it. All-or-nothing: on failure nothing changes.
    Status commit(uint32_t rank, const uint8_t *scopes, const pmix_info_t *infos, size_t count);

    // The same as commit() with every scope PMIX_GLOBAL (data another node sent), taking over the
    // values of `infos` instead of copying them (they are left empty).
    Status commit_adopting(uint32_t rank, InfoArray &infos);

    // Is `key` of `rank` visible to a requester with relation `rel`? (job data or committed)
    bool has(uint32_t rank, const std::string &key, relation rel) const;
    // Has `rank` committed anything at all?
    bool has_committed(uint32_t rank) const;

    // Deep copy of every datum of `rank` visible under `rel` (committed data wins over job data
    // of the same key). Without job data: only what the rank committed (what other nodes need).
    // since > 0: only what was committed after generation `since` (no job data); a fence's
    // contribution when every node already holds what came before.
    Result<InfoArray> visible_data(uint32_t rank, relation rel, bool with_job_data = true, uint64_t since = 0) const;

    // What visible_data() copies, borrowed: the values point into the store and stay valid only
    // until it next changes; never free them. For encoding without a copy.
    // since > 0 and `hidden_change`: set when something committed after `since` is not visible
    // under `rel` (a key whose scope changed may have been visible before).
    std::vector<pmix_info_t> visible_view(uint32_t rank, relation rel, bool with_job_data = true,
                                          uint64_t since = 0, bool *hidden_change = nullptr) const;

    // Drop the committed data of `rank` (job data stays).
    void forget_committed(uint32_t rank);

    size_t committed_keys(uint32_t rank) const;

    // Counts the changes: equal generations, equal contents.
    uint64_t generation() const { return _generation; }
    // The generation of the last commit (0: nothing was ever committed, the store holds job data
    // only).
    uint64_t committed_generation() const { return _committed; }
    // The generation of the last forget_committed() that dropped data (0: none): what came after
    // a generation no longer says everything that changed since.
    uint64_t forgotten() const { return _forgotten; }

private:
    struct entry {
        uint8_t scope = PMIX_GLOBAL;
        uint64_t generation = 0;  // the store's generation its commit made
        stored_value value;
    };
    struct rank_data {
        std::map<std::string, stored_value> job;
        std::map<std::string, entry> committed;
    };
    static bool scope_visible(uint8_t scope, relation rel);
    // Add the layout's job data of `rank` if it has none yet (what the store holds does not
    // change for a reader: it is as if it had been added at the start).
    void from_layout(uint32_t rank) const;

    mutable std::unordered_map<uint32_t, rank_data> _ranks;  // mutable: from_layout()
    std::shared_ptr<const wire::job_layout> _layout;
    mutable bool _proc_map_made = false;
    uint64_t _generation = 0;
    uint64_t _forgotten = 0;
    uint64_t _committed = 0;
};

}  // namespace pmixcpp::server
