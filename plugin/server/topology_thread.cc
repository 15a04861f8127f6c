// PMIX_LOCAL_TOPO: the node's hardware topology as hwloc XML (topology.h), made by a thread of
// its own when a client first asks for it; the Gets that come meanwhile wait. Part of the
// server's class (server_impl.h).
#include "server_impl.h"

namespace pmixcpp::server {

// The node's topology is not in the job data: discovering the I/O devices takes longer than the
// rest of a launch (topology.h), and most steps never ask. The first Get starts its making, the
// Gets that come meanwhile wait for it (a client's pmix.optional Get too: this is the node's own
// data, held by its server, not another node's), later ones are answered at once.
void server_impl::get_topology(const get_waiter &w) {
    if (_topology_xml) {
        answer_topology(w);
        return;
    }
    size_t mine = 0;
    for (const auto &x : _topology_waiters) mine += x.conn == w.conn;
    if (mine >= kMaxTopologyWaiters) {
        fail_get(w, PMIX_ERR_OUT_OF_RESOURCE,
                 "too many Gets of " + std::string(PMIX_LOCAL_TOPO) + " waiting on this connection");
        return;
    }
    _topology_waiters.push_back(w);
    if (_topology_thread.joinable()) return;  // being made
    try {
        _topology_thread = std::thread([this] {
            auto xml = export_node_topology_xml();
            post([this, xml = std::move(xml)]() mutable { topology_made(std::move(xml)); });
        });
    } catch (const std::exception &e) {
        topology_made(Status(PMIX_ERR_OUT_OF_RESOURCE, std::string("cannot start a thread: ") + e.what()));
    }
}

void server_impl::topology_made(Result<std::string> xml) {
    if (!xml.ok())
        PMIXCPP_LOG_WARNING("%s: the node's topology for %s: %s", _step.nspace.c_str(), PMIX_LOCAL_TOPO,
                            xml.status().message().c_str());
    _topology_xml = std::move(xml);
    std::vector<get_waiter> waiting;
    waiting.swap(_topology_waiters);
    for (const auto &w : waiting) answer_topology(w);
}

void server_impl::answer_topology(const get_waiter &w) {
    const Result<std::string> &xml = *_topology_xml;
    if (!xml.ok()) {
        fail_get(w, PMIX_ERR_NOT_AVAILABLE, "the node's topology: " + xml.status().message());
        return;
    }
    pmix_info_t info;
    memset(&info, 0, sizeof(info));
    strncpy(info.key, PMIX_LOCAL_TOPO, PMIX_MAX_KEYLEN);
    info.value.type = PMIX_STRING;
    info.value.data.string = const_cast<char *>(xml->c_str());  // borrowed for the encoding
    send_reply(w.conn, w.request_id, PMIX_SUCCESS, {},
               [&](wire::Writer &wr) { return wire::encode_info_array(wr, &info, 1); });
}

}  // namespace pmixcpp::server
