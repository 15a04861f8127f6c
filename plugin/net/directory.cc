// The directory route's logic (directory.h).
#include "directory.h"

#include <algorithm>
#include <cstdio>

#include "log.h"

namespace pmixcpp::net {

using clock_type = std::chrono::steady_clock;

Result<std::unique_ptr<directory>> directory::start(directory_options opts) {
    auto d = create(std::move(opts));
    PMIXCPP_RETURN_IF_ERROR(d);
    PMIXCPP_RETURN_IF_ERROR(d.value()->begin());
    return d;
}

Status directory::begin() {
    if (_worker.joinable()) return Status(PMIX_ERR_BAD_PARAM, "directory: begun already");
    try {
        _worker = std::thread([this] { run(); });
    } catch (const std::exception &e) {
        return Status(PMIX_ERR_OUT_OF_RESOURCE, std::string("directory: no worker thread: ") + e.what());
    }
    return Status::success();
}

Result<std::unique_ptr<directory>> directory::create(directory_options opts) {
    if (opts.nnodes < 2 || opts.self >= opts.nnodes) return Status(PMIX_ERR_BAD_PARAM, "directory: bad node count or self");
    if (!opts.send || !opts.verify || !opts.learned) return Status(PMIX_ERR_BAD_PARAM, "directory: send, verify and learned are required");
    std::unique_ptr<directory> d(new directory(std::move(opts)));
    wire::directory_message m;
    m.from_node = d->_opts.self;
    m.nnodes = d->_opts.nnodes;
    m.record = d->_opts.own_record;
    auto tell = wire::encode_directory_message(m);
    PMIXCPP_RETURN_IF_ERROR(tell, "directory");
    m.kind = wire::directory_kind::ask;
    auto ask = wire::encode_directory_message(m);
    PMIXCPP_RETURN_IF_ERROR(ask, "directory");
    d->_tell = std::move(tell.value());
    d->_ask = std::move(ask.value());
    {
        std::lock_guard<std::mutex> lk(d->_mu);
        for (uint32_t n : d->_opts.neighbours)
            if (n < d->_opts.nnodes && n != d->_opts.self) d->queue(n, wire::directory_kind::tell);
    }
    return d;
}

directory::directory(directory_options opts)
    : _opts(std::move(opts)), _known(_opts.nnodes, false), _asked(_opts.nnodes, false), _given_up(_opts.nnodes, false),
      _done(_opts.nnodes, false) {
    _known[_opts.self] = true;
}

directory::~directory() { stop(); }

void directory::stop() {
    {
        std::lock_guard<std::mutex> lk(_mu);
        _stop = true;
    }
    _cv.notify_all();
    if (_worker.joinable() && _worker.get_id() != std::this_thread::get_id()) _worker.join();
}

std::string directory::name(uint32_t node) const {
    if (node < _opts.node_names.size()) return _opts.node_names[node];
    return "node " + std::to_string(node);
}

void directory::queue(uint32_t node, wire::directory_kind kind) {
    if (node < _done.size() && _done[node]) return;
    auto now = clock_type::now();
    auto [it, fresh] = _out.try_emplace(node, pending{kind, 0, now, now});
    if (!fresh) {
        if (kind == wire::directory_kind::ask) it->second.kind = kind;
        it->second.due = now;  // whatever waited for a retry goes now
    }
}

void directory::need(uint32_t node) {
    {
        std::lock_guard<std::mutex> lk(_mu);
        if (node >= _opts.nnodes || _known[node] || _asked[node] || _given_up[node] || _done[node] || _stop) return;
        _asked[node] = true;
        queue(node, wire::directory_kind::ask);
    }
    _cv.notify_all();
}

void directory::done_with(uint32_t node) {
    std::lock_guard<std::mutex> lk(_mu);
    if (node >= _done.size() || node == _opts.self || _done[node]) return;
    _done[node] = true;
    if (_out.erase(node)) ++_stats.dropped_done;
}

void directory::receive(std::vector<uint8_t> message) {
    {
        std::lock_guard<std::mutex> lk(_mu);
        if (_stop) return;
        if (_inbox.size() >= _opts.max_inbox) {
            ++_stats.dropped;
            PMIXCPP_LOG_WARNING("directory: message dropped: %zu wait already", _inbox.size());
            return;
        }
        _inbox.push_back(std::move(message));
    }
    _cv.notify_all();
}

bool directory::known(uint32_t node) const {
    std::lock_guard<std::mutex> lk(_mu);
    return node < _known.size() && _known[node];
}

directory_stats directory::stats() const {
    std::lock_guard<std::mutex> lk(_mu);
    return _stats;
}

bool directory::wait_idle(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> lk(_mu);
    return _idle_cv.wait_for(lk, limit, [this] {
        if (_busy || !_inbox.empty()) return false;
        auto now = clock_type::now();
        for (auto &[n, p] : _out)
            if (p.due <= now) return false;
        return true;
    });
}

// One message: the record checked for the slot of the node it claims (on this thread: a round
// trip to munged), learnt once, an ask answered.
void directory::handle(const std::vector<uint8_t> &bytes) {
    wire::directory_message m;
    Status st = wire::decode_directory_message(bytes, &m);
    if (st.ok() && m.nnodes != _opts.nnodes)
        st = Status(PMIX_ERR_BAD_PARAM, "a step of " + std::to_string(m.nnodes) + " nodes, not " + std::to_string(_opts.nnodes));
    if (st.ok() && m.from_node == _opts.self) st = Status(PMIX_ERR_BAD_PARAM, "a message from ourselves");
    if (!st.ok()) {
        std::lock_guard<std::mutex> lk(_mu);
        ++_stats.refused;
        PMIXCPP_LOG_ERROR("directory: message refused: %s", st.message().c_str());
        return;
    }
    // Every message's record is checked, also of a node known already: nothing unchecked
    // is acted on (an ask is answered only once its record passed).
    auto r = _opts.verify(m.from_node, m.record);
    bool fresh = false;
    {
        std::lock_guard<std::mutex> lk(_mu);
        if (!r.ok()) {
            ++_stats.refused;
            PMIXCPP_LOG_ERROR("directory: %s claiming %s refused: %s", wire::to_string(m.kind), name(m.from_node).c_str(),
                              r.status().message().c_str());
            return;
        }
        if (!_known[m.from_node]) {
            _known[m.from_node] = fresh = true;
            ++_stats.learned;
            PMIXCPP_LOG_DEBUG("directory: %s of %s: %s", wire::to_string(m.kind), name(m.from_node).c_str(), r->address.c_str());
        }
        // It is up: what waits for it to start goes now (it may not have ours yet); an ask of
        // ours that got there is answered.
        if (auto it = _out.find(m.from_node); it != _out.end()) {
            if (it->second.delivered)
                _out.erase(it);
            else
                it->second.due = clock_type::now();
        }
    }
    if (fresh) _opts.learned(m.from_node, r->address, r->node_key);
    if (m.kind == wire::directory_kind::ask) {
        std::lock_guard<std::mutex> lk(_mu);
        queue(m.from_node, wire::directory_kind::tell);
    }
}

// Every destination that is due, one call per kind; the ones not reached wait again, twice as
// long each time up to max_retry, until give_up.
void directory::send_due(std::unique_lock<std::mutex> &lk) {
    auto now = clock_type::now();
    std::vector<uint32_t> tells, asks;
    std::map<uint32_t, pending> sent;
    for (auto it = _out.begin(); it != _out.end();) {
        if (it->second.due > now) {
            ++it;
            continue;
        }
        if (it->second.delivered) {
            if (_known[it->first]) {  // answered meanwhile
                it = _out.erase(it);
                continue;
            }
            ++_stats.asked_again;
            PMIXCPP_LOG_DEBUG("directory: %s took our ask but has not answered: asked again", name(it->first).c_str());
        }
        (it->second.kind == wire::directory_kind::ask ? asks : tells).push_back(it->first);
        sent.insert(*it);
        it = _out.erase(it);
    }
    if (sent.empty()) return;
    _busy = true;
    lk.unlock();
    std::vector<uint32_t> failed;
    for (auto *group : {&tells, &asks}) {
        if (group->empty()) continue;
        const auto &msg = group == &tells ? _tell : _ask;
        auto f = _opts.send(*group, msg);
        failed.insert(failed.end(), f.begin(), f.end());
    }
    lk.lock();
    _busy = false;
    if (!tells.empty()) ++_stats.send_calls;
    if (!asks.empty()) ++_stats.send_calls;
    _stats.tells_sent += tells.size();
    _stats.asks_sent += asks.size();
    now = clock_type::now();
    std::vector<std::pair<uint32_t, std::string>> never;  // given up, record never came
    auto secs_since = [&now](clock_type::time_point t) {
        char b[32];
        snprintf(b, sizeof(b), "%.1f", std::chrono::duration<double>(now - t).count());
        return std::string(b);
    };
    // The asks that got there wait for their answer (a tell); asked again if it does not come.
    for (uint32_t n : asks) {
        if (std::find(failed.begin(), failed.end(), n) != failed.end() || _known[n] || _done[n]) continue;
        pending p = sent.at(n);
        if (now - p.first > _opts.give_up) {
            std::string why = "node " + std::to_string(n) + " (" + name(n) + ") took the directory ask but never answered it in " +
                              secs_since(p.first) + " s (" + std::to_string(p.attempt + 1) + " asks through slurmd's forwarding)";
            PMIXCPP_LOG_ERROR("directory: %s", why.c_str());
            ++_stats.given_up;
            _given_up[n] = true;
            never.emplace_back(n, std::move(why));
            continue;
        }
        ++p.attempt;
        p.due = now + _opts.answer_wait;
        p.delivered = true;
        _out.try_emplace(n, p);  // queued again meanwhile (a need): that one goes
    }
    for (uint32_t n : failed) {
        auto it = sent.find(n);
        if (it == sent.end() || _done[n]) continue;  // its step ended meanwhile: nothing more for it
        pending p = it->second;
        p.delivered = false;
        if (now - p.first > _opts.give_up) {
            const std::string secs = secs_since(p.first);
            if (_known[n]) {  // it reached us: it is up, only our message to it did not get there
                PMIXCPP_LOG_ERROR("directory: %s not reached with a %s in %s s: given up", name(n).c_str(),
                                  wire::to_string(p.kind), secs.c_str());
                continue;
            }
            std::string why = "node " + std::to_string(n) + " (" + name(n) + ") never answered the directory " +
                               wire::to_string(p.kind) + " after " + secs + " s (" + std::to_string(p.attempt + 1) +
                              " tries through slurmd's forwarding)";
            PMIXCPP_LOG_ERROR("directory: %s", why.c_str());
            ++_stats.given_up;
            _given_up[n] = true;
            never.emplace_back(n, std::move(why));
            continue;
        }
        auto wait = std::min<std::chrono::milliseconds>(_opts.max_retry, _opts.first_retry * (1u << std::min(p.attempt, 10u)));
        ++p.attempt;
        p.due = now + wait;
        ++_stats.retries;
        PMIXCPP_LOG_DEBUG("directory: %s not reached (try %u), again in %lld ms", name(n).c_str(), p.attempt,
                          static_cast<long long>(wait.count()));
        auto [at, fresh] = _out.try_emplace(n, p);
        if (!fresh && p.kind == wire::directory_kind::ask) at->second.kind = p.kind;  // queued again meanwhile
    }
    if (never.empty() || !_opts.unreachable) return;
    _busy = true;
    lk.unlock();
    for (const auto &[n, why] : never) _opts.unreachable(n, why);
    lk.lock();
    _busy = false;
}

void directory::run() {
    std::unique_lock<std::mutex> lk(_mu);
    while (!_stop) {
        if (!_inbox.empty()) {
            auto inbox = std::move(_inbox);
            _inbox.clear();
            _busy = true;
            lk.unlock();
            for (const auto &m : inbox) handle(m);
            lk.lock();
            _busy = false;
            continue;
        }
        auto now = clock_type::now();
        auto next = clock_type::time_point::max();
        for (auto &[n, p] : _out) next = std::min(next, p.due);
        if (next <= now) {
            send_due(lk);
            continue;
        }
        _idle_cv.notify_all();
        if (next == clock_type::time_point::max())
            _cv.wait(lk);
        else
            _cv.wait_until(lk, next);
    }
    _idle_cv.notify_all();
}

}  // namespace pmixcpp::net
