// The compact job data (this node's ranks in full, every rank in the step's layout) answers
// every Get exactly as the full job data (every rank listed) does: compared value by value, in
// the encoded bytes, for many layouts (block, cyclic, plane, arbitrary/hostfile, uneven,
// heterogeneous steps whose components share nodes, several apps, MPMD lines), from every
// node's point of view, on the client's side (JobData over the file), the server's (its
// key-value store) and the native route's (the REQ reply's job blob). Also: the layout's
// lookups, its size, and that a corrupt layout is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "../../client/store.h"
#include "../../plugin/native/session.h"
#include "../../plugin/server/jobdata.h"
#include "../../plugin/server/kvs.h"
#include "../../plugin/server/native_jobdata.h"
#include "wire/codec.h"
#include "wire/job_layout.h"
#include "wire/jobdata.h"

using namespace pmixcpp;
using namespace pmixcpp::server;

namespace {

struct layout_case {
    std::string name;
    std::vector<std::string> node_names;           // one per server (a name twice: het components)
    std::vector<std::vector<uint32_t>> node_ranks;  // per server, local-rank order
    std::vector<uint32_t> app_of_rank;
    std::vector<std::string> app_argv;
    std::vector<std::string> env;
};

uint32_t total(const layout_case &c) {
    uint32_t n = 0;
    for (const auto &r : c.node_ranks) n += static_cast<uint32_t>(r.size());
    return n;
}

std::vector<std::string> names(uint32_t n, const char *prefix = "node") {
    std::vector<std::string> v;
    for (uint32_t i = 0; i < n; ++i) v.push_back(prefix + std::to_string(i));
    return v;
}

// Slurm's block distribution: the first ntasks % nodes nodes take one more.
layout_case block(uint32_t nodes, uint32_t ntasks) {
    layout_case c{"block " + std::to_string(nodes) + "x" + std::to_string(ntasks), names(nodes), {}, {}, {}, {}};
    c.node_ranks.resize(nodes);
    uint32_t r = 0;
    for (uint32_t n = 0; n < nodes; ++n)
        for (uint32_t k = 0; k < ntasks / nodes + (n < ntasks % nodes ? 1 : 0); ++k) c.node_ranks[n].push_back(r++);
    return c;
}

// cyclic (plane = 1) and plane = k: k ranks on each node in turn.
layout_case plane(uint32_t nodes, uint32_t ntasks, uint32_t k) {
    layout_case c{"plane" + std::to_string(k) + " " + std::to_string(nodes) + "/" + std::to_string(ntasks), names(nodes),
                  {}, {}, {}, {}};
    c.node_ranks.resize(nodes);
    for (uint32_t r = 0; r < ntasks; ++r) c.node_ranks[(r / k) % nodes].push_back(r);
    return c;
}

// A hostfile / arbitrary distribution: each rank on a node drawn at random (every node gets one).
layout_case arbitrary(uint32_t nodes, uint32_t ntasks, uint32_t seed) {
    layout_case c{"arbitrary " + std::to_string(nodes) + "/" + std::to_string(ntasks) + " seed " + std::to_string(seed),
                  names(nodes), {}, {}, {}, {}};
    c.node_ranks.resize(nodes);
    std::mt19937 rng(seed);
    for (uint32_t r = 0; r < ntasks; ++r)
        c.node_ranks[r < nodes ? (r * 7 + seed) % nodes : rng() % nodes].push_back(r);
    return c;
}

// Runs of consecutive ranks to nodes in a given order, as a hostfile "n2 n2 n0 n1 n1 n1 n0".
layout_case hostfile() {
    layout_case c{"hostfile runs", {"n0", "n1", "n2"}, {{3, 7, 8}, {4, 5, 6}, {0, 1, 2}}, {}, {}, {}};
    return c;
}

// A heterogeneous step: two components, each its own servers and app, sharing n1 and n2.
layout_case het() {
    layout_case c{"het", {"n1", "n2", "n1", "n2", "n3"}, {{0, 1}, {2, 3}, {4, 5, 6}, {7}, {8, 9}}, {}, {}, {}};
    c.app_of_rank = {0, 0, 0, 0, 1, 1, 1, 1, 1, 1};
    c.app_argv = {"./a.out", "./b.out --x"};
    return c;
}

// --multi-prog lines of non-contiguous ranks, over a cyclic layout.
layout_case mpmd() {
    layout_case c = plane(3, 11, 1);
    c.name = "mpmd";
    c.app_of_rank = {0, 1, 1, 0, 2, 2, 1, 0, 0, 2, 1};
    c.app_argv = {"./x", "", "./z 1"};
    return c;
}

// A step spawned with several apps (PMIXCPP_SPAWN_APP_SIZES).
layout_case spawned_apps() {
    layout_case c = block(4, 10);
    c.name = "spawned apps";
    c.env = {"PMIXCPP_SPAWN_APP_SIZES=3,7", "PMIXCPP_SPAWN_PARENT=slurm.1.0:2"};
    return c;
}

step_info step_of(const layout_case &c, uint32_t node_id) {
    step_info s;
    s.nspace = "slurm.77.4";
    s.job_id = 77;
    s.step_id = 4;
    s.ntasks = total(c);
    s.universe_size = s.ntasks + 3;
    s.node_id = node_id;
    s.node_names = c.node_names;
    s.node_ranks = c.node_ranks;
    s.app_of_rank = c.app_of_rank;
    s.app_argv = c.app_argv;
    s.job_env = c.env;
    s.hostname = "host";
    s.step_root = "/var/spool/pmixcpp.77.4";
    s.step_dir = s.step_root + "/user";
    s.server_socket = s.step_root + "/server.sock";
    return s;
}

std::vector<uint8_t> bytes_of(const pmix_value_t &v) {
    wire::Writer w;
    EXPECT_TRUE(wire::encode_value(w, v).ok());
    return w.take();
}

std::vector<uint8_t> bytes_of(const InfoArray &a) {
    wire::Writer w;
    EXPECT_TRUE(wire::encode_info_array(w, a.data(), a.size()).ok());
    return w.take();
}

std::unique_ptr<client::JobData> client_view(const std::vector<wire::jobdata_entry> &e) {
    auto bytes = wire::encode_jobdata(e);
    EXPECT_TRUE(bytes.ok()) << bytes.status().message();
    auto j = client::JobData::from_bytes(std::move(bytes.value()));
    EXPECT_TRUE(j.ok());
    j.value()->use_layout();
    return std::move(j.value());
}

// Keys a Get may ask for of any rank: every key either form has, and some neither has.
std::vector<std::string> probe_keys(const std::vector<wire::jobdata_entry> &full) {
    std::vector<std::string> keys = {"no.such.key", wire::kJobLayoutKey};
    for (const auto &e : full)
        for (size_t i = 0; i < e.infos.size(); ++i) keys.push_back(key_of(e.infos[i]));
    std::sort(keys.begin(), keys.end());
    keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
    return keys;
}

// Every comparison for one node of one layout; returns the compact file's size.
size_t compare_node(const layout_case &c, uint32_t node_id) {
    SCOPED_TRACE(c.name + ", node " + std::to_string(node_id));
    node_topology topo{"0-3", "SK0:L30:L20-3:L10-3:CR0-3:HT0-3", 0};
    const step_info s = step_of(c, node_id);
    auto full = build_jobdata(s, topo, jobdata_form::full);
    auto compact = build_jobdata(s, topo, jobdata_form::compact);
    EXPECT_TRUE(full.ok()) << full.status().message();
    EXPECT_TRUE(compact.ok()) << compact.status().message();
    if (!full.ok() || !compact.ok()) return 0;
    auto layout = jobdata_layout(compact.value());
    EXPECT_TRUE(layout.ok() && layout.value().has_value());
    if (!layout.ok() || !layout.value()) return 0;
    const wire::job_layout &L = *layout.value();
    EXPECT_EQ(L.nranks, s.ntasks);
    auto no_layout = jobdata_layout(full.value());
    EXPECT_TRUE(no_layout.ok() && !no_layout.value().has_value());

    const std::vector<std::string> keys = probe_keys(full.value());
    std::vector<pmix_rank_t> ranks = {PMIX_RANK_WILDCARD, s.ntasks, s.ntasks + 100};
    for (uint32_t r = 0; r < s.ntasks; ++r) ranks.push_back(r);

    // The client: JobData over each file.
    auto fj = client_view(full.value()), cj = client_view(compact.value());
    EXPECT_EQ(fj->ranks(), cj->ranks());
    for (pmix_rank_t r : ranks) {
        SCOPED_TRACE("rank " + std::to_string(r));
        auto fk = fj->keys(r), ck = cj->keys(r);
        EXPECT_EQ(std::vector<std::string>(fk.begin(), fk.end()), std::vector<std::string>(ck.begin(), ck.end()));
        for (const auto &k : keys) {
            const pmix_value_t *fv = fj->find(r, k), *cv = cj->find(r, k);
            EXPECT_EQ(fv == nullptr, cv == nullptr) << k;
            if (fv != nullptr && cv != nullptr) {
                EXPECT_EQ(bytes_of(*fv), bytes_of(*cv)) << k;
            }
        }
    }
    // Through the whole lookup (a rank's key, then the job level's), as PMIx_Get does.
    client::LocalData fl, cl;
    fl.set_self(s.nspace, s.node_ranks[node_id].empty() ? 0 : s.node_ranks[node_id][0]);
    cl.set_self(s.nspace, s.node_ranks[node_id].empty() ? 0 : s.node_ranks[node_id][0]);
    EXPECT_TRUE(fl.load_jobdata(full.value()).ok());
    EXPECT_TRUE(cl.load_jobdata(compact.value()).ok());
    for (pmix_rank_t r : ranks) {
        pmix_proc_t p{};
        strncpy(p.nspace, s.nspace.c_str(), PMIX_MAX_NSLEN);
        p.rank = r;
        auto fa = fl.collect(p), ca = cl.collect(p);
        EXPECT_EQ(fa.ok(), ca.ok()) << r;
        if (fa.ok() && ca.ok()) {
            EXPECT_EQ(bytes_of(fa.value()), bytes_of(ca.value())) << "collect of rank " << r;
        }
        for (const auto &k : keys) {
            pmix_value_t fv{}, cv{};
            auto fs = fl.lookup(p, k, true, &fv), cs = cl.lookup(p, k, true, &cv);
            EXPECT_TRUE(fs.ok() && cs.ok());
            EXPECT_EQ(fs.value(), cs.value()) << k << " of " << r;
            if (fs.value() != client::lookup_source::none && cs.value() != client::lookup_source::none) {
                EXPECT_EQ(bytes_of(fv), bytes_of(cv)) << k << " of " << r;
            }
            value_destruct(&fv);
            value_destruct(&cv);
        }
    }

    // The server: its store loaded from each form.
    kv_store fs, cs;
    for (const auto &e : full.value()) EXPECT_TRUE(fs.add_job_data(e.rank, e.infos.data(), e.infos.size()).ok());
    for (const auto &e : compact.value()) EXPECT_TRUE(cs.add_job_data(e.rank, e.infos.data(), e.infos.size()).ok());
    cs.set_job_layout(std::make_shared<const wire::job_layout>(L));
    for (pmix_rank_t r : ranks) {
        for (relation rel : {relation::self, relation::same_node, relation::other_node}) {
            for (const auto &k : keys) EXPECT_EQ(fs.has(r, k, rel), cs.has(r, k, rel)) << k << " of " << r;
            auto fd = fs.visible_data(r, rel), cd = cs.visible_data(r, rel);
            EXPECT_TRUE(fd.ok() && cd.ok());
            EXPECT_EQ(bytes_of(fd.value()), bytes_of(cd.value())) << "server data of rank " << r;
        }
    }

    // The native route: the full form expanded from the compact one, and the REQ reply's blob.
    auto expanded = expand_jobdata(compact.value(), L);
    EXPECT_TRUE(expanded.ok()) << expanded.status().message();
    if (expanded.ok()) {
        EXPECT_EQ(expanded->size(), full->size());
        for (size_t i = 0; i < std::min(expanded->size(), full->size()); ++i) {
            EXPECT_EQ((*expanded)[i].rank, (*full)[i].rank);
            EXPECT_EQ(bytes_of((*expanded)[i].infos), bytes_of((*full)[i].infos)) << "entry " << i;
        }
        for (auto f : {native::int_flavour::fixed, native::int_flavour::flex128}) {
            auto fb = native::pack_job_blob(f, native_job_blob(s.nspace, full.value()));
            auto eb = native::pack_job_blob(f, native_job_blob(s.nspace, expanded.value()));
            EXPECT_TRUE(fb.ok() && eb.ok());
            if (fb.ok() && eb.ok()) {
                EXPECT_EQ(fb.value(), eb.value());
            }
        }
    }
    auto cb = wire::encode_jobdata(compact.value());
    return cb.ok() ? cb->size() : 0;
}

void compare(const layout_case &c) {
    // every node, or a spread of them for a large layout
    const uint32_t n = static_cast<uint32_t>(c.node_names.size());
    const uint32_t step = n <= 8 ? 1 : n / 5;
    for (uint32_t id = 0; id < n; id += step) compare_node(c, id);
    compare_node(c, n - 1);
}

}  // namespace

