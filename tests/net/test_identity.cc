// The node identity exchange (plugin/net/identity.h) against a stand-in credential service
// (test_credentials.h): what the job's user can and cannot make, swap or replay.
#include <gtest/gtest.h>

#include "plugin/net/identity.h"
#include "tests/net/test_credentials.h"

using namespace pmixcpp;
using namespace pmixcpp::net;
using pmixcpp::testing::authority;
using pmixcpp::testing::test_credentials;

namespace {
step_binding binding_of(uint32_t nnodes, uint32_t step = 0) {
    step_binding b;
    b.job_id = 42;
    b.step_id = step;
    b.nspace = "slurm.42." + std::to_string(step);
    b.nnodes = nnodes;
    b.trusted_uids = {0, 64030};  // root and SlurmUser
    return b;
}
}  // namespace

TEST(identity, a_table_of_genuine_records_verifies_with_keys_and_addresses) {
    auto a = std::make_shared<authority>();
    test_credentials root(a, 0);
    std::vector<std::unique_ptr<node_identity>> nodes;
    std::vector<std::string> table;
    for (uint32_t i = 0; i < 3; ++i) {
        nodes.push_back(std::make_unique<node_identity>(root, binding_of(3), i));
        table.push_back(nodes[i]->sign("tcp:10.0.0." + std::to_string(i) + ":7000").value());
    }
    for (uint32_t i = 0; i < 3; ++i) {
        // Every peer opens every record: replays on a shared munged are taken (identity.cc).
        auto recs = nodes[i]->verify_table(table);
        ASSERT_TRUE(recs.ok()) << recs.status().message();
        for (uint32_t j = 0; j < 3; ++j) {
            EXPECT_EQ(recs->at(j).address, "tcp:10.0.0." + std::to_string(j) + ":7000");
            EXPECT_TRUE(auth::equal(recs->at(j).node_key.bytes, nodes[j]->node_key().bytes));
        }
    }
    // Both ends of a link derive the same key: node 1 from its own key, node 0 from 1's record.
    auto recs = nodes[0]->verify_table(table).value();
    EXPECT_TRUE(auth::equal(link_key(recs[1].node_key, "tcp", 0).value().bytes,
                            link_key(nodes[1]->node_key(), "tcp", 0).value().bytes));
}

TEST(identity, what_the_user_can_do_to_the_table_is_refused) {
    auto a = std::make_shared<authority>();
    test_credentials root(a, 0), user(a, 1000);
    node_identity n0(root, binding_of(2), 0), n1(root, binding_of(2), 1);
    std::string r0 = n0.sign("tcp:10.0.0.1:7000").value(), r1 = n1.sign("tcp:10.0.0.2:7000").value();
    ASSERT_TRUE(n0.verify_table({r0, r1}).ok());
    // A record the user signed (its own uid), with its own key and address: refused.
    node_identity fake(user, binding_of(2), 1);
    auto forged = fake.sign("tcp:10.6.6.6:7000").value();
    auto st = n0.verify_table({r0, forged});
    EXPECT_EQ(st.status().code(), PMIX_ERR_NO_PERMISSIONS);
    EXPECT_NE(st.status().message().find("uid 1000"), std::string::npos) << st.status().message();
    // Swapped records; one changed character; our own record replaced.
    EXPECT_FALSE(n0.verify_table({r1, r0}).ok());
    EXPECT_FALSE(n1.verify_table({r0, r0}).ok());
    std::string bent = r1;
    bent[bent.size() / 2] = bent[bent.size() / 2] == 'a' ? 'b' : 'a';
    EXPECT_FALSE(n0.verify_table({r0, bent}).ok());
    EXPECT_FALSE(n0.verify_table({r1, r1}).ok());
    // Another step's genuine record, or a table of another size.
    node_identity other(root, binding_of(2, 1), 1);
    EXPECT_FALSE(n0.verify_table({r0, other.sign("tcp:10.0.0.2:7000").value()}).ok());
    EXPECT_FALSE(n0.verify_table({r0}).ok());
    // The user cannot open a record (the node key inside is for root only).
    EXPECT_FALSE(user.open(r1).ok());
}

TEST(identity, agent_credentials_bind_the_step_and_are_opened_once) {
    auto a = std::make_shared<authority>();
    test_credentials stepd(a, 0), srun(a, 1000), other_user(a, 1001, 1001);
    step_binding b = binding_of(2);
    auto c = make_agent_credential(stepd, b.nspace, 1).value();
    EXPECT_FALSE(other_user.open(c.credential).ok());  // another user cannot read the call's key
    uint32_t node = 0;
    auto k = open_agent_credential(srun, b, c.credential, &node);
    ASSERT_TRUE(k.ok()) << k.status().message();
    EXPECT_TRUE(auth::equal(k->bytes, c.key.bytes));
    EXPECT_EQ(node, 1u);
    EXPECT_FALSE(open_agent_credential(srun, b, c.credential).ok());  // replayed
    auto by_user = make_agent_credential(srun, b.nspace, 1).value();  // what the user can make
    EXPECT_FALSE(open_agent_credential(srun, b, by_user.credential).ok());
    auto elsewhere = make_agent_credential(stepd, "slurm.43.0", 1).value();
    EXPECT_FALSE(open_agent_credential(srun, b, elsewhere.credential).ok());
    EXPECT_FALSE(open_agent_credential(srun, b, "").ok());
}
