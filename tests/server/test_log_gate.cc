// PMIx_Log into slurmd's log: cut, escaped, rate-limited (plugin/server/log_gate.h).
#include <gtest/gtest.h>

#include "log_gate.h"

using namespace pmixcpp::server;

TEST(log_gate, a_message_is_one_line_that_cannot_pass_for_another) {
    EXPECT_EQ(escape_log_text("hello world"), "hello world");
    EXPECT_EQ(escape_log_text("x\nslurmstepd: error: forged\r\n"), "x\\nslurmstepd: error: forged\\r\\n");
    EXPECT_EQ(escape_log_text(std::string("a\0b\x1b[31m\x7f\\", 10)), "a\\x00b\\x1b[31m\\x7f\\\\");
    EXPECT_EQ(escape_log_text("caf\xc3\xa9 \xc2\x9b" "2J"), "caf\xc3\xa9 \\x9b2J") << "UTF-8 kept, a C1 control escaped";
    const std::string big(1 << 20, '\n');
    const std::string cut = escape_log_text(big);
    EXPECT_LE(cut.size(), kMaxLogText + 40);
    EXPECT_EQ(cut.find('\n'), std::string::npos);
    EXPECT_NE(cut.find("bytes cut)"), std::string::npos) << cut.substr(cut.size() - 40);
}

TEST(log_gate, a_flood_is_dropped_and_counted_once_per_window) {
    log_gate g;
    auto t0 = log_gate::clock::now();
    size_t passed = 0;
    const std::string chunk(64 * 1024, 'x');
    for (int i = 0; i < 16384; ++i)  // 1 GiB of messages
        passed += g.admit(chunk, t0 + std::chrono::milliseconds(i / 10)).pass;
    EXPECT_LE(passed * kMaxLogText, kLogBytes * 2) << "at most a window's budget (two windows passed)";
    EXPECT_GE(passed, 1u);
    EXPECT_EQ(g.dropped_total(), 16384 - passed);
    auto later = g.admit("after", t0 + std::chrono::seconds(60));
    EXPECT_TRUE(later.pass);
    ASSERT_TRUE(later.summary.has_value());
    EXPECT_NE(later.summary->find("dropped"), std::string::npos) << *later.summary;
    // Small messages: up to the burst, then dropped.
    log_gate h;
    size_t ok = 0;
    for (size_t i = 0; i < 2 * kLogBurst; ++i) ok += h.admit("line", t0).pass;
    EXPECT_EQ(ok, kLogBurst);
}