TEST(JobLayout, BlockCyclicAndPlaneAreOneSegment) {
    for (const auto &[c, segments] : std::vector<std::pair<layout_case, size_t>>{
             {block(8, 64), 1}, {plane(8, 64, 1), 1}, {plane(8, 64, 4), 1}, {plane(5, 23, 1), 1},
             {block(4, 10), 2}, {block(1, 7), 1}, {plane(4, 3, 1), 1}}) {
        std::vector<uint32_t> app_of;
        auto l = wire::job_layout::build("ns", c.node_names, c.node_ranks, app_of, {});
        ASSERT_TRUE(l.ok()) << c.name;
        EXPECT_EQ(l->segments.size(), segments) << c.name;
        EXPECT_EQ(l->app_runs.size(), 1u) << c.name;
        for (uint32_t h = 0; h < c.node_ranks.size(); ++h)
            for (uint32_t i = 0; i < c.node_ranks[h].size(); ++i) {
                auto p = l->locate(c.node_ranks[h][i]);
                EXPECT_EQ(p.node, h) << c.name;
                EXPECT_EQ(p.lrank, i) << c.name;
            }
        EXPECT_EQ(l->node_ranks(), c.node_ranks) << c.name;
    }
}

TEST(JobLayout, ArbitraryLayoutsRoundTrip) {
    for (uint32_t seed = 1; seed <= 20; ++seed) {
        layout_case c = arbitrary(1 + seed % 7, 5 + seed * 13, seed);
        auto l = wire::job_layout::build("ns", c.node_names, c.node_ranks, {}, {});
        ASSERT_TRUE(l.ok()) << c.name;
        auto back = wire::job_layout::decode(l->encode());
        ASSERT_TRUE(back.ok()) << back.status().message();
        EXPECT_EQ(back->node_ranks(), c.node_ranks) << c.name;
    }
}

