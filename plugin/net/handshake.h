// The authentication that opens every TCP connection to a node listener (tcp_transport.cc) or to
// srun's agent (srun_agent.h), and the per-frame MAC of node frames (TCP and UCX). All primitives
// are libsodium's (HMAC-SHA-256 for the MACs, keyed BLAKE2b as the key derivation function, the
// system generator for nonces); nothing here is home-made cryptography. The keys come from the
// node identity exchange (identity.h), never from srun. No I/O here: encode/decode and the two
// state machines, fuzzed by tests/fuzz/fuzz_handshake.cc. shared/PROTOCOL.md has the byte layouts.
//
//   client                                             server
//   hello     {v, purpose, nspace, node, Nc, cred}  -->  checks v, purpose, nspace; finds K for
//                                                        this hello (key_source: the node link key
//                                                        of `node`, or the agent key in `cred`)
//             <----   challenge {v, Ns, MAC(K, "server" | hello | Ns)}
//   checks the server's MAC (a server without K is left at once)
//   response  {MAC(K, "client" | hello | Ns)}  ---->   checks the client's MAC (in constant time)
//   ... the connection's ordinary frames follow; the server reads none before the response ...
//
// A recorded client run replayed later fails (the server's Ns is new each time); a recorded server
// answer fails against a new client (Nc is part of what the server signs); the labels keep a
// server's proof from being reflected as a client's. Handshake frames are ordinary wire frames
// (shared/wire/frame.h) whose payload is at most kMaxHandshakePayload bytes; a header announcing
// more fails before any byte of payload is read.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "status.h"
#include "wire/frame.h"

