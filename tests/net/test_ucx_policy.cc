// Root's UCX: the transports it may open whatever the administrator configured, the worker
// addresses it creates endpoints to, and the receive bounds.
#include <gtest/gtest.h>

#include "plugin/net/ucx_policy.h"

using namespace pmixcpp;
using namespace pmixcpp::net;

TEST(ucx_policy, shared_memory_never_reaches_roots_ucx) {
    EXPECT_EQ(root_ucx_tls("").value(), "^sm,mm");
    EXPECT_EQ(root_ucx_tls("all").value(), "^sm,mm");
    EXPECT_EQ(root_ucx_tls("tcp").value(), "tcp");
    EXPECT_EQ(root_ucx_tls("posix,sysv,tcp,cma,knem,xpmem,\\posix,SM,shm,mm").value(), "tcp");
    EXPECT_EQ(root_ucx_tls("rc,sm,tcp").value(), "rc,tcp");
    EXPECT_EQ(root_ucx_tls("tcp,all").value(), "^sm,mm");
    EXPECT_EQ(root_ucx_tls("^ib").value(), "^ib,sm,mm");
    EXPECT_EQ(root_ucx_tls("^posix").value(), "^sm,mm");
    auto only_shm = root_ucx_tls("posix,sysv");
    ASSERT_FALSE(only_shm.ok());
    EXPECT_EQ(only_shm.status().code(), PMIX_ERR_BAD_PARAM);
    EXPECT_NE(only_shm.status().message().find("PMIxCppUcxTls=posix,sysv"), std::string::npos);
}

TEST(ucx_policy, peer_addresses_are_checked_before_an_endpoint) {
    std::vector<uint8_t> own(120, 7);
    own[0] = 0x31;
    std::vector<uint8_t> good(90, 1);
    good[0] = 0x31;
    EXPECT_TRUE(check_ucx_address(good, own).ok());
    EXPECT_FALSE(check_ucx_address(std::vector<uint8_t>(4, 0x31), own).ok()) << "too short";
    std::vector<uint8_t> huge(kMaxUcxAddress + 1, 0x31);
    auto st = check_ucx_address(huge, own);
    EXPECT_FALSE(st.ok()) << "too long";
    EXPECT_NE(st.message().find("8193 bytes"), std::string::npos) << st.message();
    good[0] = 0x32;
    EXPECT_FALSE(check_ucx_address(good, own).ok()) << "another address format";
}

TEST(ucx_policy, receive_bounds_hold_a_full_node_frame) {
    EXPECT_GT(kUcxFrameMax, size_t{kMaxNodePayload});
    EXPECT_LE(kUcxFrameMax, kUcxReceivedBytesMax) << "one frame of the cap always fits the queue";
}