TEST(JobLayout, CompactAnswersEveryGetAsTheFullTable) {
    std::vector<layout_case> cases = {block(1, 1),      block(2, 8),     block(4, 10),   block(3, 3),
                                      plane(4, 16, 1),  plane(5, 23, 1), plane(4, 16, 2), plane(3, 20, 3),
                                      hostfile(),       het(),           mpmd(),         spawned_apps(),
                                      arbitrary(5, 40, 3), arbitrary(7, 61, 9), block(16, 16 * 6)};
    for (const auto &c : cases) compare(c);
}

TEST(JobLayout, RefusesACorruptLayout) {
    layout_case c = het();
    auto l = wire::job_layout::build("slurm.1.2", c.node_names, c.node_ranks, c.app_of_rank, c.app_argv);
    ASSERT_TRUE(l.ok());
    const std::vector<uint8_t> good = l->encode();
    ASSERT_TRUE(wire::job_layout::decode(good).ok());
    // every truncation and every single-byte change either decodes to a consistent layout or
    // is refused; nothing it decodes locates a rank outside its nodes
    for (size_t n = 0; n < good.size(); ++n)
        EXPECT_FALSE(wire::job_layout::decode(std::span<const uint8_t>(good.data(), n)).ok()) << n;
    for (size_t i = 0; i < good.size(); ++i)
        for (uint8_t x : {uint8_t{0x01}, uint8_t{0x80}, uint8_t{0xff}}) {
            std::vector<uint8_t> bad = good;
            bad[i] ^= x;
            auto d = wire::job_layout::decode(bad);
            if (!d.ok()) continue;
            for (uint32_t r = 0; r < d->nranks; ++r) {
                EXPECT_LT(d->locate(r).node, d->nodes.size());
                EXPECT_LT(d->app_of(r).app, d->apps.size());
                pmix_value_t v{};
                for (const char *k : d->keys(r)) {
                    EXPECT_TRUE(d->value(r, k, &v).ok());
                    value_destruct(&v);
                }
            }
        }
    // a segment that names a node the layout does not have
    wire::job_layout bad = l.value();
    bad.segments.back().first_node = 99;
    EXPECT_EQ(wire::job_layout::decode(bad.encode()).status().code(), PMIX_ERR_UNPACK_FAILURE);
    bad = l.value();
    bad.segments.back().count += 1;  // more ranks than the layout has
    EXPECT_EQ(wire::job_layout::decode(bad.encode()).status().code(), PMIX_ERR_UNPACK_FAILURE);
    bad = l.value();
    bad.segments.back().lbase = UINT32_MAX - 8;  // decodes (no overflow) but is not a layout
    auto odd = wire::job_layout::decode(bad.encode());
    ASSERT_TRUE(odd.ok()) << odd.status().message();
    size_t listed = 0;
    for (const auto &v : odd->node_ranks()) listed += v.size();  // no list grown to 2^32
    EXPECT_LT(listed, size_t{odd->nranks});
    bad = l.value();
    bad.app_runs.back().app_rank = 1000;
    EXPECT_EQ(wire::job_layout::decode(bad.encode()).status().code(), PMIX_ERR_UNPACK_FAILURE);
}

