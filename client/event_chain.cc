#include "event_chain.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace pmixcpp::client {

namespace {

std::string string_of(const pmix_info_t *i) {
    if (i == nullptr || i->value.type != PMIX_STRING || i->value.data.string == nullptr) return {};
    return i->value.data.string;
}

std::vector<pmix_proc_t> procs_of_key(const pmix_info_t *info, size_t ninfo, const char *key) {
    const pmix_info_t *i = find_info(info, ninfo, key);
    return i ? procs_of(i->value) : std::vector<pmix_proc_t>{};
}

bool any_matches(const std::vector<pmix_proc_t> &set, const pmix_proc_t &p) {
    return std::any_of(set.begin(), set.end(), [&](const pmix_proc_t &q) { return proc_matches(q, p); });
}

}  // namespace

const char *to_string(handler_class c) {
    switch (c) {
    case handler_class::single_code: return "single-code";
    case handler_class::multi_code: return "multi-code";
    case handler_class::default_handler: return "default";
    }
    return "unknown";
}

bool event_handler_entry::wants(pmix_status_t status) const {
    return codes.empty() || std::find(codes.begin(), codes.end(), status) != codes.end();
}

bool proc_matches(const pmix_proc_t &p, const pmix_proc_t &q) {
    if (strncmp(p.nspace, q.nspace, PMIX_MAX_NSLEN) != 0) return false;
    return p.rank == q.rank || p.rank == PMIX_RANK_WILDCARD || q.rank == PMIX_RANK_WILDCARD;
}

// ------------------------------------------------------------------------------------------
// event_registry

event_registry::event_registry(pmix_proc_t self, std::function<bool(const pmix_proc_t &)> is_local_peer)
    : _self(self), _is_local_peer(std::move(is_local_peer)) {}

