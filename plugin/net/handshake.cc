#include "handshake.h"

#include <sodium.h>

#include <cstring>
#include <memory>

#include "wire/codec.h"

namespace pmixcpp::net::auth {

namespace {

constexpr std::string_view kKdfPrefix = "pmixcpp kdf v2 ";
constexpr std::string_view kServerLabel = "server";
constexpr std::string_view kClientLabel = "client";

std::span<const uint8_t> bytes_of(std::string_view s) {
    return {reinterpret_cast<const uint8_t *>(s.data()), s.size()};
}

Status bad(const std::string &what) { return Status(PMIX_ERR_NO_PERMISSIONS, "handshake: " + what); }

Result<std::vector<uint8_t>> frame_of(uint16_t type, std::span<const uint8_t> payload) {
    return wire::encode_frame(type, 0, 0, payload, kMaxHandshakePayload);
}

// sodium_init() is idempotent and thread safe; every entry point that needs the library calls it.
bool sodium_ready() {
    static const bool ok = sodium_init() >= 0;
    return ok;
}

}  // namespace

const char *to_string(purpose p) {
    switch (p) {
    case purpose::node: return "node";
    case purpose::agent: return "agent";
    }
    return "unknown";
}

Result<key> derive_key(const key &base, std::string_view label, uint32_t node) {
    if (!sodium_ready()) return Status(PMIX_ERROR, "handshake: libsodium did not initialise");
    crypto_generichash_state st;
    if (crypto_generichash_init(&st, base.bytes.data(), base.bytes.size(), 32) != 0)
        return Status(PMIX_ERROR, "handshake: key derivation failed");
    uint8_t n[4] = {uint8_t(node >> 24), uint8_t(node >> 16), uint8_t(node >> 8), uint8_t(node)};
    crypto_generichash_update(&st, reinterpret_cast<const uint8_t *>(kKdfPrefix.data()), kKdfPrefix.size());
    crypto_generichash_update(&st, reinterpret_cast<const uint8_t *>(label.data()), label.size());
    crypto_generichash_update(&st, n, sizeof(n));
    key k;
    crypto_generichash_final(&st, k.bytes.data(), k.bytes.size());
    return k;
}

key random_key() {
    key k;
    if (sodium_ready()) randombytes_buf(k.bytes.data(), k.bytes.size());
    return k;
}

Result<mac> hmac(const key &k, std::initializer_list<std::span<const uint8_t>> parts) {
    if (!sodium_ready()) return Status(PMIX_ERROR, "handshake: libsodium did not initialise");
    crypto_auth_hmacsha256_state st;
    crypto_auth_hmacsha256_init(&st, k.bytes.data(), k.bytes.size());
    for (auto p : parts) crypto_auth_hmacsha256_update(&st, p.data(), p.size());
    mac m;
    crypto_auth_hmacsha256_final(&st, m.data());
    return m;
}

bool equal(std::span<const uint8_t> a, std::span<const uint8_t> b) {
    return a.size() == b.size() && sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

Status random_bytes(std::span<uint8_t> out) {
    if (!sodium_ready()) return Status(PMIX_ERROR, "handshake: libsodium did not initialise");
    randombytes_buf(out.data(), out.size());
    return Status::success();
}

// --- encoding ---------------------------------------------------------------------------------

std::vector<uint8_t> encode_hello_payload(const hello &h) {
    wire::Writer w;
    w.put_u8(h.version);
    w.put_u8(static_cast<uint8_t>(h.what));
    (void)w.put_string(h.nspace.substr(0, 255));
    w.put_u32(h.node);
    w.put_raw(h.client_nonce.data(), h.client_nonce.size());
    (void)w.put_string(h.credential.substr(0, kMaxCredential));
    return w.data();
}

Status decode_hello(std::span<const uint8_t> payload, hello *out) {
    wire::Reader r(payload);
    hello h;
    uint8_t what = 0;
    const uint8_t *n = nullptr;
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&h.version));
    if (h.version != kHandshakeVersion) return bad("hello of version " + std::to_string(h.version));
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&what));
    if (what != static_cast<uint8_t>(purpose::node) && what != static_cast<uint8_t>(purpose::agent))
        return bad("hello for an unknown listener " + std::to_string(what));
    h.what = static_cast<purpose>(what);
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&h.nspace, 255));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&h.node));
    PMIXCPP_RETURN_IF_ERROR(r.get_raw(kNonceSize, &n));
    memcpy(h.client_nonce.data(), n, kNonceSize);
    PMIXCPP_RETURN_IF_ERROR(r.get_string(&h.credential, kMaxCredential));
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    *out = std::move(h);
    return Status::success();
}

std::vector<uint8_t> encode_challenge_payload(const challenge &c) {
    wire::Writer w;
    w.put_u8(c.version);
    w.put_raw(c.server_nonce.data(), c.server_nonce.size());
    w.put_raw(c.server_mac.data(), c.server_mac.size());
    if (!c.record.empty()) (void)w.put_string(c.record.substr(0, kMaxCredential));
    return w.data();
}

