// bounded_workers (plugin/common/workers.h): at most `limit` threads at once, a request beyond
// is refused with PMIX_ERR_OUT_OF_RESOURCE without starting a thread, finished threads free
// their place, close() refuses new work and joins.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "plugin/common/workers.h"

using namespace pmixcpp;

TEST(BoundedWorkers, CapRefuseAndReuse) {
    bounded_workers pool(3);
    std::mutex m;
    std::condition_variable cv;
    bool release = false;
    std::atomic<int> ran{0};
    auto blocker = [&] {
        std::unique_lock<std::mutex> l(m);
        cv.wait(l, [&] { return release; });
        ++ran;
    };
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(pool.start(blocker, "tests").ok());
    Status st = pool.start([&] { ++ran; }, "test calls");
    EXPECT_EQ(st.code(), PMIX_ERR_OUT_OF_RESOURCE);
    EXPECT_NE(st.message().find("too many test calls"), std::string::npos) << st.message();
    EXPECT_EQ(pool.running(), 3u);
    {
        std::lock_guard<std::mutex> l(m);
        release = true;
    }
    cv.notify_all();
    for (int i = 0; i < 200 && pool.running() > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    EXPECT_EQ(pool.running(), 0u);
    EXPECT_EQ(ran.load(), 3);  // the refused one never ran
    EXPECT_TRUE(pool.start([&] { ++ran; }, "tests").ok());
    pool.close();
    EXPECT_EQ(ran.load(), 4);
    EXPECT_EQ(pool.start([&] { ++ran; }, "tests").code(), PMIX_ERR_NOT_AVAILABLE);
}
