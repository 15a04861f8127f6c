// OpenPMIx's handshake and framing; the format is summarised in connection.h.
#include "plugin/native/connection.h"

#include <arpa/inet.h>

#include <cstdlib>
#include <cstring>

namespace pmixcpp::native {

namespace {

constexpr size_t kMaxNameChars = 64;  // psec, version, bfrops and gds names
constexpr uint32_t kMaxCredential = 64u << 10;

uint32_t load_be32(const uint8_t *p) { return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3]; }
void store_be32(uint8_t *p, uint32_t v) {
    p[0] = static_cast<uint8_t>(v >> 24);
    p[1] = static_cast<uint8_t>(v >> 16);
    p[2] = static_cast<uint8_t>(v >> 8);
    p[3] = static_cast<uint8_t>(v);
}

// A cursor over the handshake payload.
class cursor {
public:
    explicit cursor(std::span<const uint8_t> b) : _b(b) {}
    size_t left() const { return _b.size() - _pos; }

    Status string(std::string *out, size_t max_chars, const char *what) {
        const void *nul = left() == 0 ? nullptr : memchr(_b.data() + _pos, 0, left());
        if (nul == nullptr)
            return Status(PMIX_ERR_BAD_PARAM, std::string(what) + " at offset " + std::to_string(_pos) + " is not terminated");
        size_t len = static_cast<const uint8_t *>(nul) - (_b.data() + _pos);
        if (len > max_chars)
            return Status(PMIX_ERR_BAD_PARAM, std::string(what) + " of " + std::to_string(len) + " characters exceeds " +
                                                  std::to_string(max_chars));
        out->assign(reinterpret_cast<const char *>(_b.data() + _pos), len);
        _pos += len + 1;
        return Status::success();
    }
    Status u32(uint32_t *v, const char *what) {
        if (left() < 4) return Status(PMIX_ERR_BAD_PARAM, std::string(what) + ": payload ends at offset " + std::to_string(_pos));
        *v = load_be32(_b.data() + _pos);
        _pos += 4;
        return Status::success();
    }
    Status u8(uint8_t *v, const char *what) {
        if (left() < 1) return Status(PMIX_ERR_BAD_PARAM, std::string(what) + ": payload ends at offset " + std::to_string(_pos));
        *v = _b[_pos++];
        return Status::success();
    }
    Status bytes(size_t n, std::vector<uint8_t> *out, const char *what) {
        if (left() < n)
            return Status(PMIX_ERR_BAD_PARAM, std::string(what) + " of " + std::to_string(n) + " bytes, " +
                                                  std::to_string(left()) + " left");
        out->assign(_b.begin() + static_cast<long>(_pos), _b.begin() + static_cast<long>(_pos + n));
        _pos += n;
        return Status::success();
    }

private:
    std::span<const uint8_t> _b;
    size_t _pos = 0;
};

Status get_proc(cursor &c, pmix_proc_t *p) {
    std::string ns;
    PMIXCPP_RETURN_IF_ERROR(c.string(&ns, PMIX_MAX_NSLEN, "nspace"));
    if (ns.empty()) return Status(PMIX_ERR_BAD_PARAM, "empty nspace");
    *p = pmix_proc_t{};
    memcpy(p->nspace, ns.data(), ns.size());
    return c.u32(&p->rank, "rank");
}

// "4.2.2rc2" -> 4, 2, 2 (as OpenPMIx's strtoul walk, but each number checked).
Status parse_version(const std::string &v, int *major, int *minor, int *release) {
    int out[3] = {0, 0, 0};
    const char *p = v.c_str();
    for (int i = 0; i < 3; ++i) {
        char *end = nullptr;
        unsigned long n = strtoul(p, &end, 10);
        if (end == p || n > 1000) {
            if (i < 2) return Status(PMIX_ERR_BAD_PARAM, "version \"" + v + "\" is not major.minor.release");
            break;  // a release part without a number ("4.2") is 0
        }
        out[i] = static_cast<int>(n);
        if (*end != '.') break;
        p = end + 1;
    }
    *major = out[0];
    *minor = out[1];
    *release = out[2];
    return Status::success();
}

}  // namespace

const char *to_string(peer_flag f) {
    switch (f) {
        case peer_flag::simple_client: return "client";
        case peer_flag::legacy_tool: return "legacy tool";
        case peer_flag::legacy_launcher: return "legacy launcher";
        case peer_flag::tool_needs_id: return "tool needing an id";
        case peer_flag::tool_given_id: return "tool with an id";
        case peer_flag::tool_client: return "tool started by a server";
        case peer_flag::launcher_needs_id: return "launcher needing an id";
        case peer_flag::launcher_given_id: return "launcher with an id";
        case peer_flag::launcher_client: return "launcher started by a server";
        case peer_flag::singleton_client: return "singleton";
        case peer_flag::scheduler_with_id: return "scheduler";
    }
    return "?";
}

