// The job control engine (plugin/server/jctrl_engine.h) and the monitor engine
// (plugin/server/monitor_engine.h) without sockets: requests as the shell hands them, the
// answers caught by a reply sink of vectors, the shell's side (signals, events, removals, the
// dyn service's actions) played by the ops.
#include <gtest/gtest.h>

#include "../../plugin/server/jctrl_engine.h"
#include "../../plugin/server/monitor_engine.h"
#include "client_util.h"
#include "sink_util.h"

using namespace pmixcpp;
using namespace pmixcpp::server;
using pmixcpp::testing::make_infos;
using pmixcpp::testing::payload_of;
using pmixcpp::testing::recording_sink;
using pmixcpp::testing::set_info;

namespace {

const char *kStepDir = "/run/pmixcpp/job.7/step.0";

struct jctrl_bed : ::testing::Test {
    recording_sink sink;
    std::unique_ptr<job_control_engine> engine;
    bool dyn_takes = false;
    std::vector<std::pair<uint32_t, int>> signals;
    std::vector<std::pair<uint32_t, pmix_status_t>> events;
    std::vector<std::string> removed;
    Status signal_result = Status::success();

    void SetUp() override {
        job_control_config c;
        c.nspace = "jctrl.0";
        c.ntasks = 4;
        c.step_dir = kStepDir;
        c.max_procs = 64;
        job_control_ops o;
        o.actions = [this](uint64_t, uint32_t, uint32_t, const wire::job_control_request &) { return dyn_takes; };
        o.signal_rank = [this](uint32_t rank, int sig) {
            signals.emplace_back(rank, sig);
            return signal_result;
        };
        o.checkpoint_event = [this](uint32_t rank, pmix_status_t code, const std::string &) {
            events.emplace_back(rank, code);
        };
        o.remove_beneath = [this](const std::string &rel) {
            removed.push_back(rel);
            return rel == "gone" ? Status(PMIX_ERR_NOT_FOUND, "no such file") : Status::success();
        };
        engine = std::make_unique<job_control_engine>(c, std::move(o), sink);
    }

    void cleanup(uint32_t rank, uint32_t id, const std::string &path, bool dir = false) {
        wire::job_control_request m;
        m.infos = make_infos(1);
        set_info(m.infos[0], dir ? PMIX_REGISTER_CLEANUP_DIR : PMIX_REGISTER_CLEANUP, path.c_str(), PMIX_STRING);
        engine->request(100 + rank, rank, id, payload_of(m));
    }
    // PMIX_JOB_CTRL_CHECKPOINT_METHOD with a signal and/or an event.
    void checkpoint_method(uint32_t rank, uint32_t id, int signal, pmix_status_t event) {
        pmix_info_t parts[2]{};
        size_t n = 0;
        if (signal) set_info(parts[n++], PMIX_JOB_CTRL_CHECKPOINT_SIGNAL, &signal, PMIX_INT);
        if (event != PMIX_SUCCESS) set_info(parts[n++], PMIX_JOB_CTRL_CHECKPOINT_EVENT, &event, PMIX_STATUS);
        pmix_data_array_t da{};
        da.type = PMIX_INFO;
        da.size = n;
        da.array = parts;
        wire::job_control_request m;
        m.infos = make_infos(1);
        set_info(m.infos[0], PMIX_JOB_CTRL_CHECKPOINT_METHOD, &da, PMIX_DATA_ARRAY);
        engine->request(100 + rank, rank, id, payload_of(m));
    }
};

TEST_F(jctrl_bed, ACleanUpPathInsideTheStepDirectoryIsRegisteredAndRemovedAtTheEnd) {
    cleanup(1, 5, std::string(kStepDir) + "/out/tmp.dat");
    cleanup(2, 6, std::string(kStepDir) + "/gone");
    ASSERT_EQ(sink.replies.size(), 2u);
    EXPECT_EQ(sink.replies[0].conn, 101u);
    EXPECT_EQ(sink.replies[0].id, 5u);
    EXPECT_EQ(sink.replies[0].status, PMIX_SUCCESS) << sink.replies[0].message;
    EXPECT_FALSE(sink.replies[0].body.empty());  // a job control reply
    EXPECT_EQ(sink.replies[1].status, PMIX_SUCCESS);
    ASSERT_EQ(engine->cleanups().size(), 2u);
    EXPECT_TRUE(removed.empty());  // only at the step's end
    engine->remove_cleanups();     // a failure is logged, the rest still removed
    EXPECT_EQ(removed, (std::vector<std::string>{"out/tmp.dat", "gone"}));
}

TEST_F(jctrl_bed, ACleanUpPathOutsideTheStepDirectoryIsRefused) {
    cleanup(0, 1, "/etc/passwd");
    cleanup(0, 2, std::string(kStepDir) + "/../../../etc/shadow", true);
    cleanup(0, 3, kStepDir, true);  // the directory itself
    cleanup(0, 4, "relative/path");
    cleanup(0, 5, "");
    ASSERT_EQ(sink.replies.size(), 5u);
    EXPECT_EQ(sink.replies[0].status, PMIX_ERR_NO_PERMISSIONS);
    EXPECT_NE(sink.replies[0].message.find("not inside the step directory"), std::string::npos);
    EXPECT_EQ(sink.replies[1].status, PMIX_ERR_NO_PERMISSIONS);
    EXPECT_EQ(sink.replies[2].status, PMIX_ERR_NO_PERMISSIONS);
    EXPECT_EQ(sink.replies[3].status, PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(sink.replies[4].status, PMIX_ERR_BAD_PARAM);
    EXPECT_TRUE(engine->cleanups().empty());
    engine->remove_cleanups();
    EXPECT_TRUE(removed.empty());
}

TEST_F(jctrl_bed, CleanUpRegistrationsAreBounded) {
    for (size_t i = 0; i < kMaxCleanups; ++i) cleanup(0, 1, std::string(kStepDir) + "/f" + std::to_string(i));
    cleanup(0, 2, std::string(kStepDir) + "/one-more");
    ASSERT_EQ(sink.replies.size(), kMaxCleanups + 1);
    EXPECT_EQ(sink.replies.back().status, PMIX_ERR_OUT_OF_RESOURCE);
    EXPECT_EQ(engine->cleanups().size(), kMaxCleanups);
}

TEST_F(jctrl_bed, AMalformedRequestIsRefusedAndAnUnknownOneNotSupported) {
    engine->request(103, 3, 9, std::vector<uint8_t>{0xff, 0xff, 0xff, 0xff, 0x01});
    ASSERT_EQ(sink.refused.size(), 1u);
    EXPECT_EQ(sink.refused[0].first, 103u);
    EXPECT_NE(sink.refused[0].second.find("malformed job_control payload"), std::string::npos);
    EXPECT_TRUE(sink.replies.empty());

    wire::job_control_request m;
    m.infos = make_infos(1);
    int x = 1;
    set_info(m.infos[0], "pmix.no.such", &x, PMIX_INT);
    engine->request(103, 3, 10, payload_of(m));
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].status, PMIX_ERR_NOT_SUPPORTED);
    EXPECT_NE(sink.replies[0].message.find("pmix.no.such"), std::string::npos);

