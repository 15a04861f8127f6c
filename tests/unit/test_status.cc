// shared/status.h and shared/sys.h: a Result never holds a success without a value; the
// assign-or-return and return-if-error helpers; the shared system helpers.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <type_traits>

#include "status.h"
#include "sys.h"

using namespace pmixcpp;

namespace {

Result<int> twice(Result<int> in) {
    PMIXCPP_ASSIGN_OR_RETURN(int v, std::move(in));
    return v * 2;
}

int contexts_built = 0;
std::string context() {
    ++contexts_built;
    return "outer";
}

// Checks a Status, a Result held by the caller and a temporary Result, with and without context.
Status checks(Status first, Result<int> second, bool third_fails) {
    PMIXCPP_RETURN_IF_ERROR(first, context());
    PMIXCPP_RETURN_IF_ERROR(second);
    PMIXCPP_RETURN_IF_ERROR(third_fails ? Result<int>(Status(PMIX_ERR_TIMEOUT, "late")) : Result<int>(1),
                            "third");
    return Status::success();
}

}  // namespace

// Made of Status::success(), a Result does not compile.
static_assert(!std::is_constructible_v<Result<int>, decltype(Status::success())>);
static_assert(!std::is_convertible_v<decltype(Status::success()), Result<int>>);
static_assert(std::is_convertible_v<decltype(Status::success()), Status>);

TEST(Result, ASuccessStatusWithoutAValueIsAFailure) {
    Status success = Status::success();  // a success the compiler cannot see
    Result<int> r(success);
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

TEST(Status, ReturnIfError) {
    contexts_built = 0;
    EXPECT_TRUE(checks(Status::success(), 2, false).ok());
    EXPECT_EQ(contexts_built, 0);  // the context is made only for a failure
    Status a = checks(Status(PMIX_ERR_BAD_PARAM, "inner"), 2, false);
    EXPECT_EQ(a.code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(a.message(), "outer: inner");
    EXPECT_EQ(contexts_built, 1);
    Status b = checks(Status::success(), Status(PMIX_ERR_NOT_FOUND, "none"), false);
    EXPECT_EQ(b.code(), PMIX_ERR_NOT_FOUND);
    EXPECT_EQ(b.message(), "none");
    Status c = checks(Status::success(), 2, true);
    EXPECT_EQ(c.code(), PMIX_ERR_TIMEOUT);
    EXPECT_EQ(c.message(), "third: late");
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
