// Dynamic processes without Slurm: pubsub_store semantics (ranges, persistence, waits, timeouts),
// the publish/lookup and spawn wire messages, srun's sides (spawn plans and launcher, the job's
// store) and connect across namespaces through a real job store. The cross-step routers:
// test_xstep.cc; the node server's dynamic services on their own: tests/server/test_dyn_services.cc.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#include <sys/socket.h>

#include "plugin/agent/proto/agent_io.h"
#include "plugin/services/xstep/xstep_srun.h"
#include "plugin/server/events.h"
#include "plugin/server/connect.h"
#include "plugin/server/pubsub.h"
#include "wire/messages.h"
#include "tests/dyn/dyn_util.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using namespace pmixcpp::dyn_test;

namespace {


pubsub_entry entry(const std::string &key, uint32_t owner, uint32_t node, uint8_t range = PMIX_RANGE_SESSION,
                   uint8_t persist = PMIX_PERSIST_PROC) {
    pubsub_entry e;
    e.key = key;
    e.owner = owner;
    e.owner_node = node;
    e.range = range;
    e.persistence = persist;
    e.info = {1, 2, 3};
    return e;
}
std::vector<pubsub_entry> one(pubsub_entry e) {
    std::vector<pubsub_entry> v;
    v.push_back(std::move(e));
    return v;
}

}  // namespace

TEST(PubsubStore, PublishLookupUnpublish) {
    pubsub_store s;
    ASSERT_TRUE(s.publish(one(entry("a", 1, 0))).ok());
    auto dup = s.publish(one(entry("a", 2, 1)));
    EXPECT_EQ(dup.status().code(), PMIX_ERR_DUPLICATE_KEY);
    auto a = s.lookup({1, 7, 9, 3}, {"a", "b"}, 0, std::nullopt);
    ASSERT_TRUE(a.has_value());
    EXPECT_EQ(a->status, PMIX_SUCCESS);
    ASSERT_EQ(a->found.size(), 1u);
    EXPECT_EQ(a->found[0].owner, 1u);
    EXPECT_EQ(a->to.request_id, 9u);
    auto none = s.lookup({1, 7, 10, 3}, {"b"}, 0, std::nullopt);
    ASSERT_TRUE(none.has_value());
    EXPECT_EQ(none->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(s.unpublish(2, {"a"}), 0u);  // not the owner
    EXPECT_EQ(s.unpublish(1, {}), 1u);
    EXPECT_EQ(s.size(), 0u);
}

TEST(PubsubStore, WaitIsAnsweredByPublishOrTimesOut) {
    pubsub_store s;
    auto now = server_clock::now();
    EXPECT_FALSE(s.lookup({1, 7, 1, 3}, {"x", "y"}, 2, std::nullopt).has_value());
    EXPECT_FALSE(s.lookup({0, 8, 2, 0}, {"z"}, 1, now + std::chrono::seconds(1)).has_value());
    EXPECT_EQ(s.waiting(), 2u);
    auto r = s.publish(one(entry("x", 2, 0)));
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r->empty());  // y still missing
    r = s.publish(one(entry("y", 2, 0)));
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ((*r)[0].found.size(), 2u);
    EXPECT_EQ((*r)[0].to.conn, 7u);
    ASSERT_TRUE(s.next_deadline().has_value());
    auto expired = s.expire(now + std::chrono::seconds(2));
    ASSERT_EQ(expired.size(), 1u);
    EXPECT_EQ(expired[0].status, PMIX_ERR_TIMEOUT);
    EXPECT_EQ(s.waiting(), 0u);
}

