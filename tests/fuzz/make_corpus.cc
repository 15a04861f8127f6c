// Writes the seed corpus of every fuzz target: DIR/<target>/<seed>, one file per message kind,
// each the target's selector byte + a valid encoding. Run once by contrib/fuzz-campaign.sh
// --make-corpus; the result is kept in tests/fuzz/corpus/ (small: a few KiB per target).
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "../unit/sample_values.h"
#include "plugin/coll/coll_message.h"
#include "plugin/agent/proto/agent_proto.h"
#include "plugin/services/service_ids.h"
#include "plugin/services/alloc/alloc_codec.h"
#include "plugin/services/fabric/fabric_codec.h"
#include "plugin/services/spawn/mpmd.h"
#include "plugin/services/sessions/session_codec.h"
#include "plugin/services/spawn/spawn_codec.h"
#include "plugin/services/xstep/xstep_codec.h"
#include "plugin/net/envelope.h"
#include "plugin/server/node_channels.h"
#include "plugin/net/handshake.h"
#include "plugin/net/identity.h"
#include "shared/fabric/fabric_wire.h"
#include "wire/codec.h"
#include "wire/frame.h"
#include "wire/messages.h"
#include "wire/node_messages.h"
#include "wire/snapshot.h"

using namespace pmixcpp;
using namespace pmixcpp::wire;