std::array<uint8_t, kHeaderSize> encode_header(const header &h) {
    std::array<uint8_t, kHeaderSize> out{};
    store_be32(out.data(), static_cast<uint32_t>(h.pindex));
    store_be32(out.data() + 4, h.tag);
    store_be32(out.data() + 8, h.nbytes);
    return out;
}

header decode_header(const uint8_t *b) {
    header h;
    h.pindex = static_cast<int32_t>(load_be32(b));
    h.tag = load_be32(b + 4);
    h.nbytes = load_be32(b + 8);
    return h;
}

std::array<uint8_t, kHeaderSize> encode_handshake_header(uint32_t nbytes) {
    std::array<uint8_t, kHeaderSize> out{};
    int32_t pindex = kHandshakePindex;
    uint32_t tag = kHandshakeTag;
    memcpy(out.data(), &pindex, 4);
    memcpy(out.data() + 4, &tag, 4);
    memcpy(out.data() + 8, &nbytes, 4);
    return out;
}

header decode_handshake_header(const uint8_t *b) {
    header h;
    memcpy(&h.pindex, b, 4);
    memcpy(&h.tag, b + 4, 4);
    memcpy(&h.nbytes, b + 8, 4);
    return h;
}

Result<hello> parse_hello(std::span<const uint8_t> payload) {
    cursor c(payload);
    hello h;
    PMIXCPP_RETURN_IF_ERROR(c.string(&h.psec, kMaxNameChars, "psec name"));
    uint32_t clen;
    PMIXCPP_RETURN_IF_ERROR(c.u32(&clen, "credential length"));
    if (clen > kMaxCredential) return Status(PMIX_ERR_BAD_PARAM, "credential of " + std::to_string(clen) + " bytes");
    PMIXCPP_RETURN_IF_ERROR(c.bytes(clen, &h.credential, "credential"));
    uint8_t flag;
    PMIXCPP_RETURN_IF_ERROR(c.u8(&flag, "peer flag"));
    if (flag > static_cast<uint8_t>(peer_flag::scheduler_with_id))
        return Status(PMIX_ERR_NOT_SUPPORTED, "unknown peer flag " + std::to_string(flag));
    h.flag = static_cast<peer_flag>(flag);
    uint32_t uid = 0, gid = 0;
    switch (h.flag) {
        case peer_flag::simple_client: {
            pmix_proc_t p;
            PMIXCPP_RETURN_IF_ERROR(get_proc(c, &p));
            h.proc = p;
            break;
        }
        case peer_flag::legacy_tool:
        case peer_flag::legacy_launcher:
        case peer_flag::tool_needs_id:
        case peer_flag::launcher_needs_id:
            PMIXCPP_RETURN_IF_ERROR(c.u32(&uid, "uid"));
            PMIXCPP_RETURN_IF_ERROR(c.u32(&gid, "gid"));
            h.uid = uid;
            h.gid = gid;
            break;
        default: {  // the flags that carry uid, gid and a process
            PMIXCPP_RETURN_IF_ERROR(c.u32(&uid, "uid"));
            PMIXCPP_RETURN_IF_ERROR(c.u32(&gid, "gid"));
            h.uid = uid;
            h.gid = gid;
            pmix_proc_t p;
            PMIXCPP_RETURN_IF_ERROR(get_proc(c, &p));
            h.proc = p;
            break;
        }
    }
    PMIXCPP_RETURN_IF_ERROR(c.string(&h.version, kMaxNameChars, "version"));
    PMIXCPP_RETURN_IF_ERROR(parse_version(h.version, &h.major, &h.minor, &h.release));
    if (h.major == 2 && h.minor == 0) {  // 2.0.x: the handshake ends with the version
        h.bfrops = "v20";
        h.gds = "ds12,hash";
        h.trailing = c.left();
        return h;
    }
    PMIXCPP_RETURN_IF_ERROR(c.string(&h.bfrops, kMaxNameChars, "bfrops name"));
    PMIXCPP_RETURN_IF_ERROR(c.u8(&h.buffer_type, "buffer type"));
    if (h.buffer_type != kBufferNonDesc && h.buffer_type != kBufferFullyDesc)
        return Status(PMIX_ERR_BAD_PARAM, "buffer type " + std::to_string(h.buffer_type));
    PMIXCPP_RETURN_IF_ERROR(c.string(&h.gds, kMaxNameChars, "gds name"));
    h.trailing = c.left();
    return h;
}

