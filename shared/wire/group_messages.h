// PMIx groups on the wire (shared/PROTOCOL.md, "Groups"): the client's group request, the
// server's reply, and the contribution one node's server makes to a group collective.
// Decoders check every length and type and bound ranks by the step (fuzzed:
// tests/fuzz/fuzz_group.cc).
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "status.h"
#include "value.h"
#include "wire/codec.h"

namespace pmixcpp::wire {

// What a member does in a group collective.
enum class group_op : uint8_t {
    construct = 1,     // PMIx_Group_construct, PMIx_Group_invite (the leader)
    destruct = 2,      // PMIx_Group_destruct
    join_accept = 3,   // PMIx_Group_join(PMIX_GROUP_ACCEPT) of an invitation
    join_decline = 4,  // PMIx_Group_join(PMIX_GROUP_DECLINE)
};
const char *to_string(group_op op);
bool valid_group_op(uint8_t op);

// How a member ended up in a completed collective.
enum class member_state : uint8_t {
    joined = 1,    // entered (construct, accept, destruct)
    declined = 2,  // declined the invitation
    failed = 3,    // died or finalized before entering
};
const char *to_string(member_state s);

// c->s (msg_type::group). `procs`: the members (every op names them: the client keeps the
// membership of its groups). `directives`: PMIX_GROUP_ASSIGN_CONTEXT_ID, PMIX_TIMEOUT, ...
// `member_info`: what this member adds to the group (the contents of its PMIX_GROUP_INFO and its
// PMIX_GROUP_LOCAL_CID), readable by the other members with a Get qualified by the context id.
struct group_request {
    uint8_t op = 0;
    std::string name;  // 1..PMIX_MAX_NSLEN bytes
    std::vector<pmix_proc_t> procs;
    InfoArray directives;
    InfoArray member_info;
};

struct group_member {
    pmix_proc_t proc{};
    uint8_t state = 0;  // member_state
    InfoArray infos;
};

// Reply of a group request (status in the reply header). context_id 0 = none asked.
struct group_reply {
    uint64_t context_id = 0;
    std::vector<group_member> members;
};

// One node's part of a group collective (coll blob): its context-id reservation (0 = none)
// and its local members.
struct group_rank_entry {
    uint32_t rank = 0;
    uint8_t state = 0;  // member_state
    InfoArray infos;
};
struct group_contribution {
    uint64_t reservation = 0;
    std::vector<group_rank_entry> entries;
};

// Bootstrap (PMIX_GROUP_BOOTSTRAP): the members are not known in advance. Each member's server
// sends its entry to node 0 (the step's coordinator); node 0 answers every member node with the
// membership once the given number of leaders and every member they named have entered; the
// member nodes then run the ordinary construct collective over that membership.
// s->s, to node 0: one member entered a bootstrap construct.
struct group_bootstrap_entry {
    std::string name;
    uint32_t rank = 0;
    uint32_t leaders = 0;       // 0: a follower (PMIx_Group_construct with no procs); else PMIX_GROUP_BOOTSTRAP
    std::vector<uint32_t> add;  // a leader's other members (its procs and PMIX_GROUP_ADD_MEMBERS), sorted
};
// s->s, from node 0 to each member node: the bootstrap's outcome.
struct group_bootstrap_result {
    std::string name;
    int32_t status = PMIX_SUCCESS;
    std::string message;            // why, if status is an error
    std::vector<uint32_t> members;  // sorted, if status is PMIX_SUCCESS
};

// What a member contributes to a group, from its construct/join directives: the contents of its
// PMIX_GROUP_INFO (an array of pmix_info_t) and its PMIX_GROUP_LOCAL_CID (group_request's
// member_info). A PMIX_GROUP_INFO that is not an array of infos is PMIX_ERR_BAD_PARAM.
Status group_member_info(const pmix_info_t *dirs, size_t ndirs, InfoArray *out);

Status encode(Writer &w, const group_request &m);
Status decode(Reader &r, group_request *m);
Status encode(Writer &w, const group_reply &m);
Status decode(Reader &r, group_reply *m);
Status encode(Writer &w, const group_contribution &m);
// Whole body; ranks must be < ntasks.
Status decode_group_contribution(std::span<const uint8_t> bytes, uint32_t ntasks, group_contribution *m);
Status encode(Writer &w, const group_bootstrap_entry &m);
Status encode(Writer &w, const group_bootstrap_result &m);
// Whole bodies; ranks must be < ntasks, rank lists sorted without repeats.
Status decode_group_bootstrap_entry(std::span<const uint8_t> bytes, uint32_t ntasks, group_bootstrap_entry *m);
Status decode_group_bootstrap_result(std::span<const uint8_t> bytes, uint32_t ntasks, group_bootstrap_result *m);

}  // namespace pmixcpp::wire