TEST(PubsubStore, PersistenceAndRanges) {
    pubsub_store s;
    ASSERT_TRUE(s.publish(one(entry("proc", 1, 0))).ok());
    ASSERT_TRUE(s.publish(one(entry("indef", 1, 0, PMIX_RANGE_NAMESPACE, PMIX_PERSIST_INDEF))).ok());
    ASSERT_TRUE(s.publish(one(entry("once", 1, 0, PMIX_RANGE_SESSION, PMIX_PERSIST_FIRST_READ))).ok());
    ASSERT_TRUE(s.publish(one(entry("local", 1, 0, PMIX_RANGE_LOCAL))).ok());
    ASSERT_TRUE(s.publish(one(entry("mine", 1, 0, PMIX_RANGE_PROC_LOCAL))).ok());
    // FIRST_READ goes with its first reader.
    auto a = s.lookup({1, 1, 1, 5}, {"once"}, 0, std::nullopt);
    EXPECT_EQ(a->status, PMIX_SUCCESS);
    a = s.lookup({1, 1, 2, 5}, {"once"}, 0, std::nullopt);
    EXPECT_EQ(a->status, PMIX_ERR_NOT_FOUND);
    // LOCAL: same node only; PROC_LOCAL: the publisher only.
    EXPECT_EQ(s.lookup({1, 1, 3, 5}, {"local"}, 0, std::nullopt)->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(s.lookup({0, 1, 4, 2}, {"local"}, 0, std::nullopt)->status, PMIX_SUCCESS);
    EXPECT_EQ(s.lookup({0, 1, 5, 2}, {"mine"}, 0, std::nullopt)->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(s.lookup({0, 1, 6, 1}, {"mine"}, 0, std::nullopt)->status, PMIX_SUCCESS);
    // The publisher leaves: PROC data goes (proc, local, mine), INDEF stays.
    EXPECT_EQ(s.rank_left(1), 3u);
    EXPECT_EQ(s.lookup({1, 1, 7, 5}, {"proc"}, 0, std::nullopt)->status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(s.lookup({1, 1, 8, 5}, {"indef"}, 0, std::nullopt)->status, PMIX_SUCCESS);
}

TEST(DynMessages, RoundTrip) {
    wire::publish_request p;
    p.data = infos({info_str("svc", "port-1")});
    p.directives = infos({info_num<pmix_data_range_t>(PMIX_RANGE, PMIX_RANGE_NAMESPACE, PMIX_DATA_RANGE)});
    wire::Writer w;
    ASSERT_TRUE(wire::encode(w, p).ok());
    wire::publish_request p2;
    ASSERT_TRUE(wire::decode_payload(w.data(), &p2).ok());
    ASSERT_EQ(p2.data.size(), 1u);
    EXPECT_STREQ(p2.data[0].value.data.string, "port-1");

    wire::lookup_request l;
    l.keys = {"a", "bb"};
    wire::Writer w2;
    ASSERT_TRUE(wire::encode(w2, l).ok());
    wire::lookup_request l2;
    ASSERT_TRUE(wire::decode_payload(w2.data(), &l2).ok());
    EXPECT_EQ(l2.keys, l.keys);
    // Truncated: refused.
    auto bytes = w2.data();
    bytes.pop_back();
    EXPECT_FALSE(wire::decode_payload(bytes, &l2).ok());

    wire::lookup_reply r;
    pmix_proc_t owner{};
    strcpy(owner.nspace, "ns");
    owner.rank = 3;
    r.owners.push_back(owner);
    r.data = infos({info_str("svc", "v")});
    wire::Writer w3;
    ASSERT_TRUE(wire::encode(w3, r).ok());
    wire::lookup_reply r2;
    ASSERT_TRUE(wire::decode_payload(w3.data(), &r2).ok());
    ASSERT_EQ(r2.owners.size(), 1u);
    EXPECT_EQ(r2.owners[0].rank, 3u);
    EXPECT_STREQ(r2.data[0].key, "svc");
}


// --- spawn: the srun command line, attribute handling, executable check, agent messages ---------
#include "plugin/services/spawn/spawn_srun.h"
#include "plugin/services/spawn/mpmd.h"

namespace {
spawn::agent_spawn_request spawn_req(int maxprocs) {
    spawn::agent_spawn_request r;
    r.parent_nspace = "slurm.7.0";
    r.parent_rank = 2;
    wire::spawn_app a;
    a.cmd = "/bin/true";
    a.argv = {"/bin/true", "x", "y z"};
    a.env = {"A=1"};
    a.maxprocs = maxprocs;
    r.request.apps.push_back(std::move(a));
    return r;
}
bool has(const std::vector<std::string> &v, const std::string &s) { return std::find(v.begin(), v.end(), s) != v.end(); }
}  // namespace

TEST(Spawn, PlanIsASrunOfTheSameJob) {
    auto r = spawn_req(4);
    r.request.job_info = infos({info_str(PMIX_HOST, "n3,n4"), info_str(PMIX_PPR, "2:node"),
                                info_str(PMIX_WDIR, "/tmp"), info_num<bool>(PMIX_FWD_STDOUT, true, PMIX_BOOL)});
    auto p = spawn::plan_spawn(r, 42);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->argv[0], "srun");
    EXPECT_TRUE(has(p->argv, "--jobid=42"));
    EXPECT_TRUE(has(p->argv, "--mpi=pmixcpp"));
    EXPECT_TRUE(has(p->argv, "--ntasks=4"));
    EXPECT_TRUE(has(p->argv, "--nodelist=n3,n4"));
    // the node count of the list, not the parent's (srun's SLURM_NNODES would drop nodes)
    EXPECT_TRUE(has(p->argv, "--nodes=2"));
    EXPECT_TRUE(has(p->argv, "--ntasks-per-node=2"));
    EXPECT_TRUE(has(p->argv, "--chdir=/tmp"));
    ASSERT_GE(p->argv.size(), 3u);
    EXPECT_EQ(p->argv[p->argv.size() - 3], "/bin/true");
    EXPECT_EQ(p->argv.back(), "y z");
    EXPECT_TRUE(has(p->env, "A=1"));
    EXPECT_TRUE(has(p->env, "PMIXCPP_SPAWN_PARENT=slurm.7.0:2"));
    EXPECT_FALSE(has(p->env, "SLURM_PMIXCPP_PROCTERMEVENTS=all"));
}

TEST(Spawn, NotifyProcTerminationAsksTheChildrensServers) {
    auto r = spawn_req(2);
    r.request.job_info = infos({info_num<bool>(PMIX_NOTIFY_PROC_TERMINATION, true, PMIX_BOOL)});
    auto p = spawn::plan_spawn(r, 42);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_TRUE(has(p->env, "SLURM_PMIXCPP_PROCTERMEVENTS=all"));
}

TEST(Spawn, AttributesAndShapesRefused) {
    auto r = spawn_req(2);
    pmix_info_t reqd = info_str("pmix.cpus.list", "0-3");
    reqd.flags |= PMIX_INFO_REQD;
    r.request.job_info = infos({reqd});
    EXPECT_EQ(spawn::plan_spawn(r, 1).status().code(), PMIX_ERR_NOT_SUPPORTED);
    r.request.job_info = infos({info_str("pmix.cpus.list", "0-3")});  // optional: ignored
    EXPECT_TRUE(spawn::plan_spawn(r, 1).ok());
    r.request.job_info = infos({info_num<int>(PMIX_HOST, 3, PMIX_INT)});
    EXPECT_EQ(spawn::plan_spawn(r, 1).status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(spawn::plan_spawn(spawn_req(0), 1).status().code(), PMIX_ERR_BAD_PARAM);
    auto two = spawn_req(1);
    two.request.apps.push_back(wire::spawn_app{"/bin/true", {}, {}, {}, 0, InfoArray()});
    EXPECT_EQ(spawn::plan_spawn(two, 1).status().code(), PMIX_ERR_BAD_PARAM);  // the 2nd app has no procs
}

TEST(Spawn, SeveralAppsRunThroughTheMpmdHelper) {
    auto r = spawn_req(2);  // app 0: /bin/true x "y z", A=1
    r.request.job_info = infos({info_str(PMIX_WDIR, "/tmp"), info_str(PMIX_HOST, "n1")});
    wire::spawn_app b{"/bin/echo", {"echo", "b"}, {"B=2"}, "sub", 3, InfoArray()};
    b.info = infos({info_str(PMIX_WDIR, "/var")});
    r.request.apps.push_back(std::move(b));
    auto p = spawn::plan_spawn(r, 42);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_TRUE(has(p->argv, "--ntasks=5"));
    EXPECT_TRUE(has(p->argv, "--chdir=/tmp"));
    EXPECT_TRUE(has(p->argv, "--nodelist=n1"));
    EXPECT_EQ(p->argv.back().substr(p->argv.back().rfind('/') + 1), "pmixcpp-mpmd");
    EXPECT_TRUE(has(p->env, "PMIXCPP_SPAWN_APP_SIZES=2,3"));
    EXPECT_FALSE(has(p->env, "A=1"));  // app env goes to that app only
    EXPECT_TRUE(p->rank_hosts.empty());
    ASSERT_EQ(p->exes.size(), 2u);
    EXPECT_EQ(p->exes[0].cmd, "/bin/true");
    EXPECT_EQ(p->exes[1].cwd, "/var");  // the app's PMIX_WDIR wins over its cwd
    std::string table;
    for (const auto &e : p->env)
        if (e.rfind("PMIXCPP_MPMD_APPS=", 0) == 0) table = e.substr(strlen("PMIXCPP_MPMD_APPS="));
    std::vector<spawn::mpmd_app> apps;
    ASSERT_TRUE(spawn::decode_mpmd(table, &apps).ok());
    ASSERT_EQ(apps.size(), 2u);
    EXPECT_EQ(apps[0].argv, (std::vector<std::string>{"/bin/true", "x", "y z"}));
    EXPECT_EQ(apps[0].env, (std::vector<std::string>{"A=1"}));
    EXPECT_EQ(apps[1].first_rank, 2u);
    EXPECT_EQ(apps[1].nprocs, 3u);
    EXPECT_EQ(apps[1].cwd, "/var");
    EXPECT_EQ(spawn::app_of_rank(apps, 1), &apps[0]);
    EXPECT_EQ(spawn::app_of_rank(apps, 4), &apps[1]);
    EXPECT_EQ(spawn::app_of_rank(apps, 5), nullptr);

    // apps naming their own hosts: one host per rank, round each app's list
    r.request.job_info = InfoArray();
    r.request.apps[0].info = infos({info_str(PMIX_HOST, "n[3-4]")});
    r.request.apps[1].info = infos({info_str(PMIX_HOST, "n5")});
    p = spawn::plan_spawn(r, 42);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->rank_hosts, (std::vector<std::string>{"n3", "n4", "n5", "n5", "n5"}));
    EXPECT_TRUE(has(p->argv, "--distribution=arbitrary"));
    // an app without hosts goes where the others go
    r.request.apps[1].info = InfoArray();
    p = spawn::plan_spawn(r, 42);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_EQ(p->rank_hosts, (std::vector<std::string>{"n3", "n4", "n3", "n4", "n3"}));
}

TEST(Spawn, MultiProgLinesAreApps) {
    auto a = spawn::parse_multi_prog("# comment\n\n0,3 ./a %t\n1-2 ./b \\\n  x # tail\n* ./c\n4 ./never\n", 6);
    ASSERT_TRUE(a.ok()) << a.status().message();
    EXPECT_EQ(a->app_of_rank, (std::vector<uint32_t>{0, 1, 1, 0, 2, 2}));
    EXPECT_EQ(a->argv, (std::vector<std::string>{"./a %t", "./b  x", "./c"}));
    // a line whose ranks were all named before is no app (Slurm runs the first line)
    a = spawn::parse_multi_prog("0-1 ./a\n1 ./b\n", 2);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->argv.size(), 1u);
    EXPECT_FALSE(spawn::parse_multi_prog("0 ./a\n", 2).ok());        // rank 1 runs nothing
    EXPECT_FALSE(spawn::parse_multi_prog("0-2 ./a\n", 2).ok());      // out of range
    EXPECT_FALSE(spawn::parse_multi_prog("1-0 ./a\n* ./b", 2).ok()); // backwards
    EXPECT_FALSE(spawn::parse_multi_prog("x ./a\n", 1).ok());
    EXPECT_FALSE(spawn::parse_multi_prog("*\n", 1).ok());            // no program
    EXPECT_FALSE(spawn::parse_multi_prog("99999999999 ./a\n* ./b", 1).ok());
}

TEST(Spawn, MpmdTableRejectsWhatItDidNotWrite) {
    std::vector<spawn::mpmd_app> apps(2);
    apps[0] = {0, 1, "a", {"a"}, {}, ""};
    apps[1] = {1, 2, "b", {"b", "c d"}, {"X=1"}, "/w"};
    auto hex = spawn::encode_mpmd(apps);
    ASSERT_TRUE(hex.ok());
    std::vector<spawn::mpmd_app> back;
    ASSERT_TRUE(spawn::decode_mpmd(hex.value(), &back).ok());
    EXPECT_EQ(back[1].argv[1], "c d");
    EXPECT_FALSE(spawn::decode_mpmd(hex.value().substr(0, hex->size() - 2), &back).ok());  // truncated
    EXPECT_FALSE(spawn::decode_mpmd(hex.value() + "00", &back).ok());                      // trailing
    EXPECT_FALSE(spawn::decode_mpmd("zz" + hex.value().substr(2), &back).ok());           // not hex
    apps[1].first_rank = 2;  // a gap in the ranks
    EXPECT_FALSE(spawn::decode_mpmd(spawn::encode_mpmd(apps).value(), &back).ok());
    apps[1].first_rank = 1;
    apps[1].env.assign(1, std::string(70 * 1024, 'x'));  // does not fit in one variable
    EXPECT_EQ(spawn::encode_mpmd(apps).status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(spawn::parse_app_sizes("4,1"), (std::vector<uint32_t>{4, 1}));
    EXPECT_TRUE(spawn::parse_app_sizes("4,,1").empty());
    EXPECT_TRUE(spawn::parse_app_sizes("").empty());
}

TEST(Spawn, TargetAllocationAndChildSeparation) {
    auto r = spawn_req(2);
    auto resolve = [](const std::string &id) -> Result<uint32_t> {
        if (id == "7.0.1") return 99u;
        return Status(PMIX_ERR_BAD_PARAM, "allocation " + id + " was not obtained by this step");
    };
    r.request.job_info = infos({info_str(PMIX_SPAWN_TARGET, "7.0.1"), info_num<bool>(PMIX_SPAWN_CHILD_SEP, true, PMIX_BOOL)});
    auto p = spawn::plan_spawn(r, 7, resolve);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_TRUE(has(p->argv, "--jobid=99"));
    EXPECT_EQ(p->job_id, 99u);
    EXPECT_TRUE(p->child_sep);
    r.request.job_info = infos({info_str(PMIX_ALLOC_ID, "7.0.1")});  // the allocation's own key
    p = spawn::plan_spawn(r, 7, resolve);
    ASSERT_TRUE(p.ok()) << p.status().message();
    EXPECT_TRUE(has(p->argv, "--jobid=99"));
    EXPECT_FALSE(p->child_sep);
    r.request.job_info = infos({info_str(PMIX_SPAWN_TARGET, "7.0.2")});
    EXPECT_EQ(spawn::plan_spawn(r, 7, resolve).status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(spawn::plan_spawn(r, 7).status().code(), PMIX_ERR_BAD_PARAM);  // no resolver: nothing to target
    r.request.job_info = infos({info_num<int>(PMIX_SPAWN_TARGET, 3, PMIX_INT)});
    EXPECT_EQ(spawn::plan_spawn(r, 7, resolve).status().code(), PMIX_ERR_BAD_PARAM);
    r.request.job_info = infos({info_str(PMIX_SPAWN_TARGET, "7.0.1"), info_str(PMIX_ALLOC_ID, "7.0.3")});
    EXPECT_EQ(spawn::plan_spawn(r, 7, resolve).status().code(), PMIX_ERR_BAD_PARAM);  // two targets
    r.request.job_info = infos({info_str(PMIX_SPAWN_CHILD_SEP, "yes")});
    EXPECT_EQ(spawn::plan_spawn(r, 7, resolve).status().code(), PMIX_ERR_BAD_PARAM);
    r.request.job_info = InfoArray();
    p = spawn::plan_spawn(r, 7, resolve);
    ASSERT_TRUE(p.ok());
    EXPECT_TRUE(has(p->argv, "--jobid=7"));
}

namespace {
// A stand-in for srun in PATH: names the step "slurm.5.<n>" through the report pipe as the
// child srun's plugin does, then stays (ignoring SIGTERM) for `life` seconds.
struct fake_srun {
    std::string dir, old_path;
    explicit fake_srun(const char *life) {
        char d[] = "/tmp/pmixcpp-fake-srun.XXXXXX";
        dir = mkdtemp(d);
        std::string script = dir + "/srun";
        FILE *f = fopen(script.c_str(), "w");
        fprintf(f, "#!/bin/bash\ntrap '' TERM\nn=$(ls %s | wc -l)\neval \"echo slurm.5.$n >&$PMIXCPP_SPAWN_REPORT_FD\"\n"
                   "exec {PMIXCPP_SPAWN_REPORT_FD}>&-\nsleep %s\n",
                dir.c_str(), life);
        fclose(f);
        chmod(script.c_str(), 0755);
        old_path = getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin";
        setenv("PATH", (dir + ":" + old_path).c_str(), 1);
    }
    ~fake_srun() {
        setenv("PATH", old_path.c_str(), 1);
        std::filesystem::remove_all(dir);
    }
};
// Submit one spawn of /bin/true and wait for the launcher's answer.
spawn::agent_spawn_reply spawn_through(spawn::spawn_launcher &l, bool child_sep) {
    auto r = spawn_req(1);
    if (child_sep) r.request.job_info = infos({info_num<bool>(PMIX_SPAWN_CHILD_SEP, true, PMIX_BOOL)});
    auto body = spawn::encode_request(r);
    EXPECT_TRUE(body.ok());
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);  // as the agent accept4()s
    l.submit(agent::responder::on_fd(sv[0], 1), body.value());  // closed after the answer
    std::vector<uint8_t> got;
    uint8_t buf[4096];
    ssize_t k;
    while ((k = read(sv[1], buf, sizeof(buf))) > 0) got.insert(got.end(), buf, buf + k);
    close(sv[1]);
    spawn::agent_spawn_reply rep;
    rep.status = got.empty() ? PMIX_ERROR : PMIX_SUCCESS;  // framed: the namespace is in there
    std::string text(got.begin(), got.end());
    auto at = text.find("slurm.5.");
    if (at != std::string::npos) rep.nspace = text.substr(at, 11);
    return rep;
}
}  // namespace

TEST(Spawn, ChildrenEndWithTheParentUnlessSeparated) {
    fake_srun srun("30");
    std::vector<std::tuple<uint32_t, uint32_t, int>> signalled;
    std::mutex m;
    auto t0 = std::chrono::steady_clock::now();
    {
        spawn::spawn_launcher l(5, {}, [&](uint32_t job, uint32_t step, int sig) {
            std::lock_guard<std::mutex> g(m);
            signalled.emplace_back(job, step, sig);  // the step "ignores" it: the srun stays
        }, spawn::child_end_times{50, 100, 100});
        auto rep = spawn_through(l, false);
        EXPECT_EQ(rep.nspace.rfind("slurm.5.", 0), 0u) << rep.nspace;
    }  // the parent step is over: SIGTERM, SIGKILL of the step, then its srun is killed
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_LT(s, 10.0);
    ASSERT_EQ(signalled.size(), 2u);
    EXPECT_EQ(std::get<0>(signalled[0]), 5u);
    EXPECT_EQ(std::get<2>(signalled[0]), SIGTERM);
    EXPECT_EQ(std::get<2>(signalled[1]), SIGKILL);
}

TEST(Spawn, SeparatedChildrenAreWaitedFor) {
    fake_srun srun("1");
    int signalled = 0;
    auto t0 = std::chrono::steady_clock::now();
    {
        spawn::spawn_launcher l(5, {}, [&](uint32_t, uint32_t, int) { ++signalled; },
                                spawn::child_end_times{50, 100, 100});
        EXPECT_EQ(spawn_through(l, true).nspace.rfind("slurm.5.", 0), 0u);
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(signalled, 0);
    EXPECT_GE(s, 0.9);  // the srun lived its second
}

TEST(Spawn, StepNamespacesParse) {
    uint32_t job = 0, step = 0;
    EXPECT_TRUE(spawn::parse_step_nspace("slurm.12.3", &job, &step));
    EXPECT_EQ(job, 12u);
    EXPECT_EQ(step, 3u);
    EXPECT_FALSE(spawn::parse_step_nspace("slurm.12", &job, &step));
    EXPECT_FALSE(spawn::parse_step_nspace("other.12.3", &job, &step));
    EXPECT_FALSE(spawn::parse_step_nspace("slurm.12.x", &job, &step));
    EXPECT_FALSE(spawn::parse_step_nspace("slurm.99999999999.1", &job, &step));
}

TEST(Spawn, ExecutableIsResolvedLikeExecvp) {
    EXPECT_TRUE(spawn::resolve_exe("true", "", "/nonexistent:/bin:/usr/bin").ok());
    EXPECT_EQ(spawn::resolve_exe("no-such-prog-xyz", "", "/bin:/usr/bin").status().code(), PMIX_ERR_JOB_EXE_NOT_FOUND);
    char plain[] = "/tmp/pmixcpp-dyn-test.XXXXXX";  // a file without execute bits
    int fd = mkstemp(plain);
    ASSERT_GE(fd, 0);
    close(fd);
    chmod(plain, 0644);
    EXPECT_EQ(spawn::resolve_exe(plain, "", "").status().code(), PMIX_ERR_JOB_EXE_NOT_FOUND);
    unlink(plain);
    EXPECT_TRUE(spawn::resolve_exe("bin/true", "/", "").ok());
    // a bare name not in PATH: the working directory, after PATH (as srun and mpirun do)
    auto found = [](const std::string &cmd, const std::string &cwd, const std::string &path) {
        auto r = spawn::resolve_exe(cmd, cwd, path);
        return r.ok() ? r.value() : std::string("(") + r.status().message() + ")";
    };
    EXPECT_EQ(found("true", "/bin", "/nonexistent"), "/bin/true");
    EXPECT_EQ(found("true", "/nonexistent", "/usr/bin"), "/usr/bin/true");
    EXPECT_EQ(spawn::resolve_exe("true", "/etc", "/nonexistent").status().code(), PMIX_ERR_JOB_EXE_NOT_FOUND);
    EXPECT_EQ(found("./true", "/bin", ""), "/bin/./true");
}

TEST(Spawn, AgentMessagesRoundTrip) {
    auto r = spawn_req(3);
    auto bytes = spawn::encode_request(r);
    ASSERT_TRUE(bytes.ok());
    EXPECT_TRUE(spawn::is_spawn_body(bytes.value()));
    spawn::agent_spawn_request back;
    ASSERT_TRUE(spawn::decode_request(bytes.value(), &back).ok());
    EXPECT_EQ(back.parent_nspace, "slurm.7.0");
    EXPECT_EQ(back.parent_rank, 2u);
    ASSERT_EQ(back.request.apps.size(), 1u);
    EXPECT_EQ(back.request.apps[0].argv, r.request.apps[0].argv);
    EXPECT_EQ(back.request.apps[0].maxprocs, 3);
    auto cut = bytes.value();
    cut.pop_back();
    EXPECT_FALSE(spawn::decode_request(cut, &back).ok());
    std::vector<uint8_t> alloc_body = {1, 0, 0, 0};
    EXPECT_FALSE(spawn::is_spawn_body(alloc_body));

    spawn::agent_spawn_reply rep{PMIX_SUCCESS, "", "slurm.7.3"};
    auto rb = agent::encode_reply(spawn::to_reply(rep));  // the agent's one reply, nspace as body
    ASSERT_TRUE(rb.ok());
    agent::reply back_reply;
    ASSERT_TRUE(agent::decode_reply(rb.value(), &back_reply).ok());
    spawn::agent_spawn_reply rep2;
    ASSERT_TRUE(spawn::from_reply(back_reply, &rep2).ok());
    EXPECT_EQ(rep2.nspace, "slurm.7.3");
}

// --- the job's session store (srun side) ----------------------------------------------------------
#include "plugin/services/sessions/session_srun.h"

namespace {
session::agent_request sreq(wire::msg_type t, const std::string &ns, uint32_t rank, std::vector<uint8_t> payload) {
    session::agent_request r;
    r.type = static_cast<uint8_t>(t);
    r.nspace = ns;
    r.rank = rank;
    r.payload = std::move(payload);
    return r;
}
std::vector<uint8_t> publish_persist(const char *key, const char *value, pmix_persistence_t p) {
    wire::publish_request m;
    m.data = infos({info_str(key, value)});
    m.directives = infos({info_num<pmix_persistence_t>(PMIX_PERSISTENCE, p, PMIX_PERSIST)});
    wire::Writer w;
    EXPECT_TRUE(wire::encode(w, m).ok());
    return w.data();
}
}  // namespace

TEST(SessionStore, SharedByStepsWithPersistence) {
    char dir[] = "/tmp/pmixcpp-session-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    {
        auto s = session::job_store::open(1, getuid(), "c", dir);
        ASSERT_TRUE(s.ok()) << s.status().message();
        auto &st = *s.value();
        const auto pub = wire::msg_type::publish, lk = wire::msg_type::lookup;
        EXPECT_EQ(st.handle(sreq(pub, "slurm.1.0", 0, publish_payload("k", "v0"))).status, PMIX_SUCCESS);
        // Another step: duplicate refused, lookup finds step 0's data.
        EXPECT_EQ(st.handle(sreq(pub, "slurm.1.1", 0, publish_payload("k", "v1"))).status, PMIX_ERR_DUPLICATE_KEY);
        auto r = st.handle(sreq(lk, "slurm.1.1", 3, lookup_payload({"k"}, {})));
        ASSERT_EQ(r.status, PMIX_SUCCESS);
        wire::lookup_reply found;
        ASSERT_TRUE(wire::decode_payload(r.body, &found).ok());
        ASSERT_EQ(found.owners.size(), 1u);
        EXPECT_STREQ(found.owners[0].nspace, "slurm.1.0");
        EXPECT_STREQ(found.data[0].value.data.string, "v0");
        // FIRST_READ: one reader.
        EXPECT_EQ(st.handle(sreq(pub, "slurm.1.0", 1, publish_persist("once", "x", PMIX_PERSIST_FIRST_READ))).status,
                  PMIX_SUCCESS);
        EXPECT_EQ(st.handle(sreq(lk, "slurm.1.1", 0, lookup_payload({"once"}, {}))).status, PMIX_SUCCESS);
        EXPECT_EQ(st.handle(sreq(lk, "slurm.1.1", 0, lookup_payload({"once"}, {}))).status, PMIX_ERR_NOT_FOUND);
        // Wait with a timeout.
        auto t = st.handle(sreq(lk, "slurm.1.1", 0,
                                lookup_payload({"never"}, {info_num<bool>(PMIX_WAIT, true, PMIX_BOOL),
                                                           info_num<int>(PMIX_TIMEOUT, 1, PMIX_INT)})));
        EXPECT_EQ(t.status, PMIX_ERR_TIMEOUT);
        // Unpublish by a non-owner: not found; the rank leaves: its PROC data goes; SESSION stays
        // after its step ended.
        wire::unpublish_request u;
        u.keys = {"k"};
        wire::Writer w;
        ASSERT_TRUE(wire::encode(w, u).ok());
        EXPECT_EQ(st.handle(sreq(wire::msg_type::unpublish, "slurm.1.1", 0, w.data())).status, PMIX_ERR_NOT_FOUND);
        EXPECT_EQ(st.handle(sreq(pub, "slurm.1.0", 2, publish_persist("keep", "y", PMIX_PERSIST_SESSION))).status,
                  PMIX_SUCCESS);
        session::agent_request left;
        left.nspace = "slurm.1.0";
        left.rank = 0;
        st.handle(left);
        EXPECT_EQ(st.handle(sreq(lk, "slurm.1.1", 0, lookup_payload({"k"}, {}))).status, PMIX_ERR_NOT_FOUND);
        st.step_ended("slurm.1.0");
        EXPECT_EQ(st.handle(sreq(lk, "slurm.1.1", 0, lookup_payload({"keep"}, {}))).status, PMIX_SUCCESS);
        // Messages.
        auto b = session::encode_request(sreq(lk, "n", 1, {1, 2}));
        ASSERT_TRUE(b.ok());
        EXPECT_TRUE(session::is_session_body(b.value()));
        EXPECT_FALSE(spawn::is_spawn_body(b.value()));
        session::agent_request back;
        ASSERT_TRUE(session::decode_request(b.value(), &back).ok());
        EXPECT_EQ(back.payload.size(), 2u);
    }
    std::filesystem::remove_all(dir);
}

// A waiting lookup is answered by another srun's publish (another job_store on the directory,
// which the waiter sees when it next looks), and a rendezvous completes when the other namespace's
// srun contributes later.
TEST(SessionStore, WaitersWakeOnAnotherSrunsWrites) {
    char dir[] = "/tmp/pmixcpp-session-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    {
        auto a = session::job_store::open(1, getuid(), "c", dir);
        auto b = session::job_store::open(1, getuid(), "c", dir);
        ASSERT_TRUE(a.ok() && b.ok());
        const auto pub = wire::msg_type::publish, lk = wire::msg_type::lookup;
        session::agent_reply waited;
        std::thread waiter([&] {
            waited = a.value()->handle(sreq(lk, "slurm.1.1", 0,
                                            lookup_payload({"later", "later2"}, {info_num<bool>(PMIX_WAIT, true, PMIX_BOOL),
                                                                                 info_num<int>(PMIX_TIMEOUT, 30, PMIX_INT)})));
        });
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        EXPECT_EQ(b.value()->handle(sreq(pub, "slurm.1.0", 0, publish_payload("later", "v"))).status, PMIX_SUCCESS);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        EXPECT_EQ(b.value()->handle(sreq(pub, "slurm.1.0", 1, publish_payload("later2", "w"))).status, PMIX_SUCCESS);
        waiter.join();
        ASSERT_EQ(waited.status, PMIX_SUCCESS) << waited.message;
        wire::lookup_reply found;
        ASSERT_TRUE(wire::decode_payload(waited.body, &found).ok());
        EXPECT_EQ(found.data.size(), 2u);

        a.value()->step_started("slurm.1.0");
        b.value()->step_started("slurm.1.1");
        auto part = [](const std::string &own) {
            session::rendezvous_request r;
            r.key = "c1";
            r.nspace = own;
            r.nspaces = {"slurm.1.0", "slurm.1.1"};
            r.node = 0;
            r.nodes = 1;
            r.timeout_ms = 30000;
            r.contribution = {uint8_t(own.back())};
            return r;
        };
        session::agent_reply first;
        std::thread t([&] { first = a.value()->rendezvous(part("slurm.1.0")); });
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        auto second = b.value()->rendezvous(part("slurm.1.1"));
        t.join();
        EXPECT_EQ(first.status, PMIX_SUCCESS) << first.message;
        EXPECT_EQ(second.status, PMIX_SUCCESS) << second.message;
        std::vector<session::rendezvous_piece> pieces;
        ASSERT_TRUE(session::decode_pieces(first.body, &pieces).ok());
        EXPECT_EQ(pieces.size(), 2u);
    }
    std::filesystem::remove_all(dir);
}

// A step starting drops what its namespace owns from an earlier job of the same id.
TEST(SessionStore, StartingStepDropsItsNamespacesStaleData) {
    char dir[] = "/tmp/pmixcpp-session-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    {
        auto s = session::job_store::open(1, getuid(), "c", dir);
        ASSERT_TRUE(s.ok());
        auto &st = *s.value();
        const auto pub = wire::msg_type::publish, lk = wire::msg_type::lookup;
        ASSERT_EQ(st.handle(sreq(pub, "slurm.1.5", 0, publish_persist("old", "x", PMIX_PERSIST_SESSION))).status,
                  PMIX_SUCCESS);
        ASSERT_EQ(st.handle(sreq(pub, "slurm.1.4", 0, publish_persist("other", "y", PMIX_PERSIST_SESSION))).status,
                  PMIX_SUCCESS);
        st.step_started("slurm.1.5");
        EXPECT_EQ(st.handle(sreq(lk, "slurm.1.4", 0, lookup_payload({"old"}, {}))).status, PMIX_ERR_NOT_FOUND);
        EXPECT_EQ(st.handle(sreq(lk, "slurm.1.5", 0, lookup_payload({"other"}, {}))).status, PMIX_SUCCESS);
        EXPECT_EQ(st.handle(sreq(pub, "slurm.1.5", 0, publish_persist("old", "z", PMIX_PERSIST_SESSION))).status,
                  PMIX_SUCCESS);
    }
    std::filesystem::remove_all(dir);
}

