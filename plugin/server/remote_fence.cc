// The remote-fence backend: a fence whose ranks span nodes goes through the node collectives
// (plugin/coll) with this node's contribution, and its result comes back to the fence tracker;
// a node transport that cannot work. (The rank data a fence carries: rank_store.h.) Part of the server's class (server_impl.h).
#include "server_impl.h"

#include <algorithm>

namespace pmixcpp::server {

void server_impl::fail_multinode(const std::string &message) {
    _net_error = message;
    const std::string text = "the node transport failed: " + message;
    std::vector<uint64_t> failed;
    for (const auto &[instance, fence] : _remote_fence_nodes) failed.push_back(instance);
    for (uint64_t instance : failed) {
        _remote_fence_nodes.erase(instance);
        if (_coll) _coll->cancel(instance);
        send_fence_outcomes(_fences.remote_done(instance, PMIX_ERR_UNREACH, text));
    }
    for (uint32_t n = 0; n < _step.node_names.size(); ++n)
        if (n != _step.node_id) (void)_dmodex->node_lost(n, text);
    rearm_timer();
}

Status server_impl::start_remote_fence(uint64_t instance, const std::vector<uint32_t> &participants, bool collect) {
    if (!_net || !_coll || !_net_error.empty())
        return Status(PMIX_ERR_NOT_SUPPORTED, "the node transport is not running" +
                                                  (_net_error.empty() ? std::string() : ": " + _net_error));
    std::vector<uint32_t> nodes, local;
    for (uint32_t r : participants) {
        nodes.push_back(_node_of[r]);
        if (is_local(r)) local.push_back(r);
    }
    std::sort(nodes.begin(), nodes.end());
    nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
    for (uint32_t n : nodes)
        if (node_is_lost(n))
            return Status(PMIX_ERR_NODE_DOWN, "node " + _step.node_names.at(n) + " of the fence is lost");
    // A collecting fence of every rank sends what the local ranks committed since the last such
    // fence completed: every node holds the rest already. (A node that failed to store it fetches
    // what it lacks by direct modex, as for any key it does not hold.)
    std::vector<uint32_t> distinct(participants);
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    const bool whole_step = collect && distinct.size() == _step.ntasks && !distinct.empty() &&
                            distinct.back() == _step.ntasks - 1;
    std::vector<uint8_t> blob;
    const uint64_t generation = _kvs.generation();
    if (collect) {
        auto b = _rank_store->encode(local, whole_step ? _whole_step_base : 0);
        PMIXCPP_RETURN_IF_ERROR(b, "fence contribution");
        blob = std::move(b.value());
    }
    _remote_fence_nodes[instance] = {nodes, whole_step ? generation : 0};
    _coll->start(instance, coll::signature_of(participants), std::move(nodes), std::move(blob), collect);
    return Status::success();
}

std::string server_impl::missing_nodes(uint64_t instance) const {
    if (!_coll) return {};
    std::string out;
    for (uint32_t n : _coll->missing(instance))
        out += (out.empty() ? "" : ",") + _step.node_names.at(n);
    if (!_net_error.empty()) out += (out.empty() ? "" : "; ") + ("node transport: " + _net_error);
    else if (_net && !_net->has_peers()) out += (out.empty() ? "" : "; ") + std::string("node addresses never arrived");
    return out;
}

void server_impl::finish_remote_fence(uint64_t instance, std::vector<coll::node_blob> &&result) {
    auto f = _remote_fence_nodes.find(instance);
    if (f == _remote_fence_nodes.end()) return;  // failed meanwhile (a node was lost)
    const uint64_t whole_step_generation = f->second.whole_step_generation;
    _remote_fence_nodes.erase(f);
    pmix_status_t status = PMIX_SUCCESS;
    std::string message;
    std::vector<uint32_t> ranks;
    for (const auto &b : result) {
        if (b.node == _step.node_id) continue;
        Status st = _rank_store->store_encoded(b.node, b.data, &ranks);
        if (!st.ok()) {
            status = st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code();
            message = "data from node " + _step.node_names.at(b.node) + ": " + st.message();
            PMIXCPP_LOG_ERROR("%s: fence %llu: %s", _step.nspace.c_str(), static_cast<unsigned long long>(instance),
                              message.c_str());
        }
    }
    if (status == PMIX_SUCCESS && whole_step_generation > _whole_step_base) _whole_step_base = whole_step_generation;
    send_fence_outcomes(_fences.remote_done(instance, status, message));
    for (uint32_t r : ranks) _dmodex->data_stored(r);  // the Gets of remote ranks wait there
}

}  // namespace pmixcpp::server