// The job data's size per node, full against compact, at shapes the cluster cannot hold (the
// numbers docs/cost-model.md quotes come from this test's output).
TEST(JobLayout, SizePerNodeStaysSmallAtScale) {
    node_topology topo{"0-127", "SK0:L30:L20-127:L10-127:CR0-127:HT0-127", 0};
    struct shape {
        uint32_t nodes, ppn;
        bool full;  // the full form too (it is O(ranks) to build)
    };
    for (const shape &sh : {shape{32, 128, true}, shape{1000, 128, true}, shape{4096, 128, false},
                            shape{10000, 128, false}, shape{16384, 128, false}}) {
        layout_case c = block(sh.nodes, sh.nodes * sh.ppn);
        const step_info s = step_of(c, sh.nodes / 2);
        auto compact = build_jobdata(s, topo, jobdata_form::compact);
        ASSERT_TRUE(compact.ok()) << compact.status().message();
        auto cb = wire::encode_jobdata(compact.value());
        ASSERT_TRUE(cb.ok());
        // cyclic too: still one segment
        layout_case cc = plane(sh.nodes, sh.nodes * sh.ppn, 1);
        auto cyc = build_jobdata(step_of(cc, 0), topo, jobdata_form::compact);
        ASSERT_TRUE(cyc.ok());
        auto cycb = wire::encode_jobdata(cyc.value());
        ASSERT_TRUE(cycb.ok());
        size_t full_bytes = 0;
        if (sh.full) {
            auto full = build_jobdata(s, topo, jobdata_form::full);
            ASSERT_TRUE(full.ok());
            auto fb = wire::encode_jobdata(full.value());
            ASSERT_TRUE(fb.ok());
            full_bytes = fb->size();
            EXPECT_LT(cb->size() * 10, full_bytes);
        }
        printf("job data per node at %u nodes x %u: full %zu bytes, compact %zu bytes (block), %zu bytes (cyclic)\n",
               sh.nodes, sh.ppn, full_bytes, cb->size(), cycb->size());
        EXPECT_LT(cb->size(), size_t{2} << 20);  // the goal: under 2 MB a node at 16k x 128
        EXPECT_LT(cycb->size(), size_t{2} << 20);
        if (sh.nodes != 16384) continue;
        // A Get of other nodes' ranks' host names, as a client does it (nothing cached: each one
        // a binary search of the segments and the value's making); a figure, not a limit.
        auto j = client::JobData::from_bytes(std::move(cycb.value()));
        ASSERT_TRUE(j.ok());
        j.value()->use_layout();
        std::mt19937 rng(5);
        const uint32_t ranks = sh.nodes * sh.ppn;
        const int gets = 200000;
        auto t0 = std::chrono::steady_clock::now();
        size_t found = 0;
        for (int g = 0; g < gets; ++g) {
            pmix_value_t v{};
            const uint32_t r = rng() % ranks;
            if (j.value()->copy(r, PMIX_HOSTNAME, &v) && v.type == PMIX_STRING &&
                std::string(v.data.string) == cc.node_names[r % sh.nodes])
                ++found;
            value_destruct(&v);
        }
        const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / gets;
        EXPECT_EQ(found, size_t(gets));
        printf("a remote rank's pmix.hname from the layout at %u x %u (cyclic): %.0f ns a Get\n", sh.nodes, sh.ppn, ns);
    }
}
