// Names of PMIx values: status codes, data types, enumerations and attribute
// keys.  The client wraps these in PMIx_Error_string() and friends; the server
// uses them in log messages.
//
// Value -> name functions never return NULL and never fail: an unknown value
// gives a fixed "UNKNOWN..." string.  The bit-mask functions (IOF channels,
// device types, info directives) return a per-thread buffer that stays valid
// until the next call of the same function on the same thread.
//
// Not named strings.h: with -I shared/pmix that would shadow the system
// <strings.h>, which <string.h> includes.
#pragma once

#include <pmix_common.h>

#include <cstddef>
#include <span>

namespace pmixcpp {

// Constant names, e.g. status_name(PMIX_ERR_NOT_FOUND) == "PMIX_ERR_NOT_FOUND".
// Where an older alias shares a value the current name wins.
const char *status_name(pmix_status_t status);             // "UNKNOWN-STATUS"
const char *data_type_name(pmix_data_type_t type);         // "UNKNOWN-DATA-TYPE"
const char *scope_name(pmix_scope_t scope);                // "UNKNOWN-SCOPE"
const char *persistence_name(pmix_persistence_t persist);  // "UNKNOWN-PERSISTENCE"
const char *data_range_name(pmix_data_range_t range);      // "UNKNOWN-RANGE"
const char *alloc_directive_name(pmix_alloc_directive_t directive);  // "UNKNOWN-ALLOC-DIRECTIVE"
const char *job_state_name(pmix_job_state_t state);        // "UNKNOWN-JOB-STATE"
const char *proc_state_name(pmix_proc_state_t state);      // "UNKNOWN-PROC-STATE"
const char *link_state_name(pmix_link_state_t state);      // "UNKNOWN-LINK-STATE"
const char *value_cmp_name(pmix_value_cmp_t cmp);          // "UNKNOWN-COMPARISON"

// Bit masks: names joined with '|', e.g. "PMIX_FWD_STDOUT_CHANNEL|PMIX_FWD_STDERR_CHANNEL";
// "NONE" for 0, unknown bits as "0x...".  Per-thread buffer (see above).
const char *iof_channel_name(pmix_iof_channel_t channels);
const char *device_type_name(pmix_device_type_t types);
const char *info_directives_name(pmix_info_directives_t directives);

// Attribute keys: attribute_key("PMIX_JOB_SIZE") == "pmix.job.size" and
// attribute_name("pmix.job.size") == "PMIX_JOB_SIZE".  nullptr when unknown
// (OpenPMIx's PMIx_Get_attribute_string/name then echo their argument).
// Where several names share a key (legacy aliases) the current name wins.
const char *attribute_key(const char *name);
const char *attribute_name(const char *key);

struct attribute_entry {
    const char *name;  // "PMIX_JOB_SIZE"
    const char *key;   // "pmix.job.size"
};
// Every attribute key of pmix_common.h, in header order.
std::span<const attribute_entry> attribute_table();

}  // namespace pmixcpp
