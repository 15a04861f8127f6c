#include "multinode.h"

#include <algorithm>

#include "fence_tracker.h"  // server_clock
#include "log.h"

namespace pmixcpp::server {

Result<std::unique_ptr<net::node_transport>> open_node_transport(event_base *base, const step_info &step,
                                                                 const multinode_options &mo,
                                                                 net::transport_options to) {
    to.id = {step.nspace, mo.secret};
    to.bind_address = mo.bind_address;
    to.node_id = step.node_id;
    to.node_names = step.node_names;
    to.eager_connect = mo.eager_connect;
    to.ucx_tls = mo.ucx_tls;
    to.ucx_devices = mo.ucx_devices;
    if (mo.secret.empty()) return Status(PMIX_ERR_NO_PERMISSIONS, "no step secret for the node transport");
    if (mo.ucx) {
        auto t = net::make_ucx_transport(base, to);
        if (t.ok()) return std::move(t.value());
        PMIXCPP_LOG_WARNING("%s: UCX node transport unavailable (%s); using TCP", step.nspace.c_str(),
                            t.status().message().c_str());
    }
    auto t = net::make_tcp_transport(base, to);
    if (!t.ok()) return t.status().with_context("node transport");
    return std::move(t.value());
}

coll::manager_options fence_options(const step_info &step, const multinode_options &mo) {
    coll::manager_options co;
    co.self_node = step.node_id;
    co.nnodes = static_cast<uint32_t>(step.node_names.size());
    co.algo = static_cast<coll::algorithm>(mo.fence_algo);
    co.tree_width = mo.tree_width;
    co.node_groups = mo.node_groups;
    // The shapes of a fence over every node, for the log.
    std::vector<uint32_t> all(mo.node_groups.empty() ? 0 : step.node_names.size());
    for (uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    if (!mo.node_groups.empty()) {
        // The ring's neighbours: switch by switch.
        auto ring = coll::ring_order_of(all, mo.node_groups);
        auto at = std::find(ring.begin(), ring.end(), step.node_id);
        if (at != ring.end() && ring.size() > 1) {
            size_t i = size_t(at - ring.begin()), m = ring.size();
            PMIXCPP_LOG_VERBOSE("%s: ring fence follows the switches: previous %s, next %s", step.nspace.c_str(),
                                step.node_names[ring[(i + m - 1) % m]].c_str(), step.node_names[ring[(i + 1) % m]].c_str());
        }
    }
    if (!mo.node_groups.empty() && !coll::tree_follows_groups(step.node_names.size(), mo.tree_width)) {
        PMIXCPP_LOG_VERBOSE("%s: tree fence over %zu nodes is one level (width %u): switches not used",
                            step.nspace.c_str(), step.node_names.size(), mo.tree_width);
    } else if (!mo.node_groups.empty()) {
        // The tree: nodes under one switch form a subtree.
        coll::tree_links l = coll::tree_links_of(all, step.node_id, mo.tree_width, mo.node_groups);
        std::string kids;
        for (uint32_t c : l.children) kids += (kids.empty() ? "" : ",") + step.node_names[c];
        PMIXCPP_LOG_VERBOSE("%s: tree fence follows the switches: parent %s, children %s", step.nspace.c_str(),
                            l.parent == UINT32_MAX ? "(root)" : step.node_names[l.parent].c_str(),
                            kids.empty() ? "(none)" : kids.c_str());
    }
    co.ring_threshold = mo.ring_threshold;
    return co;
}

void exchange_addresses(const step_info &step, const multinode_options &mo, net::node_transport &net,
                        std::function<void(std::function<void()>)> post,
                        std::function<void(const std::string &message)> failed) {
    if (!mo.bootstrap) {
        std::string why = "no bootstrap to learn the other nodes' addresses";
        PMIXCPP_LOG_ERROR("%s: %s", step.nspace.c_str(), why.c_str());
        failed(why);
        return;
    }
    auto t0 = server_clock::now();
    std::string ns = step.nspace;
    mo.bootstrap(net.address(), [&net, post, failed, ns, t0](Result<std::vector<std::string>> table) {
        auto shared = std::make_shared<Result<std::vector<std::string>>>(std::move(table));
        post([&net, failed, ns, t0, shared] {
            Status st = shared->ok() ? net.set_peers(shared->value()) : shared->status();
            double ms = std::chrono::duration<double, std::milli>(server_clock::now() - t0).count();
            if (!st.ok()) {
                // A step whose tasks all ended before the exchange completed is no failure.
                if (st.code() == PMIX_ERR_JOB_CANCELED)
                    PMIXCPP_LOG_DEBUG("%s: node address exchange stopped after %.1f ms: %s", ns.c_str(), ms,
                                      st.message().c_str());
                else
                    PMIXCPP_LOG_ERROR("%s: node address exchange failed after %.1f ms: %s", ns.c_str(), ms,
                                      st.message().c_str());
                failed(st.message());
                return;
            }
            PMIXCPP_LOG_DEBUG("%s: addresses of %zu nodes known after %.1f ms", ns.c_str(), shared->value().size(), ms);
        });
    });
}

}  // namespace pmixcpp::server