TEST(SessionStore, RefusesADirectoryOthersCanRead) {
    char dir[] = "/tmp/pmixcpp-session-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    chmod(dir, 0755);
    EXPECT_EQ(session::job_store::open(1, getuid(), "c", dir).status().code(), PMIX_ERR_NO_PERMISSIONS);
    rmdir(dir);
}

// --- PMIx_Connect across namespaces (plugin/server/connect.h) through a real job store ---------

namespace {

// One namespace's server on one node: its connect_service, the replies it sent, and the
// rendezvous requests it made (run on threads against the job store, as srun's agent does).
struct connect_node {
    step_info step;
    std::unique_ptr<connect_service> svc;
    std::vector<connect_reply_rec> replies;
    std::vector<std::thread> threads;
    std::mutex m;
    std::vector<std::pair<connect_ops::done_fn, session::agent_reply>> finished;

    connect_node(const std::string &ns, uint32_t ntasks, session::job_store *store) {
        step.nspace = ns;
        step.ntasks = ntasks;
        step.node_id = 0;
        step.node_names = {"n1"};
        step.node_ranks = {{}};
        for (uint32_t r = 0; r < ntasks; ++r) step.node_ranks[0].push_back(r);
        connect_ops ops;
        ops.reply = [this](uint64_t conn, uint32_t, pmix_status_t st, const std::string &msg,
                           std::span<const uint8_t> body) {
            replies.push_back({conn, st, msg, std::vector<uint8_t>(body.begin(), body.end())});
        };
        ops.rendezvous = [this, store](std::vector<uint8_t> body, int, connect_ops::done_fn done) {
            threads.emplace_back([this, store, body, done] {
                session::rendezvous_request req;
                session::agent_reply rep;
                if (!session::decode(body, &req).ok()) rep.status = PMIX_ERR_UNPACK_FAILURE;
                else rep = store->rendezvous(req);
                std::lock_guard<std::mutex> g(m);
                finished.emplace_back(done, std::move(rep));
            });
        };
        ops.data_of = [ns](uint32_t rank, relation rel) -> Result<InfoArray> {
            if (rank == PMIX_RANK_WILDCARD)
                return infos({info_num<uint32_t>(PMIX_JOB_SIZE, 7, PMIX_UINT32), info_str(PMIX_LOCAL_PEERS, "0,1,2")});
            std::string v = ns + ":" + std::to_string(rank) + (rel == relation::same_node ? ":local" : ":remote");
            return infos({info_str("x", v.c_str())});
        };
        ops.ns_size = [store](const std::string &nspace, connect_ops::size_fn done) {  // answered at once
            wire::lookup_request lk;
            lk.keys.push_back(std::string(kNamespaceSizeKey) + nspace);
            wire::Writer w;
            ASSERT_TRUE(wire::encode(w, lk).ok());
            session::agent_request req;
            req.type = static_cast<uint8_t>(wire::msg_type::lookup);
            req.nspace = "slurm.1.0";
            req.payload = w.data();
            auto rep = store->handle(req);
            wire::lookup_reply r;
            if (rep.status != PMIX_SUCCESS || !wire::decode_payload(rep.body, &r).ok() || r.data.size() != 1)
                return done(std::nullopt);
            done(r.data[0].value.data.uint32);
        };
        svc = std::make_unique<connect_service>(step, std::vector<uint32_t>(ntasks, 0), std::move(ops), 30);
    }
    // Join the rendezvous threads and hand their answers to the service ("the loop thread").
    void settle() {
        for (auto &t : threads) t.join();
        threads.clear();
        for (auto &[done, rep] : finished) done(rep.status, rep.message, rep.body);
        finished.clear();
    }
};

}  // namespace

