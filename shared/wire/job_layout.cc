// The step's layout described compactly; see job_layout.h.
#include "wire/job_layout.h"

#include <algorithm>
#include <cstring>

#include "wire/codec.h"

namespace pmixcpp::wire {

namespace {

constexpr uint32_t kLayoutVersion = 1;

Status corrupt(const std::string &what) { return Status(PMIX_ERR_UNPACK_FAILURE, "job layout: " + what); }

// The node and local rank a segment gives its i-th rank.
job_layout::place segment_place(const job_layout::segment &s, uint32_t i) {
    const uint64_t round = uint64_t{s.block} * s.nodes;
    job_layout::place p;
    p.node = s.first_node + static_cast<uint32_t>((i / s.block) % s.nodes);
    p.lrank = s.lbase + static_cast<uint32_t>((i / round) * s.block + i % s.block);
    return p;
}

}  // namespace

Result<job_layout> job_layout::build(std::string nspace, const std::vector<std::string> &node_names,
                                     const std::vector<std::vector<uint32_t>> &node_ranks,
                                     const std::vector<uint32_t> &app_of_rank,
                                     const std::vector<std::string> &app_argv) {
    if (node_names.size() != node_ranks.size())
        return Status(PMIX_ERR_BAD_PARAM, "job layout: " + std::to_string(node_names.size()) + " node names for " +
                                              std::to_string(node_ranks.size()) + " nodes");
    uint64_t total = 0;
    for (const auto &r : node_ranks) total += r.size();
    if (total >= UINT32_MAX) return Status(PMIX_ERR_BAD_PARAM, "job layout: too many ranks");
    const uint32_t n = static_cast<uint32_t>(total);
    job_layout L;
    L.nspace = std::move(nspace);
    L.nranks = n;
    L.nodes = node_names;

    std::vector<uint32_t> node_of(n, UINT32_MAX), lrank_of(n, 0);
    for (uint32_t h = 0; h < node_ranks.size(); ++h)
        for (uint32_t i = 0; i < node_ranks[h].size(); ++i) {
            const uint32_t r = node_ranks[h][i];
            if (r >= n) return Status(PMIX_ERR_BAD_PARAM, "job layout: rank " + std::to_string(r) + " out of range");
            if (node_of[r] != UINT32_MAX)
                return Status(PMIX_ERR_BAD_PARAM, "job layout: rank " + std::to_string(r) + " on two nodes");
            node_of[r] = h;
            lrank_of[r] = i;
        }
    // (n ranks placed, none twice: every one of 0..n-1 is placed)

    // Segments, greedily: the block is the run of consecutive local ranks on the first node; the
    // round takes the next nodes while each starts at the same local rank with a run as long
    // (a shorter one only where the ranks end); the segment then lasts while every rank is where
    // the formula puts it. Each rank is looked at a bounded number of times: O(n).
    const uint32_t nnodes = static_cast<uint32_t>(node_ranks.size());
    uint32_t i = 0;
    while (i < n) {
        segment s;
        s.first = i;
        s.first_node = node_of[i];
        s.lbase = lrank_of[i];
        uint32_t k = 1;
        while (i + k < n && node_of[i + k] == s.first_node && lrank_of[i + k] == s.lbase + k) ++k;
        s.block = k;
        uint32_t c = 1;
        for (;;) {
            const uint64_t at = uint64_t{i} + uint64_t{c} * k;
            const uint64_t nd = uint64_t{s.first_node} + c;
            if (at >= n || nd >= nnodes) break;
            if (node_of[at] != nd || lrank_of[at] != s.lbase) break;
            uint32_t m = 1;
            while (m < k && at + m < n && node_of[at + m] == nd && lrank_of[at + m] == s.lbase + m) ++m;
            if (m < k && at + m < n) break;
            ++c;
        }
        s.nodes = c;
        uint32_t r = i + k;  // the first block fits by construction
        while (r < n) {
            place p = segment_place(s, r - i);
            if (node_of[r] != p.node || lrank_of[r] != p.lrank) break;
            ++r;
        }
        s.count = r - i;
        L.segments.push_back(s);
        i = r;
    }

    // Apps.
    size_t napps = 1;
    if (!app_of_rank.empty()) {
        if (app_of_rank.size() != n)
            return Status(PMIX_ERR_BAD_PARAM, "job layout: " + std::to_string(app_of_rank.size()) + " apps of ranks for " +
                                                  std::to_string(n) + " ranks");
        if (n > 0) napps = size_t{*std::max_element(app_of_rank.begin(), app_of_rank.end())} + 1;
    }
    L.apps.resize(napps);
    for (size_t a = 0; a < napps; ++a) {
        L.apps[a].leader = UINT32_MAX;
        if (a < app_argv.size()) L.apps[a].argv = app_argv[a];
    }
    for (uint32_t r = 0; r < n; ++r) {
        const uint32_t a = app_of_rank.empty() ? 0 : app_of_rank[r];
        app &ap = L.apps[a];
        if (ap.leader == UINT32_MAX) ap.leader = r;
        if (!L.app_runs.empty() && L.app_runs.back().app == a && L.app_runs.back().first + L.app_runs.back().count == r) {
            ++L.app_runs.back().count;
        } else {
            L.app_runs.push_back(app_run{r, 1, a, ap.size});
        }
        ++ap.size;
    }
    if (n > 0)
        for (size_t a = 0; a < napps; ++a)
            if (L.apps[a].size == 0) return Status(PMIX_ERR_BAD_PARAM, "job layout: app " + std::to_string(a) + " has no rank");
    if (n == 0) L.apps.clear();
    return L;
}

job_layout::place job_layout::locate(uint32_t rank) const {
    if (rank >= nranks || segments.empty()) return {};
    auto it = std::upper_bound(segments.begin(), segments.end(), rank,
                               [](uint32_t r, const segment &s) { return r < s.first; });
    const segment &s = *(it - 1);  // segments[0].first == 0
    return segment_place(s, rank - s.first);
}

job_layout::app_place job_layout::app_of(uint32_t rank) const {
    if (rank >= nranks || app_runs.empty()) return {};
    auto it = std::upper_bound(app_runs.begin(), app_runs.end(), rank,
                               [](uint32_t r, const app_run &a) { return r < a.first; });
    const app_run &a = *(it - 1);
    return {a.app, a.app_rank + (rank - a.first)};
}

std::vector<const char *> job_layout::keys(uint32_t rank) const {
    std::vector<const char *> k = {PMIX_RANK, PMIX_GLOBAL_RANK, PMIX_APP_RANK, PMIX_APPNUM, PMIX_APPLDR};
    const app_place ap = app_of(rank);
    if (apps.size() > 1) {
        k.push_back(PMIX_APP_SIZE);
        k.push_back(PMIX_PSET_NAME);
    }
    if (ap.app < apps.size() && !apps[ap.app].argv.empty()) k.push_back(PMIX_APP_ARGV);
    for (const char *x : {PMIX_LOCAL_RANK, PMIX_NODE_RANK, PMIX_NODEID, PMIX_HOSTNAME}) k.push_back(x);
    return k;
}

Status job_layout::value(uint32_t rank, std::string_view key, pmix_value_t *out) const {
    if (rank >= nranks) return Status(PMIX_ERR_NOT_FOUND, std::string());
    auto is = [&](const char *k) { return key == k; };
    auto u32 = [&](uint32_t v) { return value_load(out, &v, PMIX_UINT32); };
    auto u16 = [&](uint32_t v) {
        uint16_t x = static_cast<uint16_t>(v);
        return value_load(out, &x, PMIX_UINT16);
    };
    auto prank = [&](uint32_t v) {
        pmix_rank_t x = v;
        return value_load(out, &x, PMIX_PROC_RANK);
    };
    auto str = [&](const std::string &v) { return value_load(out, v.c_str(), PMIX_STRING); };
    if (is(PMIX_RANK) || is(PMIX_GLOBAL_RANK)) return prank(rank);
    if (is(PMIX_LOCAL_RANK) || is(PMIX_NODE_RANK)) return u16(locate(rank).lrank);
    if (is(PMIX_NODEID)) return u32(locate(rank).node);
    if (is(PMIX_HOSTNAME)) {
        const uint32_t node = locate(rank).node;
        if (node >= nodes.size()) return Status(PMIX_ERR_NOT_FOUND, std::string());
        return str(nodes[node]);
    }
    const app_place ap = app_of(rank);
    if (ap.app >= apps.size()) return Status(PMIX_ERR_NOT_FOUND, std::string());
    const app &a = apps[ap.app];
    if (is(PMIX_APP_RANK)) return prank(ap.app_rank);
    if (is(PMIX_APPNUM)) return u32(ap.app);
    if (is(PMIX_APPLDR)) return prank(a.leader);
    if (apps.size() > 1 && is(PMIX_APP_SIZE)) return u32(a.size);
    if (apps.size() > 1 && is(PMIX_PSET_NAME)) return str(nspace + ".app" + std::to_string(ap.app));
    if (!a.argv.empty() && is(PMIX_APP_ARGV)) return str(a.argv);
    return Status(PMIX_ERR_NOT_FOUND, std::string());
}

Result<InfoArray> job_layout::rank_infos(uint32_t rank) const {
    const std::vector<const char *> k = keys(rank);
    auto *infos = static_cast<pmix_info_t *>(calloc(k.size(), sizeof(pmix_info_t)));
    if (infos == nullptr) return Status(PMIX_ERR_NOMEM, "job layout: out of memory");
    InfoArray out(infos, k.size());
    for (size_t i = 0; i < k.size(); ++i) {
        strncpy(infos[i].key, k[i], PMIX_MAX_KEYLEN);
        PMIXCPP_RETURN_IF_ERROR(value(rank, k[i], &infos[i].value), std::string("job layout key ") + k[i]);
    }
    return out;
}

std::vector<std::vector<uint32_t>> job_layout::node_ranks() const {
    // Sized by each node's rank count first: a corrupt layout's local rank beyond it (which
    // could be near 2^32) is left out instead of growing the list to it.
    std::vector<uint32_t> count(nodes.size(), 0);
    for (uint32_t r = 0; r < nranks; ++r)
        if (const place p = locate(r); p.node < count.size()) ++count[p.node];
    std::vector<std::vector<uint32_t>> out(nodes.size());
    for (size_t n = 0; n < out.size(); ++n) out[n].assign(count[n], UINT32_MAX);
    for (uint32_t r = 0; r < nranks; ++r) {
        const place p = locate(r);
        if (p.node < out.size() && p.lrank < out[p.node].size()) out[p.node][p.lrank] = r;
    }
    for (auto &v : out) v.erase(std::remove(v.begin(), v.end(), UINT32_MAX), v.end());  // gaps of a corrupt layout
    return out;
}

std::string job_layout::proc_map() const {
    std::string s;
    const auto per_node = node_ranks();
    for (size_t h = 0; h < per_node.size(); ++h) {
        if (h) s += ';';
        for (size_t i = 0; i < per_node[h].size(); ++i) {
            if (i) s += ',';
            s += std::to_string(per_node[h][i]);
        }
    }
    return s;
}

std::vector<uint8_t> job_layout::encode() const {
    Writer w;
    w.put_u32(kLayoutVersion);
    (void)w.put_string(nspace);
    w.put_u32(nranks);
    w.put_u32(static_cast<uint32_t>(nodes.size()));
    for (const auto &h : nodes) (void)w.put_string(h);
    w.put_u32(static_cast<uint32_t>(segments.size()));
    for (const auto &s : segments)
        for (uint32_t v : {s.first, s.count, s.first_node, s.nodes, s.block, s.lbase}) w.put_u32(v);
    w.put_u32(static_cast<uint32_t>(apps.size()));
    for (const auto &a : apps) {
        w.put_u32(a.size);
        w.put_u32(a.leader);
        (void)w.put_string(a.argv);
    }
    w.put_u32(static_cast<uint32_t>(app_runs.size()));
    for (const auto &a : app_runs)
        for (uint32_t v : {a.first, a.count, a.app, a.app_rank}) w.put_u32(v);
    return w.take();
}

Result<job_layout> job_layout::decode(std::span<const uint8_t> bytes) {
    Reader r(bytes);
    job_layout L;
    uint32_t version = 0, count = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&version));
    if (version != kLayoutVersion) return corrupt("version " + std::to_string(version));
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&L.nspace, PMIX_MAX_NSLEN), "job layout namespace");
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&L.nranks));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&count));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(count, 4, sizeof(std::string), "job layout nodes", UINT32_MAX));
    L.nodes.resize(count);
    for (auto &h : L.nodes) PMIXCPP_RETURN_IF_ERROR(r.get_string(&h, 4096), "job layout node name");

    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&count));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(count, 24, sizeof(segment), "job layout segments", UINT32_MAX));
    L.segments.resize(count);
    uint64_t next = 0;
    for (auto &s : L.segments) {
        for (uint32_t *v : {&s.first, &s.count, &s.first_node, &s.nodes, &s.block, &s.lbase})
            PMIXCPP_RETURN_IF_ERROR(r.get_u32(v));
        if (s.first != next || s.count == 0) return corrupt("segments do not tile the ranks");
        if (s.nodes == 0 || s.block == 0 || uint64_t{s.first_node} + s.nodes > L.nodes.size())
            return corrupt("a segment names nodes the layout does not have");
        const uint64_t round = uint64_t{s.block} * s.nodes;
        const uint64_t last_lrank = uint64_t{s.lbase} + ((s.count - 1) / round) * s.block + s.block - 1;
        if (last_lrank > UINT32_MAX) return corrupt("a segment's local ranks overflow");
        next += s.count;
    }
    if (next != L.nranks) return corrupt("segments do not tile the ranks");

    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&count));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(count, 12, sizeof(app), "job layout apps", UINT32_MAX));
    L.apps.resize(count);
    for (auto &a : L.apps) {
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&a.size));
        PMIXCPP_RETURN_IF_ERROR(r.get_u32(&a.leader));
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&a.argv), "job layout app argv");
        if (a.leader >= L.nranks) return corrupt("an app's leader is not a rank");
    }
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&count));
    PMIXCPP_RETURN_IF_ERROR(r.take_count(count, 16, sizeof(app_run), "job layout app runs", UINT32_MAX));
    L.app_runs.resize(count);
    next = 0;
    for (auto &a : L.app_runs) {
        for (uint32_t *v : {&a.first, &a.count, &a.app, &a.app_rank}) PMIXCPP_RETURN_IF_ERROR(r.get_u32(v));
        if (a.first != next || a.count == 0) return corrupt("app runs do not tile the ranks");
        if (a.app >= L.apps.size() || uint64_t{a.app_rank} + a.count > L.apps[a.app].size)
            return corrupt("an app run names an app or app rank the layout does not have");
        next += a.count;
    }
    if (next != L.nranks) return corrupt("app runs do not tile the ranks");
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    return L;
}

}  // namespace pmixcpp::wire
