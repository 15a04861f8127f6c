#include "sched.h"

#include <cstdlib>
#include <cstring>

#include "inventory.h"
#include "log.h"
#include "slurm_adapter.h"

namespace pmixcpp::sched {

namespace {


std::string info_string(const pmix_info_t *info, size_t n, const char *key) {
    const pmix_info_t *x = find_info(info, n, key);
    return x && x->value.type == PMIX_STRING && x->value.data.string ? x->value.data.string : "";
}

void set_key(pmix_info_t *info, const char *key) {
    memset(info->key, 0, sizeof info->key);
    strncpy(info->key, key, PMIX_MAX_KEYLEN);
}

// One round of notifications: done when every handler has called its completion function.
struct completion_wait {
    std::mutex lock;
    std::condition_variable cv;
    size_t remaining = 0;
};

void handler_done(pmix_status_t, pmix_info_t *, size_t, pmix_op_cbfunc_t cbfunc, void *thiscbdata,
                  void *notification_cbdata) {
    auto *w = static_cast<completion_wait *>(notification_cbdata);
    {
        std::lock_guard<std::mutex> g(w->lock);
        if (w->remaining > 0) --w->remaining;
    }
    w->cv.notify_all();
    if (cbfunc) cbfunc(PMIX_SUCCESS, thiscbdata);
}

}  // namespace

scheduler_context::scheduler_context(bool scheduler, unsigned poll_seconds)
    : _scheduler(scheduler), _poll_seconds(poll_seconds) {}

scheduler_context::~scheduler_context() {
    {
        std::lock_guard<std::mutex> g(_lock);
        _stop = true;
    }
    _wake.notify_all();
    if (_thread.joinable()) _thread.join();
    std::lock_guard<std::mutex> g(_lock);
    for (pmix_fabric_t *f : _fabrics) {
        auto *st = static_cast<fabric_state *>(f->module);
        clear_fabric_fields(f, st != nullptr && st->seed_layout);
        delete st;
        f->module = nullptr;
    }
}

Status scheduler_context::ensure_topology() {
    if (_have_topology) return Status::success();
    PMIXCPP_ASSIGN_OR_RETURN(auto topo, load_topology());
    _topology = std::move(topo);
    _have_topology = true;
    return Status::success();
}

std::map<std::string, std::vector<nic>> scheduler_context::nics_by_node() const {
    std::map<std::string, std::vector<nic>> out;
    for (const auto &[node, inv] : _inventories)
        for (const auto &n : inventory_nics(inv.data(), inv.size())) out[node].push_back({n.name, n.address});
    return out;
}

void clear_fabric_fields(pmix_fabric_t *fabric, bool seed_layout) {
    if (seed_layout) {
        auto *seed = reinterpret_cast<seed_fabric *>(fabric);
        seed->commcost = nullptr;
        seed->nverts = 0;
        return;
    }
    info_array_free(fabric->info, fabric->ninfo);
    fabric->info = nullptr;
    fabric->ninfo = 0;
}

Status fill_fabric_info(pmix_fabric_t *fabric, fabric_state *st, cost_matrix matrix) {
    if (st->seed_layout) {
        if (matrix.size() > UINT32_MAX) return Status(PMIX_ERR_BAD_PARAM, "too many vertices for nverts");
        st->matrix = std::move(matrix);
        st->rows.assign(st->matrix.size(), nullptr);
        for (size_t i = 0; i < st->matrix.size(); ++i) st->rows[i] = st->matrix.cost.data() + i * st->matrix.size();
        auto *seed = reinterpret_cast<seed_fabric *>(fabric);
        seed->commcost = st->rows.empty() ? nullptr : st->rows.data();
        seed->nverts = static_cast<uint32_t>(st->matrix.size());
        return Status::success();
    }
    auto *info = static_cast<pmix_info_t *>(calloc(4, sizeof(pmix_info_t)));
    if (info == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
    st->matrix = std::move(matrix);
    st->rows.assign(st->matrix.size(), nullptr);
    for (size_t i = 0; i < st->matrix.size(); ++i) st->rows[i] = st->matrix.cost.data() + i * st->matrix.size();
    size_t n = st->matrix.size();
    set_key(&info[0], PMIX_FABRIC_COST_MATRIX);
    info[0].value.type = PMIX_POINTER;
    info[0].value.data.ptr = n > 0 ? st->rows.data() : nullptr;
    set_key(&info[1], PMIX_FABRIC_NUM_VERTICES);
    info[1].value.type = PMIX_SIZE;
    info[1].value.data.size = n;
    set_key(&info[2], PMIX_FABRIC_PLANE);
    info[2].value.type = PMIX_STRING;
    info[2].value.data.string = strdup(st->plane.c_str());
    set_key(&info[3], PMIX_FABRIC_INDEX);
    info[3].value.type = PMIX_SIZE;
    info[3].value.data.size = fabric->index;
    info_array_free(fabric->info, fabric->ninfo);
    fabric->info = info;
    fabric->ninfo = 4;
    return Status::success();
}

Status scheduler_context::fill(pmix_fabric_t *fabric, fabric_state *st) {
    PMIXCPP_ASSIGN_OR_RETURN(auto tree, switch_tree::build(_topology));
    return fill_fabric_info(fabric, st, build_cost_matrix(tree, nics_by_node()));
}

Status scheduler_context::register_fabric(pmix_fabric_t *fabric, const pmix_info_t *dirs, size_t ndirs,
                                          bool seed_layout) {
    if (fabric == nullptr) return Status(PMIX_ERR_BAD_PARAM, "fabric is NULL");
    std::string plane = info_string(dirs, ndirs, PMIX_NETWORK_PLANE);
    if (plane.empty()) plane = info_string(dirs, ndirs, PMIX_FABRIC_PLANE);
    if (plane.empty()) plane = "default";
    if (plane != "default") return Status(PMIX_ERR_NOT_FOUND, "no network plane '" + plane + "' (only 'default')");
    auto st = std::make_unique<fabric_state>();
    st->plane = plane;
    st->seed_layout = seed_layout;
    if (const pmix_info_t *h = find_info(dirs, ndirs, PMIXCPP_FABRIC_EVHDLR)) {
        if (h->value.type != PMIX_POINTER || h->value.data.ptr == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, PMIXCPP_FABRIC_EVHDLR " must be a non-NULL pointer");
        st->handlers.push_back({0, reinterpret_cast<pmix_notification_fn_t>(h->value.data.ptr), {}});
    }
    std::lock_guard<std::mutex> g(_lock);
    if (_fabrics.count(fabric)) return Status(PMIX_ERR_BAD_PARAM, "fabric already registered");
    PMIXCPP_RETURN_IF_ERROR(ensure_topology());
    for (auto &h : st->handlers) h.ref = _next_ref++;
    // The caller's struct changes only on success.
    pmix_fabric_t copy = *fabric;
    copy.info = nullptr;
    copy.ninfo = 0;
    copy.index = _next_fabric_index;
    PMIXCPP_RETURN_IF_ERROR(fill(&copy, st.get()));
    ++_next_fabric_index;
    free(fabric->name);
    copy.name = strdup(plane.c_str());
    copy.module = st.release();
    *fabric = copy;
    _fabrics.insert(fabric);
    start_poller();
    return Status::success();
}

Status scheduler_context::deregister_fabric(pmix_fabric_t *fabric) {
    if (fabric == nullptr) return Status(PMIX_ERR_BAD_PARAM, "fabric is NULL");
    std::lock_guard<std::mutex> g(_lock);
    if (_fabrics.erase(fabric) == 0) return Status(PMIX_ERR_BAD_PARAM, "fabric not registered");
    release_fabric(fabric);
    return Status::success();
}

void release_fabric(pmix_fabric_t *fabric) {
    auto *st = static_cast<fabric_state *>(fabric->module);
    clear_fabric_fields(fabric, st != nullptr && st->seed_layout);
    delete st;
    fabric->module = nullptr;
    free(fabric->name);
    fabric->name = nullptr;
}

Status scheduler_context::vertex_info(pmix_fabric_t *fabric, uint32_t i, pmix_value_t *vertex, char **nodename) {
    if (fabric == nullptr || vertex == nullptr || nodename == nullptr)
        return Status(PMIX_ERR_BAD_PARAM, "fabric, vertex or nodename is NULL");
    std::lock_guard<std::mutex> g(_lock);
    if (!_fabrics.count(fabric)) return Status(PMIX_ERR_BAD_PARAM, "fabric not registered");
    auto *st = static_cast<fabric_state *>(fabric->module);
    if (i >= st->matrix.size())
        return Status(PMIX_ERR_BAD_PARAM, "vertex " + std::to_string(i) + " out of range (" +
                                              std::to_string(st->matrix.size()) + " vertices)");
    const fabric_vertex &v = st->matrix.vertices[i];
    std::vector<std::pair<const char *, std::string>> strs = {
        {PMIX_HOSTNAME, v.node},
        {PMIX_FABRIC_DEVICE_NAME, v.device.empty() ? v.node : v.device},
        {PMIX_FABRIC_SWITCH, v.leaf}};
    if (!v.address.empty()) strs.push_back({PMIX_FABRIC_DEVICE_ADDRESS, v.address});
    size_t n = strs.size() + 1;
    auto *items = static_cast<pmix_info_t *>(calloc(n, sizeof(pmix_info_t)));
    auto *da = static_cast<pmix_data_array_t *>(calloc(1, sizeof(pmix_data_array_t)));
    char *name = strdup(v.node.c_str());
    if (items == nullptr || da == nullptr || name == nullptr) {
        free(items);
        free(da);
        free(name);
        return Status(PMIX_ERR_NOMEM, "out of memory");
    }
    for (size_t k = 0; k < strs.size(); ++k) {
        set_key(&items[k], strs[k].first);
        items[k].value.type = PMIX_STRING;
        items[k].value.data.string = strdup(strs[k].second.c_str());
    }
    set_key(&items[n - 1], PMIX_FABRIC_DEVICE_INDEX);
    items[n - 1].value.type = PMIX_UINT32;
    items[n - 1].value.data.uint32 = i;
    da->type = PMIX_INFO;
    da->size = n;
    da->array = items;
    vertex->type = PMIX_DATA_ARRAY;
    vertex->data.darray = da;
    *nodename = name;
    return Status::success();
}

Status scheduler_context::vertex_index(pmix_fabric_t *fabric, const pmix_value_t *vertex, uint32_t *i) {
    if (fabric == nullptr || vertex == nullptr || i == nullptr)
        return Status(PMIX_ERR_BAD_PARAM, "fabric, vertex or index is NULL");
    std::string node, device;
    if (vertex->type == PMIX_DATA_ARRAY && vertex->data.darray != nullptr && vertex->data.darray->type == PMIX_INFO) {
        auto *items = static_cast<const pmix_info_t *>(vertex->data.darray->array);
        size_t n = vertex->data.darray->size;
        node = info_string(items, n, PMIX_HOSTNAME);
        device = info_string(items, n, PMIX_FABRIC_DEVICE_NAME);
    } else if (vertex->type == PMIX_STRING && vertex->data.string != nullptr) {
        // "node" or "node/device"
        std::string s = vertex->data.string;
        size_t slash = s.find('/');
        node = s.substr(0, slash);
        if (slash != std::string::npos) device = s.substr(slash + 1);
    } else {
        return Status(PMIX_ERR_BAD_PARAM, "vertex must be a data array of infos or a string");
    }
    if (node.empty()) return Status(PMIX_ERR_BAD_PARAM, "vertex names no node (PMIX_HOSTNAME)");
    std::lock_guard<std::mutex> g(_lock);
    if (!_fabrics.count(fabric)) return Status(PMIX_ERR_BAD_PARAM, "fabric not registered");
    auto *st = static_cast<fabric_state *>(fabric->module);
    for (size_t k = 0; k < st->matrix.size(); ++k) {
        const fabric_vertex &v = st->matrix.vertices[k];
        if (v.node != node) continue;
        if (device.empty() || device == v.device || (v.device.empty() && device == v.node)) {
            *i = static_cast<uint32_t>(k);
            return Status::success();
        }
    }
    return Status(PMIX_ERR_NOT_FOUND, "no vertex " + node + (device.empty() ? "" : "/" + device));
}

Status scheduler_context::deliver_inventory(const pmix_info_t *info, size_t ninfo) {
    if (ninfo > 0 && info == nullptr) return Status(PMIX_ERR_BAD_PARAM, "info is NULL");
    std::string host = inventory_host(info, ninfo);
    if (host.empty()) return Status(PMIX_ERR_BAD_PARAM, "inventory without " PMIX_HOSTNAME);
    auto *copy = static_cast<pmix_info_t *>(calloc(ninfo ? ninfo : 1, sizeof(pmix_info_t)));
    if (copy == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
    InfoArray arr(copy, ninfo);
    for (size_t k = 0; k < ninfo; ++k) PMIXCPP_RETURN_IF_ERROR(info_xfer(&copy[k], &info[k]));
    std::lock_guard<std::mutex> g(_lock);
    _inventories[host] = std::move(arr);
    return Status::success();
}

Result<InfoArray> scheduler_context::delivered_inventories() {
    std::lock_guard<std::mutex> g(_lock);
    auto *nodes = static_cast<pmix_info_t *>(calloc(_inventories.size() ? _inventories.size() : 1, sizeof(pmix_info_t)));
    if (nodes == nullptr) return Status(PMIX_ERR_NOMEM, "out of memory");
    InfoArray node_arr(nodes, _inventories.size());
    size_t k = 0;
    for (const auto &[host, inv] : _inventories) {
        set_key(&nodes[k], PMIXCPP_INV_NODE);
        pmix_data_array_t src{PMIX_INFO, inv.size(), const_cast<pmix_info_t *>(inv.data())};
        pmix_data_array_t *copy = nullptr;
        PMIXCPP_RETURN_IF_ERROR(data_array_copy(&copy, &src));
        nodes[k].value.type = PMIX_DATA_ARRAY;
        nodes[k].value.data.darray = copy;
        ++k;
    }
    auto *out = static_cast<pmix_info_t *>(calloc(1, sizeof(pmix_info_t)));
    auto *da = static_cast<pmix_data_array_t *>(calloc(1, sizeof(pmix_data_array_t)));
    if (out == nullptr || da == nullptr) {
        free(out);
        free(da);
        return Status(PMIX_ERR_NOMEM, "out of memory");
    }
    set_key(out, PMIXCPP_INV_NODES);
    da->type = PMIX_INFO;
    da->size = node_arr.size();
    da->array = node_arr.release();
    out->value.type = PMIX_DATA_ARRAY;
    out->value.data.darray = da;
    return InfoArray(out, 1);
}

size_t scheduler_context::add_handler(pmix_notification_fn_t fn, std::vector<pmix_status_t> codes) {
    std::lock_guard<std::mutex> g(_lock);
    size_t ref = _next_ref++;
    _handlers.push_back({ref, fn, std::move(codes)});
    return ref;
}

bool scheduler_context::remove_handler(size_t ref) {
    std::lock_guard<std::mutex> g(_lock);
    for (auto it = _handlers.begin(); it != _handlers.end(); ++it)
        if (it->ref == ref) {
            _handlers.erase(it);
            return true;
        }
    return false;
}

void scheduler_context::notify_all(pmix_status_t code,
                                   const std::vector<std::pair<pmix_fabric_t *, fabric_handler>> &all) {
    std::vector<std::pair<pmix_fabric_t *, fabric_handler>> targets;
    for (const auto &t : all)
        if (t.second.wants(code)) targets.push_back(t);
    if (targets.empty()) return;
    // Heap-allocated: a handler that never completes (and a finalize meanwhile) must not leave
    // a dangling pointer behind; it is leaked in that case only.
    auto *w = new completion_wait;
    w->remaining = targets.size();
    pmix_proc_t source{};
    strncpy(source.nspace, "pmixcpp.sched", PMIX_MAX_NSLEN);
    source.rank = PMIX_RANK_UNDEF;
    for (const auto &[fabric, h] : targets) {
        pmix_info_t info[2];
        memset(info, 0, sizeof info);
        set_key(&info[0], PMIX_FABRIC_INDEX);
        info[0].value.type = PMIX_SIZE;
        info[0].value.data.size = fabric->index;
        set_key(&info[1], PMIX_FABRIC_PLANE);
        info[1].value.type = PMIX_STRING;
        info[1].value.data.string = const_cast<char *>("default");
        h.fn(h.ref, code, &source, info, 2, nullptr, 0, handler_done, w);
    }
    std::unique_lock<std::mutex> g(w->lock);
    while (w->remaining > 0) {
        if (w->cv.wait_for(g, std::chrono::seconds(30)) == std::cv_status::timeout && w->remaining > 0)
            PMIXCPP_LOG_WARNING("fabric event %s: still waiting for %zu handler(s)", PMIx_Error_string(code),
                                w->remaining);
        std::lock_guard<std::mutex> s(_lock);
        if (_stop) {
            PMIXCPP_LOG_WARNING("fabric event %s: finalize while %zu handler(s) had not completed",
                                PMIx_Error_string(code), w->remaining);
            return;  // leaks w on purpose
        }
    }
    g.unlock();
    delete w;
}

Result<bool> scheduler_context::poll_once() {
    std::lock_guard<std::mutex> serial(_update_lock);
    PMIXCPP_ASSIGN_OR_RETURN(auto topo, load_topology());
    std::vector<std::pair<pmix_fabric_t *, fabric_handler>> targets;
    {
        std::lock_guard<std::mutex> g(_lock);
        if (_have_topology && topo == _topology) return false;
        if (!_have_topology) {
            _topology = std::move(topo);
            _have_topology = true;
            return false;
        }
        for (pmix_fabric_t *f : _fabrics) {
            for (const auto &h : static_cast<fabric_state *>(f->module)->handlers) targets.push_back({f, h});
            for (const auto &h : _handlers) targets.push_back({f, h});
        }
    }
    PMIXCPP_LOG_INFO("switch topology changed: updating %zu fabric handler(s)", targets.size());
    notify_all(PMIX_FABRIC_UPDATE_PENDING, targets);
    {
        std::lock_guard<std::mutex> g(_lock);
        if (_stop) return false;
        _topology = std::move(topo);
        for (pmix_fabric_t *f : _fabrics) {
            Status st = fill(f, static_cast<fabric_state *>(f->module));
            if (!st.ok()) PMIXCPP_LOG_ERROR("fabric %zu: update failed: %s", f->index, st.message().c_str());
        }
        // Handlers of fabrics deregistered meanwhile get no UPDATED.
        std::erase_if(targets, [this](const auto &t) { return _fabrics.count(t.first) == 0; });
    }
    notify_all(PMIX_FABRIC_UPDATED, targets);
    return true;
}

void scheduler_context::start_poller() {
    if (_thread.joinable() || _poll_seconds == 0) return;
    _thread = std::thread([this] { poller(); });
}

void scheduler_context::poller() {
    std::unique_lock<std::mutex> g(_lock);
    while (!_stop) {
        _wake.wait_for(g, std::chrono::seconds(_poll_seconds));
        if (_stop) break;
        if (_fabrics.empty()) continue;
        g.unlock();
        auto r = poll_once();
        if (!r.ok()) PMIXCPP_LOG_VERBOSE("topology poll: %s", r.status().message().c_str());
        g.lock();
    }
}

}  // namespace pmixcpp::sched