    // An action the dyn service takes: it answers, not the engine.
    dyn_takes = true;
    engine->request(103, 3, 11, payload_of(m));
    EXPECT_EQ(sink.replies.size(), 1u);
}

TEST_F(jctrl_bed, ACheckpointReachesEachRankByTheMethodItRegistered) {
    checkpoint_method(0, 1, 12, PMIX_SUCCESS);
    checkpoint_method(1, 2, 0, PMIX_JCTRL_CHECKPOINT);
    checkpoint_method(2, 3, 70, PMIX_SUCCESS);  // no such signal
    ASSERT_EQ(sink.replies.size(), 3u);
    EXPECT_EQ(sink.replies[0].status, PMIX_SUCCESS) << sink.replies[0].message;
    EXPECT_EQ(sink.replies[1].status, PMIX_SUCCESS) << sink.replies[1].message;
    EXPECT_EQ(sink.replies[2].status, PMIX_ERR_BAD_PARAM);
    EXPECT_TRUE(engine->has_checkpoint_method(0));
    EXPECT_FALSE(engine->has_checkpoint_method(2));

    signal_result = Status(PMIX_ERR_UNREACH, "not connected");  // logged, the others still told
    engine->checkpoint({0, 1, 2, 3}, "checkpoint requested");
    EXPECT_EQ(signals, (std::vector<std::pair<uint32_t, int>>{{0, 12}}));
    EXPECT_EQ(events, (std::vector<std::pair<uint32_t, pmix_status_t>>{{1, PMIX_JCTRL_CHECKPOINT}}));

    engine->rank_gone(0);  // a rank that left is told nothing
    EXPECT_FALSE(engine->has_checkpoint_method(0));
    engine->checkpoint({0}, "again");
    EXPECT_EQ(signals.size(), 1u);
}

// --- monitor_engine ------------------------------------------------------------------------

struct monitor_bed : ::testing::Test {
    recording_sink sink;
    std::unique_ptr<monitor_engine> engine;
    std::vector<heartbeat_alert> tripped;
    server_clock::time_point t0 = server_clock::now();