namespace {

std::string g_dir;
int g_failures = 0;

void write_seed(const std::string &target, const std::string &name, uint8_t selector, std::span<const uint8_t> bytes) {
    std::string dir = g_dir + "/" + target;
    mkdir(dir.c_str(), 0755);
    std::string path = dir + "/" + name;
    FILE *f = fopen(path.c_str(), "wb");
    if (!f) {
        perror(path.c_str());
        ++g_failures;
        return;
    }
    fwrite(&selector, 1, 1, f);
    if (!bytes.empty()) fwrite(bytes.data(), 1, bytes.size(), f);
    fclose(f);
}

void seed(const std::string &target, const std::string &name, uint8_t selector, const Result<std::vector<uint8_t>> &r) {
    if (!r.ok()) {
        fprintf(stderr, "make_corpus: %s/%s: %s\n", target.c_str(), name.c_str(), r.status().message().c_str());
        ++g_failures;
        return;
    }
    write_seed(target, name, selector, r.value());
}

template <typename F>
Result<std::vector<uint8_t>> written(F &&f) {
    Writer w;
    Status st = f(w);
    if (!st.ok()) return st;
    return w.take();
}

// A few infos of different types (a string, a proc, a nested data array).
InfoArray sample_infos() {
    const pmix_data_type_t types[] = {PMIX_STRING, PMIX_PROC, PMIX_DATA_ARRAY, PMIX_UINT32};
    auto *infos = static_cast<pmix_info_t *>(calloc(4, sizeof(pmix_info_t)));
    InfoArray out(infos, 4);
    for (size_t i = 0; i < 4; ++i) {
        Value v;
        if (!testing::make_sample(types[i], v.get()).ok()) ++g_failures;
        snprintf(infos[i].key, sizeof(infos[i].key), "pmix.seed.%zu", i);
        if (!value_xfer(&infos[i].value, v.get()).ok()) ++g_failures;
    }
    return out;
}

pmix_proc_t proc(const char *ns, uint32_t rank) {
    pmix_proc_t p{};
    snprintf(p.nspace, sizeof(p.nspace), "%s", ns);
    p.rank = rank;
    return p;
}

void codec_seeds() {
    const pmix_data_type_t seeds[] = {PMIX_STRING, PMIX_PROC, PMIX_DATA_ARRAY, PMIX_GEOMETRY, PMIX_REGATTR,
                                      PMIX_PROC_INFO, PMIX_ENVAR, PMIX_COORD, PMIX_ENDPOINT, PMIX_BYTE_OBJECT};
    for (auto t : seeds) {
        Value v;
        if (!testing::make_sample(t, v.get()).ok()) {
            ++g_failures;
            continue;
        }
        seed("fuzz_codec", "value-" + std::to_string(t), 3, written([&](Writer &w) { return encode_value(w, *v.get()); }));
    }
    InfoArray infos = sample_infos();
    auto array = written([&](Writer &w) { return encode_info_array(w, infos.data(), infos.size()); });
    seed("fuzz_codec", "info-array", 3, array);
    if (array.ok()) seed("fuzz_codec", "frame", 3, encode_frame(7, 0, 42, array.value()));
}

void message_seeds() {
    const std::string t = "fuzz_messages";
    InfoArray infos = sample_infos();
    auto copy = [&] {
        InfoArray a;
        if (!info_array_copy(infos.data(), infos.size(), &a).ok()) ++g_failures;
        return a;
    };
    connect_request c{kClientProtocol, "pmixcpp.1.0", 3, std::string(64, 'a'), 1234};
    seed(t, "connect", 0, written([&](Writer &w) { return encode(w, c); }));
    finalize_request fin{copy()};
    seed(t, "finalize", 1, written([&](Writer &w) { return encode(w, fin); }));
    abort_request ab{1, "bye", {proc("pmixcpp.1.0", 0), proc("pmixcpp.1.0", PMIX_RANK_WILDCARD)}};
    seed(t, "abort", 2, written([&](Writer &w) { return encode(w, ab); }));
    commit_request cm;
    cm.infos = copy();
    cm.scopes.assign(cm.infos.size(), PMIX_GLOBAL);
    seed(t, "commit", 3, written([&](Writer &w) { return encode(w, cm); }));
    fence_request fe{{proc("pmixcpp.1.0", 0), proc("pmixcpp.1.0", 1)}, copy()};
    seed(t, "fence", 4, written([&](Writer &w) { return encode(w, fe); }));
    get_request g{proc("pmixcpp.1.0", 1), "pmix.seed.0", copy()};
    seed(t, "get", 5, written([&](Writer &w) { return encode(w, g); }));
    job_control_request jc{{proc("pmixcpp.1.0", 1)}, copy()};
    seed(t, "job_control", 6, written([&](Writer &w) { return encode(w, jc); }));
    log_request lg{copy(), copy()};
    seed(t, "log", 7, written([&](Writer &w) { return encode(w, lg); }));
    reply_header rh{PMIX_ERR_NOT_FOUND, "not found"};
    seed(t, "reply", 8, written([&](Writer &w) { return encode(w, rh); }));
    event_notification ev{7, PMIX_ERR_PROC_ABORTED, proc("pmixcpp.1.0", 2), PMIX_RANGE_SESSION, copy()};
    seed(t, "event", 9, written([&](Writer &w) { return encode(w, ev); }));
    alloc_request al{PMIX_ALLOC_NEW, copy()};
    seed(t, "alloc", 10, written([&](Writer &w) { return encode(w, al); }));
    query_request q;
    q.queries.push_back({{"pmix.qry.alloc", "pmix.time.remaining"}, copy()});
    seed(t, "query", 11, written([&](Writer &w) { return encode(w, q); }));
    std::vector<jobdata_entry> jd;
    jd.push_back({PMIX_RANK_WILDCARD, copy()});
    jd.push_back({0, copy()});
    seed(t, "jobdata", 12, encode_jobdata(jd));
    publish_request pub{copy(), copy()};
    seed(t, "publish", 0xf0, written([&](Writer &w) { return encode(w, pub); }));
    lookup_request lk{{"key1", "key2"}, copy()};
    seed(t, "lookup", 0xf1, written([&](Writer &w) { return encode(w, lk); }));
    lookup_reply lr;
    lr.owners = {proc("pmixcpp.1.0", 0)};
    {
        auto *one = static_cast<pmix_info_t *>(calloc(1, sizeof(pmix_info_t)));
        (void)info_xfer(&one[0], &infos[0]);
        lr.data = InfoArray(one, 1);
    }
    seed(t, "lookup_reply", 0xf2, written([&](Writer &w) { return encode(w, lr); }));
    spawn_request sp;
    sp.job_info = copy();
    sp.apps.push_back({"/bin/true", {"true", "-x"}, {"A=1"}, "/tmp", 2, copy()});
    seed(t, "spawn", 0xf3, written([&](Writer &w) { return encode(w, sp); }));
    connect_data cd;
    cd.entries.push_back({proc("pmixcpp.2.0", 0), copy()});
    seed(t, "connect_data", 0xf4, written([&](Writer &w) { return encode(w, cd); }));
    monitor_request mr;
    {
        auto *one = static_cast<pmix_info_t *>(calloc(1, sizeof(pmix_info_t)));
        strncpy(one->key, PMIX_MONITOR_HEARTBEAT, PMIX_MAX_KEYLEN);
        mr.monitor = InfoArray(one, 1);
    }
    mr.error = PMIX_MONITOR_HEARTBEAT_ALERT;
    mr.directives = copy();
    seed(t, "monitor", 0xf5, written([&](Writer &w) { return encode(w, mr); }));

    // Hostile shapes as seeds too: huge counts in a few bytes, deep nesting.
    Writer huge;
    huge.put_u32(0xffffffffu);
    seed(t, "huge-count-commit", 3, huge.data());
    Writer deep;
    deep.put_u32(1);
    (void)deep.put_string("k");
    deep.put_u32(0);
    for (int i = 0; i < 20; ++i) {
        deep.put_u16(PMIX_DATA_ARRAY);
        deep.put_u16(PMIX_VALUE);
        deep.put_u32(1);
    }
    deep.put_u16(PMIX_UNDEF);
    seed(t, "deep-finalize", 1, deep.data());
}

void snapshot_seeds() {
    InfoArray a = sample_infos(), b = sample_infos();
    std::vector<std::pair<uint32_t, const InfoArray *>> ranks{{0, &a}, {3, &b}};
    seed("fuzz_snapshot", "snapshot", 0, encode_snapshot(ranks));
    std::vector<jobdata_entry> jd;
    jd.push_back({PMIX_RANK_WILDCARD, sample_infos()});
    jd.push_back({1, sample_infos()});
    seed("fuzz_snapshot", "jobdata", 1, encode_jobdata(jd));
}

void reply_seeds() {
    const std::string t = "fuzz_replies";
    snapshot_ref ref{"modex.3", {{0, 4096}, {4096, 512}, {8192, 100}}};
    seed(t, "snapshot-ref", 0, written([&](Writer &w) { return encode(w, ref); }));
    snapshot_ref none;
    seed(t, "snapshot-ref-none", 0, written([&](Writer &w) { return encode(w, none); }));
    get_reply g{sample_infos()};
    seed(t, "get", 1, written([&](Writer &w) { return encode(w, g); }));
    job_control_reply jc{sample_infos()};
    seed(t, "job_control", 2, written([&](Writer &w) { return encode(w, jc); }));
    info_reply ir{sample_infos()};
    seed(t, "info", 3, written([&](Writer &w) { return encode(w, ir); }));
    spawn_reply sp{"pmixcpp.1.1"};
    seed(t, "spawn", 4, written([&](Writer &w) { return encode(w, sp); }));
    connect_reply cr{"/tmp/pmixcpp.1.0.abcdef/jobdata", 4096, 2};
    seed(t, "connect", 5, written([&](Writer &w) { return encode(w, cr); }));
    lookup_reply lr;
    lr.owners = {proc("pmixcpp.1.0", 0), proc("pmixcpp.1.0", 1), proc("pmixcpp.1.0", 2), proc("pmixcpp.1.0", 3)};
    lr.data = sample_infos();
    seed(t, "lookup", 6, written([&](Writer &w) { return encode(w, lr); }));
}

void node_seeds() {
    net::step_identity id{"pmixcpp.1.0"};
    std::vector<uint8_t> body{1, 2, 3};
    seed("fuzz_node", "frame", 0, net::encode_node_frame(id, 1, server::id_of(server::node_channel::coll), body));
    auto frame = net::encode_node_frame(id, 2, server::id_of(server::node_channel::dmodex_request), body);
    if (frame.ok())
        write_seed("fuzz_node", "payload", 1,
                   std::span<const uint8_t>(frame->data() + kFrameHeaderSize, frame->size() - kFrameHeaderSize));
    coll::coll_message up{coll::msg_kind::tree_up, {0x1234, 1}, {{1, {1, 2}}, {2, {3}}}};
    write_seed("fuzz_node", "coll-tree-up", 2, coll::encode(up));
    coll::coll_message ring{coll::msg_kind::ring, {0x99, 2}, {{3, {9, 9, 9}}}};
    write_seed("fuzz_node", "coll-ring", 2, coll::encode(ring));

    const std::string t = "fuzz_node_bodies";
    std::vector<rank_data_entry> rd;
    rd.push_back({0, sample_infos()});
    rd.push_back({5, sample_infos()});
    seed(t, "rank-data", 0, written([&](Writer &w) { return encode_rank_data(w, rd); }));
    seed(t, "dmodex-request", 1, written([&](Writer &w) { return encode(w, dmodex_request{7, 5, "pmix.seed.0"}); }));
    seed(t, "dmodex-request-batch", 1, written([&](Writer &w) {
             return encode(w, dmodex_request{8, 4, "pmix.seed.0", {{5, "pmix.seed.0"}, {6, ""}}});
         }));
    dmodex_reply rep;
    rep.id = 7;
    rep.target = 5;
    seed(t, "dmodex-reply", 2, written([&](Writer &w) {
             PMIXCPP_RETURN_IF_ERROR(encode_head(w, rep));
             return encode_rank_data(w, rd);
         }));
    seed(t, "node-down", 3, written([&](Writer &w) { return encode(w, node_down_message{2, "gone", 5, 4}); }));
    seed(t, "node-down-relayed", 3, written([&](Writer &w) { return encode(w, node_down_message{15, "reset", 0, 64}); }));
    write_seed(t, "probe", 4, std::vector<uint8_t>{1});
    seed(t, "probe-pong", 4, written([&](Writer &w) { return encode(w, probe_kind::pong); }));
    seed(t, "node-query-ask", 5, written([&](Writer &w) { return encode(w, node_query_message{1, 3, false}); }));
    seed(t, "link-hello", 10, written([&](Writer &w) { return encode(w, link_kind::hello); }));
    seed(t, "link-bye", 10, written([&](Writer &w) { return encode(w, link_kind::bye); }));
    seed(t, "link-idle", 10, written([&](Writer &w) { return encode(w, link_kind::idle); }));
    seed(t, "node-query", 5, written([&](Writer &w) { return encode(w, node_query_message{2, 3, true}); }));
    pubsub_forward fwd{20, 9, 4, 1, {1, 2, 3, 4}};
    seed(t, "pubsub-request", 6, written([&](Writer &w) { return encode(w, fwd); }));
    pubsub_answer ans{9, 4, PMIX_ERR_NOT_FOUND, "no", {5, 6}};
    seed(t, "pubsub-reply", 7, written([&](Writer &w) { return encode(w, ans); }));
    seed(t, "job-control", 8, written([&](Writer &w) { return encode(w, job_control_forward{15, true, {1, 2, 3}}); }));
    seed(t, "job-control-checkpoint", 8,
         written([&](Writer &w) { return encode(w, job_control_forward{0, false, {0, 2}, true}); }));
    connect_contribution cc;
    cc.node = "node1";
    cc.job = sample_infos();
    cc.ranks.push_back({0, sample_infos(), sample_infos()});
    seed(t, "connect-contribution", 9, written([&](Writer &w) { return encode(w, cc); }));
}

void agent_seeds() {
    const std::string t = "fuzz_agent";
    xstep::message get;
    get.what = xstep::op::get;
    get.nspace = "pmixcpp.2.0";
    get.rank = 1;
    get.key = "k";
    get.from_nspace = "pmixcpp.1.0";
    get.from_node = "node1";
    get.timeout_ms = 1000;
    seed(t, "xstep-get", 0, xstep::encode(get));
    xstep::message ev;
    ev.what = xstep::op::event;
    ev.nspaces = {"pmixcpp.2.0"};
    ev.payload = {1, 2, 3};
    seed(t, "xstep-event", 0, xstep::encode(ev));
    xstep::message jc;
    jc.what = xstep::op::jobctl;
    jc.nspace = "pmixcpp.2.0";
    jc.signal = 15;
    jc.ranks = {0, 1};
    seed(t, "xstep-jobctl", 0, xstep::encode(jc));
    xstep::message an;
    an.what = xstep::op::answer;
    an.id = 3;
    an.text = "ok";
    an.payload = {4, 5};
    seed(t, "xstep-answer", 0, xstep::encode(an));
    std::vector<xstep::inbox_item> items{{1, {1, 2}}, {2, {}}};
    seed(t, "inbox-items", 1, xstep::encode_items(items));
    std::vector<spawn::mpmd_app> apps{{0, 2, "/bin/a", {"a"}, {"X=1"}, "/tmp"}, {2, 1, "/bin/b", {"b", "-v"}, {}, ""}};
    auto hex = spawn::encode_mpmd(apps);
    if (hex.ok())
        write_seed(t, "mpmd", 2,
                   std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(hex->data()), hex->size()));