TEST(Connect, TwoNamespacesMeetAndShareData) {
    char dir[] = "/tmp/pmixcpp-connect-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    {
        auto store = session::job_store::open(1, getuid(), "c", dir);
        ASSERT_TRUE(store.ok()) << store.status().message();
        store.value()->step_started("slurm.1.0");
        store.value()->step_started("slurm.1.1");
        connect_node a("slurm.1.0", 2, store.value().get()), b("slurm.1.1", 1, store.value().get());
        auto set = procs({{"slurm.1.0", PMIX_RANK_WILDCARD}, {"slurm.1.1", PMIX_RANK_WILDCARD}});
        InfoArray none;
        a.svc->on_request(1, 0, 1, connect_op::connect, set, none);
        EXPECT_TRUE(a.threads.empty());  // rank 1 of A has not entered: nothing sent yet
        a.svc->on_request(2, 1, 1, connect_op::connect, set, none);
        b.svc->on_request(3, 0, 1, connect_op::connect, set, none);
        a.settle();
        b.settle();
        ASSERT_EQ(a.replies.size(), 2u);
        ASSERT_EQ(b.replies.size(), 1u);
        for (auto &r : a.replies) EXPECT_EQ(r.status, PMIX_SUCCESS) << r.message;
        EXPECT_EQ(b.replies[0].status, PMIX_SUCCESS) << b.replies[0].message;
        // B learnt A's two ranks (the same-node view: both on n1) and A's job data, with the
        // local peers recomputed for B's node.
        wire::connect_data got;
        ASSERT_TRUE(wire::decode_payload(b.replies[0].body, &got).ok());
        std::map<uint32_t, std::string> x;
        std::string peers;
        for (auto &e : got.entries) {
            EXPECT_STREQ(e.proc.nspace, "slurm.1.0");
            for (size_t i = 0; i < e.infos.size(); ++i) {
                if (strcmp(e.infos[i].key, "x") == 0) x[e.proc.rank] = e.infos[i].value.data.string;
                if (strcmp(e.infos[i].key, PMIX_LOCAL_PEERS) == 0) peers = e.infos[i].value.data.string;
            }
        }
        EXPECT_EQ(x[0], "slurm.1.0:0:local");
        EXPECT_EQ(x[1], "slurm.1.0:1:local");
        EXPECT_EQ(peers, "0,1");
        // Gets of the other namespace's procs, from what the connect brought.
        pmix_proc_t p = procs({{"slurm.1.1", 0}})[0];
        a.svc->get(9, 5, p, "x", none);
        EXPECT_EQ(a.replies.back().status, PMIX_SUCCESS);
        a.svc->get(9, 6, p, "never", none);
        EXPECT_EQ(a.replies.back().status, PMIX_ERR_NOT_FOUND);
        a.svc->get(9, 7, procs({{"slurm.1.9", 0}})[0], "x", none);
        EXPECT_EQ(a.replies.back().status, PMIX_ERR_NOT_FOUND);
        // Disconnect: a barrier, nothing carried.
        a.svc->on_request(1, 0, 1, connect_op::disconnect, set, none);
        a.svc->on_request(2, 1, 1, connect_op::disconnect, set, none);
        b.svc->on_request(3, 0, 1, connect_op::disconnect, set, none);
        a.settle();
        b.settle();
        EXPECT_EQ(a.replies.back().status, PMIX_SUCCESS);
        EXPECT_EQ(b.replies.back().status, PMIX_SUCCESS);
        // Nothing of the rendezvous is left.
        size_t left = 0;
        for (auto &e : std::filesystem::directory_iterator(dir))
            left += e.path().filename().string().rfind(".x", 0) == 0 ? 1 : 0;
        EXPECT_EQ(left, 0u);
    }
    std::filesystem::remove_all(dir);
}

