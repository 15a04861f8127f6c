// The topology engine (topology_engine.h): the Gets of PMIX_LOCAL_TOPO, waiting while it is made.
#include "topology_engine.h"

#include <pmix_common.h>

#include <algorithm>
#include <cstring>

#include "log.h"
#include "wire/codec.h"

namespace pmixcpp::server {

topology_engine::topology_engine(std::string nspace, topology_ops ops, reply_sink &sink)
    : _nspace(std::move(nspace)), _ops(std::move(ops)), _sink(sink) {}

void topology_engine::get(const get_waiter &w) {
    if (_xml) {
        answer(w);
        return;
    }
    size_t mine = std::count_if(_waiters.begin(), _waiters.end(), [&](const get_waiter &x) { return x.conn == w.conn; });
    if (mine >= kMaxTopologyWaiters) {
        _sink.reply(w.conn, w.request_id, PMIX_ERR_OUT_OF_RESOURCE,
                    "too many Gets of " + std::string(PMIX_LOCAL_TOPO) + " waiting on this connection");
        return;
    }
    _waiters.push_back(w);
    if (_making) return;
    _making = true;
    Status st = _ops.make([this](Result<std::string> xml) { done(std::move(xml)); });
    if (!st.ok()) done(std::move(st));
}

void topology_engine::drop_connection(uint64_t conn) {
    std::erase_if(_waiters, [&](const get_waiter &w) { return w.conn == conn; });
}

void topology_engine::done(Result<std::string> xml) {
    if (!xml.ok())
        PMIXCPP_LOG_WARNING("%s: the node's topology for %s: %s", _nspace.c_str(), PMIX_LOCAL_TOPO,
                            xml.status().message().c_str());
    _xml = std::move(xml);
    std::vector<get_waiter> waiting;
    waiting.swap(_waiters);
    for (const auto &w : waiting) answer(w);
}

void topology_engine::answer(const get_waiter &w) {
    const Result<std::string> &xml = *_xml;
    if (!xml.ok()) {
        _sink.reply(w.conn, w.request_id, PMIX_ERR_NOT_AVAILABLE, "the node's topology: " + xml.status().message());
        return;
    }
    pmix_info_t info;
    memset(&info, 0, sizeof(info));
    strncpy(info.key, PMIX_LOCAL_TOPO, PMIX_MAX_KEYLEN);
    info.value.type = PMIX_STRING;
    info.value.data.string = const_cast<char *>(xml->c_str());  // borrowed for the encoding
    _sink.reply(w.conn, w.request_id, PMIX_SUCCESS, {},
                [&](wire::Writer &wr) { return wire::encode_info_array(wr, &info, 1); });
}

}  // namespace pmixcpp::server
