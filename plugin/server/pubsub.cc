#include "pubsub.h"

#include <functional>

#include <algorithm>

namespace pmixcpp::server {

bool pubsub_store::visible(const pubsub_entry &e, const pubsub_requester &who) const {
    switch (e.range) {
    case PMIX_RANGE_PROC_LOCAL: return e.owner == who.rank;
    case PMIX_RANGE_LOCAL: return e.owner_node == who.node;
    default: return true;
    }
}

namespace {

size_t count_found(const std::multimap<std::string, pubsub_entry> &entries, const std::vector<std::string> &keys,
                   const std::function<bool(const pubsub_entry &)> &visible) {
    size_t n = 0;
    for (const auto &k : keys) {
        auto [lo, hi] = entries.equal_range(k);
        for (auto it = lo; it != hi; ++it)
            if (visible(it->second)) {
                ++n;
                break;
            }
    }
    return n;
}

}  // namespace

// The visible entry of each key found, in the order asked; FIRST_READ entries are consumed.
std::vector<pubsub_entry> pubsub_store::collect(const pubsub_requester &who, const std::vector<std::string> &keys) {
    std::vector<pubsub_entry> out;
    for (const auto &k : keys) {
        auto [lo, hi] = _entries.equal_range(k);
        for (auto it = lo; it != hi; ++it) {
            if (!visible(it->second, who)) continue;
            out.push_back(it->second);
            if (it->second.persistence == PMIX_PERSIST_FIRST_READ) {
                _bytes -= it->second.info.size();
                _entries.erase(it);
            }
            break;
        }
    }
    return out;
}

Result<std::vector<lookup_answer>> pubsub_store::publish(std::vector<pubsub_entry> entries) {
    for (size_t i = 0; i < entries.size(); ++i) {
        const auto &e = entries[i];
        pubsub_requester self{e.owner_node, 0, 0, e.owner};
        auto [lo, hi] = _entries.equal_range(e.key);
        for (auto it = lo; it != hi; ++it)
            if (visible(it->second, self) || visible(e, pubsub_requester{it->second.owner_node, 0, 0, it->second.owner}))
                return Status(PMIX_ERR_DUPLICATE_KEY, "key " + e.key + " is already published by rank " +
                                                          std::to_string(it->second.owner));
        for (size_t j = 0; j < i; ++j)
            if (entries[j].key == e.key) return Status(PMIX_ERR_DUPLICATE_KEY, "key " + e.key + " given twice");
    }
    size_t bytes = 0;
    for (const auto &e : entries) bytes += e.info.size();
    if (_bytes + bytes > kPubsubMaxBytes)
        return Status(PMIX_ERR_OUT_OF_RESOURCE, "the step's published data would exceed " +
                                                    std::to_string(kPubsubMaxBytes >> 20) + " MiB");
    for (auto &e : entries) {
        _bytes += e.info.size();
        std::string key = e.key;
        _entries.emplace(std::move(key), std::move(e));
    }
    std::vector<lookup_answer> ready;
    for (auto it = _waiters.begin(); it != _waiters.end();) {
        auto vis = [&](const pubsub_entry &x) { return visible(x, it->who); };
        if (count_found(_entries, it->keys, vis) >= it->wait_for) {
            lookup_answer a;
            a.to = it->who;
            a.found = collect(it->who, it->keys);
            ready.push_back(std::move(a));
            it = _waiters.erase(it);
        } else {
            ++it;
        }
    }
    return ready;
}

std::optional<lookup_answer> pubsub_store::lookup(const pubsub_requester &who, std::vector<std::string> keys,
                                                  size_t wait_for, std::optional<server_clock::time_point> deadline) {
    wait_for = std::min(wait_for, keys.size());
    auto vis = [&](const pubsub_entry &x) { return visible(x, who); };
    if (wait_for > 0 && count_found(_entries, keys, vis) < wait_for) {
        if (_waiters.size() >= kPubsubMaxWaiters) {
            lookup_answer a;
            a.to = who;
            a.status = PMIX_ERR_OUT_OF_RESOURCE;
            a.message = "too many lookups are waiting";
            return a;
        }
        _waiters.push_back({who, std::move(keys), wait_for, deadline});
        return std::nullopt;
    }
    lookup_answer a;
    a.to = who;
    a.found = collect(who, keys);
    if (a.found.empty()) {
        a.status = PMIX_ERR_NOT_FOUND;
        a.message = "no published data for the keys asked";
    }
    return a;
}

size_t pubsub_store::unpublish(uint32_t rank, const std::vector<std::string> &keys) {
    size_t n = 0;
    for (auto it = _entries.begin(); it != _entries.end();) {
        bool match = it->second.owner == rank &&
                     (keys.empty() || std::find(keys.begin(), keys.end(), it->first) != keys.end());
        if (match) {
            _bytes -= it->second.info.size();
            it = _entries.erase(it);
            ++n;
        } else {
            ++it;
        }
    }
    return n;
}

size_t pubsub_store::rank_left(uint32_t rank) {
    size_t n = 0;
    for (auto it = _entries.begin(); it != _entries.end();) {
        if (it->second.owner == rank && it->second.persistence == PMIX_PERSIST_PROC) {
            _bytes -= it->second.info.size();
            it = _entries.erase(it);
            ++n;
        } else {
            ++it;
        }
    }
    return n;
}

std::vector<lookup_answer> pubsub_store::expire(server_clock::time_point now) {
    std::vector<lookup_answer> out;
    for (auto it = _waiters.begin(); it != _waiters.end();) {
        if (it->deadline && *it->deadline <= now) {
            lookup_answer a;
            a.to = it->who;
            a.status = PMIX_ERR_TIMEOUT;
            a.message = "timed out waiting for " + std::to_string(it->wait_for) + " published key(s)";
            out.push_back(std::move(a));
            it = _waiters.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

std::optional<server_clock::time_point> pubsub_store::next_deadline() const {
    std::optional<server_clock::time_point> next;
    for (const auto &w : _waiters)
        if (w.deadline && (!next || *w.deadline < *next)) next = w.deadline;
    return next;
}

}  // namespace pmixcpp::server