namespace pmixcpp::net::auth {

inline constexpr size_t kNonceSize = 32;
inline constexpr size_t kMacSize = 32;  // HMAC-SHA-256 (libsodium crypto_auth_hmacsha256)
// 1 was keyed by a secret srun made; 2 by keys from the node identity exchange.
inline constexpr uint8_t kHandshakeVersion = 2;
inline constexpr uint16_t kHelloFrame = 0x1F0;
inline constexpr uint16_t kChallengeFrame = 0x1F1;
inline constexpr uint16_t kResponseFrame = 0x1F2;
inline constexpr uint32_t kMaxHandshakePayload = 2048;
inline constexpr size_t kMaxCredential = 1536;  // a munge credential (identity.h) in a hello
inline constexpr size_t kMaxHandshakeFrame = wire::kFrameHeaderSize + kMaxHandshakePayload;

using nonce = std::array<uint8_t, kNonceSize>;
using mac = std::array<uint8_t, kMacSize>;

// Who listens: a node server (node transport) or srun's agent.
enum class purpose : uint8_t { node = 1, agent = 2 };
const char *to_string(purpose p);

struct key {
    std::array<uint8_t, 32> bytes{};
};
// A key for one use, derived from `base` by the library's KDF (keyed BLAKE2b-256) over a label
// and a node id: e.g. the key of the TCP link into node j from node i is
// derive_key(K_j, "tcp", i) (identity.h).
Result<key> derive_key(const key &base, std::string_view label, uint32_t node);
key random_key();

// HMAC-SHA-256 of the concatenation of `parts`.
Result<mac> hmac(const key &k, std::initializer_list<std::span<const uint8_t>> parts);
// Constant time.
bool equal(std::span<const uint8_t> a, std::span<const uint8_t> b);
Status random_bytes(std::span<uint8_t> out);

struct hello {
    uint8_t version = kHandshakeVersion;
    purpose what = purpose::node;
    std::string nspace;  // the step (node listeners check it; the agent sends it empty)
    uint32_t node = 0;   // the client's node id (UINT32_MAX: not a node)
    nonce client_nonce{};
    std::string credential;  // agent: the slurmstepd's credential carrying K (identity.h); node: empty
};
struct challenge {
    uint8_t version = kHandshakeVersion;
    nonce server_nonce{};
    mac server_mac{};
    // Static wire-up (identity.h): the listener's signed node record, from which a client that
    // has no record of it yet derives K; empty otherwise (then not on the wire).
    std::string record;
};
struct response {
    mac client_mac{};
};

std::vector<uint8_t> encode_hello_payload(const hello &h);
Status decode_hello(std::span<const uint8_t> payload, hello *out);
std::vector<uint8_t> encode_challenge_payload(const challenge &c);
Status decode_challenge(std::span<const uint8_t> payload, challenge *out);
Status decode_response(std::span<const uint8_t> payload, response *out);

// One handshake frame read from a stream, at most kMaxHandshakeFrame bytes held. wanted() says
// how many bytes to read next, never more than the rest of the current frame, so that nothing
// after the frame (the peer's first ordinary frames) is consumed: read exactly that much.
class frame_reader {
public:
    size_t wanted() const;
    // n <= wanted(). Fails for good on a bad header, an unexpected type or an oversized length.
    Status feed(const uint8_t *data, size_t n);
    bool complete() const { return _have_header && _got == wire::kFrameHeaderSize + _header.length; }
    uint16_t type() const { return _header.type; }
    std::span<const uint8_t> payload() const { return {_buf.data() + wire::kFrameHeaderSize, _header.length}; }
    void reset() { *this = frame_reader(); }

private:
    std::array<uint8_t, kMaxHandshakeFrame> _buf{};
    size_t _got = 0;
    bool _have_header = false;
    wire::FrameHeader _header;
};

// Which key a hello is answered with: the node link key of hello.node, or the key the hello's
// credential carries. An error refuses the hello (and is the handshake's error).
using key_source = std::function<Result<key>(const hello &)>;

// The listening side. on_hello answers with the challenge frame; on_response says whether the
// client proved it holds the same key. An error is final: the caller drops the connection.
class server_handshake {
public:
    enum class state : uint8_t { await_hello, await_response, done, failed };
    // `nspace`: the step the listener serves ("" = accept any, the agent's case).
    server_handshake(key_source keys, purpose p, std::string nspace);
    server_handshake(key k, purpose p, std::string nspace);  // one key for every hello (tests)
    Result<std::vector<uint8_t>> on_hello(std::span<const uint8_t> payload);
    Status on_response(std::span<const uint8_t> payload);
    // Feed a complete handshake frame; returns bytes to send back (maybe none).
    Result<std::vector<uint8_t>> on_frame(uint16_t type, std::span<const uint8_t> payload);
    state current() const { return _state; }
    bool done() const { return _state == state::done; }
    uint32_t peer_node() const { return _peer_node; }
    const std::string &peer_nspace() const { return _peer_nspace; }
    const key &session_key() const { return _key; }
    // Our signed node record, sent in every challenge (static wire-up); empty: none.
    void present_record(std::string record) { _record = std::move(record); }

private:
    key_source _keys;
    std::string _record;
    key _key;
    purpose _purpose;
    std::string _nspace;
    state _state = state::await_hello;
    std::vector<uint8_t> _hello;  // the client's hello payload (the transcript)
    nonce _server_nonce{};
    uint32_t _peer_node = UINT32_MAX;
    std::string _peer_nspace;
};

// The connecting side: hello() first, then on_challenge() checks the server and gives the
// response frame. `credential` travels in the hello (the agent's case).
// A client that does not know K yet (static wire-up) builds it from the record the listener's
// challenge carries: `from_record` checks that record (identity.h) and returns K, or fails and
// so refuses the listener before any MAC is looked at.
using record_key = std::function<Result<key>(std::string_view record)>;
class client_handshake {
public:
    client_handshake(key k, purpose p, std::string nspace, uint32_t node, std::string credential = {});
    client_handshake(record_key from_record, purpose p, std::string nspace, uint32_t node);
    // K, once on_challenge() succeeded (the one given, or the one the listener's record gave).
    const key &session_key() const { return _key; }
    Result<std::vector<uint8_t>> hello_frame();
    Result<std::vector<uint8_t>> on_challenge(std::span<const uint8_t> payload);
    Result<std::vector<uint8_t>> on_frame(uint16_t type, std::span<const uint8_t> payload);
    bool done() const { return _done; }

private:
    key _key;
    record_key _from_record;
    hello _hello;
    std::vector<uint8_t> _hello_payload;
    bool _done = false;
};

// --- node frame seal -------------------------------------------------------------------------
// Every node frame after authentication carries a trailer
//   u32 source node, u32 destination node, u64 sequence, u8[32] HMAC(K_link, frame | those 16 bytes)
// K_link is the key of the link from source into destination (identity.h: derive_key(K_dst,
// "ucx" or "tcp", src)). UCX: the sender numbers its frames (one counter per sender); the receiver
// keeps, per source node, the highest number seen and a 64-frame window below it, and drops a
// frame outside the window or seen before (a replay) or addressed to another node. TCP: the
// numbers on one connection must grow. A frame whose MAC fails is dropped with one log line.
inline constexpr size_t kSealSize = 4 + 4 + 8 + kMacSize;

Result<std::vector<uint8_t>> seal_frame(const key &k, std::vector<uint8_t> frame, uint32_t src, uint32_t dst,
                                        uint64_t seq);
// The source a sealed frame claims (to pick the key); fails if too short to be sealed.
Status sealed_source(std::span<const uint8_t> sealed, uint32_t *src);
// Checks the MAC and the destination; gives the inner frame, its source and sequence number.
Status open_sealed_frame(const key &k, std::span<const uint8_t> sealed, uint32_t me,
                         std::span<const uint8_t> *frame, uint32_t *src, uint64_t *seq);

// Sliding replay window for one sender (RFC 4303 style).
class replay_window {
public:
    // True (and remembered) if `seq` was not seen and is not too old.
    bool accept(uint64_t seq);

private:
    uint64_t _highest = 0;
    uint64_t _bits = 0;  // bit i: highest - i was seen
    bool _any = false;
};

}  // namespace pmixcpp::net::auth
