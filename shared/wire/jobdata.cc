// Job-data file, version 2 (see jobdata.h).
#include "wire/jobdata.h"

#include <algorithm>
#include <cstring>

#include "wire/codec.h"

namespace pmixcpp::wire {

namespace {

void store_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void store_u64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t load_u32(const uint8_t *p) {
    return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
           static_cast<uint32_t>(p[3]) << 24;
}
uint64_t load_u64(const uint8_t *p) { return load_u32(p) | static_cast<uint64_t>(load_u32(p + 4)) << 32; }

Status corrupt(const std::string &what) { return Status(PMIX_ERR_UNPACK_FAILURE, "job data: " + what); }


}  // namespace

Result<std::vector<uint8_t>> encode_jobdata(const std::vector<jobdata_entry> &entries) {
    std::vector<std::pair<uint32_t, const InfoArray *>> refs;
    refs.reserve(entries.size());
    for (const auto &e : entries) refs.emplace_back(e.rank, &e.infos);
    return encode_jobdata(refs);
}

Result<std::vector<uint8_t>> encode_jobdata(const std::vector<std::pair<uint32_t, const InfoArray *>> &entries) {
    std::vector<std::pair<uint32_t, std::span<const pmix_info_t>>> spans;
    spans.reserve(entries.size());
    for (const auto &[rank, infos] : entries) spans.emplace_back(rank, std::span<const pmix_info_t>(infos->data(), infos->size()));
    return encode_jobdata(spans);
}

// One buffer: the header, index and key tables first (their size is known), filled in as the
// keys and values are appended behind them.
Result<std::vector<uint8_t>> encode_jobdata(const std::vector<std::pair<uint32_t, std::span<const pmix_info_t>>> &entries,
                                            std::vector<uint8_t> buffer) {
    std::vector<const std::pair<uint32_t, std::span<const pmix_info_t>> *> order;
    order.reserve(entries.size());
    for (const auto &e : entries) order.push_back(&e);
    std::sort(order.begin(), order.end(), [](auto *a, auto *b) { return a->first < b->first; });
    for (size_t i = 1; i < order.size(); ++i)
        if (order[i]->first == order[i - 1]->first)
            return Status(PMIX_ERR_BAD_PARAM, "job data: rank " + std::to_string(order[i]->first) + " twice");

    uint64_t nkeys_total = 0;
    for (const auto *e : order) nkeys_total += e->second.size();
    const uint64_t tables_at = kJobdataHeaderSize + kJobdataIndexEntrySize * order.size();
    const uint64_t blobs_at = tables_at + kJobdataKeyEntrySize * nkeys_total;

    buffer.assign(blobs_at, 0);
    Writer w(std::move(buffer));
    uint64_t table = tables_at;
    for (size_t n = 0; n < order.size(); ++n) {
        const uint32_t rank = order[n]->first;
        std::span<const pmix_info_t> infos = order[n]->second;
        std::vector<size_t> keys(infos.size());
        for (size_t i = 0; i < keys.size(); ++i) keys[i] = i;
        std::sort(keys.begin(), keys.end(),
                  [&](size_t a, size_t b) { return key_view(infos[a]) < key_view(infos[b]); });
        for (size_t i = 1; i < keys.size(); ++i)
            if (key_view(infos[keys[i]]) == key_view(infos[keys[i - 1]]))
                return Status(PMIX_ERR_BAD_PARAM, "job data: key " + std::string(key_view(infos[keys[i]])) +
                                                      " twice for rank " + std::to_string(rank));
        const size_t idx = kJobdataHeaderSize + kJobdataIndexEntrySize * n;
        store_u32(w.at(idx), rank);
        store_u32(w.at(idx + 4), static_cast<uint32_t>(keys.size()));
        store_u64(w.at(idx + 8), table);
        for (size_t k = 0; k < keys.size(); ++k) {
            const pmix_info_t &info = infos[keys[k]];
            std::string_view key = key_view(info);
            const uint64_t key_at = w.size();
            w.put_raw(key.data(), key.size());
            const uint64_t value_at = w.size();
            PMIXCPP_RETURN_IF_ERROR(encode_value(w, info.value)
                                        .with_context("job data rank " + std::to_string(rank) + " key " +
                                                      std::string(key)));
            const uint64_t value_end = w.size();
            if (value_end > UINT32_MAX) return Status(PMIX_ERR_BAD_PARAM, "job data: larger than 4 GiB");
            const size_t slot = table + kJobdataKeyEntrySize * k;
            store_u32(w.at(slot), static_cast<uint32_t>(key_at));
            store_u32(w.at(slot + 4), static_cast<uint32_t>(key.size()));
            store_u32(w.at(slot + 8), static_cast<uint32_t>(value_at));
            store_u32(w.at(slot + 12), static_cast<uint32_t>(value_end - value_at));
        }
        table += kJobdataKeyEntrySize * keys.size();
    }
    const uint64_t total = w.size();
    store_u32(w.at(0), kJobdataMagic);
    store_u32(w.at(4), kJobdataVersion);
    store_u64(w.at(8), total);
    store_u32(w.at(16), static_cast<uint32_t>(order.size()));
    store_u32(w.at(20), 0);
    return w.take();
}

Result<jobdata_view> jobdata_view::parse(std::span<const uint8_t> bytes) {
    if (bytes.size() < kJobdataHeaderSize) return corrupt("shorter than its header");
    const uint8_t *p = bytes.data();
    if (load_u32(p) != kJobdataMagic) return corrupt("bad magic");
    const uint32_t version = load_u32(p + 4);
    if (version != kJobdataVersion)
        return corrupt("version " + std::to_string(version) + ", this library reads version " +
                       std::to_string(kJobdataVersion));
    const uint64_t length = load_u64(p + 8);
    if (length != bytes.size())
        return corrupt("length " + std::to_string(length) + " but the file has " + std::to_string(bytes.size()));
    if (length > UINT32_MAX) return corrupt("larger than 4 GiB");
    jobdata_view v;
    v._bytes = bytes;
    v._count = load_u32(p + 16);
    if (v._count > (bytes.size() - kJobdataHeaderSize) / kJobdataIndexEntrySize)
        return corrupt(std::to_string(v._count) + " entries do not fit the file");
    return v;
}

Result<jobdata_view::entry> jobdata_view::at(size_t i) const {
    if (i >= _count) return Status(PMIX_ERR_NOT_FOUND, "job data: no entry " + std::to_string(i));
    const uint8_t *p = _bytes.data() + kJobdataHeaderSize + kJobdataIndexEntrySize * i;
    entry e;
    e.rank = load_u32(p);
    e.nkeys = load_u32(p + 4);
    e.table = load_u64(p + 8);
    if (e.table > _bytes.size() || e.nkeys > (_bytes.size() - e.table) / kJobdataKeyEntrySize)
        return corrupt("key table of rank " + std::to_string(e.rank) + " outside the file");
    return e;
}

Result<jobdata_view::entry> jobdata_view::find(uint32_t rank) const {
    auto rank_at = [this](size_t i) {
        return load_u32(_bytes.data() + kJobdataHeaderSize + kJobdataIndexEntrySize * i);
    };
    size_t found = _count;
    if (rank < _count && rank_at(rank) == rank) {
        found = rank;  // the usual case: ranks 0..n-1 at their own slots
    } else {
        size_t lo = 0, hi = _count;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            uint32_t r = rank_at(mid);
            if (r == rank) {
                found = mid;
                break;
            }
            if (r < rank)
                lo = mid + 1;
            else
                hi = mid;
        }
    }
    if (found == _count) return Status(PMIX_ERR_NOT_FOUND, std::string());  // a common miss: no message to build
    return at(found);
}