TEST(Connect, AllRanksListedIsTheWildcard) {
    char dir[] = "/tmp/pmixcpp-connect-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    {
        auto store = session::job_store::open(1, getuid(), "c", dir);
        ASSERT_TRUE(store.ok());
        for (auto [ns, n] : {std::pair<const char *, uint32_t>{"slurm.1.0", 2}, {"slurm.1.1", 1}}) {
            store.value()->step_started(ns);
            auto rec = namespace_size_record(ns, n);
            ASSERT_TRUE(rec.ok());
            ASSERT_EQ(store.value()->handle(rec.value()).status, PMIX_SUCCESS);
        }
        connect_node a("slurm.1.0", 2, store.value().get()), b("slurm.1.1", 1, store.value().get());
        InfoArray none;
        // A writes itself as a wildcard and B's only rank explicitly; B the other way round.
        auto set_a = procs({{"slurm.1.0", PMIX_RANK_WILDCARD}, {"slurm.1.1", 0}});
        auto set_b = procs({{"slurm.1.0", 1}, {"slurm.1.0", 0}, {"slurm.1.1", PMIX_RANK_WILDCARD}});
        a.svc->on_request(1, 0, 1, connect_op::connect, set_a, none);
        a.svc->on_request(2, 1, 1, connect_op::connect, set_a, none);
        b.svc->on_request(3, 0, 1, connect_op::connect, set_b, none);
        a.settle();
        b.settle();
        ASSERT_EQ(a.replies.size(), 2u);
        ASSERT_EQ(b.replies.size(), 1u);
        for (auto &r : a.replies) EXPECT_EQ(r.status, PMIX_SUCCESS) << r.message;
        EXPECT_EQ(b.replies[0].status, PMIX_SUCCESS) << b.replies[0].message;
        // A part of a namespace stays a different set: it times out alone.
        InfoArray one_sec = infos({info_num<int>(PMIX_TIMEOUT, 1, PMIX_INT)});
        b.svc->on_request(4, 0, 2, connect_op::connect, procs({{"slurm.1.0", 0}, {"slurm.1.1", 0}}), one_sec);
        a.svc->on_request(5, 0, 2, connect_op::connect, set_a, one_sec);
        a.svc->on_request(6, 1, 2, connect_op::connect, set_a, one_sec);
        a.settle();
        b.settle();
        EXPECT_EQ(b.replies.back().status, PMIX_ERR_TIMEOUT);
        EXPECT_EQ(a.replies.back().status, PMIX_ERR_TIMEOUT);
    }
    std::string rm = std::string("rm -rf ") + dir;
    EXPECT_EQ(system(rm.c_str()), 0);
}

