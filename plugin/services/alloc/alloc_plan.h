// How far what a grow adds may reach in time: the requesting job's end bounds it. Pure (no Slurm,
// no clock): srun's allocation bridge (plugin/slurm/alloc_bridge.cc) takes the decisions here and
// makes the Slurm calls they name. Unit-tested in tests/alloc (the late start of a NEW allocation
// is a race no integration test can place: the bridge lowers a pending job's limit every second).
#pragma once

#include <cstdint>
#include <ctime>
#include <string>

namespace pmixcpp::alloc {

// Slurm's time limits are whole minutes: a grow needs at least one of the job's minutes left, so
// that what it adds (a NEW allocation's limit, nodes merged into the job) ends no later than the job.
inline constexpr long kMinGrowSec = 60;

// A NEW allocation that Slurm has just started, against the job that asked for it.
struct started_alloc {
    uint32_t job_id = 0;
    time_t start_time = 0;
    time_t end_time = 0;  // 0: no time limit
};

struct end_plan {
    enum kind { keep, lower, give_back } what = keep;
    uint32_t minutes = 0;  // lower: the new time limit
    std::string reason;    // give_back: why (the request's error message)
};

// Keep it (the owner has no limit, or it ends no later than the owner); lower its limit to the
// owner's whole minutes left from its start (rounded down); or give it back when that is under
// kMinGrowSec. `owner_end` 0: the owner has no time limit.
end_plan end_with_owner(const started_alloc &started, uint32_t owner_job, time_t owner_end);

}  // namespace pmixcpp::alloc
