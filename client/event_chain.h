// The client's event machinery as plain classes without I/O (unit-tested in tests/client):
//
//   event_registry  registered handlers and their order: the chain of handlers for one event.
//   event_chain     one event walking its chain: which handler runs next, the results handed on.
//
// Order of a chain (PMIx standard, "Event Notification"): the handler declared PMIX_EVENT_HDLR_FIRST,
// then the single-code handlers, the multi-code handlers, the default handlers (no codes), then the
// handler declared PMIX_EVENT_HDLR_LAST. Within a class: the FIRST_IN_CATEGORY handler, the others
// in registration order (PREPEND puts a handler at the front, APPEND (default) at the end,
// BEFORE/AFTER next to a named or referenced handler of the same class), the LAST_IN_CATEGORY
// handler. Only one handler may hold each of these single places; a second claim is refused
// with PMIX_ERR_EVENT_REGISTRATION until the holder is deregistered.
//
// Filters a registration may carry: PMIX_RANGE (sources it wants to hear from: PROC_LOCAL =
// itself, LOCAL = its node, NAMESPACE = its namespace, anything else = all), PMIX_EVENT_CUSTOM_RANGE
// (a proc or an array of procs: only those sources), PMIX_EVENT_AFFECTED_PROC(S) (only events
// whose affected procs include one of these). An event carrying PMIX_EVENT_NON_DEFAULT skips the
// default handlers.
//
// Thread safety: none; the owner (client.cc) holds a lock.
#pragma once

#include <pmix_common.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "status.h"
#include "value.h"

namespace pmixcpp::client {

enum class handler_class : uint8_t { single_code, multi_code, default_handler };
const char *to_string(handler_class c);

// One registered handler as the chain sees it.
struct event_handler_entry {
    size_t ref = 0;
    std::string name;
    handler_class cls = handler_class::default_handler;
    std::vector<pmix_status_t> codes;
    pmix_notification_fn_t fn = nullptr;
    // filters
    pmix_data_range_t source_range = PMIX_RANGE_UNDEF;  // UNDEF = any source
    std::vector<pmix_proc_t> custom_sources;            // empty = any
    std::vector<pmix_proc_t> affected;                  // empty = any
    // PMIX_EVENT_RETURN_OBJECT of the registration: handed back in the info of every call
    bool has_return_object = false;
    void *return_object = nullptr;

    bool wants(pmix_status_t status) const;
};

// True if `p` names `q` (same namespace; rank equal or either is PMIX_RANK_WILDCARD).
bool proc_matches(const pmix_proc_t &p, const pmix_proc_t &q);


class event_registry {
public:
    // `self`: this process; `is_local_peer`: whether a proc runs on this node (for PMIX_RANGE_LOCAL
    // registrations); may be empty (then only `self` is local).
    explicit event_registry(pmix_proc_t self = {}, std::function<bool(const pmix_proc_t &)> is_local_peer = {});

    // Register; returns the handler's reference (> 0). Fails without side effects.
    Result<size_t> add(const pmix_status_t *codes, size_t ncodes, const pmix_info_t *info, size_t ninfo,
                       pmix_notification_fn_t fn);
    // false if `ref` is not registered.
    bool remove(size_t ref);
    bool has(size_t ref) const { return find(ref) != nullptr; }
    size_t size() const;

    // The handlers for this event, in the order they run.
    std::vector<event_handler_entry> chain_for(pmix_status_t status, const pmix_proc_t &source,
                                               const pmix_info_t *info, size_t ninfo) const;
    // Whether handler `ref` would take part in the chain of this event (for replaying cached events
    // to a handler registered later).
    bool accepts(size_t ref, pmix_status_t status, const pmix_proc_t &source, const pmix_info_t *info,
                 size_t ninfo) const;
    // Every handler, in chain order (ignoring codes and filters).
    std::vector<size_t> refs_in_order() const;

private:
    struct category {
        std::optional<event_handler_entry> first, last;
        std::vector<event_handler_entry> middle;
    };
    category &cat(handler_class c) { return _cats[static_cast<int>(c)]; }
    const category &cat(handler_class c) const { return _cats[static_cast<int>(c)]; }
    std::vector<const event_handler_entry *> ordered() const;
    const event_handler_entry *find(size_t ref) const;
    bool passes_filters(const event_handler_entry &h, pmix_status_t status, const pmix_proc_t &source,
                        const pmix_info_t *info, size_t ninfo, bool non_default) const;

    pmix_proc_t _self{};
    std::function<bool(const pmix_proc_t &)> _is_local_peer;
    std::optional<event_handler_entry> _first, _last;
    category _cats[3];
    size_t _next_ref = 1;
};

// One event walking its chain. Driven by the owner:
//   next() -> the handler to call now (or nullopt: the chain is over);
//   handler_done(status, results) when that handler calls its completion function.
// Results of every handler are accumulated and handed to the handlers after it.
class event_chain {
public:
    enum class state : uint8_t { ready, in_handler, done };
    static const char *to_string(state s);

    event_chain(pmix_status_t status, const pmix_proc_t &source, InfoArray info,
                std::vector<event_handler_entry> handlers);

    // The next handler to call (state becomes in_handler) or nullopt (state becomes done).
    // Calling next() while in_handler is a logic error and returns nullopt.
    std::optional<event_handler_entry> next();
    // The running handler finished. PMIX_EVENT_ACTION_COMPLETE ends the chain. Results are copied.
    Status handler_done(pmix_status_t status, const pmix_info_t *results, size_t nresults);

    state current_state() const { return _state; }
    pmix_status_t status() const { return _status; }
    const pmix_proc_t &source() const { return _source; }
    InfoArray &info() { return _info; }
    InfoArray &results() { return _results; }
    // The status the last handler reported (PMIX_SUCCESS before any ran).
    pmix_status_t last_handler_status() const { return _last_status; }
    size_t handlers_run() const { return _next; }

private:
    pmix_status_t _status;
    pmix_proc_t _source;
    InfoArray _info;
    InfoArray _results;
    std::vector<event_handler_entry> _handlers;
    size_t _next = 0;
    state _state = state::ready;
    pmix_status_t _last_status = PMIX_SUCCESS;
};


}  // namespace pmixcpp::client