    seed(t, "agent-reply", 3, agent::encode_reply({PMIX_ERR_NOT_FOUND, "none", {7, 8}}));
    seed(t, "report", 4, agent::encode_report({agent::report::kind::abort, 3, "node1", "rank 0 called PMIx_Abort"}));
    seed(t, "rendezvous", 5, agent::encode_rendezvous({1, 4, "tcp:*:4242"}));
    seed(t, "table", 6, agent::encode_table({"tcp:10.0.0.1:1", "ucx:abcd", "tcp:10.0.0.3:3"}));
    auto xs = xstep::encode(get);
    if (xs.ok()) seed(t, "request-frame", 7, agent::request_frame(services::id_of(services::service::xstep), xs.value()));

    const std::string r = "fuzz_agent_replies";
    alloc::agent_request areq;
    areq.nspace = "pmixcpp.1.0";
    areq.node = "node1";
    areq.directive = PMIX_ALLOC_NEW;
    areq.keys = {"pmix.alloc.nnodes"};
    areq.infos = sample_infos();
    seed(r, "alloc-request", 0, alloc::encode_request(areq));
    alloc::agent_reply arep;
    arep.status = PMIX_SUCCESS;
    arep.results = sample_infos();
    seed(r, "alloc-reply", 1, alloc::encode_reply(arep));
    spawn::agent_spawn_request sreq;
    sreq.parent_nspace = "pmixcpp.1.0";
    sreq.request.job_info = sample_infos();
    sreq.request.apps.push_back({"/bin/true", {"true"}, {}, "", 1, InfoArray()});
    seed(r, "spawn-request", 2, spawn::encode_request(sreq));
    seed(r, "spawn-reply", 3, agent::encode_reply(spawn::to_reply({0, "", "pmixcpp.1.1"})));
    seed(r, "session-request", 4, session::encode_request({20, "pmixcpp.1.0", 0, {1, 2, 3}}));
    seed(r, "session-reply", 5, agent::encode_reply({PMIX_ERR_NOT_FOUND, "none", {7}}));
    session::rendezvous_request rv;
    rv.key = "connect.1.1";
    rv.nspace = "pmixcpp.1.0";
    rv.nodes = 2;
    rv.nspaces = {"pmixcpp.1.0", "pmixcpp.2.0"};
    rv.contribution = {1, 2};
    seed(r, "rendezvous", 6, session::encode(rv));
    seed(r, "pieces", 7, session::encode_pieces({{"pmixcpp.1.0", 0, {1}}, {"pmixcpp.2.0", 1, {}}}));
    fabric::fabric_request fr;
    fr.plane = "plane0";
    seed(r, "fabric-request", 8, fabric::encode_agent_request(fr));
    write_seed(r, "fabric-watch", 9, fabric::encode_watch(5));
    const uint8_t abc[] = {'a', 'b', 'c'};
    seed(r, "request-frame", 10, agent::request_frame(services::id_of(services::service::alloc), abc));
    std::string groups = fabric::encode_node_groups({0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3});
    write_seed(r, "node-groups", 11,
               std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(groups.data()), groups.size()));
}

