// Tests for shared/log: level gating, formatting, sink replacement, env switch, threads.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "log.h"

namespace pmixcpp {
namespace {

struct Captured {
    log_level level;
    std::string file, function, message;
    int line;
};

class LogTest : public ::testing::Test {
protected:
    void SetUp() override {
        set_log_sink([this](const log_record &r) {
            std::lock_guard<std::mutex> lock(_mutex);
            records.push_back({r.level, r.file, r.function, r.message, r.line});
        });
        set_log_level(log_level::trace);
    }
    void TearDown() override {
        set_log_sink(nullptr);
        set_log_level(log_level::error);
        unsetenv("PMIXCPP_TEST_DEBUG");
    }
    std::mutex _mutex;
    std::vector<Captured> records;
};

int g_evaluations = 0;
int count_evaluation() { return ++g_evaluations; }

TEST_F(LogTest, FormatsMessageWithFileLineAndFunction) {
    int line = __LINE__ + 1;
    PMIXCPP_LOG_INFO("device %s port %d", "mlx5_0", 1);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].level, log_level::info);
    EXPECT_EQ(records[0].message, "device mlx5_0 port 1");
    EXPECT_EQ(records[0].file, "test_log.cc");  // basename only
    EXPECT_EQ(records[0].line, line);
    EXPECT_EQ(records[0].function, "TestBody");
}

TEST_F(LogTest, MacroWithoutArguments) {
    PMIXCPP_LOG_ERROR("plain message");
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].message, "plain message");
}

TEST_F(LogTest, LevelGatesBeforeArgumentsAreEvaluated) {
    set_log_level(log_level::warning);
    g_evaluations = 0;
    PMIXCPP_LOG_DEBUG("value %d", count_evaluation());
    PMIXCPP_LOG_TRACE("value %d", count_evaluation());
    PMIXCPP_LOG_INFO("value %d", count_evaluation());
    EXPECT_EQ(g_evaluations, 0);
    EXPECT_TRUE(records.empty());
    PMIXCPP_LOG_WARNING("value %d", count_evaluation());
    PMIXCPP_LOG_ERROR("value %d", count_evaluation());
    EXPECT_EQ(g_evaluations, 2);
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[0].level, log_level::warning);
    EXPECT_EQ(records[1].level, log_level::error);
}

TEST_F(LogTest, LongMessagesAreNotTruncated) {
    std::string big(5000, 'x');
    PMIXCPP_LOG_ERROR("%s|end", big.c_str());
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].message, big + "|end");
}

TEST_F(LogTest, PercentMUsesCallersErrnoAndErrnoIsPreserved) {
    errno = ENOENT;
    PMIXCPP_LOG_ERROR("open failed: %m");
    EXPECT_EQ(errno, ENOENT);
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].message, std::string("open failed: ") + strerror(ENOENT));
}

TEST_F(LogTest, ThrowingSinkDoesNotEscape) {
    set_log_sink([](const log_record &) { throw std::runtime_error("boom"); });
    EXPECT_NO_THROW(PMIXCPP_LOG_ERROR("x"));
}

TEST_F(LogTest, DefaultSinkPrefixesHostAndPid) {
    set_log_sink(nullptr);
    testing::internal::CaptureStderr();
    PMIXCPP_LOG_ERROR("hello %d", 5);
    std::string err = testing::internal::GetCapturedStderr();
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    std::string prefix = std::string("pmixcpp[") + host + ":" + std::to_string(getpid()) + "]";
    EXPECT_EQ(err.rfind(prefix, 0), 0u) << err;
    EXPECT_NE(err.find("error"), std::string::npos);
    EXPECT_NE(err.find("hello 5\n"), std::string::npos);
    EXPECT_NE(err.find("test_log.cc:"), std::string::npos);
}

TEST_F(LogTest, EnvSwitch) {
    EXPECT_EQ(log_init_from_env("PMIXCPP_TEST_DEBUG"), log_level::error);  // unset: errors only
    EXPECT_FALSE(log_enabled(log_level::warning));
    EXPECT_TRUE(log_enabled(log_level::error));
    struct Case {
        const char *value;
        log_level expected;
    } cases[] = {
        {"", log_level::error},          {"0", log_level::error},      {"1", log_level::debug},
        {"2", log_level::trace},         {"99", log_level::trace},     {"info", log_level::info},
        {"WARNING", log_level::warning}, {"warn", log_level::warning}, {"verbose", log_level::verbose},
        {"trace", log_level::trace},     {"yes", log_level::debug},    {"00", log_level::error}};
    for (const Case &c : cases) {
        setenv("PMIXCPP_TEST_DEBUG", c.value, 1);
        EXPECT_EQ(log_init_from_env("PMIXCPP_TEST_DEBUG"), c.expected) << c.value;
        EXPECT_EQ(get_log_level(), c.expected) << c.value;
    }
}

TEST(LogLevel, ParseAndName) {
    log_level l;
    EXPECT_TRUE(parse_log_level("debug", &l));
    EXPECT_EQ(l, log_level::debug);
    EXPECT_TRUE(parse_log_level("3", &l));
    EXPECT_EQ(l, log_level::verbose);
    EXPECT_FALSE(parse_log_level("loud", &l));
    EXPECT_STREQ(to_string(log_level::warning), "warning");
}

TEST_F(LogTest, ConcurrentLoggingAndSinkSwaps) {
    std::atomic<int> other{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([t] {
            for (int i = 0; i < 500; ++i) PMIXCPP_LOG_DEBUG("thread %d message %d", t, i);
        });
    }
    threads.emplace_back([&] {
        for (int i = 0; i < 50; ++i) {
            set_log_sink([&](const log_record &) { other.fetch_add(1); });
            set_log_sink([this](const log_record &r) {
                std::lock_guard<std::mutex> lock(_mutex);
                records.push_back({r.level, r.file, r.function, r.message, r.line});
            });
        }
    });
    for (auto &th : threads) th.join();
    std::lock_guard<std::mutex> lock(_mutex);
    EXPECT_EQ(records.size() + static_cast<size_t>(other.load()), 2000u);
}

}  // namespace
}  // namespace pmixcpp
