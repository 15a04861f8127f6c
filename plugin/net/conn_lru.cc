#include "conn_lru.h"

namespace pmixcpp::net {

void conn_lru::touch(uint32_t node) {
    auto it = _where.find(node);
    if (it != _where.end()) {
        _order.splice(_order.end(), _order, it->second);
        return;
    }
    _order.push_back(node);
    _where.emplace(node, std::prev(_order.end()));
    if (_order.size() > _peak) _peak = _order.size();
}

void conn_lru::closed(uint32_t node) {
    auto it = _where.find(node);
    if (it == _where.end()) return;
    _order.erase(it->second);
    _where.erase(it);
}

std::vector<uint32_t> conn_lru::evict(const std::function<bool(uint32_t node)> &keep) {
    std::vector<uint32_t> out;
    if (_cap == 0 || _order.size() <= _cap) return out;
    size_t excess = _order.size() - _cap;
    for (auto it = _order.begin(); it != _order.end() && excess > 0;) {
        const uint32_t node = *it;
        if (keep && keep(node)) {
            ++it;
            continue;
        }
        out.push_back(node);
        _where.erase(node);
        it = _order.erase(it);
        --excess;
        ++_evictions;
    }
    return out;
}

}  // namespace pmixcpp::net
