#include "time_alert.h"

#include <algorithm>

namespace pmixcpp::server {

namespace {
int64_t unix_now() {
    return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}
}  // namespace

time_alert::time_alert(int64_t job_end, uint32_t alert_sec) {
    if (job_end <= 0 || alert_sec == 0) return;
    auto left = std::chrono::seconds(job_end - alert_sec - unix_now());
    _at = server_clock::now() + std::max(left, std::chrono::seconds(0));
    _end = job_end;
}

std::optional<uint32_t> time_alert::due(server_clock::time_point now) {
    if (!_at || now < *_at) return std::nullopt;
    _at.reset();
    return static_cast<uint32_t>(std::max<int64_t>(_end - unix_now(), 0));
}

}  // namespace pmixcpp::server