Result<size_t> event_registry::add(const pmix_status_t *codes, size_t ncodes, const pmix_info_t *info,
                                   size_t ninfo, pmix_notification_fn_t fn) {
    if (fn == nullptr) return Status(PMIX_ERR_BAD_PARAM, "no handler function");
    if (ncodes > 0 && codes == nullptr) return Status(PMIX_ERR_BAD_PARAM, "codes is NULL but ncodes > 0");
    event_handler_entry h;
    h.codes.assign(codes, codes + ncodes);
    h.cls = ncodes == 0 ? handler_class::default_handler
                        : (ncodes == 1 ? handler_class::single_code : handler_class::multi_code);
    h.fn = fn;
    h.name = string_of(find_info(info, ninfo, PMIX_EVENT_HDLR_NAME));
    if (const pmix_info_t *ro = find_info(info, ninfo, PMIX_EVENT_RETURN_OBJECT); ro != nullptr) {
        if (ro->value.type != PMIX_POINTER)
            return Status(PMIX_ERR_EVENT_REGISTRATION, "PMIX_EVENT_RETURN_OBJECT must be a pointer");
        h.has_return_object = true;
        h.return_object = ro->value.data.ptr;
    }
    if (const pmix_info_t *r = find_info(info, ninfo, PMIX_RANGE)) {
        if (r->value.type == PMIX_DATA_RANGE) {
            h.source_range = r->value.data.range;
        } else {
            auto n = value_to_number<int64_t>(r->value);
            if (!n.ok()) return Status(PMIX_ERR_BAD_PARAM, "PMIX_RANGE of a handler must be a data range");
            h.source_range = static_cast<pmix_data_range_t>(n.value());
        }
    }
    h.custom_sources = procs_of_key(info, ninfo, PMIX_EVENT_CUSTOM_RANGE);
    h.affected = procs_of_key(info, ninfo, PMIX_EVENT_AFFECTED_PROC);
    auto more = procs_of_key(info, ninfo, PMIX_EVENT_AFFECTED_PROCS);
    h.affected.insert(h.affected.end(), more.begin(), more.end());

    category &c = cat(h.cls);
    const char *what = to_string(h.cls);
    auto refuse = [](const std::string &why) { return Status(PMIX_ERR_EVENT_REGISTRATION, why); };
    const pmix_info_t *before = find_info(info, ninfo, PMIX_EVENT_HDLR_BEFORE);
    const pmix_info_t *after = find_info(info, ninfo, PMIX_EVENT_HDLR_AFTER);

    // Decide the place first; change nothing until it is known to be free.
    enum class place { first, last, cat_first, cat_last, at_index } where = place::at_index;
    size_t index = c.middle.size();
    if (info_flag(info, ninfo, PMIX_EVENT_HDLR_FIRST)) {
        if (_first) return refuse("handler " + std::to_string(_first->ref) + " is already declared first");
        where = place::first;
    } else if (info_flag(info, ninfo, PMIX_EVENT_HDLR_LAST)) {
        if (_last) return refuse("handler " + std::to_string(_last->ref) + " is already declared last");
        where = place::last;
    } else if (info_flag(info, ninfo, PMIX_EVENT_HDLR_FIRST_IN_CATEGORY)) {
        if (c.first) return refuse(std::string("the ") + what + " class already has a first handler");
        where = place::cat_first;
    } else if (info_flag(info, ninfo, PMIX_EVENT_HDLR_LAST_IN_CATEGORY)) {
        if (c.last) return refuse(std::string("the ") + what + " class already has a last handler");
        where = place::cat_last;
    } else if (before != nullptr || after != nullptr) {
        const pmix_info_t *rel = before ? before : after;
        std::string target_name = string_of(rel);
        size_t target_ref = 0;
        if (target_name.empty()) {
            auto n = value_to_number<uint64_t>(rel->value);
            if (!n.ok() || n.value() == 0)
                return refuse("PMIX_EVENT_HDLR_BEFORE/AFTER needs a handler name or reference");
            target_ref = n.value();
        }
        auto is_target = [&](const event_handler_entry &e) {
            return target_name.empty() ? e.ref == target_ref : e.name == target_name;
        };
        auto it = std::find_if(c.middle.begin(), c.middle.end(), is_target);
        if (it != c.middle.end()) {
            index = static_cast<size_t>(it - c.middle.begin()) + (before ? 0 : 1);
        } else if (c.first && is_target(*c.first) && after) {
            index = 0;
        } else if (c.last && is_target(*c.last) && before) {
            index = c.middle.size();
        } else if ((_first && is_target(*_first) && after) || (_last && is_target(*_last) && before)) {
            // the overall first runs before every class, the overall last after them all
            index = after ? 0 : c.middle.size();
        } else {
            return refuse("no " + std::string(what) + " handler '" +
                          (target_name.empty() ? std::to_string(target_ref) : target_name) + "' to order " +
                          (before ? "before" : "after"));
        }
    } else if (info_flag(info, ninfo, PMIX_EVENT_HDLR_PREPEND)) {
        index = 0;
    }

    h.ref = _next_ref++;
    size_t ref = h.ref;
    switch (where) {
    case place::first: _first = std::move(h); break;
    case place::last: _last = std::move(h); break;
    case place::cat_first: c.first = std::move(h); break;
    case place::cat_last: c.last = std::move(h); break;
    case place::at_index: c.middle.insert(c.middle.begin() + static_cast<std::ptrdiff_t>(index), std::move(h)); break;
    }
    return ref;
}

bool event_registry::remove(size_t ref) {
    auto take = [ref](std::optional<event_handler_entry> &slot) {
        if (slot && slot->ref == ref) {
            slot.reset();
            return true;
        }
        return false;
    };
    if (take(_first) || take(_last)) return true;
    for (auto &c : _cats) {
        if (take(c.first) || take(c.last)) return true;
        auto it = std::find_if(c.middle.begin(), c.middle.end(), [ref](const auto &e) { return e.ref == ref; });
        if (it != c.middle.end()) {
            c.middle.erase(it);
            return true;
        }
    }
    return false;
}

size_t event_registry::size() const { return ordered().size(); }

std::vector<const event_handler_entry *> event_registry::ordered() const {
    std::vector<const event_handler_entry *> out;
    if (_first) out.push_back(&*_first);
    for (const auto &c : _cats) {
        if (c.first) out.push_back(&*c.first);
        for (const auto &e : c.middle) out.push_back(&e);
        if (c.last) out.push_back(&*c.last);
    }
    if (_last) out.push_back(&*_last);
    return out;
}

const event_handler_entry *event_registry::find(size_t ref) const {
    for (const auto *e : ordered())
        if (e->ref == ref) return e;
    return nullptr;
}