// A party whose step ended inside a rendezvous never marks it read, so the last reader's clean-up
// never comes: what the others left of it goes when the job's last step ends (seen after MPICH's
// concurrent_spawns was killed: a fence's contribution and read mark stayed in the directory).
TEST(Connect, OrphanedRendezvousGoesWithTheJobsLastStep) {
    char dir[] = "/tmp/pmixcpp-connect-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    {
        auto store = session::job_store::open(1, getuid(), "c", dir);
        ASSERT_TRUE(store.ok()) << store.status().message();
        store.value()->step_started("slurm.1.0");
        store.value()->step_started("slurm.1.1");
        // step 1 saw the fence complete and marked it read; step 0 ended before reading
        const std::string key = session::hex_name("fence.0123456789abcdef.0");
        const std::string one = session::hex_name("slurm.1.1");
        for (const char *kind : {".xc.", ".xr."}) {
            std::ofstream f(std::string(dir) + "/" + kind + key + "." + one + ".0");
            f << "x";
        }
        auto rendezvous_files = [&] {
            size_t n = 0;
            for (auto &e : std::filesystem::directory_iterator(dir))
                n += e.path().filename().string().rfind(".x", 0) == 0 ? 1 : 0;
            return n;
        };
        ASSERT_EQ(rendezvous_files(), 2u);
        store.value()->step_ended("slurm.1.0");
        EXPECT_EQ(rendezvous_files(), 2u);  // step 1 still runs: the files may still be read
        store.value()->step_ended("slurm.1.1");
        EXPECT_FALSE(std::filesystem::exists(dir));  // nothing left, the directory neither
    }
    std::filesystem::remove_all(dir);
}