Status decode_challenge(std::span<const uint8_t> payload, challenge *out) {
    wire::Reader r(payload);
    challenge c;
    const uint8_t *n = nullptr, *m = nullptr;
    PMIXCPP_RETURN_IF_ERROR(r.get_u8(&c.version));
    if (c.version != kHandshakeVersion) return bad("challenge of version " + std::to_string(c.version));
    PMIXCPP_RETURN_IF_ERROR(r.get_raw(kNonceSize, &n));
    PMIXCPP_RETURN_IF_ERROR(r.get_raw(kMacSize, &m));
    if (!r.at_end()) {
        PMIXCPP_RETURN_IF_ERROR(r.get_string(&c.record, kMaxCredential));
        if (c.record.empty()) return bad("challenge with an empty record");
    }
    PMIXCPP_RETURN_IF_ERROR(r.expect_end());
    memcpy(c.server_nonce.data(), n, kNonceSize);
    memcpy(c.server_mac.data(), m, kMacSize);
    *out = c;
    return Status::success();
}

Status decode_response(std::span<const uint8_t> payload, response *out) {
    if (payload.size() != kMacSize) return bad("response of " + std::to_string(payload.size()) + " bytes");
    memcpy(out->client_mac.data(), payload.data(), kMacSize);
    return Status::success();
}

// --- frame_reader -----------------------------------------------------------------------------

size_t frame_reader::wanted() const {
    if (!_have_header) return wire::kFrameHeaderSize - _got;
    return wire::kFrameHeaderSize + _header.length - _got;
}

Status frame_reader::feed(const uint8_t *data, size_t n) {
    if (n > wanted()) return bad("read past the handshake frame");
    // Garbage is refused with its first bytes: the magic is checked as it arrives.
    for (size_t i = 0; i < n; ++i) {
        size_t at = _got + i;
        if (at < 4 && data[i] != wire::kFrameMagic[at]) return bad("not a pmixcpp frame");
    }
    memcpy(_buf.data() + _got, data, n);
    _got += n;
    if (!_have_header && _got == wire::kFrameHeaderSize) {
        wire::FrameHeader h;
        Status st = wire::decode_frame_header({_buf.data(), wire::kFrameHeaderSize}, &h, kMaxHandshakePayload);
        if (!st.ok()) return bad(st.message());
        if (h.type != kHelloFrame && h.type != kChallengeFrame && h.type != kResponseFrame)
            return bad("frame type " + std::to_string(h.type) + " before authentication");
        _header = h;
        _have_header = true;
    }
    return Status::success();
}

// --- server -----------------------------------------------------------------------------------

server_handshake::server_handshake(key_source keys, purpose p, std::string nspace)
    : _keys(std::move(keys)), _purpose(p), _nspace(std::move(nspace)) {}

server_handshake::server_handshake(key k, purpose p, std::string nspace)
    : _keys([k](const hello &) -> Result<key> { return k; }), _purpose(p), _nspace(std::move(nspace)) {}

Result<std::vector<uint8_t>> server_handshake::on_hello(std::span<const uint8_t> payload) {
    if (_state != state::await_hello) {
        _state = state::failed;
        return bad("unexpected hello");
    }
    _state = state::failed;  // until it succeeds
    hello h;
    PMIXCPP_RETURN_IF_ERROR(decode_hello(payload, &h));
    if (h.what != _purpose)
        return bad(std::string("hello for a ") + to_string(h.what) + " listener reached a " + to_string(_purpose) +
                   " listener");
    if (!_nspace.empty() && h.nspace != _nspace) return bad("hello for another step (" + h.nspace + ")");
    if (!_keys) return bad("no key for this hello");
    auto k = _keys(h);
    if (!k.ok()) return bad(k.status().message());
    _key = k.value();
    challenge c;
    PMIXCPP_RETURN_IF_ERROR(random_bytes(c.server_nonce));
    _hello.assign(payload.begin(), payload.end());
    auto m = hmac(_key, {bytes_of(kServerLabel), _hello, c.server_nonce});
    PMIXCPP_RETURN_IF_ERROR(m);
    c.server_mac = m.value();
    _server_nonce = c.server_nonce;
    _peer_node = h.node;
    _peer_nspace = h.nspace;
    c.record = _record;
    auto f = frame_of(kChallengeFrame, encode_challenge_payload(c));
    PMIXCPP_RETURN_IF_ERROR(f);
    _state = state::await_response;
    return f;
}

Status server_handshake::on_response(std::span<const uint8_t> payload) {
    if (_state != state::await_response) {
        _state = state::failed;
        return bad("unexpected response");
    }
    _state = state::failed;
    response r;
    PMIXCPP_RETURN_IF_ERROR(decode_response(payload, &r));
    auto m = hmac(_key, {bytes_of(kClientLabel), _hello, _server_nonce});
    PMIXCPP_RETURN_IF_ERROR(m);
    if (!equal(m.value(), r.client_mac)) return bad("the client does not hold the link key");
    _state = state::done;
    return Status::success();
}