    void SetUp() override {
        monitor_ops o;
        o.tripped = [this](const heartbeat_alert &a) { tripped.push_back(a); };
        engine = std::make_unique<monitor_engine>(monitor_config{"mon.0", 4, 64}, std::move(o), sink);
    }
    void send(uint32_t rank, uint32_t id, const char *what, const std::string &text,
              const std::vector<std::pair<const char *, int>> &numbers, server_clock::time_point at,
              const char *monitor_id = nullptr) {
        wire::monitor_request m;
        m.monitor = make_infos(1);
        if (text.empty()) {
            bool yes = true;
            set_info(m.monitor[0], what, &yes, PMIX_BOOL);
        } else {
            set_info(m.monitor[0], what, text.c_str(), PMIX_STRING);
        }
        m.directives = make_infos(numbers.size() + (monitor_id ? 1 : 0));
        size_t i = 0;
        for (const auto &[k, v] : numbers) set_info(m.directives[i++], k, &v, PMIX_INT);
        if (monitor_id) set_info(m.directives[i], PMIX_MONITOR_ID, monitor_id, PMIX_STRING);
        engine->request(100 + rank, rank, id, payload_of(m), at);
    }
    void heartbeat_monitor(uint32_t rank, uint32_t id, int period, int drops, const char *name) {
        send(rank, id, PMIX_MONITOR_HEARTBEAT, "", {{PMIX_MONITOR_HEARTBEAT_TIME, period}, {PMIX_MONITOR_HEARTBEAT_DROPS, drops}},
             t0, name);
    }
};

TEST_F(monitor_bed, AHeartbeatMonitorTripsWhenTheBeatsStopAndAnswersItsBeats) {
    heartbeat_monitor(1, 7, 2, 0, "hb");
    ASSERT_EQ(sink.replies.size(), 1u);
    EXPECT_EQ(sink.replies[0].conn, 101u);
    EXPECT_EQ(sink.replies[0].id, 7u);
    EXPECT_EQ(sink.replies[0].status, PMIX_SUCCESS) << sink.replies[0].message;
    EXPECT_EQ(engine->monitors(), 1u);
    ASSERT_TRUE(engine->next_deadline());
    EXPECT_EQ(*engine->next_deadline(), t0 + std::chrono::seconds(2));

    send(1, 8, PMIX_SEND_HEARTBEAT, "", {}, t0 + std::chrono::seconds(1));
    EXPECT_EQ(sink.replies.back().status, PMIX_SUCCESS);
    engine->expire(t0 + std::chrono::seconds(2));
    EXPECT_TRUE(tripped.empty());
    engine->expire(t0 + std::chrono::seconds(3));
    ASSERT_EQ(tripped.size(), 1u);
    EXPECT_EQ(tripped[0].rank, 1u);
    EXPECT_EQ(tripped[0].id, "hb");
    EXPECT_EQ(tripped[0].code, PMIX_MONITOR_HEARTBEAT_ALERT);

    // A rank without a monitor: its beat is answered PMIX_ERR_NOT_FOUND (nobody waits for it).
    send(2, 9, PMIX_SEND_HEARTBEAT, "", {}, t0);
    EXPECT_EQ(sink.replies.back().status, PMIX_ERR_NOT_FOUND);
    EXPECT_FALSE(engine->beat(2, t0));
    EXPECT_TRUE(engine->beat(1, t0));
}

TEST_F(monitor_bed, OnlyTheRegisteringRankCancelsItsMonitor) {
    heartbeat_monitor(0, 1, 5, 1, "mine");
    send(2, 2, PMIX_MONITOR_CANCEL, "mine", {}, t0);  // another rank's cancel
    EXPECT_EQ(sink.replies.back().status, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(engine->monitors(), 1u);
    send(0, 3, PMIX_MONITOR_CANCEL, "mine", {}, t0);
    EXPECT_EQ(sink.replies.back().status, PMIX_SUCCESS);
    EXPECT_EQ(engine->monitors(), 0u);
    EXPECT_FALSE(engine->next_deadline());

    heartbeat_monitor(3, 4, 5, 1, "x");
    engine->rank_gone(3);  // a rank that left has no monitors
    EXPECT_EQ(engine->monitors(), 0u);
    engine->expire(t0 + std::chrono::hours(1));
    EXPECT_TRUE(tripped.empty());
}

TEST_F(monitor_bed, BadMonitorsAreRefused) {
    send(0, 1, PMIX_MONITOR_HEARTBEAT, "", {}, t0);  // no period
    EXPECT_EQ(sink.replies.back().status, PMIX_ERR_BAD_PARAM);
    heartbeat_monitor(0, 2, 5, -1, "neg");  // negative drops
    EXPECT_EQ(sink.replies.back().status, PMIX_ERR_BAD_PARAM);
    heartbeat_monitor(0, 3, static_cast<int>(heartbeat_monitors::kMaxPeriodSec) + 1, 0, "long");
    EXPECT_EQ(sink.replies.back().status, PMIX_ERR_BAD_PARAM);
    send(0, 4, PMIX_MONITOR_FILE, "/tmp/x", {}, t0);
    EXPECT_EQ(sink.replies.back().status, PMIX_ERR_NOT_SUPPORTED);
    send(0, 5, "pmix.mon.nothing", "", {}, t0);
    EXPECT_EQ(sink.replies.back().status, PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(engine->monitors(), 0u);
    EXPECT_EQ(sink.replies.size(), 5u);

    engine->request(104, 0, 6, std::vector<uint8_t>{1, 2, 3}, t0);
    ASSERT_EQ(sink.refused.size(), 1u);
    EXPECT_NE(sink.refused[0].second.find("malformed monitor payload"), std::string::npos);
    EXPECT_EQ(sink.replies.size(), 5u);
}

}  // namespace
