// The node channels' registration table (plugin/server/node_channels.h): handlers by channel,
// names for the transport's log lines, the ids the transport accepts, and what it refuses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "../../plugin/server/node_channels.h"

using namespace pmixcpp;
using namespace pmixcpp::server;

TEST(NodeChannels, DispatchesToTheRegisteredHandler) {
    node_channels t;
    std::vector<std::pair<uint32_t, std::vector<uint8_t>>> requests, replies;
    ASSERT_TRUE(t.add(node_channel::dmodex_request, "dmodex request", [&](uint32_t from, std::span<const uint8_t> b) {
                     requests.emplace_back(from, std::vector<uint8_t>(b.begin(), b.end()));
                 }).ok());
    ASSERT_TRUE(t.add(node_channel::dmodex_reply, "dmodex reply", [&](uint32_t from, std::span<const uint8_t> b) {
                     replies.emplace_back(from, std::vector<uint8_t>(b.begin(), b.end()));
                 }).ok());
    const std::vector<uint8_t> body{7, 8};
    EXPECT_TRUE(t.dispatch(3, id_of(node_channel::dmodex_reply), body));
    ASSERT_EQ(replies.size(), 1u);
    EXPECT_TRUE(requests.empty());
    EXPECT_EQ(replies[0].first, 3u);
    EXPECT_EQ(replies[0].second, body);
    // Nothing registered on it: not dispatched, and not a channel the transport accepts.
    EXPECT_FALSE(t.dispatch(1, id_of(node_channel::coll), body));
    EXPECT_FALSE(t.dispatch(1, 999, body));
    EXPECT_EQ(requests.size() + replies.size(), 1u);
}

TEST(NodeChannels, NamesComeFromTheRegistration) {
    node_channels t;
    const net::channel_names *as_net = &t;  // what the transport sees
    EXPECT_EQ(as_net->name_of(id_of(node_channel::event)), nullptr);
    ASSERT_TRUE(t.add(node_channel::event, "event", [](uint32_t, std::span<const uint8_t>) {}).ok());
    EXPECT_STREQ(as_net->name_of(id_of(node_channel::event)), "event");
    EXPECT_STREQ(net::channel_name(as_net, id_of(node_channel::event)), "event");
    EXPECT_STREQ(net::channel_name(as_net, net::kLinkChannel), "link");
    EXPECT_STREQ(net::channel_name(as_net, id_of(node_channel::job_control)), "unknown");
}

TEST(NodeChannels, RefusesATwiceRegisteredChannelTheLinkIdAndNoHandler) {
    node_channels t;
    auto noop = [](uint32_t, std::span<const uint8_t>) {};
    ASSERT_TRUE(t.add(node_channel::node_probe, "node probe", noop).ok());
    Status twice = t.add(node_channel::node_probe, "again", noop);
    EXPECT_EQ(twice.code(), PMIX_ERR_EXISTS);
    EXPECT_NE(twice.message().find("node probe"), std::string::npos) << twice.message();
    EXPECT_STREQ(t.name_of(node_channel::node_probe), "node probe") << "the first registration stays";
    EXPECT_EQ(t.add(static_cast<node_channel>(net::kLinkChannel), "link", noop).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(t.name_of(net::kLinkChannel), nullptr);
    EXPECT_EQ(t.add(node_channel::node_query, "node query", node_channels::handler()).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(t.add(node_channel::node_query, "", noop).code(), PMIX_ERR_BAD_PARAM);
    EXPECT_EQ(t.name_of(node_channel::node_query), nullptr);
}

// Every channel of the enum has an id of its own (two with one id would fail the second add), and
// none is the link channel's.
TEST(NodeChannels, EveryChannelHasAnIdOfItsOwn) {
    node_channels t;
    auto noop = [](uint32_t, std::span<const uint8_t>) {};
    const node_channel all[] = {
        node_channel::coll,           node_channel::dmodex_request, node_channel::dmodex_reply,
        node_channel::event,          node_channel::node_down,      node_channel::node_probe,
        node_channel::node_query,     node_channel::pubsub_request, node_channel::pubsub_reply,
        node_channel::job_control,    node_channel::group_bootstrap, node_channel::group_bootstrap_result,
        node_channel::proc_table_request, node_channel::proc_table_reply, node_channel::spawn_psets,
    };
    for (node_channel c : all) EXPECT_TRUE(t.add(c, "x", noop).ok()) << id_of(c);
    // The ids on the wire between the servers of a step (never renumbered).
    EXPECT_EQ(id_of(node_channel::coll), 1);
    EXPECT_EQ(id_of(node_channel::node_query), 8);
    EXPECT_EQ(id_of(node_channel::pubsub_request), 16);
    EXPECT_EQ(id_of(node_channel::spawn_psets), 23);
}