bool event_registry::passes_filters(const event_handler_entry &h, pmix_status_t status, const pmix_proc_t &source,
                                    const pmix_info_t *info, size_t ninfo, bool non_default) const {
    if (!h.wants(status)) return false;
    if (non_default && h.cls == handler_class::default_handler) return false;
    switch (h.source_range) {
    case PMIX_RANGE_PROC_LOCAL:
        if (!proc_matches(_self, source) || source.rank == PMIX_RANK_WILDCARD) return false;
        break;
    case PMIX_RANGE_LOCAL:
        if (!proc_matches(_self, source) && !(_is_local_peer && _is_local_peer(source))) return false;
        break;
    case PMIX_RANGE_NAMESPACE:
        if (strncmp(_self.nspace, source.nspace, PMIX_MAX_NSLEN) != 0) return false;
        break;
    default: break;
    }
    if (!h.custom_sources.empty() && !any_matches(h.custom_sources, source)) return false;
    if (!h.affected.empty()) {
        auto affected = procs_of_key(info, ninfo, PMIX_EVENT_AFFECTED_PROC);
        auto more = procs_of_key(info, ninfo, PMIX_EVENT_AFFECTED_PROCS);
        affected.insert(affected.end(), more.begin(), more.end());
        bool hit = std::any_of(affected.begin(), affected.end(),
                               [&](const pmix_proc_t &p) { return any_matches(h.affected, p); });
        if (!hit) return false;
    }
    return true;
}

std::vector<event_handler_entry> event_registry::chain_for(pmix_status_t status, const pmix_proc_t &source,
                                                           const pmix_info_t *info, size_t ninfo) const {
    bool non_default = info_flag(info, ninfo, PMIX_EVENT_NON_DEFAULT);
    std::vector<event_handler_entry> out;
    for (const auto *e : ordered())
        if (passes_filters(*e, status, source, info, ninfo, non_default)) out.push_back(*e);
    return out;
}

bool event_registry::accepts(size_t ref, pmix_status_t status, const pmix_proc_t &source, const pmix_info_t *info,
                             size_t ninfo) const {
    const event_handler_entry *e = find(ref);
    return e &&
           passes_filters(*e, status, source, info, ninfo, info_flag(info, ninfo, PMIX_EVENT_NON_DEFAULT));
}

std::vector<size_t> event_registry::refs_in_order() const {
    std::vector<size_t> out;
    for (const auto *e : ordered()) out.push_back(e->ref);
    return out;
}

// ------------------------------------------------------------------------------------------
// event_chain

const char *event_chain::to_string(state s) {
    switch (s) {
    case state::ready: return "ready";
    case state::in_handler: return "in handler";
    case state::done: return "done";
    }
    return "unknown";
}

event_chain::event_chain(pmix_status_t status, const pmix_proc_t &source, InfoArray info,
                         std::vector<event_handler_entry> handlers)
    : _status(status), _source(source), _info(std::move(info)), _handlers(std::move(handlers)) {}

std::optional<event_handler_entry> event_chain::next() {
    if (_state != state::ready) return std::nullopt;
    if (_next >= _handlers.size()) {
        _state = state::done;
        return std::nullopt;
    }
    _state = state::in_handler;
    return _handlers[_next++];
}

Status event_chain::handler_done(pmix_status_t status, const pmix_info_t *results, size_t nresults) {
    if (_state != state::in_handler)
        return Status(PMIX_ERR_BAD_PARAM, std::string("handler completion while the chain is ") + to_string(_state));
    _last_status = status;
    Status st = Status::success();
    if (results != nullptr && nresults > 0) {
        size_t old = _results.size();
        auto *merged = static_cast<pmix_info_t *>(calloc(old + nresults, sizeof(pmix_info_t)));
        if (merged == nullptr) {
            st = Status(PMIX_ERR_NOMEM, "out of memory for event results");
        } else {
            InfoArray next(merged, old + nresults);
            for (size_t i = 0; i < old && st.ok(); ++i) st = info_xfer(&merged[i], &_results[i]);
            for (size_t i = 0; i < nresults && st.ok(); ++i) st = info_xfer(&merged[old + i], &results[i]);
            if (st.ok()) _results = std::move(next);
        }
    }
    _state = status == PMIX_EVENT_ACTION_COMPLETE ? state::done : state::ready;
    return st;
}

}  // namespace pmixcpp::client
