#include "sha256.h"

#include <algorithm>
#include <cstring>

namespace pmixcpp::net {

namespace {

// FIPS 180-4, 4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64
// primes.
constexpr uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

// 5.3.3: the first 32 bits of the fractional parts of the square roots of the first 8 primes.
constexpr std::array<uint32_t, 8> kInitial = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                              0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

constexpr uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32 - n)); }

uint32_t load_be32(const uint8_t *p) {
    return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | uint32_t(p[3]);
}

void store_be32(uint8_t *p, uint32_t v) {
    p[0] = uint8_t(v >> 24);
    p[1] = uint8_t(v >> 16);
    p[2] = uint8_t(v >> 8);
    p[3] = uint8_t(v);
}

}  // namespace

sha256::sha256() : _h(kInitial) {}

// 6.2.2: one 512-bit block.
void sha256::block(const uint8_t *p) {
    uint32_t w[64];
    for (int t = 0; t < 16; ++t) w[t] = load_be32(p + 4 * t);
    for (int t = 16; t < 64; ++t) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = _h[0], b = _h[1], c = _h[2], d = _h[3], e = _h[4], f = _h[5], g = _h[6], h = _h[7];
    for (int t = 0; t < 64; ++t) {
        uint32_t big_s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
        uint32_t ch = (e & f) ^ (~e & g);
        uint32_t t1 = h + big_s1 + ch + kRound[t] + w[t];
        uint32_t big_s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
        uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
        uint32_t t2 = big_s0 + maj;
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    _h[0] += a;
    _h[1] += b;
    _h[2] += c;
    _h[3] += d;
    _h[4] += e;
    _h[5] += f;
    _h[6] += g;
    _h[7] += h;
}

void sha256::update(std::span<const uint8_t> data) {
    const uint8_t *p = data.data();
    size_t n = data.size();
    _total += n;
    if (_used > 0) {
        size_t take = std::min(n, kBlockSize - _used);
        memcpy(_buf.data() + _used, p, take);
        _used += take;
        p += take;
        n -= take;
        if (_used < kBlockSize) return;
        block(_buf.data());
        _used = 0;
    }
    for (; n >= kBlockSize; p += kBlockSize, n -= kBlockSize) block(p);
    if (n > 0) {
        memcpy(_buf.data(), p, n);
        _used = n;
    }
}

// 5.1.1: a 1 bit, zeros up to 56 bytes modulo 64, the message length in bits (64-bit big endian).
sha256::digest sha256::finish() {
    const uint64_t bits = _total * 8;
    _buf[_used++] = 0x80;
    if (_used > kBlockSize - 8) {
        memset(_buf.data() + _used, 0, kBlockSize - _used);
        block(_buf.data());
        _used = 0;
    }
    memset(_buf.data() + _used, 0, kBlockSize - 8 - _used);
    for (int i = 0; i < 8; ++i) _buf[kBlockSize - 1 - i] = uint8_t(bits >> (8 * i));
    block(_buf.data());
    digest out;
    for (int i = 0; i < 8; ++i) store_be32(out.data() + 4 * i, _h[i]);
    return out;
}

// RFC 2104: H((K ^ opad) | H((K ^ ipad) | text)), K hashed first if longer than a block.
hmac_sha256::hmac_sha256(std::span<const uint8_t> key) {
    std::array<uint8_t, sha256::kBlockSize> k{};
    if (key.size() > k.size()) {
        sha256 h;
        h.update(key);
        auto d = h.finish();
        memcpy(k.data(), d.data(), d.size());
    } else if (!key.empty()) {
        memcpy(k.data(), key.data(), key.size());
    }
    std::array<uint8_t, sha256::kBlockSize> pad;
    for (size_t i = 0; i < pad.size(); ++i) pad[i] = k[i] ^ 0x36;
    _inner.update(pad);
    for (size_t i = 0; i < pad.size(); ++i) pad[i] = k[i] ^ 0x5c;
    _outer.update(pad);
}

sha256::digest hmac_sha256::finish() {
    auto inner = _inner.finish();
    _outer.update(inner);
    return _outer.finish();
}

bool constant_time_equal(std::span<const uint8_t> a, std::span<const uint8_t> b) {
    if (a.size() != b.size()) return false;
    volatile uint8_t diff = 0;
    for (size_t i = 0; i < a.size(); ++i) diff = diff | (a[i] ^ b[i]);
    return diff == 0;
}

}  // namespace pmixcpp::net
