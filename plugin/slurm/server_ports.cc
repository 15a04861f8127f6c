#include "server_ports.h"

#include <algorithm>

namespace pmixcpp::agent {

void server_ports::wire(server::server_options &options) {
    options.agent = this;
    options.alloc = this;
}

void server_ports::call(services::service s, std::vector<uint8_t> body, int timeout_ms, done_fn done) {
    _client.call(services::id_of(s), std::move(body), timeout_ms, [s, done](Result<reply> r) {
        if (r.ok()) return done(r->status, r->message, std::move(r->body));
        Status st = s == services::service::spawn ? r.status().with_context("spawn through srun") : r.status();
        done(st.code() == PMIX_SUCCESS ? PMIX_ERROR : st.code(), st.message(), {});
    });
}

void server_ports::forward_alloc(std::vector<uint8_t> request, int timeout_sec, reply_fn done) {
    const int timeout_ms =
        timeout_sec > 0 ? static_cast<int>(std::min<int64_t>(int64_t(timeout_sec) + 30, INT32_MAX / 1000) * 1000)
                        : 7 * 24 * 3600 * 1000;
    _client.call(services::id_of(services::service::alloc), std::move(request), timeout_ms, [done](Result<reply> r) {
        if (!r.ok()) return done(r.status());
        if (r->status != PMIX_SUCCESS) return done(Status(r->status, r->message));
        done(std::move(r->body));
    });
}

}  // namespace pmixcpp::agent