std::vector<uint8_t> encode_hello(const hello &h) {
    std::vector<uint8_t> out;
    auto str = [&](const std::string &s) {
        out.insert(out.end(), s.begin(), s.end());
        out.push_back(0);
    };
    auto u32 = [&](uint32_t v) {
        uint8_t b[4];
        store_be32(b, v);
        out.insert(out.end(), b, b + 4);
    };
    auto proc = [&](const pmix_proc_t &p) {
        str(std::string(p.nspace, strnlen(p.nspace, PMIX_MAX_NSLEN)));
        u32(p.rank);
    };
    str(h.psec);
    u32(static_cast<uint32_t>(h.credential.size()));
    out.insert(out.end(), h.credential.begin(), h.credential.end());
    out.push_back(static_cast<uint8_t>(h.flag));
    if (h.flag != peer_flag::simple_client) {
        u32(h.uid.value_or(0));
        u32(h.gid.value_or(0));
    }
    switch (h.flag) {
        case peer_flag::legacy_tool:
        case peer_flag::legacy_launcher:
        case peer_flag::tool_needs_id:
        case peer_flag::launcher_needs_id:
            break;
        default:
            proc(h.proc.value_or(pmix_proc_t{}));
            break;
    }
    str(h.version);
    if (!(h.major == 2 && h.minor == 0)) {
        str(h.bfrops);
        out.push_back(h.buffer_type);
        str(h.gds);
    }
    out.insert(out.end(), h.trailing, 0);
    return out;
}

Status native_credential(const hello &h, uid_t *uid, gid_t *gid) {
    if (h.psec != "native") return Status(PMIX_ERR_NOT_SUPPORTED, "psec \"" + h.psec + "\" is not native");
    if (h.credential.size() != sizeof(uid_t) + sizeof(gid_t))
        return Status(PMIX_ERR_BAD_PARAM, "native credential of " + std::to_string(h.credential.size()) + " bytes");
    memcpy(uid, h.credential.data(), sizeof(uid_t));
    memcpy(gid, h.credential.data() + sizeof(uid_t), sizeof(gid_t));
    return Status::success();
}

std::vector<uint8_t> encode_client_ack(pmix_status_t status, uint32_t index) {
    std::vector<uint8_t> out(status == PMIX_SUCCESS ? 8 : 4);
    store_be32(out.data(), static_cast<uint32_t>(status));
    if (status == PMIX_SUCCESS) store_be32(out.data() + 4, index);
    return out;
}

size_t message_reader::wanted() const {
    if (!_have_header) return kHeaderSize - _hlen;
    return _hdr.nbytes - _payload.size();
}

Status message_reader::feed(const uint8_t *data, size_t n) {
    if (n > wanted()) return Status(PMIX_ERR_BAD_PARAM, "fed more than the message wants");
    if (!_have_header) {
        memcpy(_hbuf.data() + _hlen, data, n);
        _hlen += n;
        if (_hlen < kHeaderSize) return Status::success();
        if (!_handshake_done) {
            _hdr = decode_handshake_header(_hbuf.data());
            if (_hdr.pindex != kHandshakePindex || _hdr.tag != kHandshakeTag)
                return Status(PMIX_ERR_BAD_PARAM, "the first message is not a handshake (pindex " + std::to_string(_hdr.pindex) +
                                                      ", tag " + std::to_string(_hdr.tag) + ")");
            if (_hdr.nbytes == 0 || _hdr.nbytes > kMaxHandshakeBytes)
                return Status(PMIX_ERR_BAD_PARAM, "handshake of " + std::to_string(_hdr.nbytes) + " bytes");
        } else {
            _hdr = decode_header(_hbuf.data());
            if (_hdr.nbytes > _max)
                return Status(PMIX_ERR_OUT_OF_RESOURCE, "message of " + std::to_string(_hdr.nbytes) + " bytes exceeds " +
                                                            std::to_string(_max));
        }
        _have_header = true;
        _payload.reserve(_hdr.nbytes);
        return Status::success();
    }
    _payload.insert(_payload.end(), data, data + n);
    return Status::success();
}

void message_reader::next() {
    if (complete()) _handshake_done = true;
    _have_header = false;
    _hlen = 0;
    _hdr = header{};
    _payload.clear();
    _payload.shrink_to_fit();
}

}  // namespace pmixcpp::native