// A step that spawned children knows their PMIX_JOB_SIZE at once, before any PMIx_Connect
// (OpenPMIx's examples/dynamic asks it right after PMIx_Spawn).
TEST(Connect, JobSizeOfAnotherStepBeforeConnect) {
    char dir[] = "/tmp/pmixcpp-connect-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    {
        auto store = session::job_store::open(1, getuid(), "c", dir);
        ASSERT_TRUE(store.ok());
        store.value()->step_started("slurm.1.0");
        store.value()->step_started("slurm.1.1");
        auto rec = namespace_size_record("slurm.1.1", 3);
        ASSERT_TRUE(rec.ok());
        ASSERT_EQ(store.value()->handle(rec.value()).status, PMIX_SUCCESS);
        connect_node a("slurm.1.0", 2, store.value().get());
        InfoArray none;
        pmix_proc_t child = procs({{"slurm.1.1", PMIX_RANK_WILDCARD}})[0];
        a.svc->get(1, 7, child, PMIX_JOB_SIZE, none);
        ASSERT_EQ(a.replies.size(), 1u);
        ASSERT_EQ(a.replies[0].status, PMIX_SUCCESS) << a.replies[0].message;
        wire::Reader r(a.replies[0].body);
        InfoArray got;
        ASSERT_TRUE(wire::decode_info_array(r, &got).ok());
        ASSERT_EQ(got.size(), 1u);
        EXPECT_STREQ(got.data()[0].key, PMIX_JOB_SIZE);
        EXPECT_EQ(got.data()[0].value.data.uint32, 3u);
        // a namespace that is no step of the job: NOT_FOUND, not a hang
        a.svc->get(1, 8, procs({{"slurm.1.9", PMIX_RANK_WILDCARD}})[0], PMIX_JOB_SIZE, none);
        ASSERT_EQ(a.replies.size(), 2u);
        EXPECT_EQ(a.replies[1].status, PMIX_ERR_NOT_FOUND);
    }
    std::string rm = std::string("rm -rf ") + dir;
    EXPECT_EQ(system(rm.c_str()), 0);
}

