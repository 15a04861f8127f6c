// The job data of this node (build_jobdata, jobdata.h) as the REQ reply of OpenPMIx clients that
// use gds/hash (plugin/native/session.h): job-level keys on their own, this node's keys in one
// pmix.node.arr, every rank's keys in a pmix.pblob. The map keys (pmix.nmap, pmix.pmap,
// pmix.anlmap) stay out: an OpenPMIx client would parse them as its own regular expressions.
#pragma once

#include <string>
#include <vector>

#include "../native/session.h"
#include "wire/job_layout.h"
#include "wire/jobdata.h"

namespace pmixcpp::server {

// The map keys (pmix.nmap, pmix.pmap, pmix.anlmap): never sent to an OpenPMIx client.
bool native_left_out(const pmix_info_t &info);

// Borrows the infos of `entries` (they must outlive the result and every pack of it).
native::job_blob_data native_job_blob(const std::string &nspace, const std::vector<wire::jobdata_entry> &entries);

}  // namespace pmixcpp::server
