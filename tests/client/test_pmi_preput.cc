// Tests for client/pmi/preput: the spawner's preput keys through the children's environment.
#include <gtest/gtest.h>

#include "preput.h"

namespace pmixcpp::pmi {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;
using Map = std::map<std::string, std::string>;

TEST(PmiPreput, RoundTrip) {
    Pairs kv = {{"PARENT_ROOT_PORT_NAME", "tag#0$description#n1$port#4242$ifname#127.0.0.1$"},
                {"empty-value", ""},
                {"bytes", std::string("a;b:c=d\n\x01\xff", 10)}};
    std::string text = encode_preput(kv);
    EXPECT_EQ(text.find_first_not_of("0123456789abcdef:;"), std::string::npos) << text;
    Map out;
    ASSERT_TRUE(decode_preput(text.c_str(), &out));
    ASSERT_EQ(out.size(), 3u);
    for (const auto &[k, v] : kv) EXPECT_EQ(out[k], v) << k;
}

TEST(PmiPreput, EmptyIsNoKeys) {
    Map out;
    EXPECT_TRUE(decode_preput("", &out));
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(encode_preput({}), "");
}

TEST(PmiPreput, RefusesMalformedTextWithoutSideEffects) {
    const char *bad[] = {"6b", "6b:76", "6b76;", "6:76;", "6b:7;", "6B:76;", "zz:76;", ":76;", "6b:76;6c",
                         "0a:76;" /* key "\n" */, "00:76;" /* key NUL */};
    for (const char *t : bad) {
        Map out = {{"kept", "yes"}};
        EXPECT_FALSE(decode_preput(t, &out)) << t;
        EXPECT_EQ(out, (Map{{"kept", "yes"}})) << t;
    }
    Map out;
    EXPECT_FALSE(decode_preput(nullptr, &out));
    std::string long_key(257, 'k');
    EXPECT_FALSE(decode_preput(encode_preput({{long_key, "v"}}).c_str(), &out));
    EXPECT_TRUE(decode_preput(encode_preput({{std::string(256, 'k'), "v"}}).c_str(), &out));
}

}  // namespace
}  // namespace pmixcpp::pmi
