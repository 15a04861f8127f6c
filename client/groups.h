// What the client library knows of PMIx groups (groups.cc): the groups this process belongs to
// (name -> members, context id), the data members added with PMIX_GROUP_INFO (read with a Get
// qualified by PMIX_GROUP_CONTEXT_ID, also after the group is destructed), and the invitations
// it received (PMIX_GROUP_INVITED) until it joins. Thread safe.
#pragma once

#include <pmix_common.h>

#include <string>
#include <vector>

#include "client.h"
#include "get.h"

namespace pmixcpp::client {

// The members of a group this process belongs to (false if none of that name).
bool group_members(const std::string &name, std::vector<pmix_proc_t> *out);

// A Get qualified by PMIX_GROUP_CONTEXT_ID: answered from the group's data (found / not_found);
// ask_server when the Get carries no such qualifier.
local_outcome group_get(const pmix_proc_t &target, const char *key, const pmix_info_t *info, size_t ninfo,
                        pmix_value_t *out, Status *error);

// Every event from the server passes here first: invitations and departures update the tables.
void group_observe_event(Client &c, const wire::event_notification &ev);

}  // namespace pmixcpp::client
