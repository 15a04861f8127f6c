// Which node connections stay open when their number is capped (PMIxCppNodeConnections). No
// I/O: a transport reports each connection it opens or uses and each that closes; once more
// are open than the cap, the least recently used ones that may close are named, and the
// transport closes them (a closed connection is opened again on the next message to its node).
// A connection the transport must keep -- its handshake or unsent bytes, the ring neighbour it
// watches, requests of ours outstanding there -- is skipped, so the cap is soft: it can be
// exceeded while every connection over it is busy, and the next use closes the surplus.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <unordered_map>
#include <vector>

namespace pmixcpp::net {

class conn_lru {
public:
    // cap 0: no cap.
    explicit conn_lru(size_t cap = 0) : _cap(cap) {}

    size_t cap() const { return _cap; }
    // `node`'s connection was opened or carried a message now: it is the most recent.
    void touch(uint32_t node);
    // `node`'s connection closed (for any reason).
    void closed(uint32_t node);
    bool is_open(uint32_t node) const { return _where.count(node) > 0; }
    size_t open() const { return _order.size(); }
    size_t peak() const { return _peak; }
    uint64_t evictions() const { return _evictions; }
    // The connections to close now so that at most `cap` stay open: least recently used first,
    // never `keep(node)` ones. Each named one is taken as closed (the transport closes it).
    std::vector<uint32_t> evict(const std::function<bool(uint32_t node)> &keep);

private:
    size_t _cap;
    std::list<uint32_t> _order;  // least recently used first
    std::unordered_map<uint32_t, std::list<uint32_t>::iterator> _where;
    size_t _peak = 0;
    uint64_t _evictions = 0;
};

}  // namespace pmixcpp::net