Result<jobdata_view::key_slot> jobdata_view::slot(const entry &e, uint32_t i) const {
    if (i >= e.nkeys) return Status(PMIX_ERR_NOT_FOUND, "job data: no key " + std::to_string(i));
    // e came from at(): its table lies inside the file.
    const uint8_t *p = _bytes.data() + e.table + kJobdataKeyEntrySize * i;
    const uint32_t key_at = load_u32(p), key_len = load_u32(p + 4);
    key_slot s;
    s.value_offset = load_u32(p + 8);
    s.value_length = load_u32(p + 12);
    const uint64_t size = _bytes.size();
    if (key_len > PMIX_MAX_KEYLEN || key_at > size || key_len > size - key_at)
        return corrupt("key " + std::to_string(i) + " of rank " + std::to_string(e.rank) + " outside the file");
    if (s.value_offset > size || s.value_length > size - s.value_offset)
        return corrupt("value " + std::to_string(i) + " of rank " + std::to_string(e.rank) + " outside the file");
    s.key = std::string_view(reinterpret_cast<const char *>(_bytes.data() + key_at), key_len);
    if (key_len == 0 || s.key.find('\0') != std::string_view::npos)
        return corrupt("key " + std::to_string(i) + " of rank " + std::to_string(e.rank) + " is not a key");
    return s;
}

Result<std::string_view> jobdata_view::key_at(const entry &e, uint32_t i) const {
    auto s = slot(e, i);
    PMIXCPP_RETURN_IF_ERROR(s);
    return s->key;
}

Status jobdata_view::value(const entry &e, std::string_view key, pmix_value_t *out) const {
    uint32_t lo = 0, hi = e.nkeys;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        auto s = slot(e, mid);
        PMIXCPP_RETURN_IF_ERROR(s);
        int c = s->key.compare(key);
        if (c == 0) {
            Status st = decode_value_exact(_bytes.subspan(s->value_offset, s->value_length), out);
            return st.ok() ? st : st.with_context("job data rank " + std::to_string(e.rank) + " key " + std::string(key));
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return Status(PMIX_ERR_NOT_FOUND, std::string());  // the usual miss of a Get of non-job data
}

Status decode_jobdata(std::span<const uint8_t> bytes, std::vector<jobdata_entry> *entries) {
    auto view = jobdata_view::parse(bytes);
    PMIXCPP_RETURN_IF_ERROR(view);
    std::vector<jobdata_entry> out;
    out.reserve(view->size());
    for (size_t i = 0; i < view->size(); ++i) {
        auto e = view->at(i);
        PMIXCPP_RETURN_IF_ERROR(e);
        if (i > 0 && e->rank <= out.back().rank) return corrupt("index not sorted by rank");
        auto *infos = static_cast<pmix_info_t *>(calloc(e->nkeys ? e->nkeys : 1, sizeof(pmix_info_t)));
        if (infos == nullptr) return Status(PMIX_ERR_NOMEM, "job data: out of memory");
        jobdata_entry je;
        je.rank = e->rank;
        je.infos = InfoArray(infos, e->nkeys);
        for (uint32_t k = 0; k < e->nkeys; ++k) {
            auto s = view->slot(*e, k);
            PMIXCPP_RETURN_IF_ERROR(s);
            if (k > 0 && !(key_view(infos[k - 1]) < s->key)) return corrupt("keys not sorted");
            memcpy(infos[k].key, s->key.data(), s->key.size());
            PMIXCPP_RETURN_IF_ERROR(
                decode_value_exact(bytes.subspan(s->value_offset, s->value_length), &infos[k].value)
                    .with_context("job data rank " + std::to_string(e->rank)));
        }
        out.push_back(std::move(je));
    }
    *entries = std::move(out);
    return Status::success();
}

}  // namespace pmixcpp::wire