TEST(Connect, ErrorsAreStatusesNotHangs) {
    char dir[] = "/tmp/pmixcpp-connect-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    {
        auto store = session::job_store::open(1, getuid(), "c", dir);
        ASSERT_TRUE(store.ok());
        store.value()->step_started("slurm.1.0");
        store.value()->step_started("slurm.1.1");
        connect_node a("slurm.1.0", 2, store.value().get());
        InfoArray none;
        // The caller is not in the set.
        a.svc->on_request(1, 0, 1, connect_op::connect, procs({{"slurm.1.1", PMIX_RANK_WILDCARD}}), none);
        EXPECT_EQ(a.replies.back().status, PMIX_ERR_BAD_PARAM);
        // An unknown namespace: refused by the rendezvous at once.
        auto ghost = procs({{"slurm.1.0", 0}, {"slurm.9.9", PMIX_RANK_WILDCARD}});
        a.svc->on_request(1, 0, 1, connect_op::connect, ghost, none);
        a.settle();
        EXPECT_EQ(a.replies.back().status, PMIX_ERR_NOT_FOUND);
        // The other namespace never joins: the rendezvous times out (1 s).
        InfoArray one_sec = infos({info_num<int>(PMIX_TIMEOUT, 1, PMIX_INT)});
        a.svc->on_request(1, 0, 1, connect_op::connect, procs({{"slurm.1.0", 0}, {"slurm.1.1", 0}}), one_sec);
        a.settle();
        EXPECT_EQ(a.replies.back().status, PMIX_ERR_TIMEOUT) << a.replies.back().message;
        // A local participant never enters: the server's own deadline.
        a.svc->on_request(1, 0, 1, connect_op::connect, procs({{"slurm.1.0", PMIX_RANK_WILDCARD}}), one_sec);
        ASSERT_TRUE(a.svc->next_deadline().has_value());
        a.svc->expire(server_clock::now() + std::chrono::seconds(2));
        EXPECT_EQ(a.replies.back().status, PMIX_ERR_TIMEOUT);
        EXPECT_EQ(a.svc->pending(), 0u);
        // ... or leaves first.
        a.svc->on_request(1, 0, 1, connect_op::fence, procs({{"slurm.1.0", PMIX_RANK_WILDCARD}}), none);
        a.svc->rank_left(1);
        EXPECT_EQ(a.replies.back().status, PMIX_ERR_PROC_ABORTED);
        // A namespace that is not (or no longer) a step of the job while waiting.
        store.value()->step_ended("slurm.1.1");
        a.svc->on_request(1, 0, 1, connect_op::connect, procs({{"slurm.1.0", 0}, {"slurm.1.1", 0}}), none);
        a.settle();
        EXPECT_EQ(a.replies.back().status, PMIX_ERR_NOT_FOUND);
    }
    std::filesystem::remove_all(dir);
}

TEST(SessionStore, DirectoryRemovedByAnotherStepIsCreatedAgain) {
    char dir[] = "/tmp/pmixcpp-session-test.XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    {
        auto first = session::job_store::open(1, getuid(), "c", dir);
        auto second = session::job_store::open(1, getuid(), "c", dir);
        ASSERT_TRUE(first.ok() && second.ok());
        first.value()->step_started("slurm.1.0");
        first.value()->step_ended("slurm.1.0");  // the last step out removes the empty directory
        EXPECT_FALSE(std::filesystem::exists(dir));
        second.value()->step_started("slurm.1.1");  // ... which another srun had open
        EXPECT_TRUE(std::filesystem::exists(std::string(dir) + "/.ns." + "736c75726d2e312e31"));
        EXPECT_EQ(second.value()->handle(sreq(wire::msg_type::publish, "slurm.1.1", 0, publish_payload("k", "v"))).status,
                  PMIX_SUCCESS);
    }
    std::filesystem::remove_all(dir);
}
