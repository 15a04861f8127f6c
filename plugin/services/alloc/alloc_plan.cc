#include "alloc_plan.h"

#include <algorithm>

namespace pmixcpp::alloc {

end_plan end_with_owner(const started_alloc &started, uint32_t owner_job, time_t owner_end) {
    end_plan p;
    if (owner_end <= 0 || (started.end_time > 0 && started.end_time <= owner_end)) return p;
    const long span = static_cast<long>(owner_end - started.start_time);
    if (span < kMinGrowSec) {
        p.what = end_plan::give_back;
        p.reason = "Slurm started job " + std::to_string(started.job_id) + " " + std::to_string(std::max(0L, span)) +
                   " s before job " + std::to_string(owner_job) + " ends (its time limit): too late to be used, given back";
        return p;
    }
    p.what = end_plan::lower;
    p.minutes = static_cast<uint32_t>(span / 60);
    return p;
}

}  // namespace pmixcpp::alloc
