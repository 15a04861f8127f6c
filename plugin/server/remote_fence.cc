// The remote-fence backend (remote_fence.h): a fence whose ranks span nodes goes through the node
// collectives (plugin/coll) with this node's contribution, and its result comes back to the fence
// tracker. (The rank data a fence carries: rank_store.h.)
#include "remote_fence.h"

#include <algorithm>

#include "log.h"

namespace pmixcpp::server {

remote_fence_backend::remote_fence_backend(remote_fence_config config, remote_fence_ops ops, const kv_store &kvs,
                                           kvs_rank_store &store, fence_tracker &fences, reply_sink &sink)
    : _cfg(std::move(config)), _ops(std::move(ops)), _kvs(kvs), _store(store), _fences(fences), _sink(sink) {
    _local.assign(_cfg.ntasks, false);
    for (uint32_t r = 0; r < _cfg.ntasks && r < _cfg.node_of.size(); ++r) _local[r] = _cfg.node_of[r] == _cfg.node_id;
}

Status remote_fence_backend::start(uint64_t instance, const std::vector<uint32_t> &participants, bool collect) {
    PMIXCPP_RETURN_IF_ERROR(_ops.transport());
    std::vector<uint32_t> nodes, local;
    for (uint32_t r : participants) {
        if (r >= _cfg.node_of.size() || _cfg.node_of[r] >= _cfg.node_names.size())
            return Status(PMIX_ERR_BAD_PARAM, "rank " + std::to_string(r) + " of the fence has no node");
        nodes.push_back(_cfg.node_of[r]);
        if (_local[r]) local.push_back(r);
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (uint32_t n : nodes)
        if (_ops.node_lost(n)) return Status(PMIX_ERR_NODE_DOWN, "node " + _cfg.node_names.at(n) + " of the fence is lost");
    // A collecting fence of every rank sends what the local ranks committed since the last such
    // fence completed: every node holds the rest already. (A node that failed to store it fetches
    // what it lacks by direct modex, as for any key it does not hold.)
    std::vector<uint32_t> distinct(participants);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const bool whole_step =
        collect && distinct.size() == _cfg.ntasks && !distinct.empty() && distinct.back() == _cfg.ntasks - 1;
    std::vector<uint8_t> blob;
    const uint64_t generation = _kvs.generation();
    if (collect) {
        auto b = _store.encode(local, whole_step ? _whole_step_base : 0);
        PMIXCPP_RETURN_IF_ERROR(b, "fence contribution");
        blob = std::move(b.value());
    }
    _in_flight[instance] = {nodes, whole_step ? generation : 0};
    _ops.start_collective(instance, coll::signature_of(participants), std::move(nodes), std::move(blob), collect);
    return Status::success();
}

std::string remote_fence_backend::describe_missing(uint64_t instance) {
    // A fence timed out on these nodes: are their servers still there? (asked later, by the shell)
    std::vector<uint32_t> missing = _ops.missing(instance);
    if (!missing.empty()) _ops.probe(missing);
    std::string out;
    for (uint32_t n : missing) out += (out.empty() ? "" : ",") + _cfg.node_names.at(n);
    std::string note = _ops.transport_note();
    if (!note.empty()) out += (out.empty() ? "" : "; ") + note;
    return out;
}

void remote_fence_backend::cancel(uint64_t instance) {
    _ops.cancel_collective(instance);
    _in_flight.erase(instance);
}

void remote_fence_backend::finish(uint64_t instance, std::vector<coll::node_blob> &&result) {
    auto f = _in_flight.find(instance);
    if (f == _in_flight.end()) return;  // failed meanwhile (a node was lost)
    const uint64_t whole_step_generation = f->second.whole_step_generation;
    _in_flight.erase(f);
    pmix_status_t status = PMIX_SUCCESS;
    std::string message;
    std::vector<uint32_t> ranks;
    for (const auto &b : result) {
        if (b.node == _cfg.node_id) continue;
        Status st = b.node < _cfg.node_names.size() ? _store.store_encoded(b.node, b.data, &ranks)
                                                    : Status(PMIX_ERR_BAD_PARAM, "no such node");
        if (!st.ok()) {
            status = st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code();
            message = "data from node " +
                      (b.node < _cfg.node_names.size() ? _cfg.node_names[b.node] : std::to_string(b.node)) + ": " +
                      st.message();
            PMIXCPP_LOG_ERROR("%s: fence %llu: %s", _cfg.nspace.c_str(), static_cast<unsigned long long>(instance),
                              message.c_str());
        }
    }
    if (status == PMIX_SUCCESS && whole_step_generation > _whole_step_base) _whole_step_base = whole_step_generation;
    _sink.fence_outcomes(_fences.remote_done(instance, status, message));
    for (uint32_t r : ranks) _ops.data_stored(r);  // the Gets of remote ranks wait there
}

void remote_fence_backend::fail(uint64_t instance, pmix_status_t status, const std::string &text) {
    _in_flight.erase(instance);
    _ops.cancel_collective(instance);
    _sink.fence_outcomes(_fences.remote_done(instance, status, text));
}

size_t remote_fence_backend::node_lost(uint32_t node, const std::string &text) {
    std::vector<uint64_t> failed;
    for (const auto &[instance, f] : _in_flight)
        if (std::binary_search(f.nodes.begin(), f.nodes.end(), node)) failed.push_back(instance);
    for (uint64_t instance : failed) fail(instance, PMIX_ERR_NODE_DOWN, text);
    return failed.size();
}

size_t remote_fence_backend::transport_failed(const std::string &text) {
    std::vector<uint64_t> failed;
    for (const auto &[instance, f] : _in_flight) failed.push_back(instance);
    for (uint64_t instance : failed) fail(instance, PMIX_ERR_UNREACH, text);
    return failed.size();
}

}  // namespace pmixcpp::server
