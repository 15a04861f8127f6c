// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for the handshakes and frame seals of
// handshake.h. Written here rather than taken from a crypto library: the plugin needs nothing
// else from one, and initialising OpenSSL cost every slurmstepd and srun more memory (about
// 3.5 MB of touched pages) and start-up time than the rest of the plugin's libraries together.
// Checked against FIPS 180-4's and RFC 4231's published vectors (tests/net/test_handshake.cc).
// No branch and no table index depends on the data or the key.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace pmixcpp::net {

class sha256 {
public:
    static constexpr size_t kDigestSize = 32;
    static constexpr size_t kBlockSize = 64;
    using digest = std::array<uint8_t, kDigestSize>;

    sha256();
    void update(std::span<const uint8_t> data);
    digest finish();  // the object is spent afterwards

private:
    void block(const uint8_t *p);

    std::array<uint32_t, 8> _h;
    std::array<uint8_t, kBlockSize> _buf{};
    size_t _used = 0;    // bytes in _buf
    uint64_t _total = 0;  // bytes hashed
};

// HMAC-SHA256 over the concatenation of `parts`, keyed by `key` (any length).
class hmac_sha256 {
public:
    explicit hmac_sha256(std::span<const uint8_t> key);
    void update(std::span<const uint8_t> data) { _inner.update(data); }
    sha256::digest finish();

private:
    sha256 _inner, _outer;
};

// Equal contents, in time that depends on the length only.
bool constant_time_equal(std::span<const uint8_t> a, std::span<const uint8_t> b);

}  // namespace pmixcpp::net
