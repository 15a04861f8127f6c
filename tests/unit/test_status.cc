// shared/status.h and shared/sys.h: a Result never holds a success without a value; the
// assign-or-return helper; the shared system helpers.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "status.h"
#include "sys.h"

using namespace pmixcpp;

namespace {

Result<int> twice(Result<int> in) {
    PMIXCPP_ASSIGN_OR_RETURN(int v, std::move(in));
    return v * 2;
}

}  // namespace

TEST(Result, ASuccessStatusWithoutAValueIsAFailure) {
    Result<int> r(Status::success());
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.status().code(), PMIX_SUCCESS);
    EXPECT_NE(r.status().message().find("without a value"), std::string::npos);
    Result<int> e(Status(PMIX_ERR_NOT_FOUND, "nothing"));
    EXPECT_EQ(e.status().code(), PMIX_ERR_NOT_FOUND);
    Result<int> v(7);
    EXPECT_TRUE(v.ok());
    EXPECT_TRUE(v.status().ok());
}

TEST(Result, AssignOrReturn) {
    auto ok = twice(Result<int>(21));
    ASSERT_TRUE(ok.ok());
    EXPECT_EQ(ok.value(), 42);
    auto bad = twice(Result<int>(Status(PMIX_ERR_BAD_PARAM, "no")));
    EXPECT_EQ(bad.status().code(), PMIX_ERR_BAD_PARAM);
}

TEST(Sys, ErrorsAndRandomBytes) {
    Status st = sys_error("open /x", ENOENT, PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(st.code(), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(st.message(), std::string("open /x: ") + strerror(ENOENT));
    unsigned char a[64] = {}, b[64] = {};
    ASSERT_TRUE(random_bytes(a, sizeof a).ok());
    ASSERT_TRUE(random_bytes(b, sizeof b).ok());
    EXPECT_NE(memcmp(a, b, sizeof a), 0);
}