Result<std::vector<uint8_t>> server_handshake::on_frame(uint16_t type, std::span<const uint8_t> payload) {
    if (type == kHelloFrame) return on_hello(payload);
    if (type == kResponseFrame) {
        PMIXCPP_RETURN_IF_ERROR(on_response(payload));
        return std::vector<uint8_t>{};
    }
    _state = state::failed;
    return bad("frame type " + std::to_string(type) + " from a client");
}

// --- client -----------------------------------------------------------------------------------

client_handshake::client_handshake(key k, purpose p, std::string nspace, uint32_t node, std::string credential)
    : _key(k) {
    _hello.credential = std::move(credential);
    _hello.what = p;
    _hello.nspace = std::move(nspace);
    _hello.node = node;
}

client_handshake::client_handshake(record_key from_record, purpose p, std::string nspace, uint32_t node)
    : _from_record(std::move(from_record)) {
    _hello.what = p;
    _hello.nspace = std::move(nspace);
    _hello.node = node;
}

Result<std::vector<uint8_t>> client_handshake::hello_frame() {
    PMIXCPP_RETURN_IF_ERROR(random_bytes(_hello.client_nonce));
    _hello_payload = encode_hello_payload(_hello);
    _done = false;
    return frame_of(kHelloFrame, _hello_payload);
}

Result<std::vector<uint8_t>> client_handshake::on_challenge(std::span<const uint8_t> payload) {
    if (_hello_payload.empty() || _done) return bad("unexpected challenge");
    challenge c;
    PMIXCPP_RETURN_IF_ERROR(decode_challenge(payload, &c));
    if (_from_record) {
        if (c.record.empty()) return bad("the listener presented no node record");
        auto k = _from_record(c.record);
        if (!k.ok()) return bad("the listener's node record refused: " + k.status().message());
        _key = k.value();
        _from_record = nullptr;  // known from now on (a later challenge on this object is refused anyway)
    }
    auto expect = hmac(_key, {bytes_of(kServerLabel), _hello_payload, c.server_nonce});
    PMIXCPP_RETURN_IF_ERROR(expect);
    if (!equal(expect.value(), c.server_mac)) return bad("the listener does not hold the link key");
    auto m = hmac(_key, {bytes_of(kClientLabel), _hello_payload, c.server_nonce});
    PMIXCPP_RETURN_IF_ERROR(m);
    _done = true;
    return frame_of(kResponseFrame, m.value());
}

Result<std::vector<uint8_t>> client_handshake::on_frame(uint16_t type, std::span<const uint8_t> payload) {
    if (type != kChallengeFrame) return bad("frame type " + std::to_string(type) + " from a listener");
    return on_challenge(payload);
}

// --- node frame seal -------------------------------------------------------------------------

Result<std::vector<uint8_t>> seal_frame(const key &k, std::vector<uint8_t> frame, uint32_t src, uint32_t dst,
                                        uint64_t seq) {
    wire::Writer w;
    w.put_u32(src);
    w.put_u32(dst);
    w.put_u64(seq);
    auto m = hmac(k, {frame, w.data()});
    PMIXCPP_RETURN_IF_ERROR(m);
    frame.insert(frame.end(), w.data().begin(), w.data().end());
    frame.insert(frame.end(), m->begin(), m->end());
    return frame;
}

Status sealed_source(std::span<const uint8_t> sealed, uint32_t *src) {
    if (sealed.size() < kSealSize) return bad("frame without a MAC");
    wire::Reader r(sealed.subspan(sealed.size() - kSealSize, 4));
    return r.get_u32(src);
}

Status open_sealed_frame(const key &k, std::span<const uint8_t> sealed, uint32_t me, std::span<const uint8_t> *frame,
                         uint32_t *src, uint64_t *seq) {
    if (sealed.size() < kSealSize) return bad("frame without a MAC");
    const size_t body = sealed.size() - kSealSize;
    auto m = hmac(k, {sealed.first(body), sealed.subspan(body, 16)});
    PMIXCPP_RETURN_IF_ERROR(m);
    if (!equal(m.value(), sealed.subspan(body + 16, kMacSize))) return bad("frame with a bad MAC");
    wire::Reader r(sealed.subspan(body, 16));
    uint32_t from = 0, dst = 0;
    uint64_t s = 0;
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&from));
    PMIXCPP_RETURN_IF_ERROR(r.get_u32(&dst));
    PMIXCPP_RETURN_IF_ERROR(r.get_u64(&s));
    if (dst != me) return bad("frame sealed for node " + std::to_string(dst));
    *frame = sealed.first(body);
    *src = from;
    *seq = s;
    return Status::success();
}

bool replay_window::accept(uint64_t seq) {
    if (!_any || seq > _highest) {
        uint64_t shift = _any ? seq - _highest : 64;
        _bits = shift >= 64 ? 0 : _bits << shift;
        _bits |= 1;
        _highest = seq;
        _any = true;
        return true;
    }
    uint64_t age = _highest - seq;
    if (age >= 64) return false;
    uint64_t bit = uint64_t{1} << age;
    if (_bits & bit) return false;
    _bits |= bit;
    return true;
}

}  // namespace pmixcpp::net::auth
