// Groups, queries and logging for OpenPMIx clients of the native listener (server_native.cc):
// QUERY, LOG, GROUP_CONSTRUCT and GROUP_DESTRUCT become the server's own
// requests (the handlers of pmixcpp's clients: alloc.h for queries, groups.h), and their replies
// are re-encoded in OpenPMIx's format (plugin/native/requests_grp.h).
//
// One object per connection: OpenPMIx's client names only the group when it destructs it, while
// the server's group service wants the members (pmixcpp's client keeps them itself), so the
// memberships of the groups this client constructed are kept here.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "../native/bfrops.h"
#include "../native/requests_grp.h"
#include "native_dyn.h"
#include "status.h"
#include "value.h"

namespace pmixcpp::server {

// Is `cmd` one of the commands this file translates?
bool native_grp_command(uint8_t cmd);

// What the reply needs to know of its request.
struct native_grp_note {
    std::string group;
    bool notify_termination = false;  // PMIX_GROUP_NOTIFY_TERMINATION: failed members are not an error
};

// A group made by invitation (PMIx_Group_invite of OpenPMIx's client, 4.x and 5.0) is made with
// events alone: the leader tells the members PMIX_GROUP_CONSTRUCT_COMPLETE with the group's name
// (PMIX_GROUP_ID) and its members (PMIX_EVENT_CUSTOM_RANGE), as OpenPMIx's server learns them.
// `name` and `members` of such an event (true), else false (another event, or malformed).
bool native_invited_group(pmix_status_t status, const InfoArray &infos, size_t max_procs, std::string *name,
                          std::vector<pmix_proc_t> *members);

class native_grp_link {
public:
    // The request as the server's own (an error = malformed, or a destruct of a group this client
    // is not in: PMIX_ERR_NOT_FOUND, answered without asking the server).
    Result<native_dyn_request> decode(uint8_t cmd, native::unpacker &up, const native::release &client, size_t max_procs,
                                      native_grp_note *note);

    // The OpenPMIx reply to the request, from our reply's status and body.
    Result<std::vector<uint8_t>> reply(uint8_t cmd, native::int_flavour f, const native::release &client,
                                       pmix_status_t status, std::span<const uint8_t> body, const native_grp_note &note);

    size_t groups() const { return _groups.size() + _invited.size(); }

    // A group made by invitation that this client is a member of (native_invited_group): a fence
    // across its name is a fence of its members, its destruct a fence of its members too (the
    // server's group service never knew it). Beyond the cap of groups it is not kept.
    void invited(const std::string &name, std::vector<pmix_proc_t> members);
    // The members of the invited group `name`; null = not one.
    const std::vector<pmix_proc_t> *invited_members(const std::string &name) const;

    // This client (`self`) leaves group `name`: forgotten here; the other members, whom the caller
    // tells (PMIX_GROUP_LEFT). PMIX_ERR_NOT_FOUND: not a group of this client's.
    Result<std::vector<pmix_proc_t>> leave(const std::string &name, const pmix_proc_t &self);
    // Another member left group `name` (the PMIX_GROUP_LEFT event this client is sent): a later
    // destruct or fence across the group no longer waits for it. The event can come before this
    // client's construct reply (the leaver's node finished the construct first, and its event
    // overtook the construct's last message on another connection): then it is kept, bounded,
    // and applied when the construct completes (only for a construct of this client's in flight).
    // False: not a group of this client's (yet).
    bool member_left(const std::string &name, const pmix_proc_t &who);

    // A Get qualified by PMIX_GROUP_CONTEXT_ID (e.g. a member's PMIX_GROUP_LOCAL_CID): what `proc`
    // contributed to the group of that context id, as OpenPMIx's client stores it (one
    // PMIX_QUALIFIED_VALUE per item: the item, then the context id as its qualifier). Kept after
    // the group's destruct (OpenMPI and OpenPMIx's examples ask then); empty = nothing known.
    InfoArray member_data(uint64_t ctxid, const pmix_proc_t &proc, const char *key) const;

private:
    static constexpr size_t kMaxGroups = 4096;  // a client constructing more is refused
    static constexpr size_t kMaxContexts = 64;  // member data of the newest context ids kept
    std::map<std::string, std::vector<pmix_proc_t>> _groups;  // name -> members that joined
    std::map<std::string, std::vector<pmix_proc_t>> _invited;  // name -> members (by invitation)
    std::map<std::string, std::vector<pmix_proc_t>> _left_early;  // name -> left before the construct ended
    std::map<std::string, size_t> _building;  // constructs of this client in flight
    void built(const std::string &name);      // one of them was answered
    size_t _left_early_count = 0;
    struct member_entry {
        pmix_proc_t proc{};
        InfoArray infos;
    };
    std::map<uint64_t, std::vector<member_entry>> _member_data;  // context id -> what each member gave
};

}  // namespace pmixcpp::server
