// The node's hwloc topology as the client library hands it out (see topology.cc).
#pragma once

#include <hwloc.h>
#include <pmix_common.h>

#include <string>

namespace pmixcpp::client {

// Loaded on first use, then shared read-only by every caller in the process; nullptr if hwloc fails.
hwloc_topology_t process_topology();
bool is_process_topology(const void *t);

// The PMIX_LOCALITY_SHARE_* bits of two locality strings ("SK0:L30:L20:L10:CR0:HT0").
pmix_locality_t relative_locality(const std::string &a, const std::string &b);

}  // namespace pmixcpp::client