void fabric_seeds() {
    sched::fabric_request fr{sched::fabric_op::update, "plane0"};
    seed("fuzz_fabric", "client-request", 0, written([&](Writer &w) { return sched::encode_client_request(w, fr); }));
    sched::cost_matrix m;
    m.vertices = {{"n1", "", "", "s1"}, {"n2", "", "", "s1"}, {"n3", "", "", "s2"}};
    m.cost = {0, 2, 4, 2, 0, 4, 4, 4, 0};
    auto results = sched::matrix_to_results(m, "plane0");
    if (!results.ok()) {
        ++g_failures;
        return;
    }
    seed("fuzz_fabric", "results", 1,
         written([&](Writer &w) { return encode_info_array(w, results->data(), results->size()); }));
}

// The handshake of the node listeners and srun's agent (fuzz_handshake): a hello for the listener
// (selector 0), a listener's challenge for the client (1), a sealed node frame (2), an opened node
// record and agent credential (3).
void handshake_seeds() {
    using namespace net;
    auto k = auth::derive_key(auth::key{}, "fuzz", 0);
    if (!k.ok()) return;
    auth::client_handshake cli(k.value(), auth::purpose::node, "pmixcpp.1.0", 1);
    auto hello = cli.hello_frame();
    seed("fuzz_handshake", "hello", 0, hello);
    if (hello.ok()) {
        auth::server_handshake srv(k.value(), auth::purpose::node, "pmixcpp.1.0");
        std::span<const uint8_t> payload(hello->data() + wire::kFrameHeaderSize, hello->size() - wire::kFrameHeaderSize);
        seed("fuzz_handshake", "challenge", 1, srv.on_hello(payload));
    }
    // sealed for node 1: the target opens as node 0, so only the checks run, never a success
    seed("fuzz_handshake", "ucx-sealed", 2, auth::seal_frame(k.value(), {1, 2, 3, 4}, 3, 1, 7));
    node_record rec;
    rec.job_id = 7;
    rec.nspace = "pmixcpp.7.0";
    rec.nnodes = 2;
    rec.node = 1;
    rec.address = "tcp:127.0.0.1:4000";
    seed("fuzz_handshake", "node-record", 3, Result<std::vector<uint8_t>>(encode_node_record(rec)));
    agent_credential_body b;
    b.nspace = "pmixcpp.7.0";
    seed("fuzz_handshake", "agent-credential", 3, Result<std::vector<uint8_t>>(encode_agent_credential(b)));
}

}  // namespace

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    g_dir = argv[1];
    mkdir(g_dir.c_str(), 0755);
    codec_seeds();
    message_seeds();
    snapshot_seeds();
    reply_seeds();
    node_seeds();
    agent_seeds();
    fabric_seeds();
    handshake_seeds();
    return g_failures == 0 ? 0 : 1;
}
