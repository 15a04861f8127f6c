// libFuzzer target: bytes an OpenPMIx client sends to the server (plugin/native/): OpenPMIx's
// buffer encoding in both integer flavours, and the connection's framing and handshake. The first
// byte picks the flavour (bit 7) and the type of the top-level pack (the rest, an index into the
// types a message can carry); the bytes after it are unpacked as one pack of that type. Beyond the
// types: odd picks feed the message reader (handshake first) and parse the handshake, even picks
// unpack a stream of KVALs (the job blob's layout), and picks from 96 up decode one request the
// server serves by translation (requests.h: COMMIT, FENCENB, GETNB, ABORT, REGEVENTS, NOTIFY;
// requests_grp.h: QUERY, LOG, GROUP_CONSTRUCT, GROUP_DESTRUCT).
// Nothing may crash, leak, read out of bounds or allocate beyond the decode budget; what decodes
// packs again, and the packed form decodes and packs to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "plugin/native/bfrops.h"
#include "plugin/native/connection.h"
#include "plugin/native/requests.h"
#include "plugin/native/requests_grp.h"
#include "type_traits.h"
#include "value.h"

using namespace pmixcpp;
using namespace pmixcpp::native;

namespace {

constexpr pmix_data_type_t kTypes[] = {
    PMIX_BOOL, PMIX_BYTE, PMIX_STRING, PMIX_SIZE, PMIX_PID, PMIX_INT, PMIX_INT8, PMIX_INT16, PMIX_INT32,
    PMIX_INT64, PMIX_UINT, PMIX_UINT8, PMIX_UINT16, PMIX_UINT32, PMIX_UINT64, PMIX_FLOAT, PMIX_DOUBLE,
    PMIX_TIMEVAL, PMIX_TIME, PMIX_STATUS, PMIX_VALUE, PMIX_PROC, PMIX_INFO, PMIX_BYTE_OBJECT,
    PMIX_PERSIST, PMIX_POINTER, PMIX_SCOPE, PMIX_DATA_RANGE, PMIX_COMMAND, PMIX_INFO_DIRECTIVES,
    PMIX_DATA_TYPE, PMIX_PROC_STATE, PMIX_PROC_INFO, PMIX_DATA_ARRAY, PMIX_PROC_RANK,
    PMIX_COMPRESSED_STRING, PMIX_ALLOC_DIRECTIVE, PMIX_IOF_CHANNEL, PMIX_ENVAR, PMIX_COORD,
    PMIX_REGATTR, PMIX_JOB_STATE, PMIX_LINK_STATE, PMIX_GEOMETRY, PMIX_DEVICE_DIST, PMIX_ENDPOINT,
    PMIX_DEVTYPE, PMIX_LOCTYPE, PMIX_COMPRESSED_BYTE_OBJECT, PMIX_PROC_NSPACE, PMIX_TOPO, PMIX_REGEX,
};
constexpr size_t kNumTypes = sizeof(kTypes) / sizeof(kTypes[0]);

size_t element_bytes(pmix_data_type_t type) { return type == PMIX_COMMAND ? 1 : traits_of(type).size; }

void one_pack(int_flavour f, pmix_data_type_t type, std::span<const uint8_t> in) {
    unpacker up(f, in);
    int32_t count = 0;
    {
        unpacker peek(f, in);
        if (!peek.unpack_count(&count).ok() || count > 64) return;
    }
    size_t size = element_bytes(type);
    if (size == 0 || count == 0) return;
    std::vector<uint8_t> storage(size * static_cast<size_t>(count), 0);
    if (!up.unpack(type, storage.data(), count).ok()) {
        for (uint8_t b : storage)
            if (b != 0) abort();  // a failed decode leaves its output empty
        return;
    }
    packer once(f);
    if (!once.pack(type, storage.data(), count).ok()) abort();
    for (int32_t i = 0; i < count; ++i) element_destruct(type, storage.data() + static_cast<size_t>(i) * size);

    std::vector<uint8_t> again(size * static_cast<size_t>(count), 0);
    unpacker up2(f, once.data());
    if (!up2.unpack(type, again.data(), count).ok() || !up2.at_end()) abort();
    packer twice(f);
    if (!twice.pack(type, again.data(), count).ok()) abort();
    if (twice.data() != once.data()) abort();
    for (int32_t i = 0; i < count; ++i) element_destruct(type, again.data() + static_cast<size_t>(i) * size);
}

void kval_stream(int_flavour f, std::span<const uint8_t> in) {
    unpacker up(f, in);
    std::string nspace;
    int32_t n = 0;
    if (!up.unpack_count(&n).ok() || n != 1 || !up.get_string(&nspace, PMIX_MAX_NSLEN).ok()) return;
    while (!up.at_end()) {
        if (!up.unpack_count(&n).ok() || n != 1) return;
        std::string key;
        pmix_value_t v{};
        if (!up.get_kval(&key, &v).ok()) {
            if (v.type != PMIX_UNDEF) abort();
            return;
        }
        packer pk(f);
        if (!pk.put_kval(key.c_str(), v).ok()) abort();
        value_destruct(&v);
    }
}

void connection(std::span<const uint8_t> in) {
    message_reader r(1u << 16);
    size_t off = 0;
    while (off < in.size()) {
        size_t n = std::min(r.wanted(), in.size() - off);
        if (!r.feed(in.data() + off, n).ok()) return;
        off += n;
        if (!r.complete()) continue;
        if (!r.handshake_done()) {
            if (r.payload().size() > kMaxHandshakeBytes) abort();
            Result<hello> h = parse_hello(r.payload());
            if (h.ok()) {
                // What parses encodes to a handshake that parses the same.
                Result<hello> again = parse_hello(encode_hello(*h));
                if (!again.ok() || again->version != h->version || again->bfrops != h->bfrops ||
                    again->credential != h->credential || again->flag != h->flag)
                    abort();
                uid_t u;
                gid_t g;
                (void)native_credential(*h, &u, &g);
            }
        } else if (r.payload().size() > (1u << 16)) {
            abort();
        }
        r.next();
    }
}

// A request the server translates: what decodes is within its caps; what fails leaves nothing.
void request(int_flavour f, size_t which, std::span<const uint8_t> in) {
    unpacker up(f, in);
    switch (which % 11) {
    case 0: {
        commit_data d;
        if (!decode_commit(up, &d).ok() && (d.infos.size() != 0 || !d.scopes.empty())) abort();
        if (d.scopes.size() != d.infos.size()) abort();
        break;
    }
    case 1: {
        fence_data d;
        if (decode_fence(up, &d, 64).ok() && d.procs.size() > 64) abort();
        break;
    }
    case 2: {
        get_data d;
        if (decode_get(up, &d).ok() && d.key.size() > PMIX_MAX_KEYLEN) abort();
        break;
    }
    case 3: {
        abort_data d;
        if (decode_abort(up, &d, 64).ok() && d.procs.size() > 64) abort();
        break;
    }
    case 5: {
        notify_data d;
        if (decode_notify(up, &d).ok()) {
            // What decodes goes out to the other clients: it packs.
            pmix_proc_t src{};
            if (!encode_event(f, d.status, src, d.range, d.infos.data(), d.infos.size()).ok()) abort();
        }
        break;
    }
    case 6: {
        wire::query_request d;
        if (decode_query(up, &d).ok()) {
            if (d.queries.empty() || d.queries.size() > kMaxQueries) abort();
            for (const auto &q : d.queries)
                if (q.keys.empty() || q.keys.size() > kMaxQueryKeys) abort();
        } else if (!d.queries.empty()) {
            abort();
        }
        break;
    }
    case 7: {
        wire::log_request d;
        if (!decode_log(up, &d).ok() && (d.data.size() != 0 || d.directives.size() != 0)) abort();
        break;
    }
    case 8: {
        wire::group_request d;
        if (decode_group_construct(up, &d, 64).ok()) {
            if (d.procs.empty() || d.procs.size() > 64 || d.name.empty()) abort();
            // The reply to it packs in every layout.
            for (const char *v : {"4.2.2", "5.0.7", "6.0.0", "6.1.0"})
                if (!encode_group_construct_reply(f, parse_release(v), PMIX_SUCCESS, d.procs, 7).ok()) abort();
        } else if (!d.procs.empty() || d.member_info.size() != 0) {
            abort();
        }
        break;
    }
    case 9: {
        wire::group_request d;
        if (!decode_group_destruct(up, parse_release(in.size() % 2 ? "5.0.7" : "4.2.2"), 64, &d).ok() && !d.name.empty())
            abort();
        break;
    }
    case 10: {
        std::string name;
        InfoArray dirs;
        if (!decode_group_leave(up, &name, &dirs).ok() && (!name.empty() || dirs.size() != 0)) abort();
        break;
    }
    default: {
        regevents_data d;
        (void)decode_regevents(up, &d);
        break;
    }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    int_flavour f = (data[0] & 0x80) ? int_flavour::fixed : int_flavour::flex128;
    size_t pick = data[0] & 0x7f;
    std::span<const uint8_t> in(data + 1, size - 1);
    if (pick < kNumTypes) one_pack(f, kTypes[pick], in);
    else if (pick >= 96) request(f, pick - 96, in);
    else if (pick & 1) connection(in);
    else kval_stream(f, in);
    return 0;
}
