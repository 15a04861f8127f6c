// The dissemination barrier's message pattern without the engines (sim.h), for node counts whose
// real engines do not fit in this host's memory; test_sim checks it against the real engines.
#include <algorithm>
#include <chrono>
#include <functional>
#include <queue>
#include <string>
#include <vector>

#include "plugin/coll/coll_message.h"
#include "sim.h"

namespace pmixcpp::sim {

fence_result run_dissemination_pattern(const net_params &p, const fence_setup &s) {
    const auto wall0 = std::chrono::steady_clock::now();
    fence_result res;
    if (p.cpus > 0 || s.collect || s.fences != 1) {
        res.error = "the barrier's pattern models one fence without data on nodes with their own CPUs";
        return res;
    }
    const uint32_t n = s.nodes;
    const uint32_t rounds = coll::dissemination_rounds(n);
    // The real message: the 17-byte header and the round (coll_message.cc).
    coll::coll_message probe;
    probe.kind = coll::msg_kind::dissemination;
    const uint64_t size = coll::encode(probe).size();

    // The same event order as run_fence's world: by time, then by when scheduled.
    struct event {
        double t;
        uint64_t seq;
        uint32_t from, to, round;
        bool start;
    };
    auto later = [](const event &a, const event &b) { return a.t > b.t || (a.t == b.t && a.seq > b.seq); };
    std::priority_queue<event, std::vector<event>, decltype(later)> q(later);
    uint64_t seq = 0;
    std::vector<double> cpu_free(n, 0), nic_free(n, 0), done_at(n, -1);
    std::vector<uint32_t> round(n, 0);
    std::vector<std::vector<bool>> heard(n, std::vector<bool>(rounds, false));
    std::vector<bool> started(n, false), sent(n, false);
    std::vector<uint64_t> in_bytes(n, 0);
    auto cpu = [&](uint32_t node, double t, double us) { return cpu_free[node] = std::max(t, cpu_free[node]) + us; };
    auto partner = [&](uint32_t i, uint32_t r, bool to) {
        const uint64_t d = (uint64_t(1) << r) % n;
        return uint32_t(to ? (i + d) % n : (i + n - d) % n);
    };
    // Node i's engine (engines.cc): send round r once r - 1 was heard, done after the last.
    auto advance = [&](uint32_t i, std::vector<uint32_t> &sends) -> bool {
        while (round[i] < rounds) {
            if (!sent[i]) {
                sends.push_back(round[i]);
                sent[i] = true;
            }
            if (!heard[i][round[i]]) return false;
            ++round[i];
            sent[i] = false;
        }
        return true;
    };
    // `in_us` of CPU from t, then the sends in order, then the completion.
    auto after = [&](uint32_t i, double t, double in_us, const std::vector<uint32_t> &sends, bool done) {
        double end = cpu(i, t, in_us);
        for (uint32_t r : sends) {
            end = cpu(i, end, p.send_us);
            nic_free[i] = std::max(end, nic_free[i]) + double(size) / p.bw_Bps * 1e6;
            ++res.messages;
            res.wire_bytes += size;
            res.max_message_bytes = std::max(res.max_message_bytes, size);
            q.push({nic_free[i] + p.lat_us, seq++, i, partner(i, r, true), r, false});
        }
        if (done && done_at[i] < 0) {
            done_at[i] = end + p.client_us / 2;
            ++res.completions;
        }
    };
    for (uint32_t i = 0; i < n; ++i) q.push({0, seq++, i, i, 0, true});
    while (!q.empty()) {
        const event e = q.top();
        q.pop();
        std::vector<uint32_t> sends;
        if (e.start) {
            started[e.to] = true;
            const bool done = advance(e.to, sends);
            after(e.to, e.t, p.client_us / 2 + double(s.ppn - 1) * p.proc_us, sends, done);
            continue;
        }
        ++res.delivered;
        in_bytes[e.to] += size;
        if (e.from != partner(e.to, e.round, false) || heard[e.to][e.round]) {
            if (res.error.empty()) res.error = "node " + std::to_string(e.to) + ": unexpected round " + std::to_string(e.round);
            continue;
        }
        heard[e.to][e.round] = true;
        const bool done = started[e.to] && done_at[e.to] < 0 && advance(e.to, sends);
        after(e.to, e.t, p.recv_us + double(size) * p.byte_ns * 1e-3, sends, done);
    }
    std::vector<double> took;
    for (uint32_t i = 0; i < n; ++i) {
        res.max_node_in_bytes = std::max(res.max_node_in_bytes, in_bytes[i]);
        if (done_at[i] < 0) {
            if (res.error.empty()) res.error = "node " + std::to_string(i) + " did not complete";
            continue;
        }
        took.push_back(done_at[i]);
        std::vector<uint32_t> peers;
        for (uint32_t r = 0; r < rounds; ++r) {
            peers.push_back(partner(i, r, true));
            peers.push_back(partner(i, r, false));
        }
        std::sort(peers.begin(), peers.end());
        peers.erase(std::unique(peers.begin(), peers.end()), peers.end());
        res.max_peers = std::max(res.max_peers, uint32_t(peers.size()));
        res.mean_peers += double(peers.size()) / n;
    }
    if (!took.empty()) {
        res.max_us = *std::max_element(took.begin(), took.end());
        std::nth_element(took.begin(), took.begin() + long(took.size() / 2), took.end());
        res.median_us = took[took.size() / 2];
        res.first_max_us = res.max_us;
    }
    res.ok = res.error.empty();
    res.host_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    return res;
}

}  // namespace pmixcpp::sim
