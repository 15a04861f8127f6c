#include "multinode.h"

#include <algorithm>

#include "../coll/engines.h"
#include "fence_tracker.h"  // server_clock
#include "log.h"

namespace pmixcpp::server {

Result<std::unique_ptr<net::node_transport>> open_node_transport(event_base *base, const step_info &step,
                                                                 const multinode_options &mo,
                                                                 net::transport_options to) {
    to.id = {step.nspace};
    if (!mo.identity) return Status(PMIX_ERR_NO_PERMISSIONS, "no node identity for the node transport");
    to.node_key = mo.identity->node_key();
    to.bind_address = mo.bind_address;
    if (!mo.static_addresses.empty()) to.listen_port = mo.static_port;
    to.node_id = step.node_id;
    to.node_names = step.node_names;
    to.eager_connect = mo.eager_connect;
    to.ucx_tls = mo.ucx_tls;
    to.ucx_devices = mo.ucx_devices;
    if (mo.ucx && mo.static_addresses.empty()) {
        auto t = net::make_ucx_transport(base, to);
        if (t.ok()) return std::move(t.value());
        PMIXCPP_LOG_WARNING("%s: UCX node transport unavailable (%s); using TCP", step.nspace.c_str(),
                            t.status().message().c_str());
    }
    auto t = net::make_tcp_transport(base, to);
    PMIXCPP_RETURN_IF_ERROR(t, "node transport");
    return std::move(t.value());
}

coll::manager_options fence_options(const step_info &step, const multinode_options &mo) {
    coll::manager_options co;
    co.self_node = step.node_id;
    co.nnodes = static_cast<uint32_t>(step.node_names.size());
    co.algo = mo.fence;
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
    const uint32_t width = coll::tree_width_for(mo.tree_width, step.node_names.size());
    PMIXCPP_LOG_VERBOSE("%s: tree fence width %u over %zu nodes%s", step.nspace.c_str(), width, step.node_names.size(),
                        mo.tree_width ? "" : " (PMIxCppTreeWidth=auto)");
    if (!mo.node_groups.empty() && !coll::tree_follows_groups(step.node_names.size(), width)) {
        PMIXCPP_LOG_VERBOSE("%s: tree fence over %zu nodes is one level (width %u): switches not used",
                            step.nspace.c_str(), step.node_names.size(), width);
    } else if (!mo.node_groups.empty()) {
        // The tree: nodes under one switch form a subtree.
        coll::tree_links l = coll::tree_links_of(all, step.node_id, width, mo.node_groups);
        std::string kids;
        for (uint32_t c : l.children) kids += (kids.empty() ? "" : ",") + step.node_names[c];
        PMIXCPP_LOG_VERBOSE("%s: tree fence follows the switches: parent %s, children %s", step.nspace.c_str(),
                            l.parent == UINT32_MAX ? "(root)" : step.node_names[l.parent].c_str(),
                            kids.empty() ? "(none)" : kids.c_str());
    }
    co.ring_threshold = mo.ring_threshold;
    return co;
}

namespace {

// Static wire-up: our record signed for our computed address; each peer's record checked when its
// listener presents it (tcp transport, on the loop: one credential decode per peer reached, a
// round trip to the local munged), for the slot of that node and the address we computed for it.
void static_wire_up(const step_info &step, const multinode_options &mo, net::node_transport &net,
                    const std::function<void(const std::string &message)> &failed) {
    const std::string &ns = step.nspace;
    auto fail = [&](const std::string &why) {
        PMIXCPP_LOG_ERROR("%s: static wire-up: %s", ns.c_str(), why.c_str());
        failed(why);
    };
    if (!mo.identity) return fail("no node identity");
    if (mo.static_addresses.size() != step.node_names.size() || step.node_id >= mo.static_addresses.size())
        return fail("addresses of " + std::to_string(mo.static_addresses.size()) + " nodes for " +
                    std::to_string(step.node_names.size()));
    if (net.address() != mo.static_addresses[step.node_id])
        return fail("we listen at " + net.address() + ", the others expect us at " + mo.static_addresses[step.node_id]);
    auto record = mo.identity->sign(net.address());
    if (!record.ok()) return fail(record.status().message());
    auto identity = mo.identity;
    auto addresses = mo.static_addresses;
    Status st = net.set_static_peers(
        mo.static_addresses, record.value(),
        [identity, addresses](uint32_t node, std::string_view credential) -> Result<net::auth::key> {
            auto r = identity->verify_record(credential, node);
            PMIXCPP_RETURN_IF_ERROR(r);
            if (node >= addresses.size() || r->address != addresses[node])
                return Status(PMIX_ERR_NO_PERMISSIONS, "record for address " + r->address + ", not " +
                                                           (node < addresses.size() ? addresses[node] : std::string("?")));
            return r->node_key;
        });
    if (!st.ok()) return fail(st.message());
    PMIXCPP_LOG_VERBOSE("%s: static wire-up: %zu nodes at port %u, no address exchange", ns.c_str(),
                        mo.static_addresses.size(), static_cast<unsigned>(mo.static_port));
}

// Directory wire-up: our record to our tree and ring neighbours, any other node's on first need
// (the transport asks), each checked on the directory's thread and handed to the transport on
// the loop.
std::shared_ptr<net::directory> directory_wire_up(const step_info &step, const multinode_options &mo,
                                                  net::node_transport &net,
                                                  const std::function<void(std::function<void()>)> &post,
                                                  const std::function<void(const std::string &message)> &failed) {
    const std::string &ns = step.nspace;
    auto fail = [&](const std::string &why) {
        PMIXCPP_LOG_ERROR("%s: directory wire-up: %s", ns.c_str(), why.c_str());
        failed(why);
        return nullptr;
    };
    if (!mo.identity) return fail("no node identity");
    if (!mo.directory_send || !mo.directory_listen) return fail("no way to reach the other nodes' slurmd");
    auto record = mo.identity->sign(net.address());
    if (!record.ok()) return fail(record.status().message());
    const uint32_t n = static_cast<uint32_t>(step.node_names.size());
    std::vector<uint32_t> all(n);
    for (uint32_t i = 0; i < n; ++i) all[i] = i;
    // The neighbours the fence tree and the liveness ring talk to first.
    coll::tree_links l = coll::tree_links_of(all, step.node_id, coll::tree_width_for(mo.tree_width, n), mo.node_groups);
    std::vector<uint32_t> nb = l.children;
    if (l.parent != UINT32_MAX) nb.push_back(l.parent);
    nb.push_back((step.node_id + 1) % n);
    nb.push_back((step.node_id + n - 1) % n);
    std::sort(nb.begin(), nb.end());
    nb.erase(std::unique(nb.begin(), nb.end()), nb.end());
    nb.erase(std::remove(nb.begin(), nb.end(), step.node_id), nb.end());

    net::directory_options o;
    o.self = step.node_id;
    o.nnodes = n;
    o.own_record = record.value();
    o.neighbours = nb;
    o.node_names = step.node_names;
    o.send = mo.directory_send;
    // Half the collectives' timeout: a node never reached fails the fences with the reason
    // before they time out.
    o.give_up = std::chrono::milliseconds(uint64_t(std::max<uint32_t>(mo.timeout_sec, 2)) * 500);
    o.verify = [identity = mo.identity](uint32_t node, std::string_view rec) -> Result<net::directory_options::checked> {
        auto r = identity->verify_record(rec, node);
        PMIXCPP_RETURN_IF_ERROR(r);
        return net::directory_options::checked{r->address, r->node_key};
    };
    auto t0 = server_clock::now();
    o.learned = [post, &net, ns, t0](uint32_t node, const std::string &address, const net::auth::key &key) {
        post([&net, node, address, key, ns, t0] {
            Status st = net.add_peer(node, address, key);
            double ms = std::chrono::duration<double, std::milli>(server_clock::now() - t0).count();
            if (!st.ok())
                PMIXCPP_LOG_ERROR("%s: directory: node %u refused: %s", ns.c_str(), node, st.message().c_str());
            else
                PMIXCPP_LOG_DEBUG("%s: directory: node %u in use after %.1f ms", ns.c_str(), node, ms);
        });
    };
    // A node never reached whose record never came: lost, with the directory's reason.
    o.unreachable = [post, &net](uint32_t node, const std::string &why) {
        post([&net, node, why] { net.never_known(node, why); });
    };
    auto d = net::directory::create(std::move(o));
    if (!d.ok()) return fail(d.status().message());
    std::shared_ptr<net::directory> dir = std::move(d.value());
    std::weak_ptr<net::directory> weak = dir;
    Status st = mo.directory_listen([weak](std::vector<uint8_t> m) {
        if (auto p = weak.lock()) p->receive(std::move(m));
    });
    if (!st.ok()) return fail(st.message());
    st = net.start_directory([weak](uint32_t node) {
        if (auto p = weak.lock()) p->need(node);
    });
    if (!st.ok()) return fail(st.message());
    st = dir->begin();
    if (!st.ok()) return fail(st.message());
    PMIXCPP_LOG_VERBOSE("%s: directory wire-up: %zu neighbours told, other nodes asked on first need, no address table",
                        ns.c_str(), nb.size());
    return dir;
}

}  // namespace

void exchange_addresses(const step_info &step, const multinode_options &mo, net::node_transport &net,
                        std::function<void(std::function<void()>)> post,
                        std::function<void(const std::string &message)> failed,
                        std::shared_ptr<net::directory> *directory) {
    if (mo.directory) {
        *directory = directory_wire_up(step, mo, net, post, failed);
        return;
    }
    if (!mo.bootstrap) {
        std::string why = "no bootstrap to learn the other nodes' addresses";
        PMIXCPP_LOG_ERROR("%s: %s", step.nspace.c_str(), why.c_str());
        failed(why);
        return;
    }
    auto t0 = server_clock::now();
    std::string ns = step.nspace;
    if (!mo.static_addresses.empty()) {
        static_wire_up(step, mo, net, failed);
        return;
    }
    auto record = mo.identity ? mo.identity->sign(net.address())
                              : Result<std::string>(Status(PMIX_ERR_NO_PERMISSIONS, "no node identity"));
    if (!record.ok()) {
        PMIXCPP_LOG_ERROR("%s: %s", ns.c_str(), record.status().message().c_str());
        failed(record.status().message());
        return;
    }
    // The records are checked on the thread that got the table (one credential decode per peer,
    // a round trip to the local munged each), never on the loop; only verified addresses and
    // keys reach the transport.
    mo.bootstrap(record.value(), [&net, post, failed, ns, t0, identity = mo.identity](
                                     Result<std::vector<std::string>> table) {
        struct verified {
            Status st;
            std::vector<std::string> addresses;
            std::vector<net::auth::key> keys;
        };
        auto v = std::make_shared<verified>();
        if (!table.ok()) {
            v->st = table.status();
        } else {
            auto recs = identity->verify_table(table.value());
            if (!recs.ok()) {
                v->st = Status(PMIX_ERR_NO_PERMISSIONS, "address table refused: " + recs.status().message());
            } else {
                for (auto &r : recs.value()) {
                    v->addresses.push_back(std::move(r.address));
                    v->keys.push_back(r.node_key);
                }
            }
        }
        double verify_ms = std::chrono::duration<double, std::milli>(server_clock::now() - t0).count();
        post([&net, failed, ns, t0, v, verify_ms] {
            Status st = v->st;
            if (st.ok()) {
                // Our own slot: the address we signed is the transport's own.
                std::vector<std::string> addrs = v->addresses;
                st = net.set_peers(addrs, v->keys);
            }
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
            PMIXCPP_LOG_DEBUG("%s: signed records of %zu nodes verified after %.1f ms (table and checks), in use after %.1f ms",
                              ns.c_str(), v->addresses.size(), verify_ms, ms);
        });
    });
}

}  // namespace pmixcpp::server
